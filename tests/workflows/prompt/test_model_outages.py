"""Model outages on a real Temporal dev server: the OpenAI-compatible provider against a chat
server really served over HTTP in-process (scripts/chat_server.py), down (connection refused,
500, 429) and back, or down past the prompt's retry window (docs/durability.md, "Model requests and
outages"). No mocks, no sleeps: the tests wait on the workflow's pending activity, polled with a
bound."""

from __future__ import annotations

import asyncio
import re
import socket
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHandle

from scripts.chat_server import ChatServer, Reply, completion, error, stream_events
from tests.activities.mcp_helpers import captured_logs
from tests.workflows.prompt.test_real_providers import (  # noqa: F401 (fixtures)
    OPENAI,
    chat,
    model_attempts,
    operator_env,
    run_prompt,
)
from workflows.contracts.prompt import ErrorReason, PromptInput, PromptResult, StopReason
from workflows.prompt.activity_options import MODEL_RETRY
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode

pytestmark = pytest.mark.asyncio

PROVIDER_TEXT = "backend exploded at shard 7"
# Retries the endpoint asks to come sooner than the backoff would (retry-after-ms).
SOON = {"retry-after-ms": "50"}
# How long the tests wait for a condition they poll (never a synchronisation sleep).
POLL_BOUND_SECONDS = 120.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def start_prompt(
    client: Client, task_queue: str, workspace: Path
) -> WorkflowHandle[PromptWorkflow, PromptResult]:
    return await client.start_workflow(
        PromptWorkflow.run,
        PromptInput(
            prompt="go", workspace_root=str(workspace), guard_mode=GuardMode.ENFORCE, model=OPENAI
        ),
        id=f"prompt-outage-{uuid.uuid4().hex[:10]}",
        task_queue=task_queue,
        result_type=PromptResult,
    )


async def until_model_attempt(handle: WorkflowHandle[PromptWorkflow, PromptResult], n: int) -> None:
    """Wait until the model activity is at attempt ``n`` or later (polled, bounded)."""
    async with asyncio.timeout(POLL_BOUND_SECONDS):
        while True:
            description = await handle.describe()
            if any(p.attempt >= n for p in description.raw_description.pending_activities):
                return
            await asyncio.sleep(0.1)


def cut_stream(text: str) -> Reply:
    """A reply whose stream carries ``text`` and then ends without a finish_reason."""
    events = stream_events(completion(text=text).body, include_usage=False)
    return Reply(events=events[:-2])  # without the finish chunk and [DONE]


async def test_an_endpoint_down_past_five_attempts_then_back_completes_the_prompt(
    operator_env: pytest.MonkeyPatch,  # noqa: F811
    client: Client,
    task_queue: str,
    tmp_path: Path,
) -> None:
    port = free_port()
    operator_env.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    operator_env.setenv("SEAWALL_MODEL", "local-test-model")
    handle = await start_prompt(client, task_queue, tmp_path)
    # Nothing listens yet: the first attempts are refused connections.
    await until_model_attempt(handle, 3)
    down = [error(500, PROVIDER_TEXT, headers=SOON)] * 3 + [error(429, "slow down", SOON)] * 2
    async with ChatServer([*down, completion(text="back again")], port=port) as server:
        result = await handle.result()

    assert result.stop_reason is StopReason.END_TURN
    assert result.messages[-1].content == "back again"
    assert result.model_requests == 1
    attempts = await model_attempts(client, result.workflow_id)
    # Two refused, five errors served, then the reply: more than the old policy's five.
    assert attempts[0] >= 2 + len(down) + 1 > (MODEL_RETRY.maximum_attempts or 0)
    assert len(server.requests) == len(down) + 1


async def test_an_endpoint_down_past_the_window_ends_the_prompt_with_the_truth(
    chat: ChatServer,  # noqa: F811
    operator_env: pytest.MonkeyPatch,  # noqa: F811
    client: Client,
    task_queue: str,
    tmp_path: Path,
) -> None:
    operator_env.setenv("SEAWALL_MODEL_RETRY_WINDOW_SECONDS", "3")
    chat.replies = lambda received: (
        cut_stream("Half an answer, then") if len(chat.requests) == 1 else error(500, PROVIDER_TEXT)
    )

    with captured_logs() as logs:
        result = await run_prompt(client, task_queue, tmp_path, OPENAI)

    assert result.stop_reason is StopReason.ERROR
    assert result.error_reason is ErrorReason.MODEL_RETRIES_EXHAUSTED
    # Every failed attempt was logged (the SDK's failure line, the provider's and the final
    # model_retries_exhausted), none with the endpoint's own words.
    assert any("model_retries_exhausted" in line for line in logs)
    assert any("Completing activity as failed" in line for line in logs)
    assert not [line for line in logs if PROVIDER_TEXT in line]
    assert result.error is not None
    stopped = re.search(r"retries stopped after (\d+) attempts over (\d+) s", result.error)
    assert stopped is not None, result.error
    # Counted from the first attempt: the second began at least the first backoff (1 s) later.
    assert int(stopped[1]) >= 2 and int(stopped[2]) >= 1
    assert result.error.startswith("the model endpoint failed (HTTP 500) and retries stopped")
    assert "3 s model retry window" in result.error
    assert "will retry" not in result.error
    assert PROVIDER_TEXT not in result.error
    # What happened is kept: the request, and the text the client had already been shown.
    assert result.model_requests == 1
    assert result.streamed_text == "Half an answer, then"
    assert len(chat.requests) >= 2
    assert (await model_attempts(client, result.workflow_id))[0] == len(chat.requests)


async def test_a_stream_without_usage_leaves_the_tokens_unknown(
    chat: ChatServer,  # noqa: F811
    client: Client,
    task_queue: str,
    tmp_path: Path,
) -> None:
    reply = completion(text="no usage here")
    del reply.body["usage"]
    chat.replies += [reply]

    result = await run_prompt(client, task_queue, tmp_path, OPENAI)

    assert result.stop_reason is StopReason.END_TURN
    assert (result.input_tokens, result.output_tokens) == (None, None)
    assert result.model_dump(mode="json")["input_tokens"] is None
