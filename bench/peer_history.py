"""What the benchmarks read off a prompt's fetched history, whichever harness ran it.

Why it exists: the peer benchmark compares every harness by its histories alone (server time,
the same for all), so these readings know nothing of any harness but the names of its activity
types: the payload bytes an event carries, the per-batch latency (the gaps between model
requests) and the steps a batch is made of; then where a history's bytes go and how they grow
with its length (a conversation re-recorded by every model request grows with the square of
the batches). :func:`breakdown` reads the first off a fetched history, :func:`growth_exponent`
the second off a few (batches, bytes) points, and :func:`bytes_table` prints peers side by
side. ``bench/peers.py --bytes-batches 5,20,100`` (its :func:`sweep`) runs one prompt per peer
at each batch count, one in flight (bytes are deterministic, so one prompt is the figure), and
reports history, payload and stored bytes.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.converter import ExternalStorage

from seawall.runtime.storage import DEFAULT_THRESHOLD_BYTES, FilesystemStorageDriver

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


# --- where the bytes go, and how they grow -----------------------------------------------


@dataclass
class Part:
    """One kind of event of a history (``ACTIVITY_TASK_SCHEDULED seawall.run_tool`` ...)."""

    events: int = 0
    bytes: int = 0
    payload_bytes: int = 0


def part_of(event: Any, activity_types: dict[int, str]) -> str:
    """The part ``event`` counts in: its event type, and for an activity's events the
    activity's type, for a marker its name."""
    kind = EventType.Name(event.event_type).removeprefix("EVENT_TYPE_")
    if event.HasField("activity_task_scheduled_event_attributes"):
        name = event.activity_task_scheduled_event_attributes.activity_type.name
        activity_types[event.event_id] = name
        return f"{kind} {name}"
    for field in (
        "activity_task_started_event_attributes",
        "activity_task_completed_event_attributes",
        "activity_task_failed_event_attributes",
        "activity_task_timed_out_event_attributes",
        "activity_task_cancel_requested_event_attributes",
        "activity_task_canceled_event_attributes",
    ):
        if event.HasField(field):
            of = getattr(event, field).scheduled_event_id
            return f"{kind} {activity_types.get(of, '?')}"
    if event.HasField("marker_recorded_event_attributes"):
        return f"{kind} {event.marker_recorded_event_attributes.marker_name}"
    return kind


def breakdown(history: WorkflowHistory) -> dict[str, Part]:
    """Events, bytes and payload bytes of each part of ``history``, largest first."""
    parts: dict[str, Part] = {}
    activity_types: dict[int, str] = {}
    for event in history.events:
        part = parts.setdefault(part_of(event, activity_types), Part())
        part.events += 1
        part.bytes += event.ByteSize()
        part.payload_bytes += payload_bytes(event)
    return dict(sorted(parts.items(), key=lambda kv: -kv[1].bytes))


def history_bytes(history: WorkflowHistory) -> int:
    return sum(e.ByteSize() for e in history.events)


def growth_exponent(points: Iterable[tuple[float, float]]) -> float | None:
    """The least-squares slope of log(bytes) against log(batches): 1 is linear, 2 quadratic;
    None with fewer than two distinct batch counts (or a non-positive value)."""
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len({x for x, _ in pts}) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    return round(sxy / sxx, 3)


