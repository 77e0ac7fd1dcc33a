"""What each prompt and each cohort measured, and which two cohorts a window compares.

This module exists to turn records into the quantities the seed's gates are about, each as
the seed defines it — completion over every ended prompt, disconnect-or-retry within ten
minutes, latency, known tokens, rounds, a stopped loop of any rule the cohort's mode governs,
the calls after it — and to pick the treatment and its concurrent control cohort
(Phase 3: ``enforce`` against ``warn``; Phase 2: ``warn`` against ``shadow``). The gates
(:mod:`seawall.rollout.gates`) compare what it computes; nothing here judges.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from seawall.rollout.records import PromptRecord
from workflows.contracts.prompt import StopReason
from workflows.seed.guard import GuardMode
from workflows.seed.rollout import Cohort

RETRY_WINDOW = timedelta(minutes=10)
STOPS = frozenset({"stop", "would_stop"})


def _answered(record: PromptRecord) -> datetime:
    """When the prompt's user saw its end: its close, or (still running) its start."""
    return record.close or record.start


def retried_prompts(records: Sequence[PromptRecord]) -> set[str]:
    """Prompts whose owner (or session) submitted the same text again while they ran or
    within ten minutes of their end: the "retry" of the seed's disconnect-or-retry gate."""
    retried: set[str] = set()
    by_text: dict[tuple[str, str], list[PromptRecord]] = defaultdict(list)
    for record in records:
        by_text[(record.block, record.text_digest)].append(record)
    for group in by_text.values():
        group.sort(key=lambda r: r.start)
        for earlier, later in itertools.pairwise(group):
            if later.start <= _answered(earlier) + RETRY_WINDOW:
                retried.add(earlier.workflow_id)
    return retried


def disconnected(record: PromptRecord) -> bool:
    """A client dropped the prompt's event stream no later than ten minutes after its end
    (the signal's time in history)."""
    return any(moment <= _answered(record) + RETRY_WINDOW for moment in record.disconnects)


def stop_batches(record: PromptRecord) -> list[int]:
    """The batches where a rule governed by the prompt's mode (the cohort's) stopped the
    prompt or would have: the guard, and every loop rule running in the guard's mode."""
    result = record.result
    if result is None:
        return []
    found = [e.batch for e in result.guard if e.decision in STOPS]
    found.extend(e.batch for e in result.rules if e.decision in STOPS and record.governs(e))
    return found


def known_tokens(record: PromptRecord) -> float | None:
    """The prompt's tokens, or None when unknown: no result, a count reported as unknown
    (None), or a prompt that asked the model and recorded no token at all (a server that
    sends no usage)."""
    result = record.result
    if result is None:
        return None
    counts = result.input_tokens, result.output_tokens
    if counts[0] is None or counts[1] is None:
        return None
    total = counts[0] + counts[1]
    return None if total == 0 and result.model_requests > 0 else float(total)


@dataclass(frozen=True)
class PromptMetrics:
    """One closed prompt's inputs to the gates; None: the prompt has no such datum (it
    ended without a result, or did not record tokens)."""

    completed: bool
    cancelled: bool
    disconnect_or_retry: bool
    latency: float
    tokens: float | None
    rounds: float | None
    loop_event: bool | None
    calls_after_stop: float | None
    executed: float | None


def prompt_metrics(record: PromptRecord, retried: set[str]) -> PromptMetrics | None:
    """None for a prompt still running (it has no outcome yet). Every prompt that ended —
    completed, failed, timed out, terminated, cancelled — is in every rate's denominator."""
    latency = record.latency_seconds
    if latency is None:
        return None
    result = record.result
    stops = stop_batches(record)
    first_stop = min(stops) if stops else None
    return PromptMetrics(
        completed=result is not None and result.stop_reason is StopReason.END_TURN,
        cancelled=record.status == "canceled"
        or (result is not None and result.stop_reason is StopReason.CANCELLED),
        disconnect_or_retry=disconnected(record) or record.workflow_id in retried,
        latency=latency,
        tokens=known_tokens(record),
        rounds=float(result.model_requests) if result is not None else None,
        loop_event=None if result is None else first_stop is not None,
        calls_after_stop=None
        if result is None
        else float(sum(1 for t in record.tools if first_stop is not None and t.batch > first_stop)),
        executed=float(result.tool_calls.executed) if result is not None else None,
    )


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile, linear between closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _mean(values: Iterable[float | None]) -> float:
    items = [v for v in values if v is not None]
    return sum(items) / len(items) if items else math.nan


