"""`seawall acp --embedded` as an editor runs it, spoken to with the ACP Python SDK's client
(the helpers of tests/e2e/test_acp.py), its worker's model the real SmolLM2 behind the
fault proxy: a streamed reply, a tool call the editor sees run, and an outage longer than
the operator's retry window that ends the turn with a truthful error and leaves the session
usable.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp.client.connection import ClientSideConnection
from acp.schema import AgentMessageChunk, ToolCallProgress, ToolCallStart

from tests.e2e.test_acp import Recorder, new_session, say, spawn_bridge
from tests.real_model.conftest import model_env
from tests.real_model.fault_proxy import FaultProxy
from tests.real_model.test_gateway import CHAT, TOOL

# The ACP stop reasons of a turn that finished (not an error, not a cancel).
FINISHED = {"end_turn", "max_turn_requests"}
SEAWALL_FINISHED = {"end_turn", "loop_detected", "max_turn_requests"}
# Short, so an outage outlasts it within the test (docs/settings.md).
SHORT_RETRY_WINDOW_SECONDS = 5


@asynccontextmanager
async def embedded(
    tmp_path: Path, endpoint: FaultProxy, queue: str, **settings: str
) -> AsyncIterator[tuple[ClientSideConnection, Recorder]]:
    env = {
        **model_env(endpoint.url),
        **settings,
        "SEAWALL_DATA_DIR": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "SEAWALL_TASK_QUEUE": queue,
        # The editor folders the embedded worker accepts (docs/security-trust.md).
        "SEAWALL_EDITOR_WORKSPACES": str(tmp_path),
    }
    async with spawn_bridge(env, tmp_path / "acp.stderr", "--embedded") as (conn, recorder, _):
        yield conn, recorder


def workspace_with_notes(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("remember the milk\n")
    return workspace


def seawall_meta(answer: Any) -> dict[str, Any]:
    meta: dict[str, Any] = answer.field_meta["seawall"]
    return meta


async def test_a_real_reply_streams_and_a_tool_call_runs_in_the_editor(
    tmp_path: Path, endpoint: FaultProxy
) -> None:
    workspace = workspace_with_notes(tmp_path)
    async with embedded(tmp_path, endpoint, "acp-real-model") as (conn, recorder):
        session_id = await new_session(conn, workspace)
        # yolo: whatever the model calls runs (sandboxed) without asking the editor.
        await conn.set_session_mode(session_id=session_id, mode_id="yolo")

        chat = await say(conn, session_id, CHAT)
        assert chat.stop_reason in FINISHED
        assert seawall_meta(chat)["stopReason"] in SEAWALL_FINISHED
        assert "".join(recorder.texts(AgentMessageChunk)).strip()

        # A fresh conversation: the tiny model's answer depends on everything before it.
        recorder.updates.clear()
        session_id = await new_session(conn, workspace)
        await conn.set_session_mode(session_id=session_id, mode_id="yolo")
        tool = await say(conn, session_id, TOOL)
        assert tool.stop_reason in FINISHED
        assert seawall_meta(tool)["stopReason"] in SEAWALL_FINISHED
        [start, *_] = recorder.of(ToolCallStart)
        settled = [
            u
            for u in recorder.of(ToolCallProgress)
            if u.tool_call_id == start.tool_call_id and u.status in ("completed", "failed")
        ]
        assert settled, [u.status for u in recorder.of(ToolCallProgress)]
        # The call's outcome went back to the model.
        results = [m for r in endpoint.requests for m in r["messages"] if m["role"] == "tool"]
        # (the editor's id is the prompt's, a slash, then the model's call id)
        assert any(start.tool_call_id.endswith("/" + m["tool_call_id"]) for m in results)


async def test_an_outage_past_the_retry_window_ends_the_turn_truthfully(
    tmp_path: Path, endpoint: FaultProxy
) -> None:
    workspace = workspace_with_notes(tmp_path)
    window = {"SEAWALL_MODEL_RETRY_WINDOW_SECONDS": str(SHORT_RETRY_WINDOW_SECONDS)}
    async with embedded(tmp_path, endpoint, "acp-real-model-outage", **window) as (
        conn,
        recorder,
    ):
        session_id = await new_session(conn, workspace)
        # Down for far longer than the window: the turn must end, not wait it out.
        endpoint.kill(seconds=3600)
        failed = await say(conn, session_id, CHAT)

        assert endpoint.refused == 1 and endpoint.forwarded == 0
        meta = seawall_meta(failed)
        assert meta["stopReason"] == "error"
        error = meta["error"]
        assert "model" in error
        # The truth: retries are over, not "(will retry)".
        assert "will retry" not in error
        [note] = recorder.texts(AgentMessageChunk)
        assert note.startswith("Seawall stopped this turn")
        assert "will retry" not in note

        # The endpoint comes back: the same session answers again.
        await endpoint.heal()
        recorder.updates.clear()
        again = await say(conn, session_id, CHAT)
        assert again.stop_reason in FINISHED
        assert seawall_meta(again)["stopReason"] in SEAWALL_FINISHED
        assert endpoint.forwarded >= 1
