"""``send_prompt`` against the real gateway served by uvicorn on a real port, with a real
dev server and worker behind it: what the terminal shows, and the exit codes."""

from __future__ import annotations

import argparse
import asyncio
import io
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from temporalio.client import Client

from scripts.chat_server import ChatServer, completion, error
from seawall.cli.prompt import (
    EXIT_LOOP_STOPPED,
    EXIT_TURN_CAP,
    _Printer,
    add_prompt_arguments,
    main_prompt,
    send_prompt,
    stop_line,
)
from tests.seawall.cli.gateway_server import TOKEN, serve_gateway
from workflows.seed.guard import REPEATED_TOOL_FAILURE_REMINDER, REPEATED_TOOL_FAILURE_STOP_MESSAGE


@pytest_asyncio.fixture
async def gateway_url(client: Client, task_queue: str, tmp_path: Path) -> AsyncIterator[str]:
    async with serve_gateway(
        client, task_queue=task_queue, workspaces=tmp_path / "workspaces"
    ) as url:
        yield url


async def test_hello_streams_to_the_terminal(gateway_url: str) -> None:
    out = io.StringIO()
    code = await send_prompt(gateway_url, "hello", token=TOKEN, out=out)
    assert code == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("session ")
    session_id = lines[0].removeprefix("session ")
    assert lines[1:5] == [
        f"prompt {session_id}-prompt-1",
        "Let me look at the workspace.",
        "→ list_directory",
        "← list_directory success",
    ]
    assert lines[5].startswith("Demo model: the workspace lists")
    assert lines[6:] == ["stop: end_turn"]


async def test_guard_stop_in_an_existing_session(
    gateway_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SEAWALL_REPEATED_TOOL_FAILURE_GUARD", "enforce")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    async with httpx.AsyncClient(
        base_url=gateway_url, headers={"Authorization": f"Bearer {TOKEN}"}
    ) as http:
        created = await http.post("/v1/sessions", json={})
        session_id = created.json()["session_id"]

    out = io.StringIO()
    code = await send_prompt(
        gateway_url, "show me a stubborn loop", session_id=session_id, token=TOKEN, out=out
    )
    assert code == EXIT_LOOP_STOPPED == 3
    lines = out.getvalue().splitlines()
    assert lines[0] == f"prompt {session_id}-prompt-1"
    # Each batch: the model's text, four reads, four failures, each with its reason; the
    # four identical lines of a kind are one line and its count.
    batch = [
        "Looking for the file…",
        "→ read_file",
        "  … ×4",
        "← read_file error: not found",
        "  … ×4",
    ]
    assert lines[1:6] == batch
    assert lines.count(f"[reminder] {REPEATED_TOOL_FAILURE_REMINDER}") == 1
    # The stop is told once: its message as the agent's, then the last line names it.
    assert lines[-2] == REPEATED_TOOL_FAILURE_STOP_MESSAGE
    assert lines[-1] == "stop: loop_detected (repeated_tool_execution_failure)"
    assert not any(line.startswith("[stop") for line in lines)


