"""Replay of one very long prompt history: what a worker pays to rebuild an evicted prompt.

A worker that restarts, or evicts a prompt from its sticky cache, rebuilds the prompt by
replaying its whole history before it can take the next step. The short prompts of
``bench/overhead.py`` give a cost per 1,000 events; this module measures the case the
issue sets a target for: one prompt history of at least 10,000 events (the Temporal
server warns at 10,240) replayed by ``temporalio.worker.Replayer`` with the worker's
workflows and the one data converter, External Storage included — target < 2 s.

The history is produced, not recorded: a long prompt with many tool calls per batch runs
on the benchmark's embedded server (``bench.overhead.Workload`` with, by default, 50
batches of 70 calls), its history is fetched with ``handle.fetch_history()`` and replayed
``repeats`` times; the bare workflow of the same shape is replayed beside it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from bench.server_metrics import state_transitions

TARGET_EVENTS = 10_000
TARGET_SECONDS = 2.0
# Issue 27: Seawall's replay within 1.3x of the same-shape bare workflow on the same runner.
FLOOR_TARGET = 1.3
DEFAULT_BATCHES = 50
DEFAULT_CALLS = 70


class _Workload(Protocol):
    @property
    def batches(self) -> int: ...
    @property
    def calls(self) -> int: ...


class _Run(Protocol):
    @property
    def ids(self) -> list[str]: ...


class Bench(Protocol):
    """What this module needs of ``bench.overhead.Bench``, said as a protocol so that it does
    not import the benchmark that imports it (no import cycle)."""

    @property
    def client(self) -> Client: ...
    @property
    def workload(self) -> _Workload: ...
    async def many(self, variant: str, prompts: int, concurrency: int) -> _Run: ...


async def _one(history: WorkflowHistory) -> AsyncIterator[WorkflowHistory]:
    yield history


async def time_replay(replayer: Replayer, history: WorkflowHistory, repeats: int) -> list[float]:
    """Seconds per replay of ``history``, ``repeats`` times; a failed replay raises."""
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        results = await replayer.replay_workflows(_one(history), raise_on_replay_failure=True)
        timings.append(time.perf_counter() - started)
        assert results.replay_failures == {}
    return timings


async def measure_long_replay(
    bench: Bench,
    replayer_for: Callable[[str], Replayer],
    variants: tuple[str, ...] = ("b", "d"),
    repeats: int = 3,
    other_runners: dict[str, Callable[[str], Replayer]] | None = None,
) -> dict[str, Any]:
    """Run one prompt of each variant with ``bench``'s (long) workload, then time the
    replay of its history. Per variant: events, history bytes, replay seconds (median of
    ``repeats``) against the 2 s target, and whether the history reached 10,000 events.
    ``other_runners`` (name -> replayer for a variant) replay the same history once more
    each, under ``"runners"``: how much of the time is the workflow runner's, not the
    workflow's."""
    out: dict[str, Any] = {
        "batches": bench.workload.batches,
        "calls_per_batch": bench.workload.calls,
        "target_seconds": TARGET_SECONDS,
        "target_events": TARGET_EVENTS,
        "repeats": repeats,
        "variants": {},
    }
    for variant in variants:
        started = time.perf_counter()
        run = await bench.many(variant, 1, 1)
        produced = time.perf_counter() - started
        history = await bench.client.get_workflow_handle(run.ids[0]).fetch_history()
        timings = await time_replay(replayer_for(variant), history, repeats)
        seconds = statistics.median(timings)
        events = len(history.events)
        out["variants"][variant] = {
            "events": events,
            "state_transitions": round(await state_transitions(bench.client, run.ids)),
            "history_bytes": sum(e.ByteSize() for e in history.events),
            "run_seconds": round(produced, 2),
            "replay_seconds_median": round(seconds, 3),
            "replay_seconds_all": [round(t, 3) for t in timings],
            "ms_per_1000_events": round(seconds / events * 1_000_000, 2),
            "reached_target_events": events >= TARGET_EVENTS,
            "within_target": seconds < TARGET_SECONDS,
            "runners": {
                name: round(
                    statistics.median(await time_replay(other(variant), history, repeats)), 3
                )
                for name, other in (other_runners or {}).items()
            },
        }
    out["floor_target"] = FLOOR_TARGET
    out["seawall_over_bare"] = over_bare(out["variants"])
    return out


def over_bare(variants: dict[str, Any]) -> dict[str, float]:
    """Seawall's replay (``b``) over the bare workflow's (``d``) on each workflow runner both
    were replayed on: the same runner, so the ratio is what Seawall's own code costs."""
    if "b" not in variants or "d" not in variants:
        return {}
    b, d = variants["b"]["runners"], variants["d"]["runners"]
    return {runner: round(b[runner] / d[runner], 3) for runner in b if d.get(runner)}
