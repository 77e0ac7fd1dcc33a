"""Following one prompt's agent events, for every client that shows them live.

A prompt workflow keeps its events in order with increasing ``seq``. ``follow_prompt_events``
yields each event after a cursor exactly once, rides out short Temporal outages, waits for a
prompt still queued in its session, and ends after ``prompt_finished`` (or when the workflow
closed without one). The gateway's server-sent events and the editor bridge both read it, so
the cursor, pending and outage rules live in one place; they only format what it yields.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import structlog
from temporalio.client import Client, RPCTimeoutOrCancelledError
from temporalio.service import RPCError, RPCStatusCode

from seawall.client.temporal_ops import (
    RPC_TIMEOUT,
    is_closed,
    is_not_found,
    is_pending,
    prompt_handle,
)
from workflows.prompt import PromptWorkflow
from workflows.prompt_io import AgentEvent, EventKind, EventsQuery

log = structlog.get_logger("seawall.client")

# Queries are pull-only: Temporal cannot push a workflow's new events to a client, so the
# follower asks for the events after its cursor about five times a second.
POLL_SECONDS = 0.2
# A prompt still queued in its session is looked for less often.
PENDING_POLL_SECONDS = 1.0
# How often (in polls) an idle follower asks the server whether the workflow has closed; a
# prompt that ended without ``prompt_finished`` (terminated) or a cursor past it ends there.
CLOSED_CHECK_POLLS = 5
# Transient Temporal outages (a server restart) are ridden out for this long; after that the
# follower ends and its client resumes from its cursor.
OUTAGE_SECONDS = 60.0
_TRANSIENT = (RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED)


class Idle:
    """Yielded when a poll found nothing new, so a caller can keep its connection alive."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


async def follow_prompt_events(
    client: Client, prompt_id: str, after: int
) -> AsyncIterator[AgentEvent | Idle]:
    """Every event after ``after``, ending once the prompt finished (or is gone)."""
    loop = asyncio.get_running_loop()
    handle = prompt_handle(client, prompt_id)
    cursor = after
    started = False
    polls = 0
    outage_since: float | None = None
    while True:
        delay = POLL_SECONDS
        try:
            closed = False
            if not started or polls % CLOSED_CHECK_POLLS == 0:
                # Asked before the events query: once the workflow has closed its events are
                # final, so an empty answer after a "closed" here really is the end.
                try:
                    closed = await is_closed(handle)
                    started = True
                except RPCError as err:
                    if not is_not_found(err):
                        raise
                    if not await is_pending(client, prompt_id):
                        return  # gone from its session's queue without ever starting
                    delay = PENDING_POLL_SECONDS
            if started:
                polls += 1
                events = await handle.query(
                    PromptWorkflow.events, EventsQuery(after=cursor), rpc_timeout=RPC_TIMEOUT
                )
                for event in events:
                    yield event
                    cursor = event.seq
                    if event.kind is EventKind.PROMPT_FINISHED:
                        return
                if not events and closed:
                    return
            outage_since = None
        except (RPCError, RPCTimeoutOrCancelledError) as err:
            transient = not isinstance(err, RPCError) or err.status in _TRANSIENT
            outage_since = loop.time() if outage_since is None else outage_since
            if not transient or loop.time() - outage_since >= OUTAGE_SECONDS:
                # The caller resumes from the last event it was given.
                log.warning("event_follow_ended_early", prompt_id=prompt_id, cursor=cursor)
                return
        await asyncio.sleep(delay)
        yield Idle(delay)
