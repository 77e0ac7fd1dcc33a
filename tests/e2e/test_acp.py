"""`seawall acp` as an editor runs it: a subprocess spoken to with the ACP SDK's own client
side (``acp.spawn_agent_process``), on the real Temporal dev server and an in-process worker
(tests/conftest.py), plus one run of ``--embedded`` with its own server and worker."""

from __future__ import annotations

import asyncio
import json
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    McpServerStdio,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UserMessageChunk,
)
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from scripts.chat_server import ChatServer, error
from seawall.client.temporal_ops import prompt_handle, session_handle
from tests.trust_helpers import TEST_SIGNING_KEY
from workflows.contracts.prompt import StopReason
from workflows.seed.guard import REPEATED_TOOL_FAILURE_REMINDER, REPEATED_TOOL_FAILURE_STOP_MESSAGE
from workflows.seed.protections import TOOL_CALL_CAP_STOP_MESSAGE
from workflows.session import SessionWorkflow

SEAWALL = str(Path(sys.executable).parent / "seawall")
# The checkout under test: the bridge process imports it first (an editable install may
# point elsewhere, at another worktree).
REPO = str(Path(__file__).resolve().parents[2])
GUARD = "SEAWALL_REPEATED_TOOL_FAILURE_GUARD"
STUBBORN = "show me a stubborn loop"


class Recorder:
    """The editor: records every update synchronously (handlers run as tasks) and answers
    permission requests from a queue: "allow", "reject" or "cancelled"."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.answers: asyncio.Queue[str] = asyncio.Queue()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        answer = await self.answers.get()
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    def of(self, kind: type[Any]) -> list[Any]:
        return [u for u in self.updates if isinstance(u, kind)]

    def texts(self, kind: type[Any]) -> list[str]:
        return [u.content.text for u in self.of(kind)]


Bridge = tuple[ClientSideConnection, Recorder]
Spawn = Callable[..., Any]


def bridge_env(temporal_env: WorkflowEnvironment, task_queue: str, tmp: Path) -> dict[str, str]:
    return {
        "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "TEMPORAL_NAMESPACE": "default",
        "SEAWALL_TASK_QUEUE": task_queue,
        "SEAWALL_ALLOW_SCRIPTED_MODELS": "1",
        # The key the test worker verifies (tests/trust_helpers.py).
        "SEAWALL_SESSION_SIGNING_KEY": TEST_SIGNING_KEY,
        # The operator lets editors switch to any mode (unset: only the default's).
        "SEAWALL_LOOSEST_APPROVAL_MODE": "yolo",
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_DATA_HOME": str(tmp / "data-home"),
    }


@asynccontextmanager
async def spawn_bridge(
    env: dict[str, str],
    log: Path,
    *args: str,
    recorder: Recorder | None = None,
    capabilities: ClientCapabilities | None = None,
) -> AsyncIterator[tuple[ClientSideConnection, Recorder, Any]]:
    """One `seawall acp` process, initialized (advertising ``capabilities``); stderr goes
    to ``log`` (an undrained pipe would block the bridge's logging)."""
    recorder = recorder or Recorder()
    with log.open("ab") as errors:
        async with spawn_agent_process(
            recorder,  # type: ignore[arg-type]
            SEAWALL,
            "acp",
            *args,
            env={"PYTHONPATH": REPO, **env},
            transport_kwargs={"stderr": errors.fileno(), "shutdown_timeout": 60.0},
        ) as (conn, process):
            init = await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=capabilities,
                client_info=Implementation(name="pytest", version="0"),
            )
            assert init.protocol_version == PROTOCOL_VERSION
            yield conn, recorder, process


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    (path / "notes.txt").write_text("remember the milk\n")
    return path


@pytest.fixture
async def bridge(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path
) -> AsyncIterator[Bridge]:
    env = bridge_env(temporal_env, task_queue, tmp_path)
    async with spawn_bridge(env, tmp_path / "acp.stderr") as (conn, recorder, _):
        yield conn, recorder


def read(path: str) -> dict[str, Any]:
    return {"name": "read_file", "arguments": {"path": path}}


def write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def shell(command: str) -> dict[str, Any]:
    return {"name": "run_shell_command", "arguments": {"command": command}}


async def new_session(
    conn: ClientSideConnection, workspace: Path, script: list[dict[str, Any]] | None = None
) -> str:
    meta = {"seawall": {"modelScript": {"turns": script}}} if script is not None else {}
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[], **meta)
    return session.session_id


