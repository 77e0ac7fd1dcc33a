"""The worker's MCP connections: one live session per configured server and workspace.

Spawning a server per call would be slow and would lose its state, so a worker keeps its
connections and reuses them across calls and prompts. A stdio server is a model-steered
process: when the worker's sandbox confines processes (docs/security-sandbox.md, "MCP
servers"), each stdio server runs in the sandbox of one session's workspace, so a
connection is keyed by (server, workspace) and a model-chosen argument can reach only the
files of the session that sent it. HTTP servers are not processes of the worker and stay
shared per server. The pool is bounded: beyond :data:`MAX_CONNECTIONS`, the least recently
used connection is stopped (the next call of its session starts a fresh one).

The worker owns its pool (``seawall/worker/build.py`` hands it to
:class:`~activities.tool_runner.ToolActivities` and closes it when the worker stops). The
pool itself does not import the MCP SDK: a worker without MCP servers never loads it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from activities.mcp.config import McpSettings, ServerConfig, StdioServer
from activities.sandbox import UNCONFINED, Sandbox

if TYPE_CHECKING:
    from activities.mcp.connection import McpConnection

MAX_CONNECTIONS = 64

# (server name, workspace: "" for a connection every session shares)
PoolKey = tuple[str, str]


class McpPool:
    """The worker's connections, started on first use and stopped when least recently used
    beyond ``max_connections``."""

    def __init__(self, max_connections: int = MAX_CONNECTIONS) -> None:
        self.max_connections = max_connections
        self._connections: OrderedDict[PoolKey, McpConnection] = OrderedDict()
        self._locks: dict[PoolKey, asyncio.Lock] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def connections(self) -> Mapping[PoolKey, McpConnection]:
        return dict(self._connections)

    @staticmethod
    def key(name: str, config: ServerConfig, sandbox: Sandbox, workspace: Path | None) -> PoolKey:
        """Where the connection of ``name`` for ``workspace`` lives in the pool."""
        confined = isinstance(config, StdioServer) and sandbox.policy.confined
        return (name, str(workspace) if confined and workspace is not None else "")

    async def get(
        self,
        name: str,
        config: ServerConfig,
        settings: McpSettings,
        *,
        sandbox: Sandbox = UNCONFINED,
        workspace: Path | None = None,
        owner: str | None = None,
    ) -> McpConnection:
        """The pooled connection of ``name`` for ``workspace`` (started when there is none).

        ``sandbox`` is the worker's; a confined stdio server runs in it with ``workspace``
        as its only writable path, in the cgroup of ``owner`` (the pseudonym of the
        workspace's owner, :mod:`activities.sandbox.owners`) and under the owner's disk quota.
        A workspace is one session's, so one owner's: the key needs no owner.
        A connection that died is still returned, once: the call that uses it reports the
        loss and :meth:`discard` s it, so the next call starts a fresh server. A changed
        configuration replaces the connection.
        """
        from activities.mcp.connection import McpConnection

        key = self.key(name, config, sandbox, workspace)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            current = self._connections.get(key)
            if current is not None and current.config == config:
                self._connections.move_to_end(key)
                return current
            if current is not None:
                self.discard(name, current)
            connection = McpConnection(
                config,
                settings.inherit_stderr,
                sandbox=sandbox,
                workspace=workspace,
                owner=owner,
            )
            try:
                await connection.start(settings.connect_timeout_seconds)
            except BaseException:
                self._close_later(connection)
                raise
            self._connections[key] = connection
            self._evict()
            return connection

    def _evict(self) -> None:
        while len(self._connections) > self.max_connections:
            key, oldest = self._connections.popitem(last=False)
            self._locks.pop(key, None)
            self._close_later(oldest)

    def discard(self, name: str, connection: McpConnection) -> None:
        """Forget ``connection`` (if still pooled) and stop it in the background."""
        for key, pooled in list(self._connections.items()):
            if key[0] == name and pooled is connection:
                del self._connections[key]
        self._close_later(connection)

    def retain_only(self, names: set[str]) -> None:
        """Stop the servers that are no longer configured."""
        for (name, _workspace), connection in list(self._connections.items()):
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
