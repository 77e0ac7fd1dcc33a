"""Following one prompt's agent events, for every client that shows them live.

A prompt workflow keeps its events in order with increasing ``seq``. ``follow_prompt_events``
yields each event after a cursor exactly once, rides out short Temporal outages, waits for a
prompt still queued in its session, and ends after ``prompt_finished`` (or when the workflow
closed without one). The gateway's server-sent events and the editor bridge both read it, so
the cursor, pending and outage rules live in one place; they only format what it yields.

How it learns that there is something new: the events
only ever change while the workflow runs a workflow task, and every workflow task that
completes appends a ``WorkflowTaskCompleted`` event to the workflow's history. So the
follower long-polls the history (``GetWorkflowExecutionHistory`` with ``wait_new_event``,
served by the Temporal server alone) and reads the ``events`` query only when a workflow task
has completed or the workflow has closed. That is push-like (no 5 Hz polling; a model delta
reaches the client one server notification and one query after its workflow task), adds
nothing to the prompt's history however many clients watch (unlike an Update-based
subscription such as ``temporalio.contrib.workflow_streams``, whose every poll is recorded),
and works for every prompt, including those started before text streamed. Where the history
cannot be read (a server that refuses it), the follower falls back to polling the query.

It reads the history first and the query after, so a change after the read shows up in the
next long poll and nothing is missed; each long poll waits at most 5 s, and the
``events_page`` query answers at most 500,000 characters of event text at a time (``more``
says when to read on at once; a worker deployed before it is read through ``events``). A
server that refuses history reads (``PERMISSION_DENIED``, ``UNIMPLEMENTED``) makes it poll the
query five times a second. The price: each watcher reads the prompt's history once, payloads
included, from the server. The ``workflow_streams`` subscription was measured against it
(``bench/streaming.py``; docs/benchmarks.md, "Live streaming"): it was slower and added about
100 history events per prompt per watcher, where this follower adds none.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import structlog
from temporalio.api.enums.v1 import EventType
from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryRequest
from temporalio.client import (
    Client,
    RPCTimeoutOrCancelledError,
    WorkflowHandle,
    WorkflowQueryFailedError,
)
from temporalio.service import RPCError, RPCStatusCode

from seawall.client.temporal_ops import (
    RPC_TIMEOUT,
    is_closed,
    is_not_found,
    is_pending,
    prompt_handle,
)
from workflows.contracts.prompt import AgentEvent, EventKind, EventsQuery, PromptResult
from workflows.prompt.workflow import PromptWorkflow

log = structlog.get_logger("seawall.client")

# The longest one history long-poll waits for news; a quiet wait yields ``Idle`` (so a
# caller can keep its connection alive) and polls again.
LONG_POLL_SECONDS = 5.0
# The fallback when the history cannot be read: the events query about five times a second.
POLL_SECONDS = 0.2
# A prompt still queued in its session is looked for less often.
PENDING_POLL_SECONDS = 1.0
# Transient Temporal outages (a server restart) are ridden out for this long; after that the
# follower ends and its client resumes from its cursor.
OUTAGE_SECONDS = 60.0
# A long poll cut by a server going away ends UNKNOWN or CANCELLED rather than UNAVAILABLE.
_TRANSIENT = (
    RPCStatusCode.UNAVAILABLE,
    RPCStatusCode.DEADLINE_EXCEEDED,
    RPCStatusCode.UNKNOWN,
    RPCStatusCode.CANCELLED,
    RPCStatusCode.ABORTED,
    RPCStatusCode.RESOURCE_EXHAUSTED,
)
# History events after which the events query may answer something new.
_CHANGED = frozenset(
    {
        EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
    }
)
# A server that will not serve the history: follow by polling instead.
_NO_HISTORY = (RPCStatusCode.PERMISSION_DENIED, RPCStatusCode.UNIMPLEMENTED)


class Idle:
    """Yielded when a wait found nothing new, so a caller can keep its connection alive."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


