"""``mcp__<server>__<tool>``: how an MCP tool is named to the model and the guard.

The tool part is made safe for chat-completions function names (``[A-Za-z0-9_-]``, at most
64 characters); the mapping back to the server's own tool name is recomputed from the
server's listing, so no state is needed to resolve a call.
"""

from __future__ import annotations

import hashlib
import re

PREFIX = "mcp__"
SEPARATOR = "__"
MAX_NAME_CHARS = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def qualified_name(server: str, tool: str) -> str:
    name = f"{PREFIX}{server}{SEPARATOR}{_UNSAFE.sub('_', tool) or '_'}"
    if len(name) <= MAX_NAME_CHARS:
        return name
    digest = hashlib.sha256(f"{server}/{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME_CHARS - 9]}_{digest}"


def is_mcp_name(name: str) -> bool:
    return name.startswith(PREFIX)


def server_of(name: str) -> str | None:
    """The server part of a qualified name (server names never contain ``__``)."""
    if not is_mcp_name(name):
        return None
    server, separator, tool = name[len(PREFIX) :].partition(SEPARATOR)
    return server if server and separator and tool else None
