"""The bridge's stdio: stdout carries JSON-RPC frames and nothing else, and input the SDK
cannot handle is answered with JSON-RPC errors instead of ending the connection.

Anything else writing to file descriptor 1 (a ``print``, a library, the embedded Temporal
dev server child, a shell child) would corrupt the protocol stream, so :func:`protect_stdout`
keeps a private duplicate of the real stdout for the frames and points descriptor 1 (and
``sys.stdout``) at stderr before anything else runs.

The SDK drops a line that is not JSON with only a log line, and a JSON value that is not an
object ends its receive loop. :class:`InputFilter` sits between stdin and the SDK: it passes
well-formed JSON-RPC messages on, and answers a parse error (-32700) or an invalid request
(-32600) itself, so a client always gets an answer and the process lives on. It also takes
``$/cancel_request`` (the SDK knows no such method and logs an error for it): a notification
that asks to cancel an outstanding request, which :class:`RequestTracker` (an observer of the
SDK's connection) can name.

stdin and stdout may be regular files (``seawall acp < requests.jsonl > answers.jsonl``):
asyncio's pipe transports refuse them, so a file is read in a thread and written directly.
At the end of a file the requests still outstanding are answered first (a pipe's end means
the editor left; a file's end only that it has no more to say).
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from collections.abc import Callable
from typing import IO, Any

import structlog
from acp.connection import StreamDirection, StreamEvent

from seawall.acp.errors import INVALID_REQUEST

log = structlog.get_logger("seawall.acp")

PARSE_ERROR = -32700
# The SDK's own default frame limit (50 MiB), for one line of input.
STDIO_LIMIT_BYTES = 50 * 1024 * 1024


def protect_stdout() -> int:
    """Keep the real stdout for protocol frames only; returns its private descriptor.
    Call first, before anything can print or start a child process."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


CANCEL_REQUEST = "$/cancel_request"
FILE_READ_BYTES = 64 * 1024
# The tasks reading a regular-file stdin (kept so they are not collected while they run).
_FEEDERS: set[asyncio.Task[None]] = set()


