"""The ``openai`` model provider: any endpoint that speaks OpenAI chat completions.

OpenAI, Qwen/DashScope, vLLM, Ollama and LM Studio all do. The endpoint, key, model and
request options are operator settings of the worker (:mod:`activities.model_selection`);
workflow history only records ``provider="openai"`` and the conversation.

Temporal owns retries: the SDK's own are off, and every failure is mapped to an
:class:`~temporalio.exceptions.ApplicationError` the model activity's retry policy
understands. Timeouts, connection failures, 408, 409, 429 and 5xx are retryable (a
``retry-after``/``retry-after-ms`` header sets the next retry's delay); any other 4xx is a
non-retryable ``ModelRequestRejected`` that ends the prompt with a clear error.

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

from activities.heartbeat import activity_heartbeat, heartbeating
from activities.model_selection import OpenAISettings
from seawall.runtime.settings import SettingsError
from workflows.activity_io import CallModelInput, ModelReply, ModelUsage, ToolSpec
from workflows.conversation import Message, Role
from workflows.outcome import ToolCall

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

REJECTED_ERROR_TYPE = "ModelRequestRejected"
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


def _to_tool_call(raw_call: Any, request_number: int, index: int) -> ToolCall:
    call_id = getattr(raw_call, "id", None) or f"call_{request_number}_{index}"
    function = getattr(raw_call, "function", None)
    if function is None:
        # A non-function ("custom") tool call: the workflow has no such tools.
        custom = getattr(raw_call, "custom", None)
        name = getattr(custom, "name", None) or ""
        text = getattr(custom, "input", None)
        raw = text if isinstance(text, str) else None
        return ToolCall(call_id=call_id, name=name, arguments=None, raw_arguments=raw)
    name = getattr(function, "name", None) or ""
    raw_arguments = getattr(function, "arguments", None)
    if raw_arguments is not None and not isinstance(raw_arguments, str):
        # A lenient server sent an object instead of JSON text.
        raw_arguments = json.dumps(raw_arguments, default=str)
    arguments = parse_arguments(raw_arguments)
    return ToolCall(call_id=call_id, name=name, arguments=arguments, raw_arguments=raw_arguments)


def parse_response(response: Any, request_number: int) -> ModelReply:
    """The reply in ``response`` (a ``ChatCompletion``): text, tool calls and usage."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise ApplicationError(
            "the model endpoint returned a response without choices",
            type="ModelResponseInvalid",
        )
    message = getattr(choices[0], "message", None)
    text = getattr(message, "content", None) or ""
    raw_calls = getattr(message, "tool_calls", None) or []
    calls = [_to_tool_call(c, request_number, i) for i, c in enumerate(raw_calls)]
    usage = getattr(response, "usage", None)
    return ModelReply(
        text=text if isinstance(text, str) else str(text),
        tool_calls=calls,
        usage=ModelUsage(
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        ),
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
            f"model endpoint returned HTTP {status} (will retry): {detail}",
            type="ModelRateLimited" if status == 429 else "ModelRequestFailed",
            next_retry_delay=timedelta(seconds=delay) if delay is not None else None,
        )
    return ApplicationError(
        f"model request rejected with HTTP {status}: {detail}",
        type=REJECTED_ERROR_TYPE,
        non_retryable=True,
    )


def connection_error(exc: openai.APIConnectionError) -> ApplicationError:
    what = "timed out" if isinstance(exc, openai.APITimeoutError) else "could not be reached"
    cause = exc.__cause__
    reason = f" ({type(cause).__name__})" if cause is not None else ""
    return ApplicationError(
        f"model endpoint {what}{reason} (will retry)",
        type="ModelTimeout" if isinstance(exc, openai.APITimeoutError) else "ModelUnreachable",
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

    async def complete(self, request: CallModelInput) -> ModelReply:
        settings = self.settings()
        client = self.client(settings)
        params = build_request(request, settings)
        async with heartbeating(activity_heartbeat()):
            try:
                response = await client.chat.completions.create(**params)
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
        return parse_response(response, request.request_number)
