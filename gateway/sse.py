"""The server-sent-events stream of one prompt's agent updates.

A prompt workflow keeps its events in order with increasing ``seq``; the stream sends each
once, as ``id: <seq>`` / ``event: <kind>`` / ``data: <json>``, so a client that reconnects
with ``Last-Event-ID`` (or ``?after=``) resumes exactly where it left off. The stream ends
after ``prompt_finished``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import structlog
from temporalio.client import Client, RPCTimeoutOrCancelledError
from temporalio.service import RPCError, RPCStatusCode

from gateway.temporal_ops import RPC_TIMEOUT, is_closed, is_not_found, is_pending, prompt_handle
from workflows.prompt import PromptWorkflow
from workflows.prompt_io import AgentEvent, EventKind, EventsQuery

log = structlog.get_logger("seawall.gateway")

# Queries are pull-only: Temporal cannot push a workflow's new events to the gateway, so
# the stream asks for the events after its cursor about five times a second.
POLL_SECONDS = 0.2
# A prompt still queued in its session is looked for less often.
PENDING_POLL_SECONDS = 1.0
# How often (in polls) an idle stream asks the server whether the workflow has closed; a
# prompt that ended without ``prompt_finished`` (terminated) or a cursor past it ends there.
CLOSED_CHECK_POLLS = 5
# A comment line now and then keeps proxies from closing an idle stream.
KEEPALIVE_SECONDS = 15.0
# Transient Temporal outages (a server restart) are ridden out for this long; after that the
# stream ends and the client resumes from its cursor.
OUTAGE_SECONDS = 60.0
_TRANSIENT = (RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED)


def format_event(event: AgentEvent) -> str:
    return f"id: {event.seq}\nevent: {event.kind.value}\ndata: {event.model_dump_json()}\n\n"


def parse_cursor(after: int, last_event_id: str | None) -> int:
    """The cursor to resume from: the later of ``?after=`` and ``Last-Event-ID``.

    Raises ``ValueError`` for a ``Last-Event-ID`` that is not a non-negative integer.
    """
    if last_event_id is None or not last_event_id.strip():
        return after
    value = last_event_id.strip()
    if not value.isdigit():
        raise ValueError(f"Last-Event-ID must be an event seq (an integer), got {value!r}")
    return max(after, int(value))


async def prompt_events(client: Client, prompt_id: str, after: int) -> AsyncIterator[str]:
    """Every event after ``after``, then the end of the stream once the prompt finished."""
    loop = asyncio.get_running_loop()
    handle = prompt_handle(client, prompt_id)
    cursor = after
    started = False
    polls = 0
    idle = 0.0
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
                    yield format_event(event)
                    cursor = event.seq
                    if event.kind is EventKind.PROMPT_FINISHED:
                        return
                if events:
                    idle = 0.0
                elif closed:
                    return
            outage_since = None
        except (RPCError, RPCTimeoutOrCancelledError) as err:
            transient = not isinstance(err, RPCError) or err.status in _TRANSIENT
            outage_since = loop.time() if outage_since is None else outage_since
            if not transient or loop.time() - outage_since >= OUTAGE_SECONDS:
                # The response has started: all that is left is to end it; the client
                # resumes from its last event id.
                log.warning("event_stream_ended_early", prompt_id=prompt_id, cursor=cursor)
                return
        if idle >= KEEPALIVE_SECONDS:
            idle = 0.0
            yield ": keep-alive\n\n"
        await asyncio.sleep(delay)
        idle += delay
