"""The chaos suite's MCP server: one tool that takes a moment and writes a side-effect ledger.

Each worker of ``scripts/chaos.py`` runs this as its stdio MCP server (``SEAWALL_MCP_SERVERS``),
so MCP calls go through the worker's real pool (``activities/mcp/``). The ``work`` tool
appends a ``start`` line to the ledger named by ``CHAOS_MCP_LEDGER``, works for a moment,
then appends an ``end`` line and answers. The ledger tells the suite which calls are in flight
(to SIGKILL this process in the middle of one), which process and worker ran each call, and
whether a call ran twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("seawall-chaos")


def _record(event: str, token: str) -> None:
    line = {
        "event": event,
        "token": token,
        "pid": os.getpid(),
        "worker_pid": os.getppid(),
        "at": time.time(),
    }
    with open(os.environ["CHAOS_MCP_LEDGER"], "a", encoding="utf-8") as ledger:
        ledger.write(json.dumps(line) + "\n")


@server.tool()
async def work(token: str, seconds: float) -> str:
    """Do ``seconds`` of work for ``token``, recording its start and end."""
    _record("start", token)
    await asyncio.sleep(seconds)
    _record("end", token)
    return f"worked on {token}"


if __name__ == "__main__":
    server.run()