async def say(conn: ClientSideConnection, session_id: str, text: str) -> Any:
    return await conn.prompt(session_id=session_id, prompt=[text_block(text)])


async def until(check: Callable[[], Awaitable[Any] | Any], timeout: float = 120) -> Any:
    """Wait for another process's progress (a file, an update) to become visible."""

    async def poll() -> Any:
        while True:
            found = check()
            if asyncio.iscoroutine(found):
                found = await found
            if found:
                return found
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(poll(), timeout)


# --- the handshake and sessions -------------------------------------------------------------


async def test_the_handshake_advertises_load_session_and_speaks_version_1(
    bridge: Bridge, workspace: Path
) -> None:
    conn, _ = bridge
    answer = await conn.initialize(protocol_version=99)
    assert answer.protocol_version == 1
    assert answer.agent_capabilities is not None
    assert answer.agent_capabilities.load_session is True
    prompts = answer.agent_capabilities.prompt_capabilities
    assert prompts is not None and prompts.image is False and prompts.embedded_context is True
    assert answer.agent_info is not None and answer.agent_info.name == "seawall"
    assert answer.auth_methods == []

    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert session.modes is not None and session.modes.current_mode_id == "default"
    assert [m.id for m in session.modes.available_modes] == ["default", "auto_edit", "yolo"]

    with pytest.raises(RequestError) as relative:
        await conn.new_session(cwd="relative/dir", mcp_servers=[])
    assert relative.value.code == -32602 and "absolute" in str(relative.value)
    with pytest.raises(RequestError) as missing:
        await conn.new_session(cwd=str(workspace / "nope"), mcp_servers=[])
    assert missing.value.code == -32602
    with pytest.raises(RequestError) as unsupported:
        await conn.list_sessions()
    assert unsupported.value.code == -32601


# --- turns ------------------------------------------------------------------------------------


async def test_a_plain_turn_streams_its_tool_call_and_text_before_the_answer(
    bridge: Bridge, workspace: Path, tmp_path: Path
) -> None:
    conn, recorder = bridge
    script = [{"text": "Reading.", "tool_calls": [read("notes.txt")]}, {"text": "done"}]
    session_id = await new_session(conn, workspace, script)

    answer = await say(conn, session_id, "what do my notes say?")

    assert answer.stop_reason == "end_turn"
    assert answer.field_meta == {
        "seawall": {"promptId": f"{session_id}-prompt-1", "stopReason": "end_turn"}
    }
    kinds = [type(u) for u in recorder.updates]
    assert kinds == [AgentMessageChunk, ToolCallStart, ToolCallProgress, AgentMessageChunk]
    start, settled = recorder.of(ToolCallStart)[0], recorder.of(ToolCallProgress)[0]
    assert start.kind == "read" and start.title == "Read notes.txt"
    assert start.status == "in_progress"
    assert start.locations[0].path == str(workspace / "notes.txt")
    assert settled.tool_call_id == start.tool_call_id and settled.status == "completed"
    # The tool's output is shown on the settled call (only to the editor, never logged).
    [output] = settled.content
    assert "remember the milk" in output.content.text
    assert recorder.texts(AgentMessageChunk) == ["Reading.", "done"]
    # Two messages, two ids: a client does not join them.
    ids = [u.message_id for u in recorder.of(AgentMessageChunk)]
    assert ids[0] and ids[1] and ids[0] != ids[1]
    logged = (tmp_path / "acp.stderr").read_text()
    assert "remember the milk" not in logged


