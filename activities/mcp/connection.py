"""One live session with one MCP server, over the MCP SDK.

Each connection is owned by a long-lived task (the SDK's transports are
structured-concurrency context managers that must be entered and left in one task);
activities only send requests through it. :class:`~activities.mcp.pool.McpPool` keeps one
per configured server.

A server that dies is not restarted behind the caller's back: the call that finds it dead
gets an error outcome (the model and the guard see the failure), the connection is
discarded, and the next call starts a fresh process.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO, TypeVar

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CONNECTION_CLOSED, CallToolResult, Tool

from activities.mcp.config import HttpServer, ServerConfig, StdioServer
from activities.sandbox import UNCONFINED, NetworkPolicy, Sandbox, SandboxUnavailable

CLOSE_TIMEOUT_SECONDS = 10.0
MAX_LIST_PAGES = 100
HTTP_CONNECT_TIMEOUT_SECONDS = 30.0
HTTP_READ_TIMEOUT_SECONDS = 300.0

_DEVNULL: TextIO | None = None

T = TypeVar("T")


class McpUnavailable(Exception):
    """The server could not be started or did not answer its handshake in time.

    The message says why in general terms (an exception type, a timeout) and never names
    the server.
    """


class McpConnectionLost(Exception):
    """The server's process exited or its connection broke."""


def _errlog(inherit: bool) -> TextIO:
    """Where a stdio server's stderr goes: discarded by default, so the worker's stderr
    stays one JSON log object per line."""
    global _DEVNULL
    if inherit:
        return sys.__stderr__ or sys.stderr
    if _DEVNULL is None:
        _DEVNULL = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the worker
    return _DEVNULL


_LOST_ERRORS = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    BrokenPipeError,
    ConnectionError,
)


async def _list_all_tools(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


class McpConnection:
    """A started server and its session, owned by one background task."""

    def __init__(
        self,
        config: ServerConfig,
        inherit_stderr: bool = False,
        *,
        sandbox: Sandbox = UNCONFINED,
        workspace: Path | None = None,
        owner: str | None = None,
    ) -> None:
        self.config = config
        self.tools: list[Tool] = []
        self.failure: str | None = None
        self._inherit_stderr = inherit_stderr
        self._sandbox = sandbox
        self._workspace = workspace
        self._owner = owner
        self._client: Client | None = None
        self._lost = False
        self._ready = asyncio.Event()
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return (
            self._client is not None
            and not self._lost
            and self._task is not None
            and not self._task.done()
        )

    async def start(self, timeout: float) -> None:
        """Start the server and list its tools; :class:`McpUnavailable` when it cannot."""
        if isinstance(self.config, StdioServer) and self._sandbox.policy.confined:
            # Fail closed before spawning anything (docs/security-sandbox.md).
            self._confined_parameters(self.config)
        # A fresh context: the owner task outlives the activity that happened to start it
        # and must not carry that activity's context around.
        self._task = asyncio.create_task(self._run(), context=contextvars.Context())
        try:
            async with asyncio.timeout(timeout):
                await self._ready.wait()
        except TimeoutError:
            raise McpUnavailable(f"no answer within {timeout:g} seconds") from None
        if self._client is None:
            raise McpUnavailable(f"it failed to start ({self.failure or 'exited'})")

    async def _open(self, stack: contextlib.AsyncExitStack) -> Client:
        config = self.config
        transport: Any
        if isinstance(config, HttpServer):
            import httpx2

            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=config.headers,
                    timeout=httpx2.Timeout(
                        HTTP_CONNECT_TIMEOUT_SECONDS, read=HTTP_READ_TIMEOUT_SECONDS
                    ),
                )
            )
            transport = streamable_http_client(config.url, http_client=http)
        elif self._sandbox.policy.confined:
            params = self._confined_parameters(config)
            transport = stdio_client(params, errlog=_errlog(self._inherit_stderr))
        else:
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                # Merged over a minimal safe environment (PATH, HOME, ...): the worker's
                # own secrets (model keys) are not handed to tool servers.
                env=dict(config.env) or None,
                cwd=config.cwd,
            )
            transport = stdio_client(params, errlog=_errlog(self._inherit_stderr))
        # No response cache: every prompt lists the server's current tools.
        return await stack.enter_async_context(Client(transport, cache=None))

    def _confined_parameters(self, config: StdioServer) -> StdioServerParameters:
        """The server under the sandbox's supervisor, confined to this connection's
        workspace; :class:`McpUnavailable` when the sandbox cannot start it."""
        workspace = self._workspace
        if workspace is None:
            raise McpUnavailable("no workspace to confine it to")
        # Resolved on the worker's PATH: the sandbox's own PATH has system directories only.
        command = shutil.which(config.command) or config.command
        options = config.sandbox
        try:
            launch = self._sandbox.launch(
                [command, *config.args],
                workspace=workspace,
                cwd=Path(config.cwd) if config.cwd else workspace,
                read_only_paths=[Path(p) for p in options.read_only_paths],
                network=NetworkPolicy(options.network) if options.network else None,
                extra_env=config.env,
                owner=self._owner,
            )
        except SandboxUnavailable as exc:
            raise McpUnavailable(self._sandbox.refusal("stdio MCP servers", str(exc))) from None
        return StdioServerParameters(
            command=launch.argv[0], args=launch.argv[1:], env=launch.env, cwd=str(workspace)
        )

    async def _run(self) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await self._open(stack)
                self.tools = await _list_all_tools(client)
                self._client = client
                self._ready.set()
                await self._closing.wait()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # the transport's task group, a failed spawn, a cancel
            self.failure = type(exc).__name__
        finally:
            self._lost = True
            self._client = None
            self._ready.set()

    def _session(self) -> Client:
        client = self._client
        if client is None or not self.alive:
            self._lost = True
            raise McpConnectionLost()
        return client

    async def _send(self, request: Callable[[Client], Awaitable[T]], timeout: float | None) -> T:
        """``request`` on the session, within ``timeout`` seconds. A closed connection or a
        broken transport marks the connection lost (:class:`McpConnectionLost`)."""
        client = self._session()
        try:
            async with asyncio.timeout(timeout):
                return await request(client)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._lost = True
                raise McpConnectionLost() from None
            raise
        except _LOST_ERRORS:
            self._lost = True
            raise McpConnectionLost() from None

    async def refresh_tools(self, timeout: float) -> list[Tool]:
        self.tools = await self._send(_list_all_tools, timeout)
        return self.tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any], timeout: float | None
    ) -> CallToolResult:
        """Call one tool. ``TimeoutError`` after ``timeout`` seconds (the request is
        cancelled, the session stays usable); :class:`McpConnectionLost` when the server
        is gone; :class:`MCPError` for any other protocol error."""
        return await self._send(lambda client: client.call_tool(name, arguments), timeout)

    async def close(self) -> None:
        """Stop the server (the SDK closes stdin, then terminates, then kills)."""
        self._closing.set()
        task = self._task
        if task is None or task.done():
            return
        _, pending = await asyncio.wait({task}, timeout=CLOSE_TIMEOUT_SECONDS)
        if pending:
            task.cancel()
            await asyncio.wait({task}, timeout=CLOSE_TIMEOUT_SECONDS)
