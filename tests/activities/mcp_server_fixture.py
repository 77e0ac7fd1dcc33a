"""A real MCP server for tests, built with the SDK's high-level server (``MCPServer``,
the v2 name of FastMCP).

    python tests/activities/mcp_server_fixture.py                 # stdio
    python tests/activities/mcp_server_fixture.py --http PORT     # streamable HTTP

Tools: ``echo``, ``pid`` (this process's id, to tell restarts from reuse), ``always_fails``
(an ``isError`` result, the same reason every time), ``slow`` (sleeps), ``add`` (typed
arguments, for schema validation) and ``lookup`` (read-only).
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("seawall-test-fixture")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def pid() -> str:
    """This server process's id."""
    return str(os.getpid())


@server.tool()
def always_fails(n: int = 0) -> str:
    """Fails every time, for the same reason."""
    raise ToolError("backend unavailable: connection refused")


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def lookup(key: str) -> str:
    """Look a key up (read-only)."""
    return f"value of {key}"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
