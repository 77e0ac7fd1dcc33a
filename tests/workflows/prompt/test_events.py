"""A prompt's event log (``workflows/prompt/events.py``, the ``events`` query): numbered from 1,
read from a cursor, and streamed by a running prompt."""

from __future__ import annotations

from temporalio.client import Client

from tests.scenario_helpers import run, scenario_file
from workflows.contracts import ToolOutcome
from workflows.contracts.prompt import DELTA_RETRY_STATUS, EventKind, EventsQuery, ModelDelta
from workflows.prompt.events import EventLog, StreamedText
from workflows.prompt.workflow import PromptWorkflow


def test_a_page_of_events_is_bounded_by_its_text() -> None:
    log = EventLog()
    for text in ("a" * 6, "b" * 6, "c" * 6):
        log.emit(EventKind.MESSAGE_DELTA, batch=0, text=text)
    log.emit(EventKind.PROMPT_FINISHED, batch=0, status="end_turn")

    first = log.page(0, max_chars=10)
    assert [e.seq for e in first.events] == [1] and first.more
    rest = log.page(1, max_chars=12)
    assert [e.seq for e in rest.events] == [2, 3, 4] and not rest.more
    # One event larger than a page still comes, alone.
    assert [e.seq for e in log.page(0, max_chars=3).events] == [1]
    assert log.page(4).events == [] and not log.page(4).more


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


# --- streamed model text (StreamedText) ------------------------------------------------------


def delta(text: str, offset: int, *, attempt: int = 1, request: int = 1) -> ModelDelta:
    return ModelDelta(request_number=request, attempt=attempt, offset=offset, text=text)


def test_streamed_text_shows_each_piece_once_in_order() -> None:
    streamed = StreamedText()
    assert streamed.receive(delta("Hello ", 0), in_flight=1) == ("Hello ", None)
    assert streamed.receive(delta("world", 6), in_flight=1) == ("world", None)
    # A repeated signal, whole or overlapping, adds only what is new.
    assert streamed.receive(delta("world", 6), in_flight=1) is None
    assert streamed.receive(delta("world!", 6), in_flight=1) == ("!", None)


def test_streamed_text_ignores_other_requests() -> None:
    streamed = StreamedText()
    assert streamed.receive(delta("late", 0, request=1), in_flight=0) is None
    assert streamed.receive(delta("late", 0, request=1), in_flight=2) is None
    assert streamed.receive(delta("next", 0, request=2), in_flight=2) == ("next", None)


def test_a_retry_repeating_the_shown_text_adds_only_what_goes_beyond() -> None:
    streamed = StreamedText()
    streamed.receive(delta("Hello wor", 0), in_flight=1)
    assert streamed.receive(delta("Hello", 0, attempt=2), in_flight=1) is None
    assert streamed.receive(delta(" world.", 5, attempt=2), in_flight=1) == ("ld.", None)
    # The superseded attempt is not heard from again.
    assert streamed.receive(delta("wor", 9, attempt=1), in_flight=1) is None


def test_a_retry_saying_something_else_restarts_the_text() -> None:
    streamed = StreamedText()
    streamed.receive(delta("Hello wor", 0), in_flight=1)
    assert streamed.receive(delta("Goodbye", 0, attempt=2), in_flight=1) == (
        "Goodbye",
        DELTA_RETRY_STATUS,
    )
    assert streamed.receive(delta(".", 7, attempt=2), in_flight=1) == (".", None)


def test_a_new_request_starts_afresh() -> None:
    streamed = StreamedText()
    streamed.receive(delta("one", 0, request=1), in_flight=1)
    assert streamed.receive(delta("one", 0, request=2), in_flight=2) == ("one", None)
