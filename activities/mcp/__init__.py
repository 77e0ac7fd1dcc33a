"""MCP tool servers configured by the operator, reached through a per-worker pool.

This package's top level is light (configuration and names only); the SDK-backed modules
:mod:`activities.mcp.connection` and :mod:`activities.mcp.tools` are imported when a server
is configured (the pool in :mod:`activities.mcp.pool` holds connections without the SDK), so
a worker without MCP servers never loads the SDK.
"""

from __future__ import annotations

from .config import McpSettings, current_settings, load_mcp_settings
from .names import is_mcp_name, qualified_name, server_of

__all__ = [
    "McpSettings",
    "current_settings",
    "is_mcp_name",
    "load_mcp_settings",
    "qualified_name",
    "server_of",
]
