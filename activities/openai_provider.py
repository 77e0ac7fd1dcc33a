"""The ``openai`` model provider: any endpoint that speaks OpenAI chat completions.

OpenAI, Qwen/DashScope, vLLM, Ollama and LM Studio all do. The endpoint, key, model and
request options are operator settings of the worker (:mod:`activities.model_selection`);
workflow history only records ``provider="openai"`` and the conversation.

Temporal owns retries: the SDK's own are off, and every failure is mapped to an
:class:`~temporalio.exceptions.ApplicationError` the model activity's retry policy
understands. Timeouts, connection failures, 408, 409, 429 and 5xx are retryable (a
``retry-after``/``retry-after-ms`` header sets the next retry's delay) until the prompt's
retry window has passed (activities/model_retry.py); any other 4xx is a non-retryable
``ModelRequestRejected`` that ends the prompt with a clear error. An error's message never
quotes the endpoint (the worker logs every failed attempt's message): its first detail is a
short reason (``HTTP 503``, ``unreachable (ConnectError)``), which is all the final error of
a request retried past its window repeats, and the endpoint's own error text, redacted and
cut short, is its second detail (workflows/contracts/activity.py), which only a rejection's prompt
error quotes.

The model's output is never trusted to be well formed: argument text that is not a JSON
object becomes ``ToolCall(arguments=None, raw_arguments=...)`` and a missing function name
an empty name, which the workflow's invalid-parameter guard handles like any other invalid
call. An unknown tool name passes through for the workflow's registry lookup.
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import openai
import structlog
from temporalio.exceptions import ApplicationError

from activities.model_selection import OpenAISettings
from activities.model_stream import TextSink
from seawall.runtime.settings import SettingsError
from workflows.contracts import Message, Role, ToolCall
from workflows.contracts.activity import (
    MODEL_REQUEST_REJECTED,
    CallModelInput,
    ModelReply,
    ModelUsage,
    ToolSpec,
)

# A server asking for a longer pause is honoured up to this; Temporal's retry policy and
# the prompt's lifetime bound the total anyway.
MAX_RETRY_DELAY_SECONDS = 300.0
MAX_PROVIDER_MESSAGE_CHARS = 500
RETRYABLE_STATUSES = frozenset({408, 409, 429})
# Sent when only a base URL is configured: local servers (vLLM, Ollama, LM Studio) ignore
# the key, but the SDK and some proxies insist on one.
PLACEHOLDER_API_KEY = "seawall-no-key"
# What an assistant tool call with no function name is replayed as: an empty name is
# rejected by some endpoints, which would turn the model's mistake into a failed request.
MISSING_NAME_PLACEHOLDER = "missing_function_name"

REJECTED_ERROR_TYPE = MODEL_REQUEST_REJECTED
_log = structlog.get_logger(__name__)


# --- request ------------------------------------------------------------------------------


def _arguments_text(call: ToolCall) -> str:
    """The call's arguments as JSON object text.

    Broken argument text is replayed as ``{}``: the tool result that follows already quotes
    it to the model, and some servers (vLLM chat templates) reject a history whose
    arguments do not parse.
    """
    if call.arguments is not None:
        return json.dumps(call.arguments, ensure_ascii=False, default=str)
    return "{}"


def to_chat_message(message: Message) -> dict[str, Any]:
    """One conversation message in the chat-completions wire format."""
    if message.role is Role.TOOL:
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
    if message.role is Role.ASSISTANT:
        wire: dict[str, Any] = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            # ``null`` content is how the API spells "only tool calls".
            wire["content"] = message.content or None
            wire["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {
                        "name": call.name or MISSING_NAME_PLACEHOLDER,
                        "arguments": _arguments_text(call),
                    },
                }
                for call in message.tool_calls
            ]
        return wire
    return {"role": message.role.value, "content": message.content}


def to_chat_tool(spec: ToolSpec) -> dict[str, Any]:
    """A tool as a chat-completions function; the schema is the tool's pydantic schema."""
    parameters = dict(spec.parameters) or {"type": "object", "properties": {}}
    if parameters.get("type") == "object" and "properties" not in parameters:
        parameters["properties"] = {}
    function: dict[str, Any] = {"name": spec.name, "parameters": parameters}
    if spec.description:
        function["description"] = spec.description
    return {"type": "function", "function": function}