def with_exponents(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Per peer, the growth exponent of its history and stored bytes over the rows'
    batch counts (rows: ``{"peer", "batches", "history_bytes", "stored_bytes", ...}``; a row
    with an ``error`` is left out)."""
    out: dict[str, dict[str, float | None]] = {}
    for peer in dict.fromkeys(r["peer"] for r in rows):
        mine = [r for r in rows if r["peer"] == peer and "error" not in r]
        out[peer] = {
            "history_bytes": growth_exponent((r["batches"], r["history_bytes"]) for r in mine),
            # Stored bytes are 0 until a payload passes the store's threshold: their slope
            # is over the batch counts that stored something.
            "stored_bytes": growth_exponent((r["batches"], r["stored_bytes"]) for r in mine),
        }
    return out


def bytes_table(report: dict[str, Any]) -> list[str]:
    """The sweep's lines: per batch count, each peer's history (payload) and stored bytes per
    prompt side by side, the ratio of Seawall's history bytes to the best other peer's (not a
    baseline's: the bare loop is a floor, not a peer to beat), and
    each peer's growth exponents."""
    rows = report["rows"]
    peers = list(dict.fromkeys(r["peer"] for r in rows))
    width = max([31, *(len(p) + 2 for p in peers)])
    lines = [
        "history bytes per prompt (payload bytes) / stored bytes, one prompt per peer at "
        "concurrency 1",
        f"  {'batches':>8}" + "".join(f"{p:>{width}}" for p in peers) + f"{'Seawall ÷ best':>16}",
    ]
    for batches in sorted({r["batches"] for r in rows}):
        at = {r["peer"]: r for r in rows if r["batches"] == batches}
        cells, stored = [], []
        for p in peers:
            r = at.get(p)
            if r is None:
                cells.append("-")
                stored.append("-")
            elif "error" in r:
                cells.append(f"stopped: {r['error'].split('(')[0]}")
                stored.append("")
            else:
                cells.append(f"{r['history_bytes']:,} ({r['payload_bytes']:,})")
                stored.append(f"{r['stored_bytes']:,} stored")
        others = [
            r["history_bytes"]
            for p, r in at.items()
            if p not in ("seawall", *report.get("baselines", ())) and "error" not in r
        ]
        ratio = (
            f"{at['seawall']['history_bytes'] / min(others):.2f}×"
            if others and "seawall" in at and "error" not in at["seawall"]
            else "-"
        )
        lines.append(f"  {batches:>8}" + "".join(f"{c:>{width}}" for c in cells) + f"{ratio:>16}")
        lines.append(f"  {'':>8}" + "".join(f"{c:>{width}}" for c in stored))
    exponents = report["growth_exponent"]
    slopes = [
        f"{_exponent(exponents[p]['history_bytes'])} / {_exponent(exponents[p]['stored_bytes'])}"
        for p in peers
    ]
    lines.append(f"  {'exponent':>8}" + "".join(f"{c:>{width}}" for c in slopes))
    return lines


def _exponent(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


# --- the payload store Seawall runs with in the peer benchmark ----------------------------


def filesystem_store(root: Path) -> ExternalStorage:
    """Seawall's payload storage as it ships embedded: the filesystem store at the default
    threshold, under ``root``."""
    return ExternalStorage(
        drivers=[FilesystemStorageDriver(root)], payload_size_threshold=DEFAULT_THRESHOLD_BYTES
    )


def stored_bytes(root: Path, namespace: str, workflow_id: str) -> tuple[int, int]:
    """The bytes and the number of the payloads the store under ``root`` holds for
    ``workflow_id`` (its per-workflow index: what ``seawall storage gc`` reads): their
    manifests and each chunk they are made of once."""
    driver = FilesystemStorageDriver(root)
    for refs in driver.workflow_refs(namespace):
        if refs.workflow_id == workflow_id:
            digests = refs.digests()
            return driver.stored_size(digests), len(digests)
    return 0, 0


async def prompt_bytes(
    client: Client, workflow_id: str, store: Path | None
) -> tuple[WorkflowHistory, dict[str, int]]:
    """A prompt's history, and its history, payload and stored bytes, events and payloads
    stored (the store under ``store``: only Seawall's worker stores payloads; the peers keep
    theirs inline, as they ship)."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    stored, payloads = stored_bytes(store, client.namespace, workflow_id) if store else (0, 0)
    return history, {
        "history_bytes": history_bytes(history),
        "payload_bytes": sum(payload_bytes(e) for e in history.events),
        "history_events": len(history.events),
        "stored_bytes": stored,
        "stored_payloads": payloads,
    }


# --- bench/peers.py --bytes-batches -------------------------------------------------------


class PromptDriver(Protocol):
    """What the sweep needs of ``bench/peers.py``'s ``Driver``."""

    client: Client

    async def one(self, batches: int, calls: int) -> str: ...


async def sweep(
    drivers: Mapping[str, PromptDriver],
    batch_counts: Sequence[int],
    calls: int,
    store: Path | None,
    log: Callable[[str], None] = print,
    baselines: Collection[str] = (),
) -> dict[str, Any]:
    """One prompt per peer at each of ``batch_counts``, one in flight: its bytes
    (:func:`prompt_bytes`)."""
    rows: list[dict[str, Any]] = []
    for batches in batch_counts:
        for key, driver in drivers.items():
            started = time.perf_counter()
            try:
                workflow_id = await driver.one(batches, calls)
            except Exception as err:  # one peer's failure must not lose the others' figures
                rows.append({"peer": key, "batches": batches, "error": repr(err)[:300]})
                log(f"  {key} at {batches} batches failed: {err!r}"[:300])
                continue
            _, figures = await prompt_bytes(driver.client, workflow_id, store)
            seconds = round(time.perf_counter() - started, 2)
            rows.append({"peer": key, "batches": batches, **figures, "seconds": seconds})
            log(
                f"  {key} at {batches} batches: {rows[-1]['history_bytes']:,} history bytes, "
                f"{figures['stored_bytes']:,} stored, {seconds} s"
            )
    return {
        "calls_per_batch": calls,
        "rows": rows,
        "growth_exponent": with_exponents(rows),
        "baselines": list(baselines),  # beside the others, not in Seawall's ratio
    }
