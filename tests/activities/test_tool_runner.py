"""The tool activities: admission, execution, post-processing and fixtures
(workflows/contracts/outcome.py; docs/scenarios.md, "Running a scenario").

Built-in tools run for real against ``tmp_path/ws``; cancellation and heartbeats go through
``temporalio.testing.ActivityEnvironment``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel
from temporalio.testing import ActivityEnvironment

import activities.heartbeat as heartbeat
from activities.fixtures import check_fixture
from activities.mcp.pool import McpPool
from activities.tool_runner import SPILL_DIR, ToolActivities, spill_name
from activities.tools import BUILTIN_TOOLS, BuiltinTool, ToolArgs, ToolContext
from tests.trust_helpers import harness_trust
from workflows.contracts import ToolCall, ToolOutcome
from workflows.contracts.activity import CheckToolCallInput, ListToolsInput, RunToolInput
from workflows.contracts.scenario import FixtureOutcome, FixtureTool


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


def tool_call(name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> ToolCall:
    return ToolCall(call_id=kw.pop("call_id", "c1"), name=name, arguments=arguments, **kw)


def tool_activities(tools: dict[str, BuiltinTool] | None = None) -> ToolActivities:
    """The tool activities over the built-ins (or ``tools``), without MCP servers."""
    return ToolActivities(
        BUILTIN_TOOLS if tools is None else tools, McpPool(), trust=harness_trust()
    )


async def run(
    ws: Path, call: ToolCall, tools: dict[str, BuiltinTool] | None = None, **kw: Any
) -> ToolOutcome:
    inp = RunToolInput(call=call, workspace_root=str(ws), **kw)
    return await tool_activities(tools).execute(inp)


def assert_not_started(outcome: ToolOutcome, error_type: str) -> None:
    assert outcome.status == "error"
    assert outcome.execution_status == "not_started"
    assert outcome.error_type == error_type
    assert outcome.execution_error_type is None
    assert not outcome.ran_and_failed


# --- admission ----------------------------------------------------------------------------


async def test_unknown_tool_is_not_registered_and_lists_the_tools(ws: Path) -> None:
    outcome = await run(ws, tool_call("read_fiel", {"path": "a"}))
    assert_not_started(outcome, "tool_not_registered")
    assert outcome.policy_tool_name is None
    assert outcome.tool_name == "read_fiel"
    for name in BUILTIN_TOOLS:
        assert name in outcome.content


async def test_missing_name_is_an_invalid_parameter_call(ws: Path) -> None:
    outcome = await run(ws, tool_call("", {"path": "a"}))
    assert_not_started(outcome, "invalid_tool_params")
    assert "no function name" in outcome.content
    assert outcome.policy_tool_name is None


async def test_broken_json_quotes_at_most_200_characters(ws: Path) -> None:
    raw = '{"path": "' + "x" * 500
    outcome = await run(ws, tool_call("read_file", None, raw_arguments=raw))
    assert_not_started(outcome, "invalid_tool_params")
    assert outcome.policy_tool_name == "read_file"
    assert outcome.tool_type == "native"
    assert "JSON object" in outcome.content
    assert "x" * 190 in outcome.content
    assert "x" * 201 not in outcome.content


async def test_validation_errors_name_fields_without_echoing_values(ws: Path) -> None:
    secret = "SECRET-VALUE-123"
    outcome = await run(ws, tool_call("read_file", {"limit": secret, "colour": secret}))
    assert_not_started(outcome, "invalid_tool_params")
    assert outcome.policy_tool_name == "read_file"
    assert "path" in outcome.content
    assert "limit" in outcome.content
    assert "colour" in outcome.content
    assert secret not in outcome.content
    assert secret not in (outcome.error_message or "")


# --- execution ----------------------------------------------------------------------------


async def test_success_reports_both_axes(ws: Path) -> None:
    (ws / "notes.txt").write_text("hello\n")
    outcome = await run(ws, tool_call("read_file", {"path": "notes.txt"}))
    assert (outcome.status, outcome.execution_status) == ("success", "success")
    assert outcome.content == "hello\n"
    assert outcome.policy_tool_name == "read_file"
    assert outcome.tool_type == "native"
    assert outcome.error_type is None


async def test_tool_failure_freezes_its_error_type(ws: Path) -> None:
    outcome = await run(ws, tool_call("read_file", {"path": "missing.txt"}))
    assert (outcome.status, outcome.execution_status) == ("error", "error")
    assert outcome.execution_error_type == "file_not_found"
    assert outcome.error_type == "file_not_found"
    assert outcome.ran_and_failed
    assert "missing.txt" in outcome.content
    assert outcome.error_message == outcome.content


class ExplodingArgs(ToolArgs):
    detail: str = ""


class ExplodingTool(BuiltinTool):
    """A tool with a bug: it raises something other than ToolFailure."""

    name: ClassVar[str] = "explode"
    description: ClassVar[str] = "Raises an unexpected exception."
    args_model: ClassVar[type[BaseModel]] = ExplodingArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        raise KeyError("boom")


class ChattyArgs(ToolArgs):
    size: int


class ChattyTool(BuiltinTool):
    name: ClassVar[str] = "chatty"
    description: ClassVar[str] = "Returns a lot of text."
    args_model: ClassVar[type[BaseModel]] = ChattyArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, ChattyArgs)
        return "".join(str(i % 10) for i in range(args.size))


TEST_TOOLS: dict[str, BuiltinTool] = {"explode": ExplodingTool(), "chatty": ChattyTool()}


async def test_unhandled_exception_is_an_execution_error(ws: Path) -> None:
    outcome = await run(ws, tool_call("explode", {}), tools=TEST_TOOLS)
    assert (outcome.status, outcome.execution_status) == ("error", "error")
    assert outcome.execution_error_type == "unhandled_exception"
    assert outcome.error_type == "unhandled_exception"
    assert "KeyError" in outcome.content
    assert "boom" in outcome.content


async def test_unhandled_exception_through_the_activity_is_a_result(ws: Path) -> None:
    # Temporal must never see (and retry) a tool error: run_tool returns it.
    inp = RunToolInput(call=tool_call("read_file", {"path": "nope"}), workspace_root=str(ws))
    outcome = await ActivityEnvironment().run(tool_activities().run_tool, inp)
    assert outcome.execution_error_type == "file_not_found"


# --- post-processing ----------------------------------------------------------------------


async def test_long_output_is_truncated_and_spilled_to_the_workspace(ws: Path) -> None:
    call = tool_call("chatty", {"size": 5000}, call_id="call_1_0")
    outcome = await run(ws, call, TEST_TOOLS, max_output_chars=100)
    assert (outcome.status, outcome.execution_status) == ("success", "success")
    full = "".join(str(i % 10) for i in range(5000))
    assert outcome.content.startswith(full[:100])
    assert full[:101] not in outcome.content
    relative = (SPILL_DIR / "call_1_0.txt").as_posix()
    assert relative in outcome.content
    assert (ws / relative).read_text() == full


async def test_short_output_is_left_alone(ws: Path) -> None:
    outcome = await run(ws, tool_call("chatty", {"size": 100}), TEST_TOOLS, max_output_chars=100)
    assert len(outcome.content) == 100
    assert not (ws / ".seawall").exists()


async def test_spill_failure_is_a_post_execution_error(ws: Path) -> None:
    (ws / ".seawall").write_text("a regular file, so no directory can be made under it")
    outcome = await run(ws, tool_call("chatty", {"size": 5000}), TEST_TOOLS, max_output_chars=100)
    assert outcome.status == "error"
    assert outcome.execution_status == "success"
    assert outcome.error_type == "output_truncated"
    assert outcome.execution_error_type is None
    assert not outcome.contract_violation
    assert not outcome.ran_and_failed
    assert outcome.content.startswith("0123456789")
    assert str(ws) not in outcome.content
    assert str(ws) not in (outcome.error_message or "")


async def test_spill_never_follows_a_symlink_out_of_the_workspace(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / ".seawall").symlink_to(outside, target_is_directory=True)
    outcome = await run(ws, tool_call("chatty", {"size": 500}), TEST_TOOLS, max_output_chars=10)
    assert outcome.error_type == "output_truncated"
    assert outcome.execution_status == "success"
    assert list(outside.iterdir()) == []


def test_spill_names_cannot_escape_and_do_not_collide() -> None:
    assert spill_name("call_1_0") == "call_1_0.txt"
    unsafe = spill_name("../../etc/passwd")
    assert "/" not in unsafe
    assert not unsafe.startswith(".")
    assert spill_name("a/b") != spill_name("a_b")
    assert spill_name("") != ".txt"


# --- fixtures -----------------------------------------------------------------------------


def fixture(*outcomes: FixtureOutcome) -> FixtureTool:
    return FixtureTool(outcomes=list(outcomes))


FLAKY = fixture(
    FixtureOutcome(
        status="error", execution_status="error", error_type="execution_failed", message="HTTP 500"
    ),
    FixtureOutcome(status="success", execution_status="success", content="ok"),
)


async def test_fixture_outcomes_are_used_in_order_and_the_last_repeats(ws: Path) -> None:
    seen = []
    for ordinal in range(4):
        outcome = await run(ws, tool_call("flaky_api", {}), scenario_fixture=FLAKY, ordinal=ordinal)
        seen.append((outcome.status, outcome.execution_status, outcome.content))
    assert seen == [
        ("error", "error", "HTTP 500"),
        ("success", "success", "ok"),
        ("success", "success", "ok"),
        ("success", "success", "ok"),
    ]


async def test_fixture_error_type_sets_execution_error_type_only_for_execution_errors(
    ws: Path,
) -> None:
    first = await run(ws, tool_call("flaky_api", {}), scenario_fixture=FLAKY)
    assert first.error_type == first.execution_error_type == "execution_failed"
    assert first.error_message == "HTTP 500"
    assert first.policy_tool_name == "flaky_api"
    assert first.tool_type == "native"

    post = fixture(
        FixtureOutcome(status="error", execution_status="success", error_type="output_truncated")
    )
    outcome = await run(ws, tool_call("post", {}), scenario_fixture=post)
    assert outcome.error_type == "output_truncated"
    assert outcome.execution_error_type is None

    explicit = fixture(
        FixtureOutcome(
            status="error",
            execution_status="error",
            error_type="output_truncated",
            execution_error_type="file_not_found",
        )
    )
    outcome = await run(ws, tool_call("explicit", {}), scenario_fixture=explicit)
    assert (outcome.error_type, outcome.execution_error_type) == (
        "output_truncated",
        "file_not_found",
    )


async def test_fixture_may_report_a_missing_execution_status_or_a_violation(ws: Path) -> None:
    odd = FixtureTool(
        outcomes=[
            FixtureOutcome(status="error", error_type="unknown"),
            FixtureOutcome(status="success", execution_status="error"),
            FixtureOutcome(status="error", execution_status="exploded"),
        ],
        tool_type="mcp",
    )
    missing, violation, unseen = [
        await run(ws, tool_call("mcp__srv__odd", {}), scenario_fixture=odd, ordinal=i)
        for i in range(3)
    ]
    assert missing.execution_status is None
    assert missing.execution_error_type is None
    assert missing.tool_type == "mcp"
    assert violation.contract_violation
    assert unseen.execution_status == "exploded"


async def test_fixture_ignores_arguments_and_output_limits(ws: Path) -> None:
    big = fixture(FixtureOutcome(content="z" * 1000))
    call = tool_call("big", None, raw_arguments="{broken")
    outcome = await run(ws, call, scenario_fixture=big, max_output_chars=10)
    assert outcome.content == "z" * 1000
    assert check_fixture(call, big) is None
    assert not (ws / ".seawall").exists()


async def test_hang_fixture_heartbeats_until_cancelled(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heartbeat, "HEARTBEAT_INTERVAL_SECONDS", 0.01)
    beats: list[None] = []
    two_beats = asyncio.Event()

    def beat() -> None:
        beats.append(None)
        if len(beats) >= 2:
            two_beats.set()

    inp = RunToolInput(
        call=tool_call("wait", {}),
        workspace_root=str(ws),
        scenario_fixture=fixture(FixtureOutcome(hang=True)),
    )
    task = asyncio.create_task(tool_activities().execute(inp, beat))
    await asyncio.wait_for(two_beats.wait(), timeout=5)
    task.cancel()
    outcome = await task
    assert (outcome.status, outcome.execution_status) == ("cancelled", "cancelled")
    assert outcome.content == "The tool call was cancelled before it finished."
    count = len(beats)
    await asyncio.sleep(0.05)
    assert len(beats) == count  # the heartbeats stopped with the call


async def cancel_after_first_heartbeat(inp: RunToolInput) -> tuple[ToolOutcome, int]:
    env = ActivityEnvironment()
    beats: list[tuple[Any, ...]] = []
    first = asyncio.Event()

    def on_heartbeat(*details: Any) -> None:
        beats.append(details)
        first.set()

    env.on_heartbeat = on_heartbeat
    task = asyncio.create_task(env.run(tool_activities().run_tool, inp))
    await asyncio.wait_for(first.wait(), timeout=5)
    await asyncio.sleep(0.3)
    env.cancel()
    outcome = await asyncio.wait_for(task, timeout=10)
    return outcome, len(beats)


async def test_cancelled_hang_fixture_activity_returns_a_cancelled_outcome(ws: Path) -> None:
    inp = RunToolInput(
        call=tool_call("wait", {}),
        workspace_root=str(ws),
        scenario_fixture=fixture(FixtureOutcome(hang=True)),
    )
    outcome, beats = await cancel_after_first_heartbeat(inp)
    assert (outcome.status, outcome.execution_status) == ("cancelled", "cancelled")
    assert outcome.policy_tool_name == "wait"
    assert beats >= 1


async def test_cancelled_builtin_activity_returns_a_cancelled_outcome(ws: Path) -> None:
    inp = RunToolInput(
        call=tool_call("run_shell_command", {"command": "sleep 30"}), workspace_root=str(ws)
    )
    started = asyncio.get_running_loop().time()
    outcome, beats = await cancel_after_first_heartbeat(inp)
    assert (outcome.status, outcome.execution_status) == ("cancelled", "cancelled")
    assert outcome.policy_tool_name == "run_shell_command"
    assert outcome.tool_type == "native"
    assert outcome.execution_error_type is None
    assert beats >= 1
    assert asyncio.get_running_loop().time() - started < 15


# --- list_tools and check_tool_call ---------------------------------------------------------


async def test_list_tools_merges_fixtures_over_builtins_sorted_by_name() -> None:
    fixtures = {
        "read_file": fixture(FixtureOutcome(status="error", execution_status="error")),
        "aaa_api": FixtureTool(
            outcomes=[FixtureOutcome()], description="An API.", mutating=True, tool_type="mcp"
        ),
    }
    out = await ActivityEnvironment().run(
        tool_activities().list_tools, ListToolsInput(scenario_tools=fixtures)
    )
    names = [t.name for t in out.tools]
    assert names == sorted(names)
    assert set(names) == set(BUILTIN_TOOLS) | {"aaa_api"}
    by_name = {t.name: t for t in out.tools}
    assert by_name["read_file"].parameters == {"type": "object"}
    assert by_name["aaa_api"].mutating
    assert by_name["aaa_api"].tool_type == "mcp"
    assert by_name["aaa_api"].description == "An API."
    shell = by_name["run_shell_command"]
    assert shell.mutating
    assert shell.tool_type == "native"
    assert shell.parameters == BUILTIN_TOOLS["run_shell_command"].args_model.model_json_schema()
    json.dumps(out.model_dump())


async def test_list_tools_without_fixtures_lists_the_builtins() -> None:
    out = await ActivityEnvironment().run(tool_activities().list_tools, ListToolsInput())
    assert [t.name for t in out.tools] == sorted(BUILTIN_TOOLS)


async def test_without_mcp_servers_the_local_listing_answers_as_the_activity_does() -> None:
    """docs/capacity.md, "Durable steps per prompt": with no MCP server configured the
    prompt's local activity lists exactly what the ``seawall.list_tools`` activity would."""
    fixtures = {"read_file": fixture(FixtureOutcome(status="error", execution_status="error"))}
    env = ActivityEnvironment()
    for request in (ListToolsInput(), ListToolsInput(scenario_tools=fixtures)):
        local = await env.run(tool_activities().list_tools_without_mcp, request)
        assert local == await env.run(tool_activities().list_tools, request)


