"""Tell a prompt when a client's event stream ends before the prompt does.

The disconnect half of the seed's "disconnect-or-retry within ten minutes" gate
(workflows/prompt/client_connection.py). The SSE route wraps its stream in
:func:`tracking_disconnects`: a stream that ends for any reason other than reaching the end
of the prompt (the client went away, the connection broke) sends ``client_disconnected`` to
the prompt, best effort, in the background, so nothing about the stream's teardown waits on
Temporal. The signal names no client; the gateway logs only the prompt id.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import structlog
from temporalio.client import Client, WorkflowExecutionStatus

from gateway.prompt_lookup import PROMPT_WORKFLOW_TYPE
from seawall.client.temporal_ops import RPC_TIMEOUT, prompt_handle
from workflows.contracts.prompt import ClientDisconnect
from workflows.prompt.workflow import PromptWorkflow

log = structlog.get_logger("seawall.gateway")

# Strong references to the signals in flight (the event loop keeps only weak ones).
_IN_FLIGHT: set[asyncio.Task[None]] = set()


async def report_disconnect(client: Client, prompt_id: str) -> None:
    """Signal the prompt if it runs; a prompt that has finished (or not started) needs no
    telling, and a workflow that is not a prompt is never signalled (the route answered
    404 for one; this checks again, since a signal lands in whatever history has the id)."""
    with contextlib.suppress(Exception):
        handle = prompt_handle(client, prompt_id)
        description = await handle.describe(rpc_timeout=RPC_TIMEOUT)
        if (
            description.workflow_type != PROMPT_WORKFLOW_TYPE
            or description.status != WorkflowExecutionStatus.RUNNING
        ):
            return
        await handle.signal(
            PromptWorkflow.client_disconnected,
            ClientDisconnect(),
            rpc_timeout=RPC_TIMEOUT,
        )
        log.info("client_disconnected", prompt_id=prompt_id)


async def tracking_disconnects(
    stream: AsyncIterator[str], client: Client, prompt_id: str
) -> AsyncIterator[str]:
    """``stream`` as is; if it does not run to its end, the prompt hears about it."""
    finished = False
    try:
        async for chunk in stream:
            yield chunk
        finished = True
    finally:
        if not finished:
            task = asyncio.get_running_loop().create_task(report_disconnect(client, prompt_id))
            _IN_FLIGHT.add(task)
            task.add_done_callback(_IN_FLIGHT.discard)
