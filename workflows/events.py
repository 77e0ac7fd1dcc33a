"""A prompt's event log: the updates clients stream (``events`` query), in order.

Clients poll the ``events`` query with the last ``seq`` they saw (the gateway turns that
into a server-sent event stream), so the log only ever grows and every event keeps its
number. Pure workflow state: a replayed prompt rebuilds the same log.
"""

from __future__ import annotations

from workflows.outcome import ToolOutcome
from workflows.prompt_io import AgentEvent, EventKind


class EventLog:
    """Every event of one prompt; ``seq`` numbers them from 1."""

    def __init__(self) -> None:
        self._events: list[AgentEvent] = []

    def emit(
        self,
        kind: EventKind,
        *,
        batch: int,
        call_id: str | None = None,
        tool_name: str | None = None,
        status: str | None = None,
        text: str | None = None,
        request_id: str | None = None,
    ) -> None:
        self._events.append(
            AgentEvent(
                seq=len(self._events) + 1,
                kind=kind,
                batch=batch,
                call_id=call_id,
                tool_name=tool_name,
                status=status,
                text=text,
                request_id=request_id,
            )
        )

    def emit_settled(self, outcome: ToolOutcome, *, batch: int) -> None:
        """A call settled (run, answered by a protection, or cancelled)."""
        self.emit(
            EventKind.TOOL_CALL_SETTLED,
            batch=batch,
            call_id=outcome.call_id,
            tool_name=outcome.tool_name,
            status=outcome.status,
        )

    def after(self, seq: int) -> list[AgentEvent]:
        """The events a client that saw ``seq`` has not seen yet."""
        return [event for event in self._events if event.seq > seq]
