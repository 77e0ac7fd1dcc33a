"""At most once (activities/lost_calls.py): an attempt after a lost one runs its call again
only when the tool is safe to repeat; the real tool activities under the SDK's activity
environment, as a retry after a lost worker runs them."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from mcp.types import Tool, ToolAnnotations
from temporalio.testing import ActivityEnvironment

from activities.lost_calls import LostCalls
from activities.mcp.pool import McpPool
from activities.mcp.tools import repeatable
from activities.tool_runner import ToolActivities
from activities.tools import BUILTIN_TOOLS
from tests.trust_helpers import harness_trust
from workflows.contracts import ToolCall, ToolOutcome
from workflows.contracts.activity import RunToolInput
from workflows.contracts.scenario import FixtureTool


def activities(policy: LostCalls | None = None) -> ToolActivities:
    chosen = policy or LostCalls()
    return ToolActivities(
        BUILTIN_TOOLS, McpPool(), trust=harness_trust(), lost_calls=lambda: chosen
    )


async def attempt(
    number: int, ws: Path, name: str, arguments: dict[str, Any], **kw: Any
) -> ToolOutcome:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, attempt=number)
    inp = RunToolInput(
        call=ToolCall(call_id="c1", name=name, arguments=arguments),
        workspace_root=str(ws),
        **kw,
    )
    return await env.run(activities().run_tool, inp)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


async def test_a_lost_shell_call_is_not_run_again(ws: Path) -> None:
    command = {"command": "echo ran >> ledger"}
    first = await attempt(1, ws, "run_shell_command", command)
    assert first.status == "success"
    again = await attempt(2, ws, "run_shell_command", command)
    assert (ws / "ledger").read_text() == "ran\n"  # once
    assert (again.status, again.error_type) == ("error", "worker_lost")
    assert "may have run partly or fully" in again.content
    assert "run_shell_command may change things" in again.content


async def test_a_lost_write_is_not_repeated_but_a_read_is(ws: Path) -> None:
    written = await attempt(2, ws, "write_file", {"path": "a.txt", "content": "x"})
    assert written.error_type == "worker_lost"
    assert not (ws / "a.txt").exists()
    (ws / "b.txt").write_text("hello")
    read = await attempt(2, ws, "read_file", {"path": "b.txt"})
    assert read.status == "success" and "hello" in read.content


async def test_the_operator_may_declare_tools_repeatable_or_rerun_everything(ws: Path) -> None:
    command = {"command": "echo ran >> ledger"}
    listed = activities(LostCalls.from_settings(False, "run_shell_*, other"))
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, attempt=3)
    inp = RunToolInput(
        call=ToolCall(call_id="c1", name="run_shell_command", arguments=command),
        workspace_root=str(ws),
    )
    assert (await env.run(listed.run_tool, inp)).status == "success"
    everything = activities(LostCalls(rerun=True))
    assert (await env.run(everything.run_tool, inp)).status == "success"
    assert (ws / "ledger").read_text() == "ran\nran\n"


async def test_a_mutating_fixture_is_not_repeated_and_a_reading_one_is(ws: Path) -> None:
    scripted = {"outcomes": [{"content": "done"}]}
    deploy = FixtureTool.model_validate({**scripted, "mutating": True})
    probe = FixtureTool.model_validate(scripted)
    lost = await attempt(2, ws, "deploy", {}, scenario_fixture=deploy)
    assert lost.error_type == "worker_lost"
    assert (await attempt(2, ws, "probe", {}, scenario_fixture=probe)).content == "done"


def test_an_mcp_tool_is_repeatable_when_its_server_says_so() -> None:
    def tool(**hints: bool) -> Tool:
        return Tool(name="t", inputSchema={}, annotations=ToolAnnotations(**hints))

    assert repeatable(tool(readOnlyHint=True))
    assert repeatable(tool(idempotentHint=True))
    assert not repeatable(tool(destructiveHint=False))
    assert not repeatable(Tool(name="t", inputSchema={}))
