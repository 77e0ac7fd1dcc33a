"""The OpenAI-compatible provider against a real local HTTP server (no mocks)."""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

import activities.heartbeat as heartbeat
from activities.model import ModelActivities
from activities.model_selection import (
    DEFAULT_MODEL,
    OpenAISettings,
    endpoint_configured,
)
from activities.openai_provider import (
    MISSING_NAME_PLACEHOLDER,
    parse_arguments,
    retry_after_seconds,
    to_chat_message,
)
from activities.tool_runner import builtin_tool_specs
from activities.tools import BUILTIN_TOOLS
from scripts.chat_server import ChatServer, Reply, completion, error, stream_events, tool_call
from seawall.runtime.settings import SettingsError
from seawall.worker.build import model_providers
from workflows.contracts import ToolCall
from workflows.contracts.activity import CallModelInput, ModelSpec, ToolSpec
from workflows.contracts.conversation import Message, Role, system_message, user_message

API_KEY = "sk-test-SECRET-0123456789"
PROVIDER_ENV = (
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "SEAWALL_MODEL",
    "SEAWALL_MODEL_TEMPERATURE",
    "SEAWALL_MODEL_MAX_TOKENS",
    "SEAWALL_MODEL_TIMEOUT_SECONDS",
    "OPENAI_CUSTOM_HEADERS",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[pytest.MonkeyPatch]:
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    # No operator config file from the machine running the tests.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    yield monkeypatch


def use_server(env: pytest.MonkeyPatch, server: ChatServer, **extra: str) -> None:
    env.setenv("OPENAI_BASE_URL", server.url)
    env.setenv("OPENAI_API_KEY", API_KEY)
    for name, value in extra.items():
        env.setenv(name, value)


# The worker's providers, reading the (monkeypatched) process environment.
PROVIDERS = model_providers(os.environ)


def request(
    messages: list[Message] | None = None,
    tools: list[ToolSpec] | None = None,
    model: str | None = None,
    provider: str = "openai",
) -> CallModelInput:
    return CallModelInput(
        model=ModelSpec.model_validate({"provider": provider, "model": model}),
        messages=messages or [user_message("hello")],
        tools=tools or [],
        request_number=3,
    )


async def run_activity(req: CallModelInput, env: ActivityEnvironment | None = None):  # type: ignore[no-untyped-def]
    return await (env or ActivityEnvironment()).run(ModelActivities(PROVIDERS).call_model, req)


# --- round trip -----------------------------------------------------------------------------


async def test_tool_calls_round_trip(clean_env: pytest.MonkeyPatch) -> None:
    reply = completion(
        text="Reading both.",
        tool_calls=[
            tool_call("read_file", '{"path": "notes.txt"}', call_id="call_a"),
            tool_call("list_directory", "{}", call_id="call_b"),
        ],
        prompt_tokens=120,
        completion_tokens=30,
    )
    async with ChatServer([reply]) as server:
        use_server(
            clean_env,
            server,
            SEAWALL_MODEL="qwen-test",
            SEAWALL_MODEL_TEMPERATURE="0.2",
            SEAWALL_MODEL_MAX_TOKENS="256",
        )
        specs = builtin_tool_specs(BUILTIN_TOOLS)
        tools = [specs["read_file"], specs["list_directory"]]
        earlier = ToolCall(
            call_id="call_0", name="read_file", arguments={"path": "a.txt"}, raw_arguments="x"
        )
        broken = ToolCall(call_id="call_1", name="", arguments=None, raw_arguments='{"path": ')
        messages = [
            system_message("be brief"),
            user_message("read my notes"),
            Message(role=Role.ASSISTANT, content="", tool_calls=[earlier]),
            Message(role=Role.TOOL, tool_call_id="call_0", content="no such file"),
            Message(role=Role.ASSISTANT, content="again", tool_calls=[broken]),
            Message(role=Role.TOOL, tool_call_id="call_1", content="bad arguments"),
        ]
        result = await run_activity(request(messages, tools))

    assert result.text == "Reading both."
    assert result.tool_calls == [
        ToolCall(
            call_id="call_a",
            name="read_file",
            arguments={"path": "notes.txt"},
            raw_arguments='{"path": "notes.txt"}',
        ),
        ToolCall(call_id="call_b", name="list_directory", arguments={}, raw_arguments="{}"),
    ]
    assert (result.usage.input_tokens, result.usage.output_tokens) == (120, 30)

    [sent] = server.requests
    assert sent.method == "POST"
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"
    body = sent.body
    assert body["model"] == "qwen-test"
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 256
    # Streamed, with the usage asked for in the last chunk.
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
            },
        }
        for spec in tools
    ]
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "read my notes"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": "no such file"},
        {
            "role": "assistant",
            "content": "again",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": MISSING_NAME_PLACEHOLDER, "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "bad arguments"},
    ]


