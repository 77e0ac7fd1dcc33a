"""A prompt's event log: the updates clients stream (``events`` query), in order.

Clients read the ``events`` query after the last ``seq`` they saw (the gateway turns that
into a server-sent event stream), so the log only ever grows and every event keeps its
number. Pure workflow state: a replayed prompt rebuilds the same log (streamed model text
arrives as signals, which history records).

:class:`StreamedText` turns the model activity's text deltas (the ``publish_model_delta``
signal, ``activities.model_stream``) into ``message_delta`` events, in the same ``seq``
sequence as every other event, with ``batch`` equal to the ``batch`` of the ``agent_message``
that completes the reply; a delta for a request no longer in flight is dropped, and deltas
never enter the conversation. The durable record is unchanged: the reply's ``agent_message``
and the assistant message are the record, and the final conversation is the same whether or
not anyone watched.

A retried model request (a lost worker, a broken stream) streams its text again from the
beginning, as attempt 2. A client never sees the same text twice: :class:`StreamedText`
remembers what was shown for the request and passes on only what goes beyond it, so a retry
that says the same thing simply continues where the text stopped. When the new attempt says
something else, one ``message_delta`` with ``status: "retry"`` carries the new attempt's text
from its beginning, and a client treats what it showed for that batch as superseded.

The client contract (docs/http-api.md, "Events"): a client that showed deltas for a batch
skips that batch's ``agent_message`` (it only ends the line); one that saw no delta for it
(it joined late, resumed after the deltas, or the prompt started before text streamed) shows
the ``agent_message``. Every event has a ``seq``, so resuming from a cursor gives no
duplicates and no gaps, deltas included.
"""

from __future__ import annotations

from typing import Any

from workflows.contracts.outcome import TerminalStatus, ToolErrorType, ToolOutcome
from workflows.contracts.prompt import (
    DELTA_RETRY_STATUS,
    EVENTS_PAGE_CHARS,
    TOOL_RESULT_CHARS,
    AgentEvent,
    EventKind,
    EventsPage,
    ModelDelta,
    ToolResult,
)
from workflows.contracts.synthetic_outcomes import RULE_DENIED_CONTENT

# The classified reasons a client shows for a call that did not succeed, in a few words.
# Only the classification: the tool's own error text stays in the ``tool_results`` query.
_REASON_WORDS = {
    ToolErrorType.FILE_NOT_FOUND: "not found",
    ToolErrorType.SEARCH_PATH_NOT_FOUND: "not found",
    ToolErrorType.PATH_NOT_IN_WORKSPACE: "outside the workspace",
    ToolErrorType.PERMISSION_DENIED: "permission denied by the file system",
    ToolErrorType.INVALID_TOOL_PARAMS: "invalid arguments",
    ToolErrorType.TOOL_NOT_REGISTERED: "no such tool",
    ToolErrorType.EXECUTION_TIMEOUT: "timed out",
    ToolErrorType.EXECUTION_DENIED: "not allowed",
    ToolErrorType.FILE_TOO_LARGE: "file too large",
    ToolErrorType.NO_SPACE_LEFT: "no space left",
    ToolErrorType.TARGET_IS_DIRECTORY: "is a directory",
    ToolErrorType.ATTEMPT_TO_CREATE_EXISTING_FILE: "file exists",
    ToolErrorType.EDIT_NO_OCCURRENCE_FOUND: "text to replace not found",
    ToolErrorType.EDIT_EXPECTED_OCCURRENCE_MISMATCH: "text to replace matched another count",
    ToolErrorType.EDIT_NO_CHANGE: "edit changes nothing",
    ToolErrorType.SHELL_EXECUTE_ERROR: "command failed",
    ToolErrorType.MCP_TOOL_ERROR: "MCP tool error",
    ToolErrorType.WORKER_LOST: "worker lost while it ran; not run again",
    ToolErrorType.EDITOR_UNAVAILABLE: "the editor did not answer",
    ToolErrorType.OUT_OF_MEMORY: "stopped at the sandbox's memory limit",
    ToolErrorType.DISK_QUOTA_EXCEEDED: "over a disk quota (its workspace's or its owner's)",
}


def failure_reason(outcome: ToolOutcome) -> str | None:
    """Why ``outcome`` did not succeed, in a few fixed words; ``None`` for a success."""
    if outcome.status == TerminalStatus.SUCCESS.value:
        return None
    if outcome.denied:
        by_rule = outcome.content.startswith(RULE_DENIED_CONTENT.split("{", 1)[0])
        return "denied by an approval rule" if by_rule else "not approved"
    if outcome.refused_repeat:
        return "refused: repeats a call that already failed"
    if outcome.provider_duplicate:
        return "refused: duplicate call id"
    if outcome.status == TerminalStatus.CANCELLED.value:
        return "cancelled"
    kind = outcome.error_type or outcome.execution_error_type
    if kind is None:
        return "failed"
    try:
        return _REASON_WORDS.get(ToolErrorType(kind), kind.replace("_", " "))
    except ValueError:
        return kind.replace("_", " ")


