"""PromptWorkflow with real providers on a real Temporal dev server and in-process worker:
the OpenAI-compatible provider against a local chat-completions server (real sockets), and
tools from a real MCP server subprocess. No mocks.

The provider and MCP settings are set in the environment before the ``task_queue`` fixture
starts the worker (fixture order), and are read by the worker's activities.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.client import Client

from scripts.chat_server import ChatServer, completion, error, tool_call
from tests.activities.mcp_helpers import (
    SERVER,
    captured_logs,
    qualified,
    servers_env,
    stdio_server,
)
from tests.scenario_helpers import decisions, reminders, stops, tool_messages
from workflows.contracts import Role
from workflows.contracts.activity import CALL_MODEL, ModelSpec
from workflows.contracts.prompt import (
    ErrorReason,
    LoopType,
    PromptInput,
    PromptResult,
    StopReason,
)
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode

pytestmark = pytest.mark.asyncio

API_KEY = "sk-workflow-test-KEY-42"


@pytest.fixture
def operator_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[pytest.MonkeyPatch]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "operator-config"))
    for name in (
        "SEAWALL_MODEL",
        "SEAWALL_MODEL_TEMPERATURE",
        "SEAWALL_MODEL_MAX_TOKENS",
        "SEAWALL_MODEL_TIMEOUT_SECONDS",
        "SEAWALL_MCP_SERVERS",
        "OPENAI_CUSTOM_HEADERS",
    ):
        monkeypatch.delenv(name, raising=False)
    yield monkeypatch


@pytest_asyncio.fixture
async def chat(operator_env: pytest.MonkeyPatch) -> AsyncIterator[ChatServer]:
    """A chat-completions server the worker's ``openai`` provider is pointed at."""
    async with ChatServer() as server:
        operator_env.setenv("OPENAI_BASE_URL", server.url)
        operator_env.setenv("OPENAI_API_KEY", API_KEY)
        operator_env.setenv("SEAWALL_MODEL", "local-test-model")
        yield server


@pytest.fixture
def mcp_servers(operator_env: pytest.MonkeyPatch) -> None:
    """The fixture MCP server under a sentinel name (trusted: its tools run unasked). The
    test's worker starts it, and stops it when the worker shuts down."""
    operator_env.setenv("SEAWALL_MCP_SERVERS", servers_env({SERVER: stdio_server(trust=True)}))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The MCP prompts' workspace: a folder beside the operator's config directory (under
    ``tmp_path`` too), never containing it, since the sandbox refuses a workspace that holds
    the worker's configuration (docs/security-sandbox.md, "How": a hostile workspace root)."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path


async def run_prompt(
    client: Client,
    task_queue: str,
    workspace: Path,
    model: ModelSpec | ModelScript,
    prompt: str = "go",
) -> PromptResult:
    """Run a prompt against ``model``: a provider, or a script through the scenario channel."""
    scenario = ScenarioHooks(model_script=model) if isinstance(model, ModelScript) else None
    return await client.execute_workflow(
        PromptWorkflow.run,
        PromptInput(
            prompt=prompt,
            workspace_root=str(workspace),
            guard_mode=GuardMode.ENFORCE,
            model=model if isinstance(model, ModelSpec) else ModelSpec(),
            scenario=scenario,
        ),
        id=f"prompt-real-{uuid.uuid4().hex[:10]}",
        task_queue=task_queue,
        result_type=PromptResult,
    )


