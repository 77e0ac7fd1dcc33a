"""What the peer benchmark reads off a history (bench/peer_history.py), on a hand-built one:
one batch of two calls between two model requests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from temporalio.api.common.v1 import ActivityType, Payload, Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import (
    ActivityTaskCompletedEventAttributes,
    ActivityTaskScheduledEventAttributes,
    HistoryEvent,
)
from temporalio.client import WorkflowHistory

from bench.peer_history import SEGMENTS, batch_gaps, batch_segments, payload_bytes

START = datetime(2026, 12, 2, tzinfo=UTC)


def ms(seconds: float) -> object:
    """``seconds`` to the microsecond: event times are read as floats of the epoch."""
    return pytest.approx(seconds, abs=1e-6)


def at(ms: float) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(START + timedelta(milliseconds=ms))
    return stamp


def scheduled(event_id: int, ms: float, kind: str, data: bytes = b"") -> HistoryEvent:
    return HistoryEvent(
        event_id=event_id,
        event_time=at(ms),
        event_type=EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
        activity_task_scheduled_event_attributes=ActivityTaskScheduledEventAttributes(
            activity_type=ActivityType(name=kind),
            input=Payloads(payloads=[Payload(data=data)]),
        ),
    )


def completed(event_id: int, ms: float, of: int) -> HistoryEvent:
    return HistoryEvent(
        event_id=event_id,
        event_time=at(ms),
        event_type=EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
        activity_task_completed_event_attributes=ActivityTaskCompletedEventAttributes(
            scheduled_event_id=of
        ),
    )


HISTORY = WorkflowHistory(
    "wf",
    [
        scheduled(1, 0, "x.call_model", b"m" * 100),
        completed(2, 5, of=1),
        scheduled(3, 40, "x.run_tool", b"t" * 10),
        scheduled(4, 40, "x.run_tool", b"t" * 10),
        completed(5, 45, of=3),
        completed(6, 60, of=4),
        scheduled(7, 70, "x.call_model", b"m" * 200),
        completed(8, 75, of=7),
    ],
)


def test_a_batch_is_split_into_its_steps_in_server_time() -> None:
    steps = batch_segments(HISTORY, "call_model")
    assert list(steps) == list(SEGMENTS)
    assert steps["model request"] == [ms(0.005), ms(0.005)]
    assert steps["reply to calls"] == [ms(0.035)]
    assert steps["tool calls"] == [ms(0.020)]
    assert steps["calls to request"] == [ms(0.010)]
    # The steps of a batch add up to its latency, the gap between two model requests.
    assert batch_gaps(HISTORY, "call_model") == [ms(0.070)]
    assert sum(v[0] for v in steps.values()) == ms(0.070)


def test_a_harness_s_own_activities_fall_in_the_step_they_run_in() -> None:
    # A stream handler's activity after the model's reply and one after the calls: neither
    # a call nor a model request, so the calls' step is the calls' alone.
    events = list(HISTORY.events)
    aside = [
        scheduled(20, 10, "x.stream_handler"),
        completed(21, 25, of=20),
        scheduled(22, 61, "x.stream_handler"),
        completed(23, 68, of=22),
    ]
    history = WorkflowHistory(
        "wf", [*events[:2], *aside[:2], *events[2:6], *aside[2:], *events[6:]]
    )
    steps = batch_segments(history, "call_model", "stream_handler")
    assert steps["reply to calls"] == [ms(0.035)]
    assert steps["tool calls"] == [ms(0.020)]
    assert steps["calls to request"] == [ms(0.010)]
    # Without the mark they would count as calls: the first one alone a batch of calls.
    unmarked = batch_segments(history, "call_model")
    assert unmarked["reply to calls"] == [ms(0.005)]
    assert unmarked["tool calls"][0] == ms(0.015)


def test_payload_bytes_count_every_payload_an_event_carries() -> None:
    sizes = [payload_bytes(event) for event in HISTORY.events]
    assert sizes[0] == Payload(data=b"m" * 100).ByteSize()
    assert sizes[2] == Payload(data=b"t" * 10).ByteSize()
    assert sizes[1] == 0  # a completion without a result carries none