class EventLog:
    """Every event of one prompt; ``seq`` numbers them from 1."""

    def __init__(self) -> None:
        self._events: list[AgentEvent] = []
        # Each settled call's status and the start of its output, by call id (call ids are
        # unique within a prompt): what the ``tool_results`` query answers.
        self._results: dict[str, ToolResult] = {}

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
        reason: str | None = None,
        arguments: dict[str, Any] | None = None,
        rule: str | None = None,
    ) -> AgentEvent:
        """Append the next event (and return it)."""
        event = AgentEvent(
            seq=len(self._events) + 1,
            kind=kind,
            batch=batch,
            call_id=call_id,
            tool_name=tool_name,
            status=status,
            text=text,
            request_id=request_id,
            reason=reason,
            arguments=arguments,
            rule=rule,
        )
        self._events.append(event)
        return event

    def emit_settled(self, outcome: ToolOutcome, *, batch: int) -> None:
        """A call settled (run, answered by a protection, or cancelled)."""
        content = outcome.content or ""
        self._results[outcome.call_id] = ToolResult(
            call_id=outcome.call_id,
            status=outcome.status,
            content=content[:TOOL_RESULT_CHARS],
            truncated=len(content) > TOOL_RESULT_CHARS,
        )
        self.emit(
            EventKind.TOOL_CALL_SETTLED,
            batch=batch,
            call_id=outcome.call_id,
            tool_name=outcome.tool_name,
            status=outcome.status,
            reason=failure_reason(outcome),
        )

    def results(self, call_ids: list[str]) -> list[ToolResult]:
        """The settled results of these calls (those not settled yet are left out)."""
        return [self._results[call_id] for call_id in call_ids if call_id in self._results]

    def after(self, seq: int) -> list[AgentEvent]:
        """The events a client that saw ``seq`` has not seen yet."""
        return self._events[max(seq, 0) :]  # event ``seq`` sits at index ``seq - 1``

    def page(self, seq: int, max_chars: int = EVENTS_PAGE_CHARS) -> EventsPage:
        """The events after ``seq`` up to ``max_chars`` of text (always at least one)."""
        events = self.after(seq)
        size = 0
        for index, event in enumerate(events):
            size += len(event.text or "")
            if index and size > max_chars:
                return EventsPage(events=events[:index], more=True)
        return EventsPage(events=events)


class StreamedText:
    """What the clients of one prompt were shown of the model request in flight.

    The model activity publishes its reply's text as it streams, each piece with its
    attempt and character offset. Clients are shown each character once: a repeated signal
    adds nothing, and a retried attempt (a lost worker) that streams the same beginning again
    adds only what goes beyond what was shown. An attempt whose text diverges from what was
    shown restarts the batch's text with one ``message_delta`` whose status is ``retry``.
    """

    def __init__(self) -> None:
        self._request = 0
        self._attempt = 0
        self._attempt_text = ""
        self._shown = ""

    def shown(self, request_number: int) -> str:
        """What clients were shown of model request ``request_number`` (its last text)."""
        return self._shown if self._request == request_number else ""

    def receive(self, delta: ModelDelta, *, in_flight: int) -> tuple[str, str | None] | None:
        """The ``(text, status)`` to emit for ``delta`` while model request ``in_flight``
        runs; ``None`` when the delta shows nothing new (or belongs to another request)."""
        if delta.request_number != in_flight:
            return None  # a late delta of a finished request: its agent_message is out
        if delta.request_number != self._request:
            self._request, self._attempt, self._attempt_text, self._shown = (
                delta.request_number,
                delta.attempt,
                "",
                "",
            )
        if delta.attempt < self._attempt:
            return None  # a superseded attempt
        if delta.attempt > self._attempt:
            self._attempt, self._attempt_text = delta.attempt, ""
        known = len(self._attempt_text)
        if delta.offset + len(delta.text) <= known:
            return None  # a repeated signal
        # A gap (a piece the activity could not deliver) is closed up: the text shown is
        # then incomplete, and the batch's agent_message is the whole of it.
        self._attempt_text += delta.text[max(0, known - delta.offset) :]
        if self._attempt_text.startswith(self._shown):
            new = self._attempt_text[len(self._shown) :]
            self._shown = self._attempt_text
            return (new, None) if new else None
        if self._shown.startswith(self._attempt_text):
            return None  # the retry is still repeating what was shown
        self._shown = self._attempt_text
        return self._attempt_text, DELTA_RETRY_STATUS