def is_regular_file(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


class FileTransport(asyncio.WriteTransport):
    """Writes to a regular file, which never blocks for long (asyncio's pipe transport
    refuses files)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            os.close(self._fd)

    def can_write_eof(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


async def protocol_writer(protocol_fd: int) -> asyncio.StreamWriter:
    """A stream writer on the private stdout (a pipe, a socket, a terminal or a file)."""
    loop = asyncio.get_running_loop()
    protocol = asyncio.streams.FlowControlMixin()
    transport: asyncio.WriteTransport
    if is_regular_file(protocol_fd):
        transport = FileTransport(protocol_fd)
    else:
        pipe = os.fdopen(protocol_fd, "wb", buffering=0)
        transport, _ = await loop.connect_write_pipe(lambda: protocol, pipe)
    return asyncio.StreamWriter(transport, protocol, None, loop)


async def _feed_from_file(reader: asyncio.StreamReader, source: IO[bytes]) -> None:
    try:
        while chunk := await asyncio.to_thread(source.read, FILE_READ_BYTES):
            reader.feed_data(chunk)
    finally:
        reader.feed_eof()


async def stdin_reader() -> tuple[asyncio.StreamReader, bool]:
    """A reader of stdin, and whether stdin is a regular file."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIO_LIMIT_BYTES)
    if is_regular_file(sys.stdin.fileno()):
        task = asyncio.create_task(_feed_from_file(reader, sys.stdin.buffer))
        _FEEDERS.add(task)
        task.add_done_callback(_FEEDERS.discard)
        return reader, True
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    return reader, False


class RequestTracker:
    """The client's requests not answered yet (an observer of the SDK's connection): what a
    ``$/cancel_request`` names, and what the end of a file waits for."""

    def __init__(self) -> None:
        self.outstanding: dict[Any, tuple[str, Any]] = {}
        self.idle = asyncio.Event()
        self.idle.set()

    def expect(self, message: dict[str, Any]) -> None:
        """A request passed on to the SDK (the filter calls it before the SDK reads it)."""
        if "id" not in message or not isinstance(message.get("method"), str):
            return
        params = message.get("params")
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        self.outstanding[message["id"]] = (message["method"], session_id)
        self.idle.clear()

    def __call__(self, event: StreamEvent) -> None:
        """The SDK's observer: an answer sent ends its request."""
        message = event.message
        answer = "id" in message and "method" not in message
        if event.direction is StreamDirection.OUTGOING and answer:
            self.outstanding.pop(message["id"], None)
            if not self.outstanding:
                self.idle.set()


def _error_frame(code: int, message: str, request_id: Any = None) -> bytes:
    frame = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return (json.dumps(frame) + "\n").encode()


def check_message(line: bytes) -> bytes | None:
    """``None`` when the line is a JSON-RPC message the SDK can take, else the error frame
    to answer it with."""
    try:
        message = json.loads(line)
    except ValueError:
        return _error_frame(PARSE_ERROR, "Parse error: the line is not valid JSON")
    if not isinstance(message, dict):
        return _error_frame(
            INVALID_REQUEST, "Invalid request: a message must be one JSON-RPC object"
        )
    request_id = message.get("id")
    if not isinstance(request_id, str | int | None) or isinstance(request_id, bool):
        return _error_frame(INVALID_REQUEST, "Invalid request: id must be a string or a number")
    if message.get("jsonrpc") != "2.0":
        return _error_frame(INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"', request_id)
    method = message.get("method")
    if "method" in message and not isinstance(method, str):
        return _error_frame(INVALID_REQUEST, "Invalid request: method must be a string", request_id)
    if "method" not in message and "id" not in message:
        return _error_frame(INVALID_REQUEST, "Invalid request: no method and no id")
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        return _error_frame(
            INVALID_REQUEST, "Invalid request: params must be an object", request_id
        )
    return None


class InputFilter:
    """Copies stdin to the SDK's reader line by line, answering malformed lines itself and
    handing ``$/cancel_request`` to ``on_cancel_request`` (with the request id)."""

    def __init__(
        self,
        source: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        tracker: RequestTracker | None = None,
        on_cancel_request: Callable[[Any], None] | None = None,
        answer_before_end: bool = False,
    ) -> None:
        self._source = source
        self._writer = writer
        self._tracker = tracker
        self._on_cancel_request = on_cancel_request
        # A file's end: the outstanding requests are answered before the end is passed on.
        self._answer_before_end = answer_before_end
        self.reader = asyncio.StreamReader(limit=STDIO_LIMIT_BYTES)

    async def run(self) -> None:
        try:
            while True:
                try:
                    line = await self._source.readline()
                except ValueError:  # a line over the limit: dropped by the reader
                    self._answer(_error_frame(PARSE_ERROR, "Parse error: the line is too long"))
                    continue
                if not line:
                    break
                if not line.strip():
                    continue
                error = check_message(line)
                if error is not None:
                    log.warning("acp_malformed_input", bytes=len(line))
                    self._answer(error)
                else:
                    self._pass(line)
            if self._answer_before_end and self._tracker is not None:
                await self._tracker.idle.wait()
        finally:
            self.reader.feed_eof()

    def _pass(self, line: bytes) -> None:
        message = json.loads(line)
        if message.get("method") == CANCEL_REQUEST and "id" not in message:
            if self._on_cancel_request is not None:
                self._on_cancel_request((message.get("params") or {}).get("requestId"))
            return
        if self._tracker is not None:
            self._tracker.expect(message)
        self.reader.feed_data(line if line.endswith(b"\n") else line + b"\n")

    def _answer(self, frame: bytes) -> None:
        if not self._writer.is_closing():
            self._writer.write(frame)
