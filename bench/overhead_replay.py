"""Replay: what a worker pays to rebuild a prompt from its history, against the bare workflow.

Why it exists: a worker that restarts, or evicts a prompt from its sticky cache, replays the
prompt's whole history before its next step. ``bench/overhead.py`` measures it twice with
these functions: the replay time per 1,000 events of the short prompts' histories
(:func:`measure_replay`), and one history of at least 10,000 events (the Temporal server
warns at 10,240; target < 2 s), produced by a long prompt (``Workload`` with, by default,
50 batches of 70 calls), fetched and replayed ``repeats`` times, the bare workflow of the
same shape beside it and each on every workflow runner (:func:`measure_long_replay`).
Replays use ``temporalio.worker.Replayer`` with the worker's workflows and the one data
converter, External Storage included.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory
from temporalio.converter import ExternalStorage
from temporalio.worker import Replayer, UnsandboxedWorkflowRunner, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from bench.bare import BareLoopWorkflow
from bench.overhead_harness import VARIANTS, Bench, bare_runner
from bench.server_metrics import state_transitions
from seawall.runtime.plugin import SeawallPlugin

REPLAY_HISTORIES = 30
REPLAY_REPEATS = 3
TARGET_EVENTS = 10_000
TARGET_SECONDS = 2.0
# Issue 27: Seawall's replay within 1.3x of the same-shape bare workflow on the same runner.
FLOOR_TARGET = 1.3
DEFAULT_BATCHES = 50
DEFAULT_CALLS = 70


async def _iterate(histories: list[WorkflowHistory]) -> AsyncIterator[WorkflowHistory]:
    for history in histories:
        yield history


async def time_replay(
    replayer: Replayer, histories: list[WorkflowHistory], repeats: int
) -> list[float]:
    """Seconds per replay of ``histories``, ``repeats`` times; a failed replay raises."""
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        results = await replayer.replay_workflows(_iterate(histories), raise_on_replay_failure=True)
        timings.append(time.perf_counter() - started)
        assert results.replay_failures == {}
    return timings


# The long replay once more on each other workflow runner: what the sandbox costs.
OTHER_RUNNERS: dict[str, str] = {
    "sdk-sandbox": "the SDK's sandbox",
    "seawall-sandbox": "Seawall's sandbox runner",
    "no-sandbox": "no sandbox (UnsandboxedWorkflowRunner)",
}


def replayer_for(
    variant: str, storage: ExternalStorage | None = None, runner: str | None = None
) -> Replayer:
    """A replayer as the variant's worker runs it: the one converter (with the payload
    storage the prompts were stored with), Seawall's workflows or the bare one, on the
    variant's own workflow runner or on ``runner`` (a key of :data:`OTHER_RUNNERS`)."""
    sdk = bare_runner()
    runners: dict[str, WorkflowRunner] = {
        "sdk-sandbox": sdk,
        # The plugin turns the SDK's own sandbox (not the subclass) into Seawall's runner.
        "seawall-sandbox": SandboxedWorkflowRunner(restrictions=sdk.restrictions),
        "no-sandbox": UnsandboxedWorkflowRunner(),
    }
    if variant == "d":
        return Replayer(
            workflows=[],
            workflow_runner=runners[runner or "sdk-sandbox"],
            plugins=[SeawallPlugin(workflows=[BareLoopWorkflow], storage=storage)],
        )
    return Replayer(
        workflows=[],
        workflow_runner=runners[runner or "seawall-sandbox"],
        plugins=[SeawallPlugin(storage=storage)],
    )


async def measure_replay(
    bench: Bench, ids: dict[str, list[str]], storage: ExternalStorage | None = None
) -> dict[str, Any]:
    """Replay time per 1,000 events for histories of (a), (b) and (d), and their sizes."""
    out: dict[str, Any] = {}
    for variant in ("a", "b", "d"):
        replayer = replayer_for(variant, storage)
        histories: list[WorkflowHistory] = [
            await bench.client.get_workflow_handle(wid).fetch_history()
            for wid in ids[variant][:REPLAY_HISTORIES]
        ]
        events = sum(len(h.events) for h in histories)
        transitions = await state_transitions(bench.client, ids[variant][:REPLAY_HISTORIES])
        history_bytes = sum(e.ByteSize() for h in histories for e in h.events)
        kinds: dict[str, int] = {}
        for history in histories:
            for event in history.events:
                name = EventType.Name(event.event_type).removeprefix("EVENT_TYPE_")
                kinds[name] = kinds.get(name, 0) + 1
        seconds = statistics.median(await time_replay(replayer, histories, REPLAY_REPEATS))
        out[variant] = {
            "title": VARIANTS[variant],
            "histories": len(histories),
            "events": events,
            "events_per_history": round(events / max(1, len(histories)), 1),
            "history_bytes_per_history": round(history_bytes / max(1, len(histories))),
            "state_transitions_per_prompt": round(transitions, 1),
            "seconds_median": round(seconds, 4),
            "ms_per_1000_events": round(seconds / events * 1_000_000, 2),
            "event_types_per_history": {
                k: round(v / max(1, len(histories)), 2) for k, v in sorted(kinds.items())
            },
        }
    return out


def event_differences(replay: dict[str, Any], x: str, y: str) -> str:
    """History event types per prompt that ``x`` has more (or fewer) of than ``y``."""
    ex = replay[x]["event_types_per_history"]
    ey = replay[y]["event_types_per_history"]
    parts = [
        f"{k.lower()} {ex.get(k, 0) - ey.get(k, 0):+g}"
        for k in sorted(set(ex) | set(ey))
        if abs(ex.get(k, 0) - ey.get(k, 0)) > 1e-9
    ]
    return ", ".join(parts) or "none"


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
        timings = await time_replay(replayer_for(variant), [history], repeats)
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
                    statistics.median(await time_replay(other(variant), [history], repeats)), 3
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