async def test_model_override_and_defaults(clean_env: pytest.MonkeyPatch) -> None:
    async with ChatServer([completion(text="a"), completion(text="b")]) as server:
        use_server(clean_env, server)
        await run_activity(request())
        await run_activity(request(model="llama3.1:8b"))
    first, second = server.bodies()
    assert first["model"] == DEFAULT_MODEL
    assert "temperature" not in first and "max_tokens" not in first and "tools" not in first
    assert second["model"] == "llama3.1:8b"


async def test_base_url_without_key_sends_a_placeholder(clean_env: pytest.MonkeyPatch) -> None:
    async with ChatServer([completion(text="local")]) as server:
        clean_env.setenv("OPENAI_BASE_URL", server.url)
        result = await run_activity(request())
    assert result.text == "local"
    assert server.requests[0].headers["authorization"] == "Bearer seawall-no-key"


async def test_malformed_output_becomes_invalid_calls(clean_env: pytest.MonkeyPatch) -> None:
    reply = completion(
        tool_calls=[
            tool_call("read_file", '{"path": "notes.txt"', call_id="c1"),
            tool_call("read_file", '["not", "an", "object"]', call_id="c2"),
            tool_call(None, '{"path": "x"}', call_id="c3"),
            tool_call("no_such_tool", '{"a": 1}', call_id="c4"),
            tool_call("list_directory", "", call_id=None),
        ]
    )
    async with ChatServer([reply]) as server:
        use_server(clean_env, server)
        result = await run_activity(request())
    c1, c2, c3, c4, c5 = result.tool_calls
    assert c1 == ToolCall(
        call_id="c1", name="read_file", arguments=None, raw_arguments='{"path": "notes.txt"'
    )
    assert c2.arguments is None and c2.raw_arguments == '["not", "an", "object"]'
    assert c3.name == "" and c3.arguments == {"path": "x"}
    assert c4.name == "no_such_tool" and c4.arguments == {"a": 1}
    # A missing id is made up deterministically; blank arguments mean none.
    assert c5.call_id == "call_3_4" and c5.arguments == {}
    assert result.text == ""


# --- errors ---------------------------------------------------------------------------------


async def test_429_with_retry_after_is_retryable_then_succeeds(
    clean_env: pytest.MonkeyPatch,
) -> None:
    replies = [
        error(429, "Rate limit reached, slow down", headers={"retry-after": "1"}),
        completion(text="after the pause"),
    ]
    async with ChatServer(replies) as server:
        use_server(clean_env, server)
        with pytest.raises(ApplicationError) as caught:
            await run_activity(request())
        err = caught.value
        assert not err.non_retryable
        assert err.type == "ModelRateLimited"
        assert err.next_retry_delay == timedelta(seconds=1)
        assert "HTTP 429" in str(err)
        # The endpoint's words are a detail, never the (logged) message.
        assert "Rate limit reached" not in str(err)
        assert err.details == ("HTTP 429", "Rate limit reached, slow down")
        assert API_KEY not in str(err)
        # The next attempt (Temporal's retry) gets the answer.
        result = await run_activity(request())
    assert result.text == "after the pause"
    # The SDK itself never retried: exactly one request per attempt.
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("status", "headers", "delay"),
    [
        (503, {"retry-after-ms": "1500"}, timedelta(seconds=1.5)),
        (500, {}, None),
        (408, {}, None),
        (409, {"retry-after": "2"}, timedelta(seconds=2)),
        (429, {"retry-after": "100000"}, timedelta(seconds=300)),
    ],
)
async def test_transient_statuses_are_retryable(
    clean_env: pytest.MonkeyPatch,
    status: int,
    headers: dict[str, str],
    delay: timedelta | None,
) -> None:
    async with ChatServer([error(status, "try later", headers=headers)]) as server:
        use_server(clean_env, server)
        with pytest.raises(ApplicationError) as caught:
            await run_activity(request())
    assert not caught.value.non_retryable
    assert caught.value.next_retry_delay == delay
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [400, 401, 404, 422])
async def test_other_4xx_are_rejected_without_retry(
    clean_env: pytest.MonkeyPatch, status: int
) -> None:
    # A server that echoes the key back must not get it into the error.
    message = f"'tools[0].function.name' is invalid (key {API_KEY})"
    async with ChatServer([error(status, message)]) as server:
        use_server(clean_env, server)
        with pytest.raises(ApplicationError) as caught:
            await run_activity(request())
    err = caught.value
    assert err.non_retryable
    assert err.type == "ModelRequestRejected"
    assert f"HTTP {status}" in str(err)
    assert "'tools[0].function.name' is invalid" not in str(err)
    assert err.details[0] == f"HTTP {status}"
    assert "'tools[0].function.name' is invalid" in err.details[1]
    assert API_KEY not in str(err) and API_KEY not in err.details[1]
    assert len(server.requests) == 1


