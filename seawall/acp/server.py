"""Running the agent on stdio until stdin closes, then cancelling what it followed.

The editor owns the agent process: when it closes stdin it considers the agent gone and
nobody is left to answer a permission request, so the prompts the bridge followed are
cancelled, unless ``--detach-on-exit`` asks for them to run on (a later ``session/load``
re-attaches). SIGTERM and SIGHUP (an editor stopping the agent) end it the same way, so its
embedded server and worker stop cleanly too. A bridge that crashes detaches the same way: the
prompts are durable. A stdin that is a regular file ends once its requests are answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any

import structlog
from acp import run_agent
from temporalio.client import Client

from seawall.acp.agent import BridgeOptions, SeawallAgent
from seawall.acp.stdio import (
    STDIO_LIMIT_BYTES,
    InputFilter,
    RequestTracker,
    protocol_writer,
    stdin_reader,
)

log = structlog.get_logger("seawall.acp")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


async def serve(
    client: Client, options: BridgeOptions, protocol_fd: int, *, detach_on_exit: bool
) -> None:
    """Serve one editor connection on stdin and the protocol descriptor."""
    writer = await protocol_writer(protocol_fd)
    source, from_file = await stdin_reader()
    agent = SeawallAgent(client, options)
    tracker = RequestTracker()

    def cancel_request(request_id: Any) -> None:
        agent.cancel_request(tracker.outstanding.get(request_id))

    incoming = InputFilter(
        source,
        writer,
        tracker=tracker,
        on_cancel_request=cancel_request,
        answer_before_end=from_file,
    )
    filtering = asyncio.create_task(incoming.run())
    serving = asyncio.create_task(
        run_agent(
            agent,
            writer,
            incoming.reader,
            stdio_buffer_limit_bytes=STDIO_LIMIT_BYTES,
            observers=[tracker],
        )
    )
    loop = asyncio.get_running_loop()
    for stop in STOP_SIGNALS:
        loop.add_signal_handler(stop, serving.cancel)
    log.info("acp_ready", task_queue=options.task_queue)
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await serving
    finally:
        for stop in STOP_SIGNALS:
            loop.remove_signal_handler(stop)
        filtering.cancel()
        await asyncio.shield(agent.shutdown(detach=detach_on_exit))
        log.info("acp_stopped")
