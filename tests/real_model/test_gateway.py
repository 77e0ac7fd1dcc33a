"""Prompts through the gateway to a real model (SmolLM2 on llama-server), with the endpoint
faults of the schedule (tests/real_model/fault_proxy.py): what a user of the HTTP API sees.

The model is tiny, so the tests assert behaviour that holds for any reply it gives (a
prompt finishes without error, a tool call it makes is executed and its result goes back to
the model, deltas arrive while the reply streams), never its words.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.real_model.conftest import Stack
from tests.real_model.fault_proxy import FaultProxy

# Every tool the worker offers the model (activities/tools).
BUILTIN_TOOLS = {
    "read_file",
    "write_file",
    "edit_file",
    "list_directory",
    "glob",
    "grep_search",
    "run_shell_command",
}
FINISHED = {"end_turn", "loop_detected", "max_turn_requests"}
# A question the model answers in words, and one it answers with a tool call, through the
# shipped chat template at temperature 0 (asserted by behaviour, not by words). The 135M
# model ignores a plain request to use a tool; a prompt that opens the template's
# <tool_call> form makes it write one, which llama-server parses into a streamed tool call.
CHAT = "Write one short sentence about the sea."
TOOL = '<tool_call> read_file {"path": "notes.txt"}'
PROMPT_BOUND_SECONDS = 600.0


class PromptRun:
    """One prompt: submitted to a new session, its events read live as a client would."""

    def __init__(self, http: httpx.AsyncClient, prompt_id: str) -> None:
        self.http = http
        self.prompt_id = prompt_id
        self.events: list[dict[str, Any]] = []
        self.first_delta = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        url = f"/v1/prompts/{self.prompt_id}/events"
        async with self.http.stream("GET", url, timeout=None) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[len("data: ") :])
                    self.events.append(event)
                    if event["kind"] == "message_delta":
                        self.first_delta.set()

    async def finished(self) -> dict[str, Any]:
        """The prompt's result, once its event stream has ended with ``prompt_finished``."""
        await asyncio.wait_for(self._reader, PROMPT_BOUND_SECONDS)
        assert self.events[-1]["kind"] == "prompt_finished", self.events[-3:]
        view = (await self.http.get(f"/v1/prompts/{self.prompt_id}")).json()
        assert view["result"] is not None, view
        result: dict[str, Any] = view["result"]
        return result

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] == kind]


@pytest.fixture
async def http(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=stack.url, timeout=60) as client:
        yield client


async def start(
    http: httpx.AsyncClient, stack: Stack, text: str, files: dict[str, str] | None = None
) -> PromptRun:
    # yolo: whatever the model calls runs (sandboxed) without a permission round trip.
    created = await http.post("/v1/sessions", json={"approval_mode": "yolo"})
    assert created.status_code == 201, created.text
    session_id = created.json()["session_id"]
    workspace = stack.workspaces / session_id
    for name, content in (files or {}).items():
        Path(workspace, name).parent.mkdir(parents=True, exist_ok=True)
        Path(workspace, name).write_text(content)
    submitted = await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": text})
    assert submitted.status_code == 202, submitted.text
    return PromptRun(http, submitted.json()["prompt_id"])


def assert_answered(result: dict[str, Any], run: PromptRun) -> None:
    """The prompt ended as a finished turn, and the model's reply reached the client."""
    assert result["stop_reason"] in FINISHED, result.get("error")
    assert result["error"] is None
    assert result["model_requests"] >= 1
    assistant = [m for m in result["messages"] if m["role"] == "assistant"]
    assert assistant, result["messages"]
    assert run.of("agent_message") or run.of("tool_call_started")


# --- healthy endpoint -----------------------------------------------------------------------


async def test_a_reply_streams_while_the_model_is_still_answering(
    http: httpx.AsyncClient, stack: Stack, endpoint: FaultProxy
) -> None:
    # Slow stream: every chunk late, and the stream held after its first text.
    slow = endpoint.slow_stream(chunk_delay=0.1)
    run = await start(http, stack, CHAT)

    await asyncio.wait_for(run.first_delta.wait(), PROMPT_BOUND_SECONDS)
    # The client has text while the endpoint has not finished the reply.
    assert slow.holding.is_set() and not slow.finished.is_set()
    endpoint.release()
    result = await run.finished()

    assert_answered(result, run)
    # The pieces streamed add up to the reply the client is then given whole.
    [message, *_] = run.of("agent_message")
    pieces = [e for e in run.of("message_delta") if e["batch"] == message["batch"]]
    assert len(pieces) >= 2
    assert "".join(e["text"] or "" for e in pieces) == message["text"]
    # The tools went to the model with the request (the template renders them).
    assert {t["function"]["name"] for t in endpoint.requests[0]["tools"]} >= {"read_file"}
    assert endpoint.requests[0]["stream"] is True


async def test_a_tool_call_of_the_model_is_executed_and_answered(
    http: httpx.AsyncClient, stack: Stack, endpoint: FaultProxy
) -> None:
    run = await start(http, stack, TOOL, files={"notes.txt": "remember the milk\n"})
    result = await run.finished()

    assert result["stop_reason"] in FINISHED, result.get("error")
    [started, *_] = run.of("tool_call_started")
    assert started["tool_name"] in BUILTIN_TOOLS
    settled = {e["call_id"]: e for e in run.of("tool_call_settled")}
    assert started["call_id"] in settled
    # The call's outcome went back to the model in the next request.
    assert len(endpoint.requests) >= 2
    answered = [m for m in endpoint.requests[1]["messages"] if m["role"] == "tool"]
    assert answered and answered[0]["tool_call_id"] == started["call_id"]


# --- the fault schedule ---------------------------------------------------------------------


async def test_a_prompt_survives_its_endpoint_killed_for_a_few_seconds(
    http: httpx.AsyncClient, stack: Stack, endpoint: FaultProxy
) -> None:
    endpoint.kill(seconds=5)
    run = await start(http, stack, CHAT)
    result = await run.finished()

    assert endpoint.refused == 1 and endpoint.forwarded >= 1
    assert_answered(result, run)


async def test_a_prompt_survives_a_hung_endpoint(
    http: httpx.AsyncClient, stack: Stack, endpoint: FaultProxy
) -> None:
    # Longer than one request's timeout (MODEL_TIMEOUT_SECONDS): the first attempt times
    # out, and so may the next, before one is answered.
    endpoint.hang(seconds=20)
    run = await start(http, stack, CHAT)
    result = await run.finished()

    assert endpoint.hung >= 1 and endpoint.forwarded >= 1
    assert_answered(result, run)


async def test_a_prompt_survives_rate_limits_and_server_errors(
    http: httpx.AsyncClient, stack: Stack, endpoint: FaultProxy
) -> None:
    endpoint.fail(429, count=2)
    endpoint.fail(500, count=2)
    run = await start(http, stack, CHAT)
    result = await run.finished()

    assert endpoint.failed == 4 and endpoint.forwarded >= 1
    assert_answered(result, run)


async def test_a_prompt_survives_an_outage_longer_than_five_quick_attempts(
    http: httpx.AsyncClient, stack: Stack, endpoint: FaultProxy
) -> None:
    # Five attempts 1-8 s apart gave up after about 15 s (issue 26); retries now last the
    # operator's model_retry_window_seconds (GATEWAY_RETRY_WINDOW_SECONDS here).
    endpoint.kill(seconds=40)
    run = await start(http, stack, CHAT)
    result = await run.finished()

    assert endpoint.refused == 1 and endpoint.forwarded >= 1
    assert_answered(result, run)