async def test_the_stubborn_demo_loop_is_reminded_then_stopped_in_enforce(
    bridge: Bridge, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(GUARD, "enforce")  # operator policy, read by the worker
    conn, recorder = bridge
    # Nothing a client sends is policy: not a channel marker, not a mode, not an MCP server.
    evil = McpServerStdio(name="evil", command="/bin/false", args=[], env=[])
    session = await conn.new_session(
        cwd=str(workspace), mcp_servers=[evil], channel=True, guard="off", seawall={}
    )
    session_id = session.session_id  # no script: the offline demo model

    answer = await say(conn, session_id, STUBBORN)

    assert answer.stop_reason == "end_turn"
    meta = answer.field_meta["seawall"]
    assert meta["stopReason"] == "loop_detected"
    assert meta["loopType"] == "repeated_tool_execution_failure"
    assert recorder.texts(AgentThoughtChunk) == [REPEATED_TOOL_FAILURE_REMINDER]
    messages = recorder.texts(AgentMessageChunk)
    assert messages.count(REPEATED_TOOL_FAILURE_STOP_MESSAGE) == 1
    assert messages[-1] == REPEATED_TOOL_FAILURE_STOP_MESSAGE
    failed = [u for u in recorder.of(ToolCallProgress) if u.status == "failed"]
    assert failed and all(u.content for u in failed)  # each says why

    # The session stays usable: the next turn runs with a fresh guard.
    recorder.updates.clear()
    again = await say(conn, session_id, "hello")
    assert again.stop_reason == "end_turn"
    assert again.field_meta["seawall"]["stopReason"] == "end_turn"
    assert "Demo model" in "".join(recorder.texts(AgentMessageChunk))  # streamed in pieces


async def test_the_stubborn_demo_loop_shows_nothing_of_the_guard_in_shadow(
    bridge: Bridge, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(GUARD, "shadow")
    conn, recorder = bridge
    session_id = await new_session(conn, workspace)

    answer = await say(conn, session_id, STUBBORN)

    assert recorder.texts(AgentThoughtChunk) == []
    assert REPEATED_TOOL_FAILURE_STOP_MESSAGE not in recorder.texts(AgentMessageChunk)
    # A loop the guard merely watches runs on: its calls differ, so the adaptive tool-call
    # cap lets it pass 100 calls, and the model-request bound ends the turn, as ACP's own
    # max_turn_requests.
    meta = answer.field_meta["seawall"]
    assert answer.stop_reason == "max_turn_requests"
    assert meta["stopReason"] == "max_turn_requests"
    assert TOOL_CALL_CAP_STOP_MESSAGE.format(cap=100) not in recorder.texts(AgentMessageChunk)


async def test_a_model_error_is_explained_and_the_session_stays_usable(
    bridge: Bridge, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, recorder = bridge
    session_id = await new_session(conn, workspace)
    async with ChatServer([error(401, "invalid api key")]) as endpoint:
        # The operator's endpoint, read by the worker on every request.
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        answer = await say(conn, session_id, "hello")

    assert answer.stop_reason == "end_turn"
    meta = answer.field_meta["seawall"]
    assert meta["stopReason"] == "error" and "model request failed" in meta["error"]
    [note] = recorder.texts(AgentMessageChunk)
    assert note.startswith("Seawall stopped this turn: model request failed")
    assert "still usable" in note

    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")
    again = await say(conn, session_id, "hello")
    assert again.stop_reason == "end_turn"
    assert again.field_meta["seawall"]["stopReason"] == "end_turn"


async def test_the_demo_loop_is_reminded_once_and_changes_course_in_warn(
    bridge: Bridge, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(GUARD, "warn")
    conn, recorder = bridge
    session_id = await new_session(conn, workspace)

    answer = await say(conn, session_id, "show me a loop")

    assert recorder.texts(AgentThoughtChunk) == [REPEATED_TOOL_FAILURE_REMINDER]
    assert REPEATED_TOOL_FAILURE_STOP_MESSAGE not in recorder.texts(AgentMessageChunk)
    assert answer.stop_reason == "end_turn"
    assert answer.field_meta["seawall"]["stopReason"] == "end_turn"


# --- permissions and modes ------------------------------------------------------------------


async def test_an_approved_write_runs_and_shows_its_diff(bridge: Bridge, workspace: Path) -> None:
    conn, recorder = bridge
    script = [{"tool_calls": [write("out.txt", "hello\n")]}, {"text": "written"}]
    session_id = await new_session(conn, workspace, script)
    recorder.answers.put_nowait("allow")

    answer = await say(conn, session_id, "write out.txt")

    assert answer.stop_reason == "end_turn"
    [(asked, options)] = recorder.permissions
    start = recorder.of(ToolCallStart)[0]
    assert asked.tool_call_id == start.tool_call_id and start.kind == "edit"
    assert [(o.option_id, o.kind) for o in options] == [
        ("allow", "allow_once"),
        ("allow_session", "allow_always"),
        ("reject", "reject_once"),
    ]
    diff = start.content[0]
    assert diff.type == "diff" and diff.path == str(workspace / "out.txt")
    assert diff.new_text == "hello\n"
    # Only forward: announced pending (it asks first), running once approved, then done.
    statuses = [start.status] + [u.status for u in recorder.of(ToolCallProgress)]
    assert statuses == ["pending", "in_progress", "completed"]
    assert asked.status == "pending"
    # The dialog shows what is approved: the diff, and where it writes.
    assert asked.content[0].type == "diff" and asked.content[0].new_text == "hello\n"
    assert [loc.path for loc in asked.locations] == [str(workspace / "out.txt")]
    assert (workspace / "out.txt").read_text() == "hello\n"
    # The settled card keeps the diff and shows the tool's output.
    done = recorder.of(ToolCallProgress)[-1]
    assert done.content[0].type == "diff"
    assert done.content[-1].type == "content" and done.content[-1].content.text


async def test_a_command_asks_with_the_command_shown_and_its_secret_redacted(
    bridge: Bridge, workspace: Path
) -> None:
    conn, recorder = bridge
    command = "curl -H 'Authorization: Bearer sk-live-0123456789abcdefghij' https://x.test"
    call = {"name": "run_shell_command", "arguments": {"command": command}}
    script = [{"tool_calls": [call]}, {"text": "not run"}]
    session_id = await new_session(conn, workspace, script)
    recorder.answers.put_nowait("reject")

    await say(conn, session_id, "fetch it")

    [(asked, _)] = recorder.permissions
    shown = asked.content[0].content.text
    assert shown.startswith("run_shell_command command=")
    assert "curl -H" in shown and "https://x.test" in shown
    assert "sk-live-0123456789abcdefghij" not in shown and "[redacted]" in shown


@pytest.mark.parametrize("answer", ["reject", "cancelled"])
async def test_a_rejected_or_dismissed_write_never_runs(
    bridge: Bridge, workspace: Path, answer: str
) -> None:
    conn, recorder = bridge
    script = [{"tool_calls": [write("out.txt", "hello\n")]}, {"text": "understood"}]
    session_id = await new_session(conn, workspace, script)
    recorder.answers.put_nowait(answer)

    response = await say(conn, session_id, "write out.txt")

    assert response.stop_reason == "end_turn"
    settled = recorder.of(ToolCallProgress)[-1]
    assert settled.status == "failed"
    assert "Rejected" in settled.content[0].content.text
    assert not (workspace / "out.txt").exists()
    assert recorder.texts(AgentMessageChunk) == ["understood"]


async def test_modes_switch_which_calls_ask(bridge: Bridge, workspace: Path) -> None:
    conn, recorder = bridge
    script = [{"tool_calls": [write("out.txt", "yolo\n")]}, {"text": "done"}]
    session_id = await new_session(conn, workspace, script)

    await conn.set_session_mode(session_id=session_id, mode_id="yolo")
    answer = await say(conn, session_id, "write out.txt")

    assert answer.stop_reason == "end_turn"
    assert recorder.permissions == []
    assert (workspace / "out.txt").read_text() == "yolo\n"
    with pytest.raises(RequestError) as bogus:
        await conn.set_session_mode(session_id=session_id, mode_id="bogus")
    assert bogus.value.code == -32602 and "bogus" in str(bogus.value)


async def test_a_mode_looser_than_the_operator_allows_is_neither_offered_nor_taken(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, workspace: Path
) -> None:
    env = {**bridge_env(temporal_env, task_queue, tmp_path)}
    del env["SEAWALL_LOOSEST_APPROVAL_MODE"]  # unset: the approval_mode ("default") only
    script = [{"tool_calls": [write("out.txt", "x")]}, {"text": "done"}]
    async with spawn_bridge(env, tmp_path / "acp.stderr") as (conn, _recorder, _):
        session = await conn.new_session(
            cwd=str(workspace), mcp_servers=[], seawall={"modelScript": {"turns": script}}
        )
        assert session.modes is not None
        assert [m.id for m in session.modes.available_modes] == ["default"]
        for looser in ("auto_edit", "yolo"):
            with pytest.raises(RequestError) as refused:
                await conn.set_session_mode(session_id=session.session_id, mode_id=looser)
            assert refused.value.code == -32602
            assert f"SEAWALL_LOOSEST_APPROVAL_MODE={looser} " in str(refused.value)
        await conn.set_session_mode(session_id=session.session_id, mode_id="default")


# --- cancel ---------------------------------------------------------------------------------


async def test_cancel_mid_batch_settles_the_call_as_failed_then_answers_cancelled(
    bridge: Bridge, workspace: Path, client: Client
) -> None:
    conn, recorder = bridge
    script = [
        {"tool_calls": [read("notes.txt"), shell("touch started; exec sleep 300")]},
        {"text": "still here"},
    ]
    session_id = await new_session(conn, workspace, script)
    await conn.set_session_mode(session_id=session_id, mode_id="yolo")
    turn = asyncio.create_task(say(conn, session_id, "run it"))
    await until(lambda: (workspace / "started").exists())

    await conn.cancel(session_id=session_id)
    answer = await asyncio.wait_for(turn, 120)

    assert answer.stop_reason == "cancelled"
    shell_call = next(u for u in recorder.of(ToolCallStart) if u.kind == "execute")
    settled = [
        u for u in recorder.of(ToolCallProgress) if u.tool_call_id == shell_call.tool_call_id
    ]
    assert [u.status for u in settled] == ["failed"]
    assert settled[0].content[0].content.text == "Cancelled"
    result = await prompt_handle(client, f"{session_id}-prompt-1").result()
    assert result.stop_reason is StopReason.CANCELLED

    recorder.updates.clear()
    again = await say(conn, session_id, "are you there?")
    assert again.stop_reason == "end_turn"
    assert recorder.texts(AgentMessageChunk) == ["still here"]


async def test_cancel_while_a_permission_dialog_is_open(bridge: Bridge, workspace: Path) -> None:
    conn, recorder = bridge
    script = [{"tool_calls": [write("out.txt", "x")]}, {"text": "after"}]
    session_id = await new_session(conn, workspace, script)
    turn = asyncio.create_task(say(conn, session_id, "write it"))
    await until(lambda: recorder.permissions)

    await conn.cancel(session_id=session_id)
    recorder.answers.put_nowait("cancelled")  # what a client does with its open dialogs
    answer = await asyncio.wait_for(turn, 120)

    assert answer.stop_reason == "cancelled"
    assert recorder.of(ToolCallProgress)[-1].status == "failed"
    assert not (workspace / "out.txt").exists()


async def test_cancel_withdraws_a_queued_prompt_and_cancels_the_running_one(
    bridge: Bridge, workspace: Path, client: Client
) -> None:
    conn, _ = bridge
    script = [{"tool_calls": [shell("touch started; exec sleep 300")]}, {"text": "never"}]
    session_id = await new_session(conn, workspace, script)
    await conn.set_session_mode(session_id=session_id, mode_id="yolo")
    first = asyncio.create_task(say(conn, session_id, "one"))
    await until(lambda: (workspace / "started").exists())
    second = asyncio.create_task(say(conn, session_id, "two"))
    session = session_handle(client, session_id)

    async def queued() -> bool:
        return bool((await session.query(SessionWorkflow.status)).queued_prompt_ids)

    await until(queued)

    await conn.cancel(session_id=session_id)
    answers = await asyncio.wait_for(asyncio.gather(first, second), 120)

    assert [a.stop_reason for a in answers] == ["cancelled", "cancelled"]
    with pytest.raises(RPCError) as never:
        await client.get_workflow_handle(f"{session_id}-prompt-2").describe()
    assert never.value.status is RPCStatusCode.NOT_FOUND


async def test_stdin_closing_cancels_the_prompt_the_bridge_followed(
    temporal_env: WorkflowEnvironment,
    task_queue: str,
    tmp_path: Path,
    workspace: Path,
    client: Client,
) -> None:
    env = {**bridge_env(temporal_env, task_queue, tmp_path), "SEAWALL_APPROVAL_MODE": "yolo"}
    script = [{"tool_calls": [shell("touch started; exec sleep 300")]}]
    async with spawn_bridge(env, tmp_path / "acp.stderr") as (conn, _, _):
        session_id = await new_session(conn, workspace, script)
        turn = asyncio.create_task(say(conn, session_id, "run it"))
        await until(lambda: (workspace / "started").exists())
    turn.cancel()
    result = await prompt_handle(client, f"{session_id}-prompt-1").result()
    assert result.stop_reason is StopReason.CANCELLED


# --- load -----------------------------------------------------------------------------------


async def test_load_after_the_bridge_restarts_replays_the_conversation(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, workspace: Path
) -> None:
    env = bridge_env(temporal_env, task_queue, tmp_path)
    script = [
        {"text": "Reading.", "tool_calls": [read("notes.txt")]},
        {"text": "done"},
        {"text": "again"},
    ]
    async with spawn_bridge(env, tmp_path / "acp.stderr") as (conn, live, _):
        session_id = await new_session(conn, workspace, script)
        assert (await say(conn, session_id, "read my notes")).stop_reason == "end_turn"

    async with spawn_bridge(env, tmp_path / "acp.stderr") as (conn, recorder, _):
        loaded = await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        # The replay names the call and the messages as the live turn did, and settles the
        # call with the same status and content (its output).
        for kind in (ToolCallStart, ToolCallProgress):
            assert [u.tool_call_id for u in recorder.of(kind)] == [
                u.tool_call_id for u in live.of(kind)
            ]
        assert [(u.status, u.content) for u in recorder.of(ToolCallProgress)] == [
            (u.status, u.content) for u in live.of(ToolCallProgress)
        ]
        assert [u.message_id for u in recorder.of(AgentMessageChunk)] == list(
            dict.fromkeys(u.message_id for u in live.of(AgentMessageChunk))
        )
        assert loaded.modes is not None and loaded.modes.current_mode_id == "default"
        kinds = [type(u) for u in recorder.updates]
        assert kinds == [
            UserMessageChunk,
            AgentMessageChunk,
            ToolCallStart,
            ToolCallProgress,
            AgentMessageChunk,
        ]
        assert recorder.updates[0].content.text == "read my notes"
        assert recorder.updates[3].status == "completed"
        assert recorder.texts(AgentMessageChunk) == ["Reading.", "done"]

        recorder.updates.clear()
        answer = await say(conn, session_id, "once more")
        assert answer.stop_reason == "end_turn"
        assert recorder.texts(AgentMessageChunk) == ["again"]

        with pytest.raises(RequestError) as unknown:
            await conn.load_session(cwd=str(workspace), session_id="nope", mcp_servers=[])
        assert unknown.value.code == -32002  # ACP's "resource not found"
        with pytest.raises(RequestError) as not_open:
            await say(conn, "not-a-session", "hello")
        assert not_open.value.code == -32002


async def test_a_scripted_model_needs_the_operators_permission(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, workspace: Path
) -> None:
    env = {**bridge_env(temporal_env, task_queue, tmp_path), "SEAWALL_ALLOW_SCRIPTED_MODELS": ""}
    async with spawn_bridge(env, tmp_path / "acp.stderr") as (conn, _, _):
        with pytest.raises(RequestError) as refused:
            await new_session(conn, workspace, [{"text": "scripted"}])
    assert refused.value.code == -32602
    assert "SEAWALL_ALLOW_SCRIPTED_MODELS" in str(refused.value)


async def test_a_prompt_of_a_session_whose_start_the_worker_refused_ends_with_the_refusal(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, workspace: Path
) -> None:
    # The bridge signs with a key the worker does not hold: it cannot know that, so
    # session/new succeeds, the worker refuses the start and the session's workflow fails.
    # The pending prompt must end with that refusal, not wait for a prompt that never runs.
    env = {
        **bridge_env(temporal_env, task_queue, tmp_path),
        "SEAWALL_SESSION_SIGNING_KEY": "not-the-workers-key-" + "x" * 32,
    }
    async with spawn_bridge(env, tmp_path / "acp.stderr") as (conn, _, _):
        session_id = await new_session(conn, workspace, [{"text": "never"}])
        with pytest.raises(RequestError) as refused:
            await say(conn, session_id, "hello")
    assert refused.value.code == -32600
    assert "no longer running" in str(refused.value)
    assert "session grant does not verify" in str(refused.value)
    assert (refused.value.data or {}).get("sessionId") == session_id


async def test_a_queued_prompt_of_a_terminated_session_ends_with_an_error(
    bridge: Bridge, workspace: Path, client: Client
) -> None:
    conn, _ = bridge
    script: list[dict[str, Any]] = [
        {"tool_calls": [shell("touch started; exec sleep 300")]},
        {"text": "never"},
    ]
    session_id = await new_session(conn, workspace, script)
    await conn.set_session_mode(session_id=session_id, mode_id="yolo")
    first = asyncio.create_task(say(conn, session_id, "one"))
    await until(lambda: (workspace / "started").exists())
    second = asyncio.create_task(say(conn, session_id, "two"))
    session = session_handle(client, session_id)

    async def queued() -> bool:
        return bool((await session.query(SessionWorkflow.status)).queued_prompt_ids)

    await until(queued)

    await session.terminate(reason="an operator ended it")
    with pytest.raises(RequestError) as ended:
        await second
    assert ended.value.code == -32600
    assert "no longer running: it was terminated" in str(ended.value)
    # The running prompt is cancelled with its session (the parent-close policy).
    assert (await first).stop_reason == "cancelled"


async def test_a_detached_prompt_runs_on_and_a_load_reattaches_to_it(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, workspace: Path
) -> None:
    env = {**bridge_env(temporal_env, task_queue, tmp_path), "SEAWALL_APPROVAL_MODE": "yolo"}
    wait = "touch started; while [ ! -f go ]; do sleep 0.05; done; echo released"
    script = [{"tool_calls": [shell(wait)]}, {"text": "finished"}]
    log = tmp_path / "acp.stderr"
    async with spawn_bridge(env, log, "--detach-on-exit") as (conn, _, _):
        session_id = await new_session(conn, workspace, script)
        turn = asyncio.create_task(say(conn, session_id, "wait for go"))
        await until(lambda: (workspace / "started").exists())
    turn.cancel()

    async with spawn_bridge(env, log) as (conn, recorder, _):
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        # The running prompt is followed again: its call, then, once released, its end.
        await until(lambda: recorder.of(ToolCallStart))
        (workspace / "go").touch()
        await until(lambda: "finished" in recorder.texts(AgentMessageChunk))
    [shell_call] = [u for u in recorder.of(ToolCallStart) if u.kind == "execute"]
    settled = [
        u for u in recorder.of(ToolCallProgress) if u.tool_call_id == shell_call.tool_call_id
    ]
    assert [u.status for u in settled] == ["completed"]


# --- the wire -------------------------------------------------------------------------------


async def test_garbage_on_stdin_gets_json_rpc_errors_and_the_bridge_lives_on(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path
) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": REPO}
    env.update(bridge_env(temporal_env, task_queue, tmp_path))
    with (tmp_path / "acp.stderr").open("wb") as errors:
        process = await asyncio.create_subprocess_exec(
            SEAWALL,
            "acp",
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=errors,
        )
        assert process.stdin is not None and process.stdout is not None
        lines = [
            b"this is not json\n",
            b"[1, 2, 3]\n",
            b'{"jsonrpc": "2.0", "id": 7, "method": 42}\n',
            b'{"jsonrpc": "2.0", "id": 8, "method": "session/prompt", "params": {}}\n',
            b'{"jsonrpc": "2.0", "id": 9, "method": "no/such/method", "params": {}}\n',
            b'{"jsonrpc": "2.0", "id": 10, "method": "initialize", '
            b'"params": {"protocolVersion": 1}}\n',
        ]
        for line in lines:
            process.stdin.write(line)
        await process.stdin.drain()
        answers: dict[Any, dict[str, Any]] = {}
        parse_errors: list[dict[str, Any]] = []
        while 10 not in answers:
            frame = json.loads(await asyncio.wait_for(process.stdout.readline(), 120))
            if frame.get("id") is None:
                parse_errors.append(frame["error"])
            else:
                answers[frame["id"]] = frame
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), 120) == 0

    assert sorted(e["code"] for e in parse_errors) == [-32700, -32600]
    assert answers[7]["error"]["code"] == -32600
    assert answers[8]["error"]["code"] == -32602
    assert answers[9]["error"]["code"] == -32601
    assert answers[10]["result"]["protocolVersion"] == 1
    # Logs went to stderr, as JSON lines.
    logged = (tmp_path / "acp.stderr").read_text().splitlines()
    assert any(json.loads(line).get("event") == "acp_malformed_input" for line in logged)


async def test_stdin_and_stdout_may_be_regular_files(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, workspace: Path
) -> None:
    # `seawall acp < requests.jsonl > answers.jsonl`: every request is answered before the
    # end of the file ends the bridge.
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(workspace), "mcpServers": []},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]},
        },
    ]
    inbox, outbox = tmp_path / "requests.jsonl", tmp_path / "answers.jsonl"
    inbox.write_text("".join(json.dumps(r) + "\n" for r in requests))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": REPO}
    env.update(bridge_env(temporal_env, task_queue, tmp_path))
    log = tmp_path / "acp.stderr"
    with inbox.open("rb") as stdin, outbox.open("wb") as stdout, log.open("wb") as errors:
        process = await asyncio.create_subprocess_exec(
            SEAWALL, "acp", env=env, stdin=stdin, stdout=stdout, stderr=errors
        )
        assert await asyncio.wait_for(process.wait(), 120) == 0, log.read_text()

    answers = {a["id"]: a for a in map(json.loads, outbox.read_text().splitlines())}
    assert answers[1]["result"]["protocolVersion"] == 1
    assert answers[2]["result"]["sessionId"]
    assert answers[3]["error"]["code"] == -32002
    assert "Traceback" not in log.read_text()