async def test_non_json_error_body_is_quoted(clean_env: pytest.MonkeyPatch) -> None:
    async with ChatServer([Reply(status=400, body="model 'x' not found")]) as server:
        use_server(clean_env, server)
        with pytest.raises(ApplicationError) as caught:
            await run_activity(request())
    assert caught.value.non_retryable
    assert caught.value.details[1] == "model 'x' not found"


async def test_unreachable_endpoint_is_retryable(clean_env: pytest.MonkeyPatch) -> None:
    async with ChatServer() as server:
        url = server.url
    clean_env.setenv("OPENAI_BASE_URL", url)  # the port is closed now
    with pytest.raises(ApplicationError) as caught:
        await run_activity(request())
    assert not caught.value.non_retryable
    assert caught.value.type == "ModelUnreachable"


async def test_request_timeout_is_retryable(clean_env: pytest.MonkeyPatch) -> None:
    async with ChatServer([Reply(delay=5, body=completion(text="late").body)]) as server:
        use_server(clean_env, server, SEAWALL_MODEL_TIMEOUT_SECONDS="0.3")
        started = time.monotonic()
        with pytest.raises(ApplicationError) as caught:
            await run_activity(request())
        assert time.monotonic() - started < 3
    assert caught.value.type == "ModelTimeout"
    assert not caught.value.non_retryable


async def test_invalid_settings_fail_without_retry(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    clean_env.setenv("SEAWALL_MODEL_TEMPERATURE", "very hot")
    with pytest.raises(ApplicationError) as caught:
        await run_activity(request())
    assert caught.value.non_retryable
    assert "SEAWALL_MODEL_TEMPERATURE" in str(caught.value)


async def test_response_without_choices_is_retryable(clean_env: pytest.MonkeyPatch) -> None:
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    async with ChatServer([Reply(body=body)]) as server:
        use_server(clean_env, server)
        with pytest.raises(ApplicationError) as caught:
            await run_activity(request())
    assert not caught.value.non_retryable


# --- streaming -------------------------------------------------------------------------------


async def test_text_reaches_the_sink_piece_by_piece(clean_env: pytest.MonkeyPatch) -> None:
    text = "The quick brown fox jumps over the lazy dog."
    async with ChatServer([completion(text=text)]) as server:
        use_server(clean_env, server)
        pieces: list[str] = []
        reply = await PROVIDERS["openai"].complete(request(), pieces.append)
    assert len(pieces) > 1
    assert "".join(pieces) == reply.text == text
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (11, 7)


async def test_a_malformed_chunk_is_a_clear_retryable_model_error(
    clean_env: pytest.MonkeyPatch,
) -> None:
    good = json.dumps(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": "Hel"}}],
        }
    )
    async with ChatServer([Reply(events=[good, '{"choices": [{"delta": '])]) as server:
        use_server(clean_env, server)
        pieces: list[str] = []
        with pytest.raises(ApplicationError) as caught:
            await PROVIDERS["openai"].complete(request(), pieces.append)
    assert pieces == ["Hel"]  # what came before the broken chunk was streamed
    assert caught.value.type == "ModelResponseInvalid"
    assert not caught.value.non_retryable
    assert "malformed streaming chunk" in str(caught.value)