def build_request(request: CallModelInput, settings: OpenAISettings) -> dict[str, Any]:
    """Keyword arguments for ``chat.completions.create``."""
    params: dict[str, Any] = {
        "model": request.model.model or settings.model,
        "messages": [to_chat_message(m) for m in request.messages],
    }
    if request.tools:
        params["tools"] = [to_chat_tool(spec) for spec in request.tools]
    if settings.temperature is not None:
        params["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        params["max_tokens"] = settings.max_tokens
    return params


# --- reply --------------------------------------------------------------------------------


def parse_arguments(raw: str | None) -> dict[str, Any] | None:
    """The JSON object in ``raw``; ``None`` when it is anything else.

    Blank text means no arguments: several servers send ``""`` for a parameterless call.
    """
    if raw is None or not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


class StreamedReply:
    """The reply a streamed completion adds up to, chunk by chunk (``ChatCompletionChunk``).

    Text pieces are handed to ``on_text`` as they arrive; tool calls are put together from
    their pieces by index (id and name usually come first, arguments in many pieces); usage
    comes in the last chunk when the server honours ``stream_options.include_usage``. Every
    attribute is read defensively: compatible servers differ in what they leave out, but
    every one ends a reply with a ``finish_reason``: a stream that stops before it (a
    connection cut by a proxy or a crashing server looks like a normal end to the SDK) is
    an incomplete reply, and taking it would silently drop the rest of the text and the
    tool calls, so it is a retryable error instead.
    """

    def __init__(self, request_number: int, on_text: TextSink | None) -> None:
        self._request_number = request_number
        self._on_text = on_text
        self._text: list[str] = []
        self._calls: dict[int, _CallPieces] = {}
        self._choices_seen = False
        self._finished = False
        # None until the stream reports usage: a server that never does leaves them unknown.
        self._input_tokens: int | None = None
        self._output_tokens: int | None = None

    def add(self, chunk: Any) -> None:
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self._input_tokens = _token_count(getattr(usage, "prompt_tokens", None))
            self._output_tokens = _token_count(getattr(usage, "completion_tokens", None))
        for choice in getattr(chunk, "choices", None) or []:
            if (getattr(choice, "index", 0) or 0) != 0:
                continue  # only the first choice is ever asked for
            self._choices_seen = True
            if getattr(choice, "finish_reason", None):
                self._finished = True
            delta = getattr(choice, "delta", None)
            content = getattr(delta, "content", None)
            if content:
                piece = content if isinstance(content, str) else str(content)
                self._text.append(piece)
                if self._on_text is not None:
                    self._on_text(piece)
            for position, raw_call in enumerate(getattr(delta, "tool_calls", None) or []):
                index = getattr(raw_call, "index", None)
                pieces = self._calls.setdefault(
                    index if isinstance(index, int) else position, _CallPieces()
                )
                pieces.add(raw_call)

    def reply(self) -> ModelReply:
        if not self._choices_seen:
            raise ApplicationError(
                "the model endpoint returned a stream without choices",
                "stream without choices",
                type="ModelResponseInvalid",
            )
        if not self._finished:
            raise ApplicationError(
                "the model endpoint's stream ended before the reply was complete "
                "(no finish_reason)",
                "stream ended early",
                type="ModelResponseInvalid",
            )
        calls = [
            self._calls[index].tool_call(self._request_number, ordinal)
            for ordinal, index in enumerate(sorted(self._calls))
        ]
        return ModelReply(
            text="".join(self._text),
            tool_calls=calls,
            usage=ModelUsage(input_tokens=self._input_tokens, output_tokens=self._output_tokens),
        )


def _token_count(value: Any) -> int | None:
    """A usage field as a count; None when the server left it out or sent no number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return int(value)


class _CallPieces:
    """One streamed tool call's id, name and argument text, as pieces arrive."""

    def __init__(self) -> None:
        self.call_id: str | None = None
        self.name: list[str] = []
        self.arguments: list[str] = []

    def add(self, raw_call: Any) -> None:
        call_id = getattr(raw_call, "id", None)
        if call_id:
            self.call_id = str(call_id)
        function = getattr(raw_call, "function", None)
        name = getattr(function, "name", None)
        if name:
            self.name.append(str(name))
        arguments = getattr(function, "arguments", None)
        if arguments is not None:
            # A lenient server sent an object instead of JSON text.
            self.arguments.append(
                arguments if isinstance(arguments, str) else json.dumps(arguments, default=str)
            )

    def tool_call(self, request_number: int, ordinal: int) -> ToolCall:
        raw_arguments = "".join(self.arguments)
        return ToolCall(
            call_id=self.call_id or f"call_{request_number}_{ordinal}",
            # A missing name stays empty: the workflow's invalid-parameter guard decides.
            name="".join(self.name),
            arguments=parse_arguments(raw_arguments),
            raw_arguments=raw_arguments,
        )


# --- errors -------------------------------------------------------------------------------


def retry_after_seconds(
    headers: Mapping[str, str] | None, now: float | None = None
) -> float | None:
    """The delay a ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date) header asks
    for, capped at :data:`MAX_RETRY_DELAY_SECONDS`; ``None`` when absent or unusable."""
    if headers is None:
        return None
    delay: float | None = None
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            delay = float(value) / divisor
        except ValueError:
            if header == "retry-after":
                parsed = email.utils.parsedate_tz(value)
                if parsed is not None:
                    delay = email.utils.mktime_tz(parsed) - (time.time() if now is None else now)
        if delay is not None:
            break
    if delay is None or not math.isfinite(delay) or delay < 0:
        return None
    return min(delay, MAX_RETRY_DELAY_SECONDS)


def _provider_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    text: Any = None
    if isinstance(body, dict):
        error = body.get("error", body)
        text = error.get("message") if isinstance(error, dict) else error
        if text is None and isinstance(body.get("detail"), str):
            text = body["detail"]  # FastAPI-style servers (vLLM)
    elif isinstance(body, str):
        text = body
    if text is None:
        try:
            text = exc.response.text
        except Exception:  # a streamed or unreadable body
            text = ""
    return " ".join(str(text).split())[:MAX_PROVIDER_MESSAGE_CHARS] or "(no error message)"


def _redact(text: str, settings: OpenAISettings) -> str:
    if settings.api_key is not None:
        secret = settings.api_key.get_secret_value()
        if secret:
            text = text.replace(secret, "[redacted]")
    return text


def status_error(exc: openai.APIStatusError, settings: OpenAISettings) -> ApplicationError:
    """The Temporal error for an HTTP error status from the endpoint."""
    status = exc.status_code
    detail = _redact(_provider_message(exc), settings)
    if status in RETRYABLE_STATUSES or status >= 500:
        delay = retry_after_seconds(exc.response.headers)
        return ApplicationError(
            f"model endpoint returned HTTP {status}",
            f"HTTP {status}",
            detail,
            type="ModelRateLimited" if status == 429 else "ModelRequestFailed",
            next_retry_delay=timedelta(seconds=delay) if delay is not None else None,
        )
    return ApplicationError(
        f"model request rejected with HTTP {status}",
        f"HTTP {status}",
        detail,
        type=REJECTED_ERROR_TYPE,
        non_retryable=True,
    )


def connection_error(exc: openai.APIConnectionError) -> ApplicationError:
    what = "timed out" if isinstance(exc, openai.APITimeoutError) else "could not be reached"
    cause = exc.__cause__
    reason = f" ({type(cause).__name__})" if cause is not None else ""
    short = "timed out" if isinstance(exc, openai.APITimeoutError) else "unreachable"
    return ApplicationError(
        f"model endpoint {what}{reason}",
        f"{short}{reason}",
        type="ModelTimeout" if isinstance(exc, openai.APITimeoutError) else "ModelUnreachable",
    )


def stream_error(exc: Exception, settings: OpenAISettings) -> ApplicationError:
    """The Temporal error for a stream that broke after the response began: a chunk that is
    not JSON, or an error the server reported mid-stream. Retryable: a proxy cutting a
    stream or a server hiccup is usually gone on the next attempt."""
    if isinstance(exc, openai.APIError):
        detail = _redact(" ".join(str(exc.message).split())[:MAX_PROVIDER_MESSAGE_CHARS], settings)
        return ApplicationError(
            "model endpoint reported an error while streaming",
            "error while streaming",
            detail,
            type="ModelRequestFailed",
        )
    return ApplicationError(
        "model endpoint sent a malformed streaming chunk (not a JSON completion chunk)",
        "malformed stream chunk",
        type="ModelResponseInvalid",
    )


# --- the provider -------------------------------------------------------------------------


class OpenAIProvider:
    """Answers model requests from the operator's OpenAI-compatible endpoint.

    Settings are read from ``environ`` (the worker's environment, and the user config file it
    locates) on each request: cheap, no I/O beyond a small config file, and a changed setting
    applies to the next request. SDK clients are cached per endpoint, key and timeout so
    connections are reused.
    """

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        self._clients: dict[tuple[str | None, str, float], openai.AsyncOpenAI] = {}

    def settings(self) -> OpenAISettings:
        try:
            return OpenAISettings.from_env(self._environ)
        except SettingsError as exc:
            # Retrying cannot fix a bad setting; the message names it, never a secret.
            raise ApplicationError(
                str(exc), type="ModelConfigurationInvalid", non_retryable=True
            ) from None

    def client(self, settings: OpenAISettings) -> openai.AsyncOpenAI:
        key = settings.api_key.get_secret_value() if settings.api_key else PLACEHOLDER_API_KEY
        cache_key = (settings.base_url, key, settings.timeout_seconds)
        client = self._clients.get(cache_key)
        if client is None:
            client = openai.AsyncOpenAI(
                api_key=key,
                base_url=settings.base_url,
                timeout=settings.timeout_seconds,
                max_retries=0,  # Temporal owns retries
            )
            self._clients[cache_key] = client
        return client

    async def complete(
        self, request: CallModelInput, on_text: TextSink | None = None
    ) -> ModelReply:
        """Stream the completion (``stream=True``), handing text to ``on_text`` as it
        arrives, and return the whole reply."""
        settings = self.settings()
        client = self.client(settings)
        params = build_request(request, settings)
        reply = StreamedReply(request.request_number, on_text)
        # The model activity heartbeats while this runs (activities/model.py).
        try:
            stream = await client.chat.completions.create(
                **params, stream=True, stream_options={"include_usage": True}
            )
            async with stream:
                async for chunk in stream:
                    reply.add(chunk)
        except openai.APIStatusError as exc:
            error = status_error(exc, settings)
            _log.warning(
                "model_request_failed",
                status=exc.status_code,
                retryable=not error.non_retryable,
                error_type=error.type,
            )
            raise error from None
        except openai.APIConnectionError as exc:
            error = connection_error(exc)
            _log.warning("model_request_failed", retryable=True, error_type=error.type)
            raise error from None
        except (openai.APIError, ValueError) as exc:
            error = stream_error(exc, settings)
            _log.warning("model_request_failed", retryable=True, error_type=error.type)
            raise error from None
        return reply.reply()