def assert_no_errors_logged(log: Path) -> None:
    text = log.read_text()
    assert "Traceback" not in text and "level=ERROR" not in text, text[-3000:]
    levels = [json.loads(line).get("level") for line in text.splitlines() if line.startswith("{")]
    assert "error" not in levels, text[-3000:]


# --- embedded -------------------------------------------------------------------------------


async def test_embedded_runs_its_own_server_and_worker_and_keeps_sessions(
    tmp_path: Path, workspace: Path
) -> None:
    env = {
        "SEAWALL_DATA_DIR": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "SEAWALL_TASK_QUEUE": "acp-embedded-test",
        # The editor folders the embedded worker accepts (docs/security-trust.md).
        "SEAWALL_EDITOR_WORKSPACES": str(tmp_path),
    }
    log = tmp_path / "acp.stderr"
    async with spawn_bridge(env, log, "--embedded") as (conn, recorder, _):
        session_id = await new_session(conn, workspace)  # the offline demo model
        answer = await say(conn, session_id, "hello")
        assert answer.stop_reason == "end_turn"
        assert "Demo model" in "".join(recorder.texts(AgentMessageChunk))  # streamed in pieces
    assert (tmp_path / "data" / "temporal.db").is_file()
    # Every owner's histories are the user's alone (docs/security-gateway.md).
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "data" / "temporal.db").stat().st_mode) == 0o600
    # A clean exit logs no error: the server's own output is in its log file, not the editor's.
    assert_no_errors_logged(log)
    server_log = tmp_path / "data" / "temporal-server.log"
    assert stat.S_IMODE(server_log.stat().st_mode) == 0o600

    # The editor restarts: the session is still there. This time the editor stops the agent
    # with SIGTERM (acpx does), which ends it as cleanly, its server and worker with it.
    async with spawn_bridge(env, log, "--embedded") as (conn, recorder, process):
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        assert recorder.texts(UserMessageChunk) == ["hello"]
        assert "Demo model" in "".join(recorder.texts(AgentMessageChunk))  # streamed in pieces
        process.terminate()
        assert await asyncio.wait_for(process.wait(), 60) == 0
    assert_no_errors_logged(log)

    # Its server is gone with it: a third start opens the same database.
    async with spawn_bridge(env, log, "--embedded") as (conn, recorder, _):
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        assert recorder.texts(UserMessageChunk) == ["hello"]
    assert_no_errors_logged(log)


