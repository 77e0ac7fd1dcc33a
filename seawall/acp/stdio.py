"""The bridge's stdio: stdout carries JSON-RPC frames and nothing else, and input the SDK
cannot handle is answered with JSON-RPC errors instead of ending the connection.

Anything else writing to file descriptor 1 (a ``print``, a library, the embedded Temporal
dev server child, a shell child) would corrupt the protocol stream, so :func:`protect_stdout`
keeps a private duplicate of the real stdout for the frames and points descriptor 1 (and
``sys.stdout``) at stderr before anything else runs.

The SDK drops a line that is not JSON with only a log line, and a JSON value that is not an
object ends its receive loop. :class:`InputFilter` sits between stdin and the SDK: it passes
well-formed JSON-RPC messages on, and answers a parse error (-32700) or an invalid request
(-32600) itself, so a client always gets an answer and the process lives on.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import structlog

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


async def protocol_writer(protocol_fd: int) -> asyncio.StreamWriter:
    """A stream writer on the private stdout."""
    loop = asyncio.get_running_loop()
    pipe = os.fdopen(protocol_fd, "wb", buffering=0)
    protocol = asyncio.streams.FlowControlMixin()
    transport, _ = await loop.connect_write_pipe(lambda: protocol, pipe)
    return asyncio.StreamWriter(transport, protocol, None, loop)


async def stdin_reader() -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIO_LIMIT_BYTES)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    return reader


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
    """Copies stdin to the SDK's reader line by line, answering malformed lines itself."""

    def __init__(self, source: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._source = source
        self._writer = writer
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
                if error is None:
                    self.reader.feed_data(line if line.endswith(b"\n") else line + b"\n")
                else:
                    log.warning("acp_malformed_input", bytes=len(line))
                    self._answer(error)
        finally:
            self.reader.feed_eof()

    def _answer(self, frame: bytes) -> None:
        if not self._writer.is_closing():
            self._writer.write(frame)
