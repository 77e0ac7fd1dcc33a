"""The server-sent-events stream of one prompt's agent updates.

A prompt workflow keeps its events in order with increasing ``seq``; the stream sends each
once, as ``id: <seq>`` / ``event: <kind>`` / ``data: <json>``, so a client that reconnects
with ``Last-Event-ID`` (or ``?after=``) resumes exactly where it left off. Model text arrives
as it streams (``message_delta``), before the reply's whole ``agent_message``. Events come
from ``follow_prompt_events`` as soon as the workflow has them (no polling interval); the
stream ends after ``prompt_finished``. A prompt that never started because the worker
refused to start its session gets one ``prompt_finished`` (``error``, with why) instead of
a stream that ends with nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from temporalio.client import Client

from seawall.client.events import Idle, follow_prompt_events
from seawall.client.temporal_ops import refused_prompt
from workflows.contracts.prompt import REFUSED_START_TEXT, AgentEvent, EventKind, StopReason

# A comment line now and then keeps proxies from closing an idle stream.
KEEPALIVE_SECONDS = 15.0


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
    """Every event after ``after`` as SSE text, then the end of the stream."""
    idle = 0.0
    cursor, finished = after, False
    async for item in follow_prompt_events(client, prompt_id, after):
        if isinstance(item, Idle):
            idle += item.seconds
            if idle >= KEEPALIVE_SECONDS:
                idle = 0.0
                yield ": keep-alive\n\n"
            continue
        idle = 0.0
        cursor, finished = item.seq, item.kind is EventKind.PROMPT_FINISHED
        yield format_event(item)
    if not finished and cursor == 0:
        refused = await refused_prompt(client, prompt_id)
        if refused is not None:
            yield format_event(refused_finish(refused))


def refused_finish(reason: str) -> AgentEvent:
    """The one event of a prompt whose session's start the worker refused: finished with
    ``error`` and why (``text``), so a client following it stops and says so."""
    return AgentEvent(
        seq=1,
        kind=EventKind.PROMPT_FINISHED,
        status=StopReason.ERROR.value,
        text=REFUSED_START_TEXT.format(reason=reason),
    )
