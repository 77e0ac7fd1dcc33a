"""`seawall acp` driven by ACP clients nobody here wrote, from the npm registry: ``acpx``
0.19.1 (a headless CLI client) and the TypeScript SDK ``@agentclientprotocol/sdk`` 2.4.0 (a
small client, tests/e2e/acp_node_client.mjs), beside the Python SDK's tests in test_acp.py.
Both are installed by the test setup into a cache outside the repository
(tests/e2e/npm_clients.py). The bridge runs on the test dev server and an in-process worker
(tests/conftest.py), and every frame it sends is validated against the SDK's JSON schema."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from seawall.client.temporal_ops import prompt_handle
from tests.e2e.npm_clients import NpmClients, installed_npm_clients
from tests.e2e.test_acp import GUARD, REPO, SEAWALL, STUBBORN, bridge_env
from workflows.contracts.activity import CALL_MODEL, RUN_TOOL
from workflows.seed.guard import REPEATED_TOOL_FAILURE_REMINDER, REPEATED_TOOL_FAILURE_STOP_MESSAGE

NODE_CLIENT = Path(__file__).with_name("acp_node_client.mjs")
RUN_TIMEOUT_SECONDS = 300
# The agent's requests and notifications to a client (everything else a client sends).
AGENT_METHODS = {
    "session/update",
    "session/request_permission",
    "$/cancel_request",
    "fs/read_text_file",
    "fs/write_text_file",
}
STATUS_ORDER = {"pending": 0, "in_progress": 1, "completed": 2, "failed": 2}


@pytest.fixture(scope="module")
def npm_clients() -> NpmClients:
    return installed_npm_clients()


@pytest.fixture(scope="module")
def agent_frame_schema(npm_clients: NpmClients) -> Draft202012Validator:
    """The schema of what an agent may send (the "Agent" branch of the SDK's schema)."""
    schema = json.loads(npm_clients.schema.read_text())
    [agent] = [branch for branch in schema["anyOf"] if branch.get("title") == "Agent"]
    return Draft202012Validator({**agent, "$defs": schema["$defs"]})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    (path / "notes.txt").write_text("remember the milk\n")
    return path


def client_env(temporal_env: WorkflowEnvironment, task_queue: str, tmp: Path) -> dict[str, str]:
    """What the npm client (and so the bridge it starts) runs with."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp / "home"),
        "PYTHONPATH": REPO,
        **bridge_env(temporal_env, task_queue, tmp),
    }


async def run(argv: list[str], env: dict[str, str], cwd: Path, stderr: Path) -> str:
    """Run a client to its end (the worker shares this event loop: never block it)."""
    with stderr.open("ab") as errors:
        process = await asyncio.create_subprocess_exec(
            *argv,
            env=env,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=errors,
        )
        out, _ = await asyncio.wait_for(process.communicate(), RUN_TIMEOUT_SECONDS)
    assert process.returncode == 0, stderr.read_text()[-3000:]
    return out.decode()


def assert_valid(validator: Draft202012Validator, frames: Iterable[dict[str, Any]]) -> int:
    count = 0
    for frame in frames:
        errors = sorted(validator.iter_errors(frame), key=lambda e: e.path)
        assert not errors, f"{frame}: {errors[0].message}"
        count += 1
    return count


def assert_forward_only(updates: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each tool call's statuses in order; none moves back."""
    statuses: dict[str, list[str]] = {}
    for update in updates:
        if update.get("sessionUpdate") in ("tool_call", "tool_call_update") and update.get(
            "status"
        ):
            statuses.setdefault(update["toolCallId"], []).append(update["status"])
    for call, seen in statuses.items():
        order = [STATUS_ORDER[status] for status in seen]
        assert order == sorted(order) and len(set(seen)) == len(seen), (call, seen)
    return statuses


def assert_messages_have_ids(updates: list[dict[str, Any]]) -> list[str]:
    chunks = [
        u for u in updates if u["sessionUpdate"] in ("agent_message_chunk", "agent_thought_chunk")
    ]
    assert chunks and all(chunk.get("messageId") for chunk in chunks)
    return list(dict.fromkeys(chunk["messageId"] for chunk in chunks))


def quiet(log: Path) -> None:
    """The bridge logged no error and no traceback."""
    text = log.read_text()
    assert "Traceback" not in text and "level=ERROR" not in text
    levels = [json.loads(line).get("level") for line in text.splitlines() if line.startswith("{")]
    assert "error" not in levels


# --- acpx -----------------------------------------------------------------------------------


def agent_frames(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of acpx's log of both directions, the frames the agent sent: its requests and
    notifications, and its answers to the client's requests."""
    client_pending: set[Any] = set()
    agent_pending: set[Any] = set()
    sent: list[dict[str, Any]] = []
    for frame in frames:
        method = frame.get("method")
        if method in AGENT_METHODS:
            sent.append(frame)
            if "id" in frame:
                agent_pending.add(frame["id"])
        elif method is not None:
            if "id" in frame:
                client_pending.add(frame["id"])
        elif frame.get("id") in agent_pending and "outcome" in (frame.get("result") or {}):
            agent_pending.discard(frame["id"])  # the client's answer to a permission request
        elif frame.get("id") in client_pending:
            client_pending.discard(frame["id"])
            sent.append(frame)
    return sent


async def test_acpx_runs_the_stubborn_demo_loop_to_its_stop(
    npm_clients: NpmClients,
    agent_frame_schema: Draft202012Validator,
    temporal_env: WorkflowEnvironment,
    task_queue: str,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(GUARD, "enforce")  # operator policy, read by the worker
    env = client_env(temporal_env, task_queue, tmp_path)
    log = tmp_path / "acpx.stderr"
    argv = [
        *npm_clients.acpx,
        "--agent",
        f"{SEAWALL} acp --log-format json",
        "--cwd",
        str(workspace),
        "--approve-all",
        "--format",
        "json",
        "exec",
        STUBBORN,
    ]

    out = await run(argv, env, tmp_path, log)

    frames = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    sent = agent_frames(frames)
    assert assert_valid(agent_frame_schema, sent) > 10
    [answer] = [f for f in sent if "result" in f and "stopReason" in f["result"]]
    meta = answer["result"]["_meta"]["seawall"]
    assert answer["result"]["stopReason"] == "end_turn"
    assert (meta["stopReason"], meta["loopType"]) == (
        "loop_detected",
        "repeated_tool_execution_failure",
    )
    updates = [f["params"]["update"] for f in sent if f.get("method") == "session/update"]
    texts = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_thought_chunk"]
    assert texts == [REPEATED_TOOL_FAILURE_REMINDER]
    stop = [u for u in updates if u.get("_meta", {}).get("seawall", {}).get("kind") == "stop"]
    assert [u["content"]["text"] for u in stop] == [REPEATED_TOOL_FAILURE_STOP_MESSAGE]
    statuses = assert_forward_only(updates)
    assert statuses and all(seen[-1] == "failed" for seen in statuses.values())
    # A failed call says why and shows what the tool said.
    failed = [u for u in updates if u.get("status") == "failed" and u.get("content")]
    assert failed and all(len(u["content"]) == 2 for u in failed)
    assert "does not exist" in failed[0]["content"][1]["content"]["text"]
    # Separate messages, separate ids: acpx does not join them.
    ids = assert_messages_have_ids(updates)
    assert len(ids) >= 3 and stop[0]["messageId"] == ids[-1]


async def test_acpx_writes_the_demo_note_through_its_own_file_system(
    npm_clients: NpmClients,
    agent_frame_schema: Draft202012Validator,
    temporal_env: WorkflowEnvironment,
    task_queue: str,
    tmp_path: Path,
    workspace: Path,
) -> None:
    # acpx offers fs/* by default; the operator lets editor sessions use it.
    env = {**client_env(temporal_env, task_queue, tmp_path), "SEAWALL_ACP_CLIENT_TOOLS": "fs"}
    argv = [
        *npm_clients.acpx,
        "--agent",
        f"{SEAWALL} acp --log-format json",
        "--cwd",
        str(workspace),
        "--approve-all",
        "--format",
        "json",
        "exec",
        "write a note: hello",
    ]

    out = await run(argv, env, tmp_path, tmp_path / "acpx.stderr")

    frames = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    sent = agent_frames(frames)
    assert_valid(agent_frame_schema, sent)
    [request] = [f for f in sent if f.get("method") == "fs/write_text_file"]
    assert request["params"]["path"] == str(workspace / "NOTES.md")
    assert (workspace / "NOTES.md").read_text() == request["params"]["content"]
    statuses = assert_forward_only(
        [f["params"]["update"] for f in sent if f.get("method") == "session/update"]
    )
    assert [seen[-1] for seen in statuses.values()] == ["completed"]


# --- the TypeScript SDK -------------------------------------------------------------------


async def run_node_client(
    npm_clients: NpmClients,
    scenario: str,
    env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
) -> tuple[dict[str, Any], list[dict[str, Any]], Path]:
    """Run one scenario of the Node client: what it saw, the frames the agent sent, and
    the bridge's log."""
    frames = tmp_path / f"{scenario}.frames.jsonl"
    log = tmp_path / f"{scenario}.stderr"
    argv = [
        "node",
        str(NODE_CLIENT),
        scenario,
        str(workspace),
        str(frames),
        SEAWALL,
        "acp",
        "--log-format",
        "json",
    ]
    out = await run(argv, {**env, "ACP_NPM_PREFIX": str(npm_clients.prefix)}, tmp_path, log)
    seen = json.loads(out.splitlines()[-1])
    sent = [json.loads(line) for line in frames.read_text().splitlines() if line.strip()]
    return seen, sent, log


async def test_the_typescript_sdk_sees_a_turn_with_an_approved_write(
    npm_clients: NpmClients,
    agent_frame_schema: Draft202012Validator,
    temporal_env: WorkflowEnvironment,
    task_queue: str,
    tmp_path: Path,
    workspace: Path,
) -> None:
    env = client_env(temporal_env, task_queue, tmp_path)

    seen, sent, log = await run_node_client(npm_clients, "turn", env, workspace, tmp_path)

    assert assert_valid(agent_frame_schema, sent) == len(sent) > 5
    assert seen["answer"]["stopReason"] == "end_turn" and seen["exitCode"] == 0
    assert (workspace / "out.txt").read_text() == "hello\n"
    prompt = f"{seen['sessionId']}-prompt-1"
    statuses = assert_forward_only(seen["updates"])
    assert statuses == {
        f"{prompt}/call_1_0": ["in_progress", "completed"],
        f"{prompt}/call_2_0": ["pending", "in_progress", "completed"],
    }
    [asked] = seen["permissions"]
    assert asked["toolCallId"] == f"{prompt}/call_2_0" and asked["status"] == "pending"
    settled = {
        u["toolCallId"]: u["content"]
        for u in seen["updates"]
        if u["sessionUpdate"] == "tool_call_update" and u["status"] == "completed"
    }
    assert settled[f"{prompt}/call_1_0"][0]["content"]["text"] == "remember the milk\n"
    assert settled[f"{prompt}/call_2_0"][0]["type"] == "diff"  # the edit keeps its diff
    assert assert_messages_have_ids(seen["updates"]) == [
        f"{prompt}/message-0",
        f"{prompt}/message-1",
        f"{prompt}/message-2",
    ]
    quiet(log)
    assert "remember the milk" not in log.read_text()  # tool output reaches the editor only


async def test_the_typescript_sdk_editor_serves_reads_and_writes_from_its_buffers(
    npm_clients: NpmClients,
    agent_frame_schema: Draft202012Validator,
    temporal_env: WorkflowEnvironment,
    task_queue: str,
    tmp_path: Path,
    workspace: Path,
) -> None:
    env = {**client_env(temporal_env, task_queue, tmp_path), "SEAWALL_ACP_CLIENT_TOOLS": "fs"}

    seen, sent, log = await run_node_client(npm_clients, "editor-fs", env, workspace, tmp_path)

    assert assert_valid(agent_frame_schema, sent) == len(sent)
    assert seen["answer"]["stopReason"] == "end_turn"
    out = str(workspace / "out.txt")
    assert seen["fsRequests"] == [["read", str(workspace / "notes.txt")], ["write", out]]
    # The read saw the editor's unsaved buffer; the write stayed in the editor's buffer.
    outputs = [
        block["content"]["text"]
        for u in seen["updates"]
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") == "completed"
        for block in u.get("content") or []
        if block["type"] == "content"
    ]
    assert "an edit the user has not saved\n" in outputs
    assert seen["buffers"][out] == "hello\n" and not (workspace / "out.txt").exists()
    assert len(seen["permissions"]) == 1  # the write still asked first
    quiet(log)
    assert "not saved" not in log.read_text() and out not in log.read_text()


async def test_the_typescript_sdk_cancels_mid_batch_and_no_new_call_starts(
    npm_clients: NpmClients,
    agent_frame_schema: Draft202012Validator,
    temporal_env: WorkflowEnvironment,
    task_queue: str,
    tmp_path: Path,
    workspace: Path,
    client: Client,
) -> None:
    env = client_env(temporal_env, task_queue, tmp_path)

    seen, sent, log = await run_node_client(npm_clients, "cancel", env, workspace, tmp_path)

    assert_valid(agent_frame_schema, sent)
    assert seen["answer"]["stopReason"] == "cancelled"
    assert seen["secondRan"] is False  # the model was not asked again, no call of it ran
    prompt = seen["answer"]["_meta"]["seawall"]["promptId"]
    first_turn = [u for u in seen["updates"] if u.get("toolCallId", "").startswith(f"{prompt}/")]
    started = {u["toolCallId"] for u in first_turn if u["sessionUpdate"] == "tool_call"}
    assert started == {f"{prompt}/call_1_0", f"{prompt}/call_1_1"}  # batch 1's, no other
    statuses = assert_forward_only(first_turn)
    assert statuses[f"{prompt}/call_1_1"] == ["in_progress", "failed"]
    # Once the cancel reached the prompt, it scheduled no model request and no tool call.
    history = await prompt_handle(client, prompt).fetch_history()
    kinds = [
        "cancel"
        if e.HasField("workflow_execution_cancel_requested_event_attributes")
        else e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("workflow_execution_cancel_requested_event_attributes")
        or e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert "cancel" in kinds
    after = kinds[kinds.index("cancel") :]
    assert CALL_MODEL not in after and RUN_TOOL not in after, kinds
    assert seen["again"]["stopReason"] == "end_turn"  # the session is still usable
    # `$/cancel_request` (sent when the prompt request was aborted) was taken, quietly.
    quiet(log)
    events = [json.loads(line).get("event") for line in log.read_text().splitlines()]
    assert "acp_cancel_request" in events


async def test_the_typescript_sdk_gets_acps_error_codes(
    npm_clients: NpmClients,
    agent_frame_schema: Draft202012Validator,
    temporal_env: WorkflowEnvironment,
    task_queue: str,
    tmp_path: Path,
    workspace: Path,
) -> None:
    env = client_env(temporal_env, task_queue, tmp_path)

    seen, sent, log = await run_node_client(npm_clients, "errors", env, workspace, tmp_path)

    assert_valid(agent_frame_schema, sent)
    assert seen["unknownPrompt"]["code"] == -32002  # ACP's "resource not found"
    assert seen["unknownLoad"]["code"] == -32002
    assert seen["badMode"]["code"] == -32602
    quiet(log)


async def test_acpx_with_an_embedded_agent_exits_without_an_error(
    npm_clients: NpmClients, tmp_path: Path, workspace: Path
) -> None:
    # acpx ends the agent's stdin, then signals it and its descendants (the embedded dev
    # server among them) with SIGTERM: the agent still ends cleanly, logging no error.
    log = tmp_path / "agent.stderr"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "PYTHONPATH": REPO,
        "SEAWALL_DATA_DIR": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "SEAWALL_TASK_QUEUE": "acpx-embedded-test",
        "SEAWALL_EDITOR_WORKSPACES": str(tmp_path),
    }
    # acpx keeps an agent's stderr to itself: the agent's own shell keeps it in a file.
    agent = f"sh -c 'exec {SEAWALL} acp --embedded --log-format json 2>>{log}'"
    argv = [*npm_clients.acpx, "--agent", agent, "--cwd", str(workspace), "--approve-all"]
    argv += ["--format", "json", "exec", "hello"]

    out = await run(argv, env, tmp_path, tmp_path / "acpx.stderr")

    frames = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    [answer] = [f for f in agent_frames(frames) if "stopReason" in (f.get("result") or {})]
    assert answer["result"]["stopReason"] == "end_turn"

    async def exited() -> None:
        # acpx may return before its agent has exited: wait until no process (the agent,
        # its dev server) names the data directory any more.
        while processes_naming(str(tmp_path / "data")):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(exited(), 60)
    events = [json.loads(line).get("event") for line in log.read_text().splitlines()]
    assert "acp_stopped" in events
    quiet(log)


def processes_naming(text: str) -> list[int]:
    """This user's processes whose command line or environment contains ``text``."""
    found = []
    needle = text.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if any(needle in (entry / part).read_bytes() for part in ("cmdline", "environ")):
                found.append(int(entry.name))
        except OSError:
            continue  # gone meanwhile, or not ours
    return found