async def test_an_error_reported_mid_stream_is_retryable_and_redacted(
    clean_env: pytest.MonkeyPatch,
) -> None:
    failure = json.dumps({"error": {"message": f"overloaded, key {API_KEY}"}})
    async with ChatServer([Reply(events=[failure])]) as server:
        use_server(clean_env, server)
        with pytest.raises(ApplicationError) as caught:
            await PROVIDERS["openai"].complete(request())
    assert caught.value.type == "ModelRequestFailed"
    assert not caught.value.non_retryable
    assert "overloaded" not in str(caught.value)
    assert "overloaded" in caught.value.details[1]
    assert API_KEY not in str(caught.value) and API_KEY not in caught.value.details[1]


async def test_a_stream_without_choices_is_a_model_error(clean_env: pytest.MonkeyPatch) -> None:
    async with ChatServer([Reply(events=["[DONE]"])]) as server:
        use_server(clean_env, server)
        with pytest.raises(ApplicationError) as caught:
            await PROVIDERS["openai"].complete(request())
    assert caught.value.type == "ModelResponseInvalid"
    assert "without choices" in str(caught.value)


async def test_a_stream_cut_before_its_finish_reason_is_a_retryable_model_error(
    clean_env: pytest.MonkeyPatch,
) -> None:
    # A connection closed mid-reply ends the SDK's stream as if the reply were complete;
    # taken as it is, the reply would lose the rest of its text and its tool call.
    whole = completion(text="Reading the file now.", tool_calls=[tool_call("read_file", "{}")])
    events = stream_events(whole.body, include_usage=True)
    cut = events[:3]  # the role and two pieces of text: no tool call, no finish_reason
    async with ChatServer([Reply(events=cut)]) as server:
        use_server(clean_env, server)
        pieces: list[str] = []
        with pytest.raises(ApplicationError) as caught:
            await PROVIDERS["openai"].complete(request(), pieces.append)
    assert pieces  # the text that did arrive was streamed
    assert caught.value.type == "ModelResponseInvalid"
    assert not caught.value.non_retryable
    assert "before the reply was complete" in str(caught.value)


async def test_the_whole_stream_of_the_same_reply_is_accepted(
    clean_env: pytest.MonkeyPatch,
) -> None:
    whole = completion(text="Reading the file now.", tool_calls=[tool_call("read_file", "{}")])
    events = stream_events(whole.body, include_usage=True)
    async with ChatServer([Reply(events=events)]) as server:
        use_server(clean_env, server)
        reply = await PROVIDERS["openai"].complete(request())
    assert reply.text == "Reading the file now."
    assert [call.name for call in reply.tool_calls] == ["read_file"]


# --- heartbeats and cancellation ------------------------------------------------------------


async def test_heartbeats_while_the_request_runs(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setattr(heartbeat, "HEARTBEAT_INTERVAL_SECONDS", 0.1)
    beats: list[float] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(time.monotonic())
    slow = Reply(delay=0.8, body=completion(text="slow").body)
    async with ChatServer([slow]) as server:
        use_server(clean_env, server)
        result = await run_activity(request(), env)
    assert result.text == "slow"
    assert len(beats) >= 4
    count = len(beats)
    await asyncio.sleep(0.3)
    assert len(beats) == count  # the heartbeat task stopped with the request


async def test_cancellation_aborts_the_request(clean_env: pytest.MonkeyPatch) -> None:
    env = ActivityEnvironment()
    async with ChatServer([Reply(delay=30, body=completion(text="never").body)]) as server:
        use_server(clean_env, server)
        task = asyncio.create_task(run_activity(request(), env))
        await asyncio.wait_for(server.request_seen.wait(), 10)
        started = time.monotonic()
        env.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The HTTP request was really abandoned: the server saw the client hang up.
        await asyncio.wait_for(server.client_gone.wait(), 5)
        assert time.monotonic() - started < 5


async def test_no_heartbeat_outside_an_activity(clean_env: pytest.MonkeyPatch) -> None:
    async with ChatServer([completion(text="direct")]) as server:
        use_server(clean_env, server)
        reply = await PROVIDERS["openai"].complete(request())
    assert reply.text == "direct"


# --- units ----------------------------------------------------------------------------------


def test_retry_after_parsing() -> None:
    assert retry_after_seconds({"retry-after": "3"}) == 3
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None
    assert retry_after_seconds({"retry-after": "-4"}) is None
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 7, usegmt=True)
    assert retry_after_seconds({"retry-after": date}, now=now) == pytest.approx(7, abs=1)


