"""What bench/peers.py reads off a prompt's fetched history, whichever harness ran it.

Why it exists: the peer benchmark compares every harness by its histories alone (server
time, the same for all), so these readings know nothing of any harness but the name of its
model activity: the payload bytes an event carries, the per-batch latency (the gaps between
model requests) and the steps a batch is made of.
"""

from __future__ import annotations

import itertools

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory

PAYLOAD_TYPE = "temporal.api.common.v1.Payload"


def payload_bytes(message: Message) -> int:
    """The bytes of every ``Payload`` inside ``message`` (inputs, results, markers...)."""
    total = 0
    for fd, value in message.ListFields():
        if fd.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        assert fd.message_type is not None
        if fd.message_type.GetOptions().map_entry:
            inner = fd.message_type.fields_by_name["value"]
            items = list(value.values()) if inner.type == FieldDescriptor.TYPE_MESSAGE else []
        elif fd.is_repeated:
            items = list(value)
        else:
            items = [value]
        for item in items:
            if item.DESCRIPTOR.full_name == PAYLOAD_TYPE:
                total += item.ByteSize()
            else:
                total += payload_bytes(item)
    return total


def batch_gaps(history: WorkflowHistory, model_mark: str) -> list[float]:
    """Seconds between consecutive model-activity schedules: one per batch."""
    times = [
        e.event_time.ToDatetime().timestamp()
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and model_mark in e.activity_task_scheduled_event_attributes.activity_type.name
    ]
    return [b - a for a, b in itertools.pairwise(times)]


# The steps of one batch, in order: where its per-batch latency goes (server time).
SEGMENTS = (
    "model request",  # the model activity scheduled -> completed
    "reply to calls",  # the model's reply -> the batch's calls scheduled (a workflow task)
    "tool calls",  # the calls scheduled -> the last one completed
    "calls to request",  # the last call completed -> the next model request scheduled
)


def batch_segments(
    history: WorkflowHistory, model_mark: str, aside_mark: str | None = None
) -> dict[str, list[float]]:
    """Per batch of ``history``, the seconds of each of :data:`SEGMENTS`. Activities whose
    type contains ``aside_mark`` are neither model requests nor tool calls (a harness's own
    steps between them): their time falls in the step they run in."""
    out: dict[str, list[float]] = {name: [] for name in SEGMENTS}
    model: dict[int, bool] = {}
    scheduled = replied = calls_from = last_call = None
    pending = 0
    for e in history.events:
        at = e.event_time.ToDatetime().timestamp()
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            kind = e.activity_task_scheduled_event_attributes.activity_type.name
            if aside_mark is not None and aside_mark in kind:
                continue
            is_model = model_mark in kind
            model[e.event_id] = is_model
            if is_model:
                if last_call is not None:
                    out["calls to request"].append(at - last_call)
                scheduled, last_call = at, None
            else:
                if pending == 0:
                    calls_from = at
                    if replied is not None:
                        out["reply to calls"].append(at - replied)
                        replied = None
                pending += 1
        elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            of = e.activity_task_completed_event_attributes.scheduled_event_id
            if of not in model:  # an aside activity
                continue
            if model[of]:
                if scheduled is not None:
                    out["model request"].append(at - scheduled)
                replied = at
            elif pending > 0:
                pending -= 1
                if pending == 0 and calls_from is not None:
                    out["tool calls"].append(at - calls_from)
                    last_call = at
    return out
