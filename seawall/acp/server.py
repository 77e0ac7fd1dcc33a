"""Running the agent on stdio until stdin closes, then cancelling what it followed.

The editor owns the agent process: when it closes stdin it considers the agent gone and
nobody is left to answer a permission request, so the prompts the bridge followed are
cancelled, unless ``--detach-on-exit`` asks for them to run on (a later ``session/load``
re-attaches). A bridge that crashes detaches the same way: the prompts are durable.
"""

from __future__ import annotations

import asyncio

import structlog
from acp import run_agent
from temporalio.client import Client

from seawall.acp.agent import BridgeOptions, SeawallAgent
from seawall.acp.stdio import STDIO_LIMIT_BYTES, InputFilter, protocol_writer, stdin_reader

log = structlog.get_logger("seawall.acp")


async def serve(
    client: Client, options: BridgeOptions, protocol_fd: int, *, detach_on_exit: bool
) -> None:
    """Serve one editor connection on stdin and the protocol descriptor."""
    writer = await protocol_writer(protocol_fd)
    source = await stdin_reader()
    incoming = InputFilter(source, writer)
    agent = SeawallAgent(client, options)
    filtering = asyncio.create_task(incoming.run())
    log.info("acp_ready", task_queue=options.task_queue)
    try:
        await run_agent(agent, writer, incoming.reader, stdio_buffer_limit_bytes=STDIO_LIMIT_BYTES)
    finally:
        filtering.cancel()
        await asyncio.shield(agent.shutdown(detach=detach_on_exit))
        log.info("acp_stopped")