async def test_embedded_refuses_at_session_new_a_folder_its_worker_would_refuse(
    tmp_path: Path, workspace: Path
) -> None:
    # No editor_workspaces: the embedded worker accepts folders under the home directory (and
    # the workspaces directory), so the bridge refuses ``workspace``, outside both, up front.
    home = tmp_path / "home"
    inside = home / "project"
    inside.mkdir(parents=True)
    env = {
        "HOME": str(home),
        "SEAWALL_DATA_DIR": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "SEAWALL_TASK_QUEUE": "acp-embedded-refusal-test",
    }
    async with spawn_bridge(env, tmp_path / "acp.stderr", "--embedded") as (conn, _, _):
        with pytest.raises(RequestError) as refused:
            await new_session(conn, workspace)
        with pytest.raises(RequestError) as not_loaded:
            await conn.load_session(cwd=str(workspace), session_id="any", mcp_servers=[])
        session_id = await new_session(conn, inside)
        answer = await say(conn, session_id, "hello")
    for answered in (refused.value, not_loaded.value):
        assert answered.code == -32602
        assert "editor_workspaces" in str(answered) and "workspaces" in str(answered)
        assert answered.data == {"cwd": str(workspace)}
    assert answer.stop_reason == "end_turn"


async def test_the_bridges_sessions_belong_to_the_configured_owner(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, workspace: Path
) -> None:
    # Rollout cohorts are assigned per owner: an editor's sessions belong to the operator's
    # SEAWALL_OWNER_ID (else the local user), recorded in the session's start input.
    env = {**bridge_env(temporal_env, task_queue, tmp_path), "SEAWALL_OWNER_ID": "dev-alice"}
    async with spawn_bridge(env, tmp_path / "acp.stderr") as (conn, _, _):
        session_id = await new_session(conn, workspace)
    history = await session_handle(temporal_env.client, session_id).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    (payload,) = started.input.payloads
    assert json.loads(payload.data)["owner_id"] == "dev-alice"
