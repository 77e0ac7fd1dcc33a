"""Free local ports for the servers a test starts (dev servers, gateways, MCP servers)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nothing listens on now: bound to 127.0.0.1, then released for the test."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
