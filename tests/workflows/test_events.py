"""A prompt's event log (``workflows/events.py``, the ``events`` query): numbered from 1,
read from a cursor, and streamed by a running prompt."""

from __future__ import annotations

from temporalio.client import Client

from tests.scenario_helpers import run, scenario_file
from workflows.events import EventLog
from workflows.outcome import ToolOutcome
from workflows.prompt import PromptWorkflow
from workflows.prompt_io import EventKind, EventsQuery


def test_events_are_numbered_in_order_and_read_after_a_cursor() -> None:
    log = EventLog()
    log.emit(EventKind.AGENT_MESSAGE, batch=0, text="hi")
    log.emit_settled(ToolOutcome(call_id="c1", tool_name="t", status="error"), batch=1)
    log.emit(EventKind.PROMPT_FINISHED, batch=1, status="end_turn")

    events = log.after(0)
    assert [e.seq for e in events] == [1, 2, 3]
    assert (events[1].kind, events[1].call_id, events[1].status, events[1].batch) == (
        EventKind.TOOL_CALL_SETTLED,
        "c1",
        "error",
        1,
    )
    assert log.after(2) == events[2:]
    assert log.after(3) == []


async def test_events_query_streams_updates_after_a_cursor(client: Client, task_queue: str) -> None:
    result = await run(client, task_queue, scenario_file("read-missing-file-loop"))
    handle = client.get_workflow_handle(result.workflow_id)

    events = await handle.query(PromptWorkflow.events, EventsQuery(after=0))
    kinds = [e.kind for e in events]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert kinds.count(EventKind.TOOL_CALL_STARTED) == 9
    assert kinds.count(EventKind.TOOL_CALL_SETTLED) == 9
    assert kinds.count(EventKind.REMINDER) == 1
    assert kinds.count(EventKind.STOP) == 1
    assert kinds[-1] is EventKind.PROMPT_FINISHED
    later = await handle.query(PromptWorkflow.events, EventsQuery(after=events[-3].seq))
    assert later == events[-2:]
