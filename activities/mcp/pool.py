"""The worker's MCP connections: one live session per configured server, shared by every
activity of a worker.

Spawning a server per call would be slow and would lose its state, so a worker keeps one
connection per server and reuses it across calls and prompts. The worker owns its pool
(``worker.py`` hands it to :class:`~activities.tool_runner.ToolActivities` and closes it
when the worker stops). The pool itself does not import the MCP SDK: a worker without MCP
servers never loads it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Mapping
from typing import TYPE_CHECKING

from activities.mcp.config import McpSettings, ServerConfig

if TYPE_CHECKING:
    from activities.mcp.connection import McpConnection


class McpPool:
    """The worker's connections, one per server name, started on first use."""

    def __init__(self) -> None:
        self._connections: dict[str, McpConnection] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def connections(self) -> Mapping[str, McpConnection]:
        return dict(self._connections)

    async def get(self, name: str, config: ServerConfig, settings: McpSettings) -> McpConnection:
        """The pooled connection for ``name`` (started when there is none).

        A connection that died is still returned, once: the call that uses it reports the
        loss and :meth:`discard` s it, so the next call starts a fresh server. A changed
        configuration replaces the connection.
        """
        from activities.mcp.connection import McpConnection

        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            current = self._connections.get(name)
            if current is not None and current.config == config:
                return current
            if current is not None:
                self.discard(name, current)
            connection = McpConnection(config, settings.inherit_stderr)
            try:
                await connection.start(settings.connect_timeout_seconds)
            except BaseException:
                self._close_later(connection)
                raise
            self._connections[name] = connection
            return connection

    def discard(self, name: str, connection: McpConnection) -> None:
        """Forget ``connection`` (if still pooled) and stop it in the background."""
        if self._connections.get(name) is connection:
            del self._connections[name]
        self._close_later(connection)

    def retain_only(self, names: set[str]) -> None:
        """Stop the servers that are no longer configured."""
        for name, connection in list(self._connections.items()):
            if name not in names:
                self.discard(name, connection)

    def _close_later(self, connection: McpConnection) -> None:
        task = asyncio.create_task(connection.close(), context=contextvars.Context())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        """Stop every server (worker shutdown, tests)."""
        connections = list(self._connections.values())
        self._connections.clear()
        await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)
        if self._closing:
            await asyncio.gather(*list(self._closing), return_exceptions=True)