async def test_check_tool_call_matches_what_a_run_would_refuse(ws: Path) -> None:
    env = ActivityEnvironment()
    for call in (
        tool_call("", {}),
        tool_call("nope", {}),
        tool_call("write_file", None, raw_arguments="[1]"),
        tool_call("write_file", {"path": "a.txt"}),
    ):
        checked = await env.run(tool_activities().check_tool_call, CheckToolCallInput(call=call))
        ran = await run(ws, call)
        assert checked == ran
        assert checked is not None
        assert checked.execution_status == "not_started"
    assert not (ws / "a.txt").exists()


async def test_check_tool_call_accepts_valid_and_fixture_calls(ws: Path) -> None:
    env = ActivityEnvironment()
    valid = tool_call("write_file", {"path": "a.txt", "content": "x"})
    check_tool_call = tool_activities().check_tool_call
    assert await env.run(check_tool_call, CheckToolCallInput(call=valid)) is None
    assert not (ws / "a.txt").exists()
    broken = tool_call("flaky_api", None, raw_arguments="{")
    checked = await env.run(
        check_tool_call, CheckToolCallInput(call=broken, scenario_fixture=FLAKY)
    )
    assert checked is None


class SurrogateTool(BuiltinTool):
    name: ClassVar[str] = "surrogate"
    description: ClassVar[str] = "Returns text that is not encodable as UTF-8."
    args_model: ClassVar[type[BaseModel]] = ExplodingArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        return "\ud800" * 50


async def test_unencodable_output_still_spills(ws: Path) -> None:
    tools: dict[str, BuiltinTool] = {"surrogate": SurrogateTool()}
    outcome = await run(ws, tool_call("surrogate", {}), tools, max_output_chars=10)
    assert (outcome.status, outcome.execution_status) == ("success", "success")
    assert (ws / SPILL_DIR / "c1.txt").exists()