async def model_attempts(client: Client, workflow_id: str) -> list[int]:
    """The attempt number of every model activity, as recorded in history."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    scheduled = {
        event.event_id: event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.HasField("activity_task_scheduled_event_attributes")
    }
    return [
        event.activity_task_started_event_attributes.attempt
        for event in history.events
        if event.HasField("activity_task_started_event_attributes")
        and scheduled[event.activity_task_started_event_attributes.scheduled_event_id] == CALL_MODEL
    ]


OPENAI = ModelSpec(provider="openai")


# --- the OpenAI-compatible provider -----------------------------------------------------------


async def test_tool_calls_round_trip_through_the_prompt(
    chat: ChatServer, client: Client, task_queue: str, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk")
    chat.replies += [
        completion(tool_calls=[tool_call("read_file", '{"path": "notes.txt"}', "call_r1")]),
        completion(text="Your notes say: remember the milk.", prompt_tokens=40),
    ]

    result = await run_prompt(client, task_queue, tmp_path, OPENAI, prompt="read my notes")

    assert result.stop_reason is StopReason.END_TURN
    assert result.model_requests == 2
    assert result.tool_calls.executed == 1
    assert result.messages[-1].content == "Your notes say: remember the milk."
    assert (result.input_tokens, result.output_tokens) == (11 + 40, 7 + 7)
    first, second = chat.bodies()
    assert first["model"] == "local-test-model"
    assert {tool["function"]["name"] for tool in first["tools"]} >= {"read_file", "write_file"}
    assert first["messages"] == [{"role": "user", "content": "read my notes"}]
    assistant, tool_result = second["messages"][1:]
    assert assistant["tool_calls"][0]["function"] == {
        "name": "read_file",
        "arguments": '{"path": "notes.txt"}',
    }
    assert tool_result["role"] == "tool" and tool_result["tool_call_id"] == "call_r1"
    assert "remember the milk" in tool_result["content"]
    assert chat.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


async def test_rate_limited_request_is_retried_by_temporal(
    chat: ChatServer, client: Client, task_queue: str, tmp_path: Path
) -> None:
    chat.replies += [
        error(429, "Rate limit reached for requests", headers={"retry-after": "1"}),
        completion(text="made it"),
    ]

    result = await run_prompt(client, task_queue, tmp_path, OPENAI)

    assert result.stop_reason is StopReason.END_TURN
    assert result.messages[-1].content == "made it"
    assert len(chat.requests) == 2
    # Temporal retried the activity after the server's retry-after, not the SDK.
    assert chat.times[1] - chat.times[0] >= 0.9
    assert await model_attempts(client, result.workflow_id) == [2]


async def test_rejected_request_fails_the_prompt_without_retries(
    chat: ChatServer, client: Client, task_queue: str, tmp_path: Path
) -> None:
    chat.replies += [error(400, "Invalid value for 'model': no such model")]

    result = await run_prompt(client, task_queue, tmp_path, OPENAI)

    assert result.stop_reason is StopReason.ERROR
    assert result.error is not None
    assert "HTTP 400" in result.error
    assert "Invalid value for 'model': no such model" in result.error
    assert API_KEY not in result.error
    assert result.error_reason is ErrorReason.MODEL_REQUEST_REJECTED
    # The request was made (and refused), so it counts.
    assert result.model_requests == 1
    assert len(chat.requests) == 1
    assert await model_attempts(client, result.workflow_id) == [1]


async def test_malformed_arguments_three_times_stop_the_prompt(
    chat: ChatServer, client: Client, task_queue: str, tmp_path: Path
) -> None:
    broken = ['{"path": "notes.txt"', '{"path": notes.txt}', "{path: 'notes.txt'}"]
    chat.replies += [
        completion(tool_calls=[tool_call("read_file", text, f"call_bad_{i}")])
        for i, text in enumerate(broken)
    ]
    chat.replies.append(completion(text="never reached"))

    result = await run_prompt(client, task_queue, tmp_path, OPENAI)

    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert result.loop_type is LoopType.INVALID_TOOL_PARAMS_STAGNATION
    assert result.model_requests == 3
    assert len(chat.requests) == 3
    results = tool_messages(result)
    assert len(results) == 3
    assert all("must be a JSON object" in m.content for m in results)
    assert result.messages[-1].role is Role.SYSTEM
    assert result.input_tokens == 3 * 11
    # The broken calls went back to the model as valid JSON, with the explanation.
    replayed = chat.requests[2].body["messages"]
    assert replayed[1]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert "must be a JSON object" in replayed[2]["content"]


# --- MCP tools ------------------------------------------------------------------------------


async def test_mcp_tool_failing_the_same_way_is_warned_then_stopped(
    mcp_servers: None, client: Client, task_queue: str, workspace: Path
) -> None:
    failing = qualified("always_fails")

    def batch(numbers: range) -> dict[str, Any]:
        return {"tool_calls": [{"name": failing, "arguments": {"n": n}} for n in numbers]}

    script = ModelScript.model_validate(
        {"turns": [batch(range(0, 4)), batch(range(4, 8)), batch(range(8, 9))]}
    )

    with captured_logs() as logs:
        result = await run_prompt(client, task_queue, workspace, script, prompt="use the backend")

    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert result.loop_type is LoopType.REPEATED_TOOL_EXECUTION_FAILURE
    assert decisions(result) == ["tracked", "warn", "stop"]
    assert reminders(result) == 1
    assert stops(result) == 1
    assert result.tool_calls.executed == 9
    outputs = tool_messages(result)
    assert len(outputs) == 9
    assert all("backend unavailable" in m.content for m in outputs)
    # The server name is in the tool names the model uses, and nowhere in telemetry.
    guard_entries = json.dumps([entry.model_dump(mode="json") for entry in result.guard])
    assert SERVER not in guard_entries
    # The capture saw the guard's own telemetry records.
    assert any("guard_transition" in text or "guard transition" in text for text in logs)
    leaks = [text for text in logs if SERVER in text]
    assert leaks == []


async def test_mcp_tools_are_listed_once_and_called_from_a_prompt(
    mcp_servers: None, client: Client, task_queue: str, workspace: Path
) -> None:
    script = ModelScript.model_validate(
        {
            "turns": [
                {"tool_calls": [{"name": qualified("pid"), "arguments": {}}]},
                {"tool_calls": [{"name": qualified("echo"), "arguments": {"text": "hi"}}]},
                {"tool_calls": [{"name": qualified("pid"), "arguments": {}}]},
                {"text": "done"},
            ]
        }
    )

    result = await run_prompt(client, task_queue, workspace, script)

    assert result.stop_reason is StopReason.END_TURN
    first_pid, echoed, second_pid = (m.content for m in tool_messages(result))
    assert echoed == "hi"
    assert first_pid == second_pid  # one server process served the whole prompt
    history = await client.get_workflow_handle(result.workflow_id).fetch_history()
    listed = [
        e
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
        and e.activity_task_scheduled_event_attributes.activity_type.name == "seawall.list_tools"
    ]
    assert len(listed) == 1


async def test_refused_mcp_repeat_keeps_the_server_name_out_of_logs(
    mcp_servers: None, client: Client, task_queue: str, workspace: Path
) -> None:
    same = {"name": qualified("always_fails"), "arguments": {"n": 1}}
    script = ModelScript.model_validate(
        {"turns": [{"tool_calls": [same]}, {"tool_calls": [same]}, {"text": "giving up"}]}
    )

    with captured_logs() as logs:
        result = await run_prompt(client, task_queue, workspace, script)

    assert result.tool_calls.executed == 1
    assert result.tool_calls.refused == 1
    assert any("refus" in text or "repeat" in text for text in logs)
    assert [text for text in logs if SERVER in text] == []