class HistoryWatch:
    """Waits until a workflow's history shows that its state may have changed."""

    def __init__(self, client: Client, workflow_id: str) -> None:
        self._client = client
        self._workflow_id = workflow_id
        self._token = b""
        self.closed = False

    async def changed(self) -> bool:
        """Wait for new history; ``True`` when a workflow task completed or the workflow
        closed since the last call (the first call answers at once), ``False`` when the
        long poll ended quietly."""
        if self.closed:
            return True
        request = GetWorkflowExecutionHistoryRequest(
            namespace=self._client.namespace,
            next_page_token=self._token,
            wait_new_event=True,
        )
        request.execution.workflow_id = self._workflow_id
        try:
            response = await self._client.workflow_service.get_workflow_execution_history(
                request, retry=False, timeout=timedelta(seconds=LONG_POLL_SECONDS)
            )
        except RPCError as err:
            if err.status == RPCStatusCode.DEADLINE_EXCEEDED:
                return False  # nothing new in a whole long poll
            if err.status == RPCStatusCode.INVALID_ARGUMENT and self._token:
                # A page token the server no longer takes (it restarted): read it all again.
                self._token = b""
                return True
            raise
        first = not self._token
        events = response.history.events
        if not response.next_page_token:
            self.closed = True  # a closed workflow's history has no next page
        else:
            self._token = response.next_page_token
        return first or self.closed or any(event.event_type in _CHANGED for event in events)


class EventReader:
    """Reads a prompt's events after a cursor: the ``events_page`` query (bounded answers),
    or the ``events`` query from a worker deployed before pages existed."""

    def __init__(self, handle: WorkflowHandle[PromptWorkflow, PromptResult]) -> None:
        self._handle = handle
        self._paged = True

    async def read(self, cursor: int) -> tuple[list[AgentEvent], bool]:
        """The events after ``cursor``, and whether more wait beyond them."""
        if self._paged:
            try:
                page = await self._handle.query(
                    PromptWorkflow.events_page, EventsQuery(after=cursor), rpc_timeout=RPC_TIMEOUT
                )
                return page.events, page.more
            except WorkflowQueryFailedError:
                self._paged = False  # an older worker: no such query
        events = await self._handle.query(
            PromptWorkflow.events, EventsQuery(after=cursor), rpc_timeout=RPC_TIMEOUT
        )
        return events, False


async def follow_prompt_events(
    client: Client, prompt_id: str, after: int
) -> AsyncIterator[AgentEvent | Idle]:
    """Every event after ``after``, ending once the prompt finished (or is gone)."""
    loop = asyncio.get_running_loop()
    handle = prompt_handle(client, prompt_id)
    watch: HistoryWatch | None = HistoryWatch(client, prompt_id)
    reader = EventReader(handle)
    cursor = after
    started = False
    outage_since: float | None = None
    while True:
        pause = 0.0  # how long to sleep before the next round
        quiet = 0.0  # how long this round waited without news (reported as Idle)
        try:
            closed = False
            changed = False
            if not started:
                try:
                    closed = await is_closed(handle)
                    started = True
                except RPCError as err:
                    if not is_not_found(err):
                        raise
                    if not await is_pending(client, prompt_id):
                        return  # gone from its session's queue without ever starting
                    pause = quiet = PENDING_POLL_SECONDS
            if started and watch is not None:
                waited = loop.time()
                try:
                    changed = await watch.changed()
                    closed = closed or watch.closed
                except RPCError as err:
                    if err.status not in _NO_HISTORY:
                        raise
                    log.warning("event_follow_polls", prompt_id=prompt_id)
                    watch = None
                if not changed:
                    quiet = loop.time() - waited
            if started and watch is None:
                # The fallback: poll the query (and now and then whether the prompt closed).
                changed = True
                closed = closed or await is_closed(handle)
                pause = quiet = POLL_SECONDS
            if changed:
                # Read after the history said so: a change after this read shows up in the
                # next long poll, so nothing is missed.
                more = True
                while more:
                    events, more = await reader.read(cursor)
                    for event in events:
                        yield event
                        cursor = event.seq
                        if event.kind is EventKind.PROMPT_FINISHED:
                            return
                if closed:
                    return  # closed, and its final events were all read
            outage_since = None
        except (RPCError, RPCTimeoutOrCancelledError) as err:
            transient = not isinstance(err, RPCError) or err.status in _TRANSIENT
            outage_since = loop.time() if outage_since is None else outage_since
            if not transient or loop.time() - outage_since >= OUTAGE_SECONDS:
                # The caller resumes from the last event it was given.
                status = err.status.name if isinstance(err, RPCError) else "TIMEOUT"
                log.warning(
                    "event_follow_ended_early", prompt_id=prompt_id, cursor=cursor, status=status
                )
                return
            pause = quiet = POLL_SECONDS
        if pause > 0:
            await asyncio.sleep(pause)
        if quiet > 0:
            yield Idle(quiet)
