"""The endpoint-fault schedule of the real-model tier: an HTTP proxy in front of llama-server.

The worker's ``OPENAI_BASE_URL`` points here, and every model request is forwarded to the
real server unless a fault is armed. A fault is armed by the test and lands on the next
model request, so it always hits one (never a matter of timing), and it lasts for a length
of time or a number of requests:

- :meth:`FaultProxy.kill`: the endpoint dies: the connection that draws the fault is reset
  and the port refuses connections for ``seconds`` (the listening socket is closed);
- :meth:`FaultProxy.hang`: requests arriving within ``seconds`` of the first are accepted
  and never answered (each until its client gives up, or the window ends and the connection
  closes without a response);
- :meth:`FaultProxy.fail`: the next ``count`` requests are answered with an HTTP error
  (429 carries ``Retry-After: 1``);
- :meth:`FaultProxy.slow_stream`: the next reply's server-sent chunks are each delayed, and
  the stream is held after its first text until the test :meth:`FaultProxy.release`\\ s it,
  so a test can see a streamed delta while the reply is provably incomplete (SSE comment
  lines keep the client's read timeout from firing meanwhile, as proxies do).

The proxy speaks just enough HTTP/1.1 for the OpenAI SDK: one request per connection,
answered with ``Connection: close``. It records what it did (``forwarded``, ``refused``,
``hung``, ``failed``) and each forwarded request's JSON body, so tests assert that a fault
really hit a request and what the model was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import httpx

HEADER_LIMIT = 64 * 1024
# How often a held stream sends an SSE comment line.
KEEPALIVE_SECONDS = 1.0
# A held stream is released after this long even if the test never releases it.
HOLD_LIMIT_SECONDS = 120.0
REASONS = {429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length"})


@dataclass
class SlowStream:
    chunk_delay: float
    hold_after_text: bool
    holding: asyncio.Event = field(default_factory=asyncio.Event)
    released: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Failure:
    status: int
    remaining: int


class FaultProxy:
    """A fault-injecting reverse proxy for one OpenAI-compatible ``upstream`` (its base URL
    without ``/v1``); use as ``async with``; ``url`` is the base URL a client is given."""

    def __init__(self, upstream: str) -> None:
        self._upstream = upstream.rstrip("/")
        self._server: asyncio.AbstractServer | None = None
        self._port = 0
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(None))
        self._kill_seconds: float | None = None
        self._down = False
        self._hang_seconds: float | None = None
        self._hang_until: float | None = None
        self._failures: list[Failure] = []
        self._slow: SlowStream | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.forwarded = 0
        self.refused = 0
        self.hung = 0
        self.failed = 0
        self.requests: list[dict[str, Any]] = []

    # --- the schedule -----------------------------------------------------------------------

    def kill(self, seconds: float) -> None:
        self._kill_seconds = seconds

    def hang(self, seconds: float) -> None:
        self._hang_seconds = seconds

    def fail(self, status: int, count: int) -> None:
        self._failures.append(Failure(status, count))

    def slow_stream(self, chunk_delay: float, hold_after_text: bool = True) -> SlowStream:
        self._slow = SlowStream(chunk_delay, hold_after_text)
        return self._slow

    def release(self) -> None:
        if self._slow is not None:
            self._slow.released.set()

    async def heal(self) -> None:
        """End every fault now (the port listens again, nothing hangs or fails) and forget
        what was recorded."""
        self._kill_seconds = None
        self._hang_seconds = None
        self._hang_until = None
        self._failures.clear()
        self.release()
        self._slow = None
        self.forwarded = self.refused = self.hung = self.failed = 0
        self.requests.clear()
        await self._reopen(0)

    @property
    def down(self) -> bool:
        return self._down

    # --- lifecycle --------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    async def __aenter__(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._http.aclose()

    def _task(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _reopen(self, after: float) -> None:
        await asyncio.sleep(after)
        if not self._down:
            return
        self._down = False
        self._server = await asyncio.start_server(
            self._handle, "127.0.0.1", self._port, reuse_address=True
        )

    # --- one connection ---------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if self._kill_seconds is not None:
                seconds, self._kill_seconds = self._kill_seconds, None
                self._go_down(seconds)
                self.refused += 1
                writer.transport.abort()  # a reset, as when the server process dies
                return
            request = await self._read_request(reader)
            if request is None:
                return
            method, path, headers, body = request
            loop = asyncio.get_running_loop()
            if self._hang_seconds is not None and self._hang_until is None:
                self._hang_until = loop.time() + self._hang_seconds
                self._hang_seconds = None
            if self._hang_until is not None:
                if loop.time() < self._hang_until:
                    self.hung += 1
                    await self._hang(reader, self._hang_until - loop.time())
                    return
                self._hang_until = None
            if self._failures:
                failure = self._failures[0]
                failure.remaining -= 1
                if failure.remaining <= 0:
                    self._failures.pop(0)
                self.failed += 1
                await self._answer_error(writer, failure.status)
                return
            await self._forward(writer, method, path, headers, body)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    def _go_down(self, seconds: float) -> None:
        if self._server is not None:
            self._server.close()
        self._down = True
        self._task(self._reopen(seconds))

    async def _read_request(
        self, reader: asyncio.StreamReader
    ) -> tuple[str, str, dict[str, str], bytes] | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return None
        if len(head) > HEADER_LIMIT:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        body = await reader.readexactly(length) if length else b""
        return method, path, headers, body

    async def _hang(self, reader: asyncio.StreamReader, seconds: float) -> None:
        """No answer: wait until the client hangs up or the window ends."""
        with contextlib.suppress(TimeoutError, ConnectionError):
            await asyncio.wait_for(reader.read(), timeout=max(seconds, 0))

    async def _answer_error(self, writer: asyncio.StreamWriter, status: int) -> None:
        body = json.dumps(
            {"error": {"message": "injected by the fault proxy", "type": "fault", "code": status}}
        ).encode()
        extra = "Retry-After: 1\r\n" if status == 429 else ""
        writer.write(
            (
                f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\n"
                "Content-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n"
            ).encode()
            + body
        )
        await writer.drain()

    async def _forward(
        self,
        writer: asyncio.StreamWriter,
        method: str,
        path: str,
        headers: dict[str, str],
        body: bytes,
    ) -> None:
        self.forwarded += 1
        with contextlib.suppress(ValueError):
            self.requests.append(json.loads(body) if body else {})
        slow, self._slow = self._slow, None
        sent_headers = {k: v for k, v in headers.items() if k not in HOP_BY_HOP | {"host"}}
        upstream = self._http.build_request(
            method, self._upstream + path, headers=sent_headers, content=body
        )
        response = await self._http.send(upstream, stream=True)
        try:
            head = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}"]
            head += [f"{k}: {v}" for k, v in response.headers.items() if k not in HOP_BY_HOP]
            head.append("Connection: close")
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            await writer.drain()
            held = False
            async for chunk in response.aiter_raw():
                if slow is not None:
                    await asyncio.sleep(slow.chunk_delay)
                writer.write(chunk)
                await writer.drain()
                if slow is not None and slow.hold_after_text and not held and _has_text(chunk):
                    held = True
                    await self._hold(writer, slow)
        finally:
            await response.aclose()
            if slow is not None:
                slow.finished.set()

    async def _hold(self, writer: asyncio.StreamWriter, slow: SlowStream) -> None:
        slow.holding.set()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + HOLD_LIMIT_SECONDS
        while not slow.released.is_set() and loop.time() < deadline:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(slow.released.wait(), KEEPALIVE_SECONDS)
            if not slow.released.is_set():
                writer.write(b": held by the fault proxy\n\n")
                await writer.drain()


def _has_text(chunk: bytes) -> bool:
    """Whether a raw piece of an SSE stream carries a chunk with reply text."""
    for line in chunk.decode("utf-8", "replace").splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        with contextlib.suppress(ValueError, AttributeError, IndexError, TypeError):
            delta = json.loads(line[len("data: ") :])["choices"][0]["delta"]
            if delta.get("content"):
                return True
    return False