def test_parse_arguments() -> None:
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments("  ") == {}
    assert parse_arguments(None) == {}
    assert parse_arguments("[1]") is None
    assert parse_arguments('{"a": ') is None


def test_plain_messages_convert() -> None:
    assert to_chat_message(user_message("hi")) == {"role": "user", "content": "hi"}
    assert to_chat_message(Message(role=Role.ASSISTANT, content="ok")) == {
        "role": "assistant",
        "content": "ok",
    }


# --- settings and model selection -----------------------------------------------------------


def write_config(root: Path, text: str) -> Path:
    path = root / "seawall" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_settings_from_env_and_config_file(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        "openai_base_url: http://localhost:11434/v1\nmodel: qwen2.5\nmodel_max_tokens: 512\n"
        "openai_api_key: sk-from-file\n",
    )
    environ = {"XDG_CONFIG_HOME": str(tmp_path), "SEAWALL_MODEL": "from-env"}
    settings = OpenAISettings.from_env(environ)
    assert settings.base_url == "http://localhost:11434/v1"
    assert settings.model == "from-env"  # the environment wins
    assert settings.max_tokens == 512
    assert settings.api_key is not None
    assert settings.api_key.get_secret_value() == "sk-from-file"
    assert "sk-from-file" not in repr(settings) and "sk-from-file" not in str(settings)


def test_invalid_settings_name_the_setting_not_the_key(tmp_path: Path) -> None:
    environ = {
        "XDG_CONFIG_HOME": str(tmp_path),
        "OPENAI_API_KEY": API_KEY,
        "SEAWALL_MODEL_MAX_TOKENS": "-5",
    }
    with pytest.raises(SettingsError) as caught:
        OpenAISettings.from_env(environ)
    assert "SEAWALL_MODEL_MAX_TOKENS" in str(caught.value)
    assert API_KEY not in str(caught.value)


def test_an_endpoint_is_configured_by_its_url_or_key(tmp_path: Path) -> None:
    home = {"XDG_CONFIG_HOME": str(tmp_path)}
    assert not endpoint_configured(home)
    assert endpoint_configured({**home, "OPENAI_API_KEY": "sk"})
    assert endpoint_configured({**home, "OPENAI_BASE_URL": "http://h/v1"})
    assert not endpoint_configured({**home, "OPENAI_BASE_URL": "  "})
    write_config(tmp_path, "repeated_tool_failure_guard: warn\n")
    assert not endpoint_configured(home)
    write_config(tmp_path, "openai_base_url: http://localhost:8000/v1\n")
    assert endpoint_configured(home)
    # A file broken since startup routes to the endpoint provider, which names the bad
    # setting on the request, instead of letting the demo model answer in its place.
    write_config(tmp_path, "- not a mapping\n")
    assert endpoint_configured(home)
    # HOME is used when XDG_CONFIG_HOME is unset.
    write_config(tmp_path / ".config", "openai_api_key: sk-x\n")
    assert endpoint_configured({"HOME": str(tmp_path)})


async def test_the_operator_provider_is_the_configured_endpoint_else_the_demo_model(
    clean_env: pytest.MonkeyPatch,
) -> None:
    async with ChatServer([completion(text="from the endpoint")]) as server:
        offline = await run_activity(request(provider="operator"))
        use_server(clean_env, server)
        online = await run_activity(request(provider="operator"))
        demo = await run_activity(request(provider="demo"))

    assert offline == demo
    assert online.text == "from the endpoint"
    assert len(server.requests) == 1