@dataclass(frozen=True)
class CohortStats:
    prompts: int
    completion_rate: float
    cancellation_rate: float
    disconnect_or_retry_rate: float
    p95_latency: float
    mean_tokens: float
    mean_rounds: float
    loop_rate: float
    calls_after_stop: float
    executed: float
    # Prompts that have each quantity (the rates' denominators are every ended prompt).
    with_result: int = 0
    with_tokens: int = 0


def cohort_stats(metrics: Sequence[PromptMetrics]) -> CohortStats:
    return CohortStats(
        prompts=len(metrics),
        completion_rate=_mean(float(m.completed) for m in metrics),
        cancellation_rate=_mean(float(m.cancelled) for m in metrics),
        disconnect_or_retry_rate=_mean(float(m.disconnect_or_retry) for m in metrics),
        p95_latency=percentile([m.latency for m in metrics], 95),
        mean_tokens=_mean(m.tokens for m in metrics),
        mean_rounds=_mean(m.rounds for m in metrics),
        loop_rate=_mean(None if m.loop_event is None else float(m.loop_event) for m in metrics),
        calls_after_stop=_mean(m.calls_after_stop for m in metrics),
        executed=_mean(m.executed for m in metrics),
        with_result=sum(1 for m in metrics if m.rounds is not None),
        with_tokens=sum(1 for m in metrics if m.tokens is not None),
    )


@dataclass(frozen=True)
class Arms:
    """Which comparison a window calls for: Phase 3 when any prompt ran in ``enforce``, else
    Phase 2 when any ran in ``warn``; each treatment cohort against its concurrent control
    cohort (seed 000, "Rollout"). The policies are ``SEAWALL_GUARD_ROLLOUT`` values."""

    phase: int
    treatment: Cohort
    control: Cohort
    # The phase's policy: what the operator sets for a concurrent control.
    policy_hint: str
    # Back one phase, when a gate fails.
    rollback: str
    # The next step when every gate passes (Phase 3: a wider enforce cohort, past 5 % only
    # with SEAWALL_GUARD_ROLLOUT_ALLOW_WIDE_ENFORCE and the saturation check).
    promotion: str


PHASE3_ARMS = Arms(
    3, Cohort.ENFORCE, Cohort.WARN, "enforce:5%,warn:rest", "warn:rest", "enforce:10%,warn:rest"
)
PHASE2_ARMS = Arms(
    2, Cohort.WARN, Cohort.SHADOW, "warn:95%,shadow:rest", "shadow:rest", "enforce:5%,warn:rest"
)
ARMS_BY_PHASE = {arms.phase: arms for arms in (PHASE2_ARMS, PHASE3_ARMS)}
# Phase 1's policy (none: the guard-mode setting, shadow) and the one that starts Phase 2.
PHASE1_PROMOTION = PHASE2_ARMS.policy_hint


def arms_for(records: Sequence[PromptRecord]) -> Arms | None:
    modes = {r.guard_mode for r in records}
    if GuardMode.ENFORCE.value in modes:
        return PHASE3_ARMS
    if GuardMode.WARN.value in modes:
        return PHASE2_ARMS
    return None


Arm = list[tuple[PromptRecord, PromptMetrics]]


def arm(records: Iterable[PromptRecord], retried: set[str], cohort: Cohort) -> Arm:
    """The owned, ended prompts of ``cohort`` with their metrics."""
    pairs = []
    for record in records:
        if not (record.owned and record.cohort == cohort.value):
            continue
        metrics = prompt_metrics(record, retried)
        if metrics is not None:
            pairs.append((record, metrics))
    return pairs


def concurrent_period(treatment: Arm, control: Arm) -> tuple[datetime | None, datetime | None]:
    """The period both arms ran in: from the later of their first starts to the earlier of
    their last starts (None, None when they never overlapped)."""
    if not treatment or not control:
        return None, None
    t = [r.start for r, _ in treatment]
    c = [r.start for r, _ in control]
    since, until = max(min(t), min(c)), min(max(t), max(c))
    return (since, until) if since <= until else (None, None)


def owners(pairs: Arm) -> int:
    """Distinct owners (a prompt without one: its session) of an arm."""
    return len({r.block for r, _ in pairs})
