"""A tiny OpenAI chat-completions server on a real socket, for provider tests and chaos runs.

It lives in ``scripts/`` (not ``tests/``) because the chaos suite's model endpoint
(``scripts/chaos_model.py``) serves its replies through it, and ``scripts`` is an installed
package while ``tests`` is not; the tests import it from here.

It speaks just enough HTTP/1.1 (one request per connection, ``Connection: close``) for the
official SDK: it records every request (method, path, headers, JSON body) and answers with
scripted replies in order; once they run out it answers with a plain "done" text reply.

A request with ``"stream": true`` gets a successful completion as the server-sent chunks
OpenAI streams (``chat.completion.chunk``: the text a few characters at a time, each tool
call's id and name and then its arguments in pieces, the finish reason, the usage when
``stream_options.include_usage`` asks for it, then ``data: [DONE]``), exactly what the
provider's streaming path parses. ``Reply.events`` sends raw ``data:`` lines instead (for
malformed streams).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    408: "Request Timeout",
    409: "Conflict",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    # Raw server-sent ``data:`` payloads to stream as they are (malformed streams).
    events: list[str] | None = None


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def tool_call(name: str | None, arguments: str, call_id: str | None = "call_1") -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    call: dict[str, Any] = {"type": "function", "function": function}
    if call_id is not None:
        call["id"] = call_id
    return call


def completion(
    text: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
) -> Reply:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return Reply(
        body={
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "test-model",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status=status,
        body={"error": {"message": message, "type": "invalid_request_error", "code": None}},
        headers=headers or {},
    )


TEXT_PIECE_CHARS = 5
ARGUMENT_PIECE_CHARS = 7


def _chunk(choices: list[dict[str, Any]], usage: Any = None) -> str:
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": choices,
    }
    if usage is not None:
        body["usage"] = usage
    return json.dumps(body)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def stream_events(completion_body: dict[str, Any], include_usage: bool) -> list[str]:
    """A completion body as the ``data:`` payloads of its OpenAI stream."""
    events: list[str] = []
    for choice in completion_body.get("choices", []):
        index = choice.get("index", 0)
        message = choice.get("message", {})
        events.append(_chunk([{"index": index, "delta": {"role": "assistant"}}]))
        for piece in _pieces(message.get("content") or "", TEXT_PIECE_CHARS):
            events.append(_chunk([{"index": index, "delta": {"content": piece}}]))
        for call_index, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function", {})
            head: dict[str, Any] = {"index": call_index, "type": "function", "function": {}}
            if "id" in call:
                head["id"] = call["id"]
            if "name" in function:
                head["function"]["name"] = function["name"]
            events.append(_chunk([{"index": index, "delta": {"tool_calls": [head]}}]))
            arguments = function.get("arguments", "")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments)
            for piece in _pieces(arguments, ARGUMENT_PIECE_CHARS):
                delta = {"tool_calls": [{"index": call_index, "function": {"arguments": piece}}]}
                events.append(_chunk([{"index": index, "delta": delta}]))
        finish = {"index": index, "delta": {}, "finish_reason": choice.get("finish_reason")}
        events.append(_chunk([finish]))
    if include_usage and "usage" in completion_body:
        events.append(_chunk([], usage=completion_body["usage"]))
    events.append("[DONE]")
    return events


class ChatServer:
    """``port`` 0 (the default) binds a free port; a given one lets a test point a client at
    an endpoint that is down (connection refused) before the server comes up on it."""

    def __init__(
        self, replies: list[Reply] | Callable[[Received], Reply] | None = None, port: int = 0
    ) -> None:
        self.replies = replies if replies is not None else []
        self.requests: list[Received] = []
        self.times: list[float] = []
        self.disconnects = 0
        self.request_seen = asyncio.Event()
        self.client_gone = asyncio.Event()
        self._server: asyncio.Server | None = None
        self.port = port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    async def __aenter__(self) -> ChatServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 5)

    def _next_reply(self, received: Received) -> Reply:
        if callable(self.replies):
            return self.replies(received)
        if self.replies:
            return self.replies.pop(0)
        return completion(text="done")

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _version = lines[0].split(" ", 2)
            headers: dict[str, str] = {}
            for line in lines[1:]:
                if ":" in line:
                    key, value = line.split(":", 1)
                    headers[key.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            raw = await reader.readexactly(length) if length else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            received = Received(method=method, path=path, headers=headers, body=body)
            self.requests.append(received)
            self.times.append(time.monotonic())
            self.request_seen.set()
            reply = self._next_reply(received)
            if reply.delay:
                # Wait out the delay, unless the client hangs up first.
                try:
                    eof = await asyncio.wait_for(reader.read(1), reply.delay)
                except TimeoutError:
                    eof = None
                if eof == b"":
                    self.disconnects += 1
                    self.client_gone.set()
                    return
            streamed = isinstance(received.body, dict) and received.body.get("stream") is True
            if reply.events is not None or (
                streamed and reply.status == 200 and isinstance(reply.body, dict)
            ):
                options = received.body.get("stream_options") if streamed else None
                include_usage = isinstance(options, dict) and options.get("include_usage")
                events = (
                    reply.events
                    if reply.events is not None
                    else stream_events(reply.body, bool(include_usage))
                )
                await self._send_stream(writer, reply, events)
                return
            payload = (
                reply.body.encode()
                if isinstance(reply.body, str)
                else json.dumps(reply.body).encode()
            )
            response_headers = {
                "content-type": "application/json",
                "content-length": str(len(payload)),
                "connection": "close",
                **reply.headers,
            }
            status_line = f"HTTP/1.1 {reply.status} {REASONS.get(reply.status, 'Status')}\r\n"
            head_out = status_line + "".join(f"{k}: {v}\r\n" for k, v in response_headers.items())
            writer.write(head_out.encode("latin-1") + b"\r\n" + payload)
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.disconnects += 1
            self.client_gone.set()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _send_stream(
        self, writer: asyncio.StreamWriter, reply: Reply, events: list[str]
    ) -> None:
        head = "".join(
            f"{k}: {v}\r\n"
            for k, v in {
                "content-type": "text/event-stream",
                "connection": "close",
                **reply.headers,
            }.items()
        )
        writer.write(f"HTTP/1.1 200 OK\r\n{head}\r\n".encode("latin-1"))
        for event in events:
            writer.write(f"data: {event}\n\n".encode())
            await writer.drain()