async def test_shadow_tells_what_it_would_have_done_and_collapses_the_loop(
    gateway_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SEAWALL_REPEATED_TOOL_FAILURE_GUARD", "shadow")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    out = io.StringIO()
    code = await send_prompt(gateway_url, "show me a loop", token=TOKEN, out=out)
    # Nothing stopped it: the model-request cap ended it, with its own exit code.
    assert code == EXIT_TURN_CAP == 4
    lines = out.getvalue().splitlines()
    assert lines[-1] == "stop: max_turn_requests"
    shadow = [line for line in lines if line.startswith("[shadow]")]
    assert (
        "[shadow] would remind the model here (repeated_tool_execution_failure); nothing was "
        "sent to the model" in shadow
    )
    assert (
        "[shadow] would stop the prompt here (repeated_tool_execution_failure); nothing was "
        "sent to the model" in shadow
    )
    # Fifty model requests of the same reply: told in a few dozen lines, not hundreds. The
    # run of identical replies ends with how many times it was seen.
    assert len(lines) < 60, "\n".join(lines)
    runs = [line for line in lines if line.endswith("(the 5 lines above)")]
    assert runs, "\n".join(lines)
    total = sum(int(line.split("×")[1].split()[0]) for line in runs)
    shown = lines.count("Looking for the file…")
    assert total - len(runs) + shown == 50  # every request accounted for, once


async def test_gateway_refusal_is_exit_code_2(
    gateway_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = io.StringIO()
    assert await send_prompt(gateway_url, "hello", token="wrong", out=out) == 2
    assert out.getvalue() == ""
    error = capsys.readouterr().err
    assert "401 invalid bearer token" in error
    assert "--token or SEAWALL_GATEWAY_TOKEN" in error

    assert await send_prompt(gateway_url, "hello", session_id="nope", token=TOKEN, out=out) == 2
    assert "404 unknown session 'nope'" in capsys.readouterr().err


async def test_main_prompt_takes_its_defaults_from_the_settings(
    gateway_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("SEAWALL_GATEWAY_URL", gateway_url)
    monkeypatch.setenv("SEAWALL_GATEWAY_TOKEN", TOKEN)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    parser = argparse.ArgumentParser()
    add_prompt_arguments(parser)
    args = parser.parse_args(["hello"])
    # Unset flags are filled from the settings when the command runs.
    assert (args.gateway, args.token, args.session) == (None, None, None)
    # main_prompt runs its own event loop, as the CLI does; the gateway serves on this one.
    assert await asyncio.to_thread(main_prompt, args) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "stop: end_turn"


def test_streamed_text_is_printed_once_and_a_retry_starts_over() -> None:
    out = io.StringIO()
    printer = _Printer(out, "p-1")
    printer.event("message_delta", {"batch": 0, "text": "Hel"})
    printer.event("message_delta", {"batch": 0, "text": "lo"})
    printer.event("agent_message", {"batch": 0, "text": "Hello"})
    printer.event("tool_call_started", {"batch": 1, "tool_name": "glob", "call_id": "c1"})
    printer.event("message_delta", {"batch": 1, "text": "Hi th"})
    printer.event("message_delta", {"batch": 1, "text": "Bye.", "status": "retry"})
    printer.event("agent_message", {"batch": 1, "text": "Bye."})
    # A message whose deltas this client never saw (it joined late) is printed whole.
    printer.event("agent_message", {"batch": 2, "text": "Stopped."})
    assert out.getvalue().splitlines() == [
        "Hello",
        "→ glob",
        "Hi th",
        "[model request retried]",
        "Bye.",
        "Stopped.",
    ]


@pytest.fixture
def failing_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """The worker's operator settings for a model endpoint the test serves: a two-second
    retry window, nothing from a user config file."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "operator-config"))
    monkeypatch.setenv("SEAWALL_MODEL_RETRY_WINDOW_SECONDS", "2")
    monkeypatch.setenv("SEAWALL_MODEL", "local-test-model")
    return monkeypatch


async def test_a_model_outage_prints_why_the_prompt_ended(
    failing_endpoint: pytest.MonkeyPatch, gateway_url: str
) -> None:
    async with ChatServer(lambda received: error(503, "upstream shard 7 on fire")) as server:
        failing_endpoint.setenv("OPENAI_BASE_URL", server.url)
        out = io.StringIO()
        code = await send_prompt(gateway_url, "hello", token=TOKEN, out=out)

    assert code == 1
    last = out.getvalue().splitlines()[-1]
    assert last.startswith(
        "stop: error (model_retries_exhausted): the model endpoint failed (HTTP 503) and "
        "retries stopped after "
    ), last
    assert "2 s model retry window" in last
    assert "upstream shard 7 on fire" not in last


async def test_a_reply_without_usage_has_unknown_tokens_in_the_api(
    failing_endpoint: pytest.MonkeyPatch, gateway_url: str
) -> None:
    reply = completion(text="no usage")
    del reply.body["usage"]
    async with ChatServer([reply]) as server:
        failing_endpoint.setenv("OPENAI_BASE_URL", server.url)
        out = io.StringIO()
        assert await send_prompt(gateway_url, "hello", token=TOKEN, out=out) == 0
        prompt_id = out.getvalue().splitlines()[1].removeprefix("prompt ")
        async with httpx.AsyncClient(
            base_url=gateway_url, headers={"Authorization": f"Bearer {TOKEN}"}
        ) as http:
            async with asyncio.timeout(60):
                while (body := (await http.get(f"/v1/prompts/{prompt_id}")).json())[
                    "result"
                ] is None:
                    await asyncio.sleep(0.1)

    result = body["result"]
    assert result["stop_reason"] == "end_turn"
    assert (result["input_tokens"], result["output_tokens"]) == (None, None)
    assert result["model_requests"] == 1


def test_a_refused_call_prints_its_start_line_too() -> None:
    out = io.StringIO()
    printer = _Printer(out, "p-1")
    printer.event("tool_call_started", {"batch": 1, "tool_name": "read_file", "call_id": "c1"})
    printer.event(
        "tool_call_settled",
        {"batch": 1, "tool_name": "read_file", "call_id": "c1", "status": "error"},
    )
    # Refused by a protection: settled without ever starting.
    printer.event(
        "tool_call_settled",
        {"batch": 2, "tool_name": "read_file", "call_id": "c2", "status": "refused"},
    )
    assert out.getvalue().splitlines() == [
        "→ read_file",
        "← read_file error",
        "→ read_file",
        "← read_file refused",
    ]


def test_the_stop_line_says_why() -> None:
    assert stop_line("end_turn", None) == "stop: end_turn"
    assert stop_line("loop_detected", {"loop_type": "repeated_failed_call"}) == (
        "stop: loop_detected (repeated_failed_call)"
    )
    failed = {"error_reason": "model_request_rejected", "error": "model request rejected"}
    assert stop_line("error", failed) == (
        "stop: error (model_request_rejected): model request rejected"
    )
    # A result from before error_reason existed still shows its error.
    assert stop_line("error", {"error": "boom"}) == "stop: error: boom"
