"""The rollout evidence: the seed's Phase 1 invariants, decision volumes, and the Phase 2/3
promotion gates with owner-level blocked bootstrap intervals (seed 000, "Rollout").

Everything here is a pure function of the :class:`~seawall.rollout.records.PromptRecord`
list, so the same records give the same report, byte for byte: the bootstrap draws from a
``random.Random`` seeded by the caller, over owners sorted by key.

**Invariants** are checked against what the history recorded, not against the guard's own
opinion of itself: a batch's tool activities and their outcomes are compared with the guard
decision the prompt's result reports for that batch.

**Gates** compare a treatment cohort with its concurrent control cohort, over the period both
ran in (never an earlier period as the control). Phase 3: the ``enforce`` cohort against the
``warn`` cohort (same reminder, differing only in the stop). Phase 2: the ``warn`` cohort
against a ``shadow`` cohort (does the reminder itself regress anything). Owners, not prompts,
are the resampled unit ("calls from one owner are not independent samples"). Every prompt
that ended is in the rates' denominators; a gate whose quantity an arm lacks (no token
counts, say) is ``no data``, and any gate short of ``pass`` holds the verdict, as does data
spanning less than the seed's seven days.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from seawall.rollout.records import PromptRecord, ToolActivity
from workflows.contracts import search_attributes
from workflows.contracts.prompt import GuardEntry, LoopType, StopReason
from workflows.rules.judge import JUDGE_RULE
from workflows.seed.guard import DecisionKind, GuardMode, GuardPhase
from workflows.seed.rollout import MAX_ENFORCE_PERCENT, Cohort, label_value

COUNTING = frozenset({"tracked", "would_warn", "warn", "would_stop", "stop"})
VOLUME_DECISIONS = ("would_warn", "would_stop", "warn", "stop")
RETRY_WINDOW = timedelta(minutes=10)
# Fewer owners than this in either arm: every gate is inconclusive, whatever its interval
# (a bootstrap over a handful of owners says little).
MIN_OWNERS_PER_ARM = 10
UNRELIABLE = "unreliable_input"

Verdict = Literal["promote", "hold", "return to shadow"]
GateStatus = Literal["pass", "fail", "inconclusive", "no data"]


# --- invariants -------------------------------------------------------------------------


@dataclass
class Invariant:
    key: str
    title: str
    violations: int = 0
    checked: int = 0
    # Workflow ids of the first violating prompts (ids only: no content).
    examples: list[str] = field(default_factory=list)

    def violate(self, workflow_id: str) -> None:
        self.violations += 1
        if len(self.examples) < 10 and workflow_id not in self.examples:
            self.examples.append(workflow_id)


def _batches(record: PromptRecord) -> dict[int, list[ToolActivity]]:
    found: dict[int, list[ToolActivity]] = defaultdict(list)
    for tool in record.tools:
        found[tool.batch].append(tool)
    return found


def _entries(record: PromptRecord) -> dict[int, GuardEntry]:
    return {entry.batch: entry for entry in record.guard}


def _cancelled(tool: ToolActivity) -> bool:
    return tool.ended == "canceled" or (
        tool.outcome is not None and tool.outcome.status == "cancelled"
    )


def _ineligible(tool: ToolActivity) -> bool:
    """not_started, unknown or missing execution status, or a failure after a successful
    execution: outcomes the seed says the guard must never count."""
    outcome = tool.outcome
    if outcome is None or outcome.status != "error":
        return False
    return outcome.execution_status != "error"


ALLOWED_VALUES: dict[str, frozenset[str]] = {
    search_attributes.GUARD_PHASE.name: frozenset(p.value for p in GuardPhase),
    search_attributes.LAST_DECISION.name: frozenset(d.value for d in DecisionKind),
    search_attributes.STOP_REASON.name: frozenset(s.value for s in StopReason),
    search_attributes.LOOP_TYPE.name: frozenset(t.value for t in LoopType),
    search_attributes.GUARD_MODE.name: frozenset(m.value for m in GuardMode),
    search_attributes.ROLLOUT_COHORT.name: frozenset(c.value for c in Cohort),
}
FREE_TOKENS = frozenset(
    {search_attributes.ENVIRONMENT.name, search_attributes.SERVICE_VERSION.name}
)


def _raw_attribute(name: str, value: str) -> bool:
    """A Seawall search attribute holding anything but its bounded vocabulary."""
    if name in ALLOWED_VALUES:
        return value not in ALLOWED_VALUES[name]
    if name in FREE_TOKENS:
        return label_value(value) is None
    return name.startswith("Seawall")  # an attribute this report does not know


def check_invariants(records: Sequence[PromptRecord]) -> list[Invariant]:
    """The seed's required invariants, each with its count of violations."""
    cancelled = Invariant("cancelled_counted", "cancelled calls counted as eligible failures")
    ineligible = Invariant(
        "ineligible_counted",
        "not_started, unknown or post-execution failures counted",
    )
    incomplete = Invariant("incomplete_batch_decision", "decisions based on incomplete batches")
    unreliable = Invariant(
        "enforced_after_unreliable_input", "enforcement after an unreliable input drain"
    )
    raw = Invariant("raw_fields_in_telemetry", "raw fields in search attributes (telemetry)")
    ordering = Invariant(
        "stop_without_prior_warning",
        "would_stop/stop not preceded by would_warn/warn of the same candidate and prompt",
    )
    protections = Invariant(
        "protections_changed", "tool-call cap or duplicate call-id protection not kept"
    )
    for record in records:
        entries = _entries(record)
        for batch, tools in _batches(record).items():
            entry = entries.get(batch)
            counted = entry is not None and entry.decision in COUNTING
            for invariant, broken in (
                (cancelled, any(_cancelled(t) for t in tools)),
                (ineligible, any(_ineligible(t) for t in tools)),
                (incomplete, any(t.outcome is None for t in tools)),
            ):
                invariant.checked += 1
                if broken and counted:
                    invariant.violate(record.workflow_id)
        _check_unreliable(record, unreliable)
        _check_ordering(record, ordering)
        raw.checked += 1
        if any(_raw_attribute(k, v) for k, v in record.attributes.items()):
            raw.violate(record.workflow_id)
        protections.checked += 1
        call_ids = Counter(t.call_id for t in record.tools)
        executed = record.result.tool_calls.executed if record.result else 0
        capped = record.max_tool_calls is not None and executed > record.max_tool_calls
        if capped or any(n > 1 for n in call_ids.values()):
            protections.violate(record.workflow_id)
    return [cancelled, ineligible, incomplete, unreliable, raw, ordering, protections]


def _check_unreliable(record: PromptRecord, invariant: Invariant) -> None:
    invariant.checked += 1
    seen_unreliable = False
    for entry in sorted(record.guard, key=lambda e: e.batch):
        if entry.reason == UNRELIABLE:
            seen_unreliable = True
        elif seen_unreliable and entry.decision == DecisionKind.STOP.value:
            invariant.violate(record.workflow_id)
            return


def _check_ordering(record: PromptRecord, invariant: Invariant) -> None:
    warned: set[int] = set()
    for entry in sorted(record.guard, key=lambda e: e.batch):
        if entry.decision in ("would_warn", "warn"):
            warned.add(entry.candidate_ordinal)
        elif entry.decision in ("would_stop", "stop"):
            invariant.checked += 1
            if entry.candidate_ordinal not in warned:
                invariant.violate(record.workflow_id)


# --- volumes and the review list ----------------------------------------------------------


def unreliable_input(record: PromptRecord) -> bool:
    """The prompt's host could not prove its input drain (an ``unreliable_input`` reset):
    segmented out of the supported-host baseline. (Enforcement disabled by an outcome
    contract violation is not a host property and stays in.)"""
    return any(entry.reason == UNRELIABLE for entry in record.guard)


def _tool_type(tools: Iterable[ToolActivity]) -> str:
    for tool in tools:
        if tool.outcome is not None and tool.outcome.status == "error":
            return tool.outcome.tool_type or "unknown"
    return "unknown"


@dataclass
class Volumes:
    # (decision, tool type, route) -> decisions
    by_kind: dict[tuple[str, str, str], int] = field(default_factory=dict)
    # time bucket start (ISO) -> decision -> decisions
    over_time: dict[str, dict[str, int]] = field(default_factory=dict)
    prompts: int = 0
    unreliable_prompts: int = 0
    unreliable_decisions: dict[str, int] = field(default_factory=dict)


def decision_volumes(
    records: Sequence[PromptRecord], since: datetime, until: datetime, buckets: int = 24
) -> Volumes:
    """would_warn / would_stop (and warn / stop) per tool type and route, over time; prompts
    from unreliable-input hosts counted apart."""
    volumes = Volumes()
    span = max((until - since).total_seconds(), 1.0)
    width = timedelta(seconds=span / buckets)
    for n in range(buckets):
        volumes.over_time[(since + width * n).isoformat()] = dict.fromkeys(VOLUME_DECISIONS, 0)
    keys = list(volumes.over_time)
    by_kind: Counter[tuple[str, str, str]] = Counter()
    apart: Counter[str] = Counter()
    for record in records:
        if unreliable_input(record):
            volumes.unreliable_prompts += 1
            apart.update(e.decision for e in record.guard if e.decision in VOLUME_DECISIONS)
            continue
        volumes.prompts += 1
        batches = _batches(record)
        slot = min(int((record.start - since).total_seconds() / width.total_seconds()), buckets - 1)
        for entry in record.guard:
            if entry.decision not in VOLUME_DECISIONS:
                continue
            tool_type = _tool_type(batches.get(entry.batch, []))
            by_kind[(entry.decision, tool_type, record.route)] += 1
            volumes.over_time[keys[max(slot, 0)]][entry.decision] += 1
    volumes.by_kind = dict(sorted(by_kind.items()))
    volumes.unreliable_decisions = dict(sorted(apart.items()))
    return volumes


def review_sample(records: Sequence[PromptRecord], size: int) -> tuple[int, list[str]]:
    """Prompts with a would_stop (supported hosts only) and a deterministic sample of their
    workflow ids for the manual review; ids only, never content."""
    candidates = sorted(
        r.workflow_id
        for r in records
        if not unreliable_input(r) and any(e.decision == "would_stop" for e in r.guard)
    )
    ordered = sorted(candidates, key=lambda wid: hashlib.sha256(wid.encode()).hexdigest())
    return len(candidates), sorted(ordered[:size])


# --- gates --------------------------------------------------------------------------------


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


STOPS = frozenset({"stop", "would_stop"})


def stop_batches(record: PromptRecord) -> list[int]:
    """The batches where a rule governed by the prompt's mode (the cohort's) stopped the
    prompt or would have: the guard, and every loop rule running in the guard's mode."""
    result = record.result
    if result is None:
        return []
    found = [e.batch for e in result.guard if e.decision in STOPS]
    governed = record.governed_rules
    for entry in result.rules:
        # The progress judge has a mode of its own, never the cohort's.
        if entry.decision not in STOPS or entry.rule == JUDGE_RULE:
            continue
        if entry.rule in governed if governed is not None else entry.mode == result.guard_mode:
            found.append(entry.batch)
    return found


def known_tokens(record: PromptRecord) -> float | None:
    """The prompt's tokens, or None when unknown: no result, a count reported as unknown
    (None), or a prompt that asked the model and recorded no token at all (a server that
    sends no usage)."""
    result = record.result
    if result is None:
        return None
    counts = _known(result.input_tokens), _known(result.output_tokens)
    if counts[0] is None or counts[1] is None:
        return None
    total = counts[0] + counts[1]
    return None if total == 0 and result.model_requests > 0 else float(total)


def _known(value: int | None) -> int | None:
    """A token count as a result holds it: None is unknown usage, never 0."""
    return value


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


# What a gate's quantity needs in both arms, and how to say it is missing.
Needs = Literal["prompts", "results", "tokens"]
NEEDS_WORDS = {
    "prompts": "no ended prompt",
    "results": "no prompt with a result",
    "tokens": "no prompt with token counts",
}


def _available(stats: CohortStats, needs: Needs) -> int:
    if needs == "tokens":
        return stats.with_tokens
    return stats.with_result if needs == "results" else stats.prompts


@dataclass(frozen=True)
class GateSpec:
    key: str
    title: str
    unit: str
    # The estimate from treatment and control statistics.
    estimate: Callable[[CohortStats, CohortStats], float]
    # "max": pass when the upper bound is at most ``threshold``; "min": the lower bound at
    # least; "match": pass when the whole interval lies within ``threshold`` +- ``tolerance``
    # (an equivalence test), fail when it excludes ``threshold``.
    rule: Literal["max", "min", "match"]
    threshold: float
    tolerance: float = 0.0
    needs: Needs = "prompts"


def _ratio(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    return a / b if b > 0 else (1.0 if a == 0 else math.inf)


# "Match warn-mode observations": the equivalence margins of the two Phase 3 matching gates.
STOP_RATE_TOLERANCE_PP = 2.0
SAVED_CALLS_TOLERANCE = 1.0

DISCONNECT_OR_RETRY = GateSpec(
    "disconnect_or_retry",
    "disconnect-or-retry within 10 min (treatment - control)",
    "pp",
    lambda t, c: 100 * (t.disconnect_or_retry_rate - c.disconnect_or_retry_rate),
    "max",
    0.5,
)
RATIO_GATES: tuple[GateSpec, ...] = (
    GateSpec(
        "p95_latency",
        "p95 latency (treatment / control)",
        "x",
        lambda t, c: _ratio(t.p95_latency, c.p95_latency),
        "max",
        1.10,
    ),
    GateSpec(
        "mean_tokens",
        "mean tokens (treatment / control)",
        "x",
        lambda t, c: _ratio(t.mean_tokens, c.mean_tokens),
        "max",
        1.10,
        needs="tokens",
    ),
    GateSpec(
        "mean_rounds",
        "mean rounds (treatment / control)",
        "x",
        lambda t, c: _ratio(t.mean_rounds, c.mean_rounds),
        "max",
        1.10,
        needs="results",
    ),
)
# Phase 2, the seed: "reminder injection does not increase cancellation, reconnect, latency,
# token, or round-count regressions". The seed gives Phase 2 no margins; these are Phase 3's
# for the same quantities (cancellation: the completion rate's 1 pp).
PHASE2_GATES: tuple[GateSpec, ...] = (
    GateSpec(
        "cancellation_rate",
        "cancellation rate (treatment - control)",
        "pp",
        lambda t, c: 100 * (t.cancellation_rate - c.cancellation_rate),
        "max",
        1.0,
    ),
    DISCONNECT_OR_RETRY,
    *RATIO_GATES,
)
PHASE3_GATES: tuple[GateSpec, ...] = (
    GateSpec(
        "completion_rate",
        "completion rate (treatment - control)",
        "pp",
        lambda t, c: 100 * (t.completion_rate - c.completion_rate),
        "min",
        -1.0,
    ),
    DISCONNECT_OR_RETRY,
    *RATIO_GATES,
    GateSpec(
        "stopped_loop_rate",
        "stopped-loop rate vs warn-mode would-stop rate (difference)",
        "pp",
        lambda t, c: 100 * (t.loop_rate - c.loop_rate),
        "match",
        0.0,
        STOP_RATE_TOLERANCE_PP,
        needs="results",
    ),
    GateSpec(
        "saved_calls",
        "tool calls saved per prompt: observed minus warn-mode estimate",
        "calls",
        lambda t, c: (c.executed - t.executed) - c.calls_after_stop,
        "match",
        0.0,
        SAVED_CALLS_TOLERANCE,
        needs="results",
    ),
)


@dataclass
class Gate:
    key: str
    title: str
    unit: str
    rule: str
    threshold: float
    tolerance: float
    estimate: float
    low: float
    high: float
    status: GateStatus
    # Why the gate has no data (empty otherwise).
    note: str = ""


def _judge(spec: GateSpec, low: float, high: float) -> GateStatus:
    if math.isnan(low) or math.isnan(high):
        return "no data"
    if spec.rule == "max":
        return (
            "pass" if high <= spec.threshold else "fail" if low > spec.threshold else "inconclusive"
        )
    if spec.rule == "min":
        return (
            "pass" if low >= spec.threshold else "fail" if high < spec.threshold else "inconclusive"
        )
    if not low <= spec.threshold <= high:
        return "fail"
    within = spec.threshold - spec.tolerance <= low and high <= spec.threshold + spec.tolerance
    return "pass" if within else "inconclusive"


def _blocks(records: Sequence[tuple[PromptRecord, PromptMetrics]]) -> list[list[PromptMetrics]]:
    grouped: dict[str, list[PromptMetrics]] = defaultdict(list)
    for record, metrics in records:
        grouped[record.block].append(metrics)
    return [grouped[key] for key in sorted(grouped)]


def _finite(value: float) -> float:
    return value if math.isfinite(value) else math.nan


def _missing(spec: GateSpec, treatment: CohortStats, control: CohortStats) -> str:
    """Why ``spec`` cannot be computed from these arms ("" when it can)."""
    empty = [
        name
        for name, stats in (("treatment", treatment), ("control", control))
        if _available(stats, spec.needs) == 0
    ]
    if not empty:
        return ""
    return f"{NEEDS_WORDS[spec.needs]} in the {' and the '.join(empty)}"


def compare(
    treatment: Sequence[tuple[PromptRecord, PromptMetrics]],
    control: Sequence[tuple[PromptRecord, PromptMetrics]],
    gates: Sequence[GateSpec],
    *,
    resamples: int,
    seed: int,
) -> tuple[CohortStats, CohortStats, list[Gate]]:
    """Each gate's estimate and its 95 % owner-level blocked bootstrap interval; a gate
    whose quantity either arm lacks is ``no data``, never a pass."""
    t_blocks, c_blocks = _blocks(treatment), _blocks(control)
    t_stats = cohort_stats([m for _, m in treatment])
    c_stats = cohort_stats([m for _, m in control])
    missing = [_missing(spec, t_stats, c_stats) for spec in gates]
    draws: list[list[float]] = [[] for _ in gates]
    if t_blocks and c_blocks and not all(missing):
        rng = random.Random(seed)
        for _ in range(resamples):
            t = cohort_stats([m for b in rng.choices(t_blocks, k=len(t_blocks)) for m in b])
            c = cohort_stats([m for b in rng.choices(c_blocks, k=len(c_blocks)) for m in b])
            for i, spec in enumerate(gates):
                draws[i].append(spec.estimate(t, c))
    results = []
    for spec, values, note in zip(gates, draws, missing, strict=True):
        finite = [v for v in values if math.isfinite(v)]
        if note or not finite:
            low = high = estimate = math.nan
            note = note or "no resample gave a finite estimate"
        else:
            low, high = percentile(finite, 2.5), percentile(finite, 97.5)
            estimate = _finite(spec.estimate(t_stats, c_stats))
        results.append(
            Gate(
                spec.key,
                spec.title,
                spec.unit,
                spec.rule,
                spec.threshold,
                spec.tolerance,
                estimate,
                low,
                high,
                "no data" if note else _judge(spec, low, high),
                note,
            )
        )
    return t_stats, c_stats, results


# --- the report ---------------------------------------------------------------------------


@dataclass
class Comparison:
    phase: int
    treatment: str
    control: str
    treatment_owners: int
    control_owners: int
    treatment_stats: CohortStats
    control_stats: CohortStats
    gates: list[Gate]
    # The period both arms ran in (the first to the last start both arms share); only
    # prompts started in it are compared. None: the arms never ran at the same time.
    concurrent_since: datetime | None = None
    concurrent_until: datetime | None = None
    # Prompts of either arm left out because they started outside the concurrent period.
    not_concurrent: int = 0
    # Why an arm is empty (what the operator must set), when one is.
    missing_arm: str = ""

    @property
    def span_days(self) -> float:
        if self.concurrent_since is None or self.concurrent_until is None:
            return 0.0
        return (self.concurrent_until - self.concurrent_since).total_seconds() / 86400


@dataclass
class Report:
    environment: str
    since: datetime
    until: datetime
    prompts: int
    owners: int
    modes: dict[str, int]
    cohorts: dict[str, int]
    versions: dict[str, int]
    invariants: list[Invariant]
    volumes: Volumes
    review_total: int
    review_sample: list[str]
    comparison: Comparison | None
    verdict: Verdict
    reasons: list[str]
    resamples: int
    seed: int
    # Distinct owners per cohort (a prompt without an owner counts under its own session).
    cohort_owners: dict[str, int] = field(default_factory=dict)
    # Owners in the enforce cohort, and their share of every owner in the window.
    enforced_owners: int = 0
    enforced_share: float = math.nan
    # The data's own span: the first prompt's start to the last one's (days).
    first_start: datetime | None = None
    last_start: datetime | None = None
    min_days: float = 7.0

    @property
    def empty(self) -> bool:
        return self.prompts == 0

    @property
    def span_days(self) -> float:
        if self.first_start is None or self.last_start is None:
            return 0.0
        return (self.last_start - self.first_start).total_seconds() / 86400

    def as_json(self) -> dict[str, Any]:
        def number(value: float) -> float | None:
            return round(value, 6) if math.isfinite(value) else None

        def stats(s: CohortStats) -> dict[str, Any]:
            return {k: (number(v) if isinstance(v, float) else v) for k, v in s.__dict__.items()}

        def moment(value: datetime | None) -> str | None:
            return value.isoformat() if value is not None else None

        comparison = self.comparison
        return {
            "environment": self.environment,
            "since": self.since.isoformat(),
            "until": self.until.isoformat(),
            "data_span": {
                "first_start": moment(self.first_start),
                "last_start": moment(self.last_start),
                "days": number(self.span_days),
                "min_days": self.min_days,
            },
            "empty": self.empty,
            "prompts": self.prompts,
            "owners": self.owners,
            "modes": self.modes,
            "cohorts": self.cohorts,
            "cohort_owners": self.cohort_owners,
            "enforced": {"owners": self.enforced_owners, "share": number(self.enforced_share)},
            "service_versions": self.versions,
            "verdict": self.verdict,
            "reasons": self.reasons,
            "invariants": [
                {
                    "key": i.key,
                    "title": i.title,
                    "violations": i.violations,
                    "checked": i.checked,
                    "examples": i.examples,
                }
                for i in self.invariants
            ],
            "volumes": {
                "supported_host_prompts": self.volumes.prompts,
                "by_decision_tool_type_route": [
                    {"decision": d, "tool_type": t, "route": r, "count": n}
                    for (d, t, r), n in self.volumes.by_kind.items()
                ],
                "over_time": self.volumes.over_time,
                "unreliable_input": {
                    "prompts": self.volumes.unreliable_prompts,
                    "decisions": self.volumes.unreliable_decisions,
                },
            },
            "review": {"would_stop_prompts": self.review_total, "sample": self.review_sample},
            "comparison": None
            if comparison is None
            else {
                "phase": comparison.phase,
                "treatment": comparison.treatment,
                "control": comparison.control,
                "treatment_owners": comparison.treatment_owners,
                "control_owners": comparison.control_owners,
                "concurrent": {
                    "since": moment(comparison.concurrent_since),
                    "until": moment(comparison.concurrent_until),
                    "days": number(comparison.span_days),
                    "not_concurrent_prompts": comparison.not_concurrent,
                },
                "missing_arm": comparison.missing_arm or None,
                "treatment_stats": stats(comparison.treatment_stats),
                "control_stats": stats(comparison.control_stats),
                "gates": [
                    {
                        "key": g.key,
                        "title": g.title,
                        "unit": g.unit,
                        "rule": g.rule,
                        "threshold": g.threshold,
                        "tolerance": g.tolerance,
                        "estimate": number(g.estimate),
                        "ci95": [number(g.low), number(g.high)],
                        "status": g.status,
                        "note": g.note or None,
                    }
                    for g in comparison.gates
                ],
                "bootstrap": {
                    "resamples": self.resamples,
                    "seed": self.seed,
                    "unit": "owner",
                    "min_owners_per_arm": MIN_OWNERS_PER_ARM,
                },
            },
        }


def _pairs(
    records: Iterable[PromptRecord], retried: set[str], keep: Callable[[PromptRecord], bool]
) -> list[tuple[PromptRecord, PromptMetrics]]:
    pairs = []
    for record in records:
        if not keep(record):
            continue
        metrics = prompt_metrics(record, retried)
        if metrics is not None:
            pairs.append((record, metrics))
    return pairs


@dataclass(frozen=True)
class Arms:
    """Which comparison a window calls for: Phase 3 when any prompt ran in ``enforce``, else
    Phase 2 when any ran in ``warn``; each treatment cohort against its concurrent control
    cohort (seed 000, "Rollout")."""

    phase: int
    treatment: Cohort
    control: Cohort
    gates: tuple[GateSpec, ...]
    # What the operator sets for a concurrent control, when it is missing.
    policy_hint: str


PHASE3_ARMS = Arms(3, Cohort.ENFORCE, Cohort.WARN, PHASE3_GATES, "enforce:5%,warn:rest")
PHASE2_ARMS = Arms(2, Cohort.WARN, Cohort.SHADOW, PHASE2_GATES, "warn:95%,shadow:rest")


def _arms_for(records: Sequence[PromptRecord]) -> Arms | None:
    modes = {r.guard_mode for r in records}
    if GuardMode.ENFORCE.value in modes:
        return PHASE3_ARMS
    if GuardMode.WARN.value in modes:
        return PHASE2_ARMS
    return None


def _concurrent(
    treatment: list[tuple[PromptRecord, PromptMetrics]],
    control: list[tuple[PromptRecord, PromptMetrics]],
) -> tuple[datetime | None, datetime | None]:
    """The period both arms ran in: from the later of their first starts to the earlier of
    their last starts (None, None when they never overlapped)."""
    if not treatment or not control:
        return None, None
    t = [r.start for r, _ in treatment]
    c = [r.start for r, _ in control]
    since, until = max(min(t), min(c)), min(max(t), max(c))
    return (since, until) if since <= until else (None, None)


def _comparison(records: Sequence[PromptRecord], *, resamples: int, seed: int) -> Comparison | None:
    """The treatment cohort against the control cohort of the same environment over the
    period both ran in (a concurrent control: never an earlier period)."""
    arms = _arms_for(records)
    if arms is None:
        return None
    retried = retried_prompts(records)
    supported = [r for r in records if not unreliable_input(r)]
    treatment = _pairs(supported, retried, lambda r: r.owned and r.cohort == arms.treatment.value)
    control = _pairs(supported, retried, lambda r: r.owned and r.cohort == arms.control.value)
    missing = [
        cohort.value
        for cohort, arm in ((arms.treatment, treatment), (arms.control, control))
        if not arm
    ]
    since, until = _concurrent(treatment, control)
    missing_arm = ""
    if missing:
        missing_arm = (
            f"no owned prompt of the {' or the '.join(missing)} cohort: Phase {arms.phase} "
            f"compares the {arms.treatment.value} cohort with a concurrent "
            f"{arms.control.value} cohort (SEAWALL_GUARD_ROLLOUT={arms.policy_hint!r})"
        )
    elif since is None:
        missing_arm = (
            f"the {arms.treatment.value} and {arms.control.value} cohorts never ran at the "
            "same time: the control must be concurrent"
        )
    total = len(treatment) + len(control)
    if since is not None and until is not None:
        treatment = [(r, m) for r, m in treatment if since <= r.start <= until]
        control = [(r, m) for r, m in control if since <= r.start <= until]
    else:
        treatment, control = [], []
    t_stats, c_stats, results = compare(
        treatment, control, arms.gates, resamples=resamples, seed=seed
    )
    owners = (len({r.block for r, _ in treatment}), len({r.block for r, _ in control}))
    if min(owners) < MIN_OWNERS_PER_ARM:
        for gate in results:
            gate.status = "inconclusive" if gate.status != "no data" else gate.status
    return Comparison(
        phase=arms.phase,
        treatment=f"{arms.treatment.value} cohort",
        control=f"{arms.control.value} cohort",
        treatment_owners=owners[0],
        control_owners=owners[1],
        treatment_stats=t_stats,
        control_stats=c_stats,
        gates=results,
        concurrent_since=since,
        concurrent_until=until,
        not_concurrent=total - len(treatment) - len(control),
        missing_arm=missing_arm,
    )


def _gate_reason(gate: Gate) -> str:
    return f"gate {gate.key}: {gate.status}" + (f" ({gate.note})" if gate.note else "")


def _span_reason(days: float, min_days: float, what: str) -> str:
    return (
        f"the data spans {days:.2f} days ({what}); the seed holds each phase at least "
        f"{min_days:g} days"
    )


def build_report(
    records: Sequence[PromptRecord],
    *,
    environment: str,
    since: datetime,
    until: datetime,
    resamples: int = 1000,
    seed: int = 0,
    review_size: int = 20,
    min_days: float = 7.0,
) -> Report:
    invariants = check_invariants(records)
    volumes = decision_volumes(records, since, until)
    review_total, sample = review_sample(records, review_size)
    comparison = _comparison(records, resamples=resamples, seed=seed) if records else None
    starts = [r.start for r in records]
    first, last = (min(starts), max(starts)) if starts else (None, None)
    span_days = (last - first).total_seconds() / 86400 if first and last else 0.0
    owners_by_cohort: dict[str, set[str]] = defaultdict(set)
    for r in records:
        owners_by_cohort[r.cohort or "unknown"].add(r.block)
    owned = {r.block for r in records if r.owned}
    enforced = {r.block for r in records if r.owned and r.cohort == Cohort.ENFORCE.value}
    share = len(enforced) / len(owned) if owned else math.nan
    reasons: list[str] = []
    verdict: Verdict
    violated = [i for i in invariants if i.violations]
    if not records:
        verdict = "hold"
        reasons.append(f"no prompts in environment {environment!r} in this window")
    elif violated:
        verdict = "return to shadow"
        reasons.extend(f"invariant violated: {i.title} ({i.violations})" for i in violated)
    elif comparison is not None:
        if comparison.missing_arm:
            reasons.append(comparison.missing_arm)
        failing = [g for g in comparison.gates if g.status != "pass"]
        few = min(comparison.treatment_owners, comparison.control_owners)
        if few < MIN_OWNERS_PER_ARM:
            reasons.append(
                f"{few} owners in the smaller arm; the gates need {MIN_OWNERS_PER_ARM} per arm"
            )
        reasons.extend(_gate_reason(g) for g in failing)
        short = comparison.span_days < min_days
        if short:
            reasons.append(
                _span_reason(comparison.span_days, min_days, "both cohorts running concurrently")
            )
        if failing or short or comparison.missing_arm:
            verdict = "hold"
        else:
            verdict = "promote"
            reasons.append(f"Phase {comparison.phase}: every gate passes, every invariant is zero")
    elif span_days < min_days:
        verdict = "hold"
        reasons.append(_span_reason(span_days, min_days, "first to last prompt"))
    else:
        verdict = "promote"
        reasons.append(
            "Phase 1: every invariant is zero; advance to warn after the manual review of "
            f"the {review_total} would-stop prompts (sample listed)"
        )
    if math.isfinite(share) and share * 100 > float(MAX_ENFORCE_PERCENT):
        reasons.append(
            f"{100 * share:.1f} % of owners are enforced, above the seed's "
            f"{MAX_ENFORCE_PERCENT} %: check treatment saturation before ramping"
        )
    return Report(
        environment=environment,
        since=since,
        until=until,
        prompts=len(records),
        owners=len(owned),
        modes=dict(sorted(Counter(r.guard_mode or "unknown" for r in records).items())),
        cohorts=dict(sorted(Counter(r.cohort or "unknown" for r in records).items())),
        versions=dict(sorted(Counter(r.service_version or "unset" for r in records).items())),
        invariants=invariants,
        volumes=volumes,
        review_total=review_total,
        review_sample=sample,
        comparison=comparison,
        verdict=verdict,
        reasons=reasons,
        resamples=resamples,
        seed=seed,
        cohort_owners={k: len(v) for k, v in sorted(owners_by_cohort.items())},
        enforced_owners=len(enforced),
        enforced_share=share,
        first_start=first,
        last_start=last,
        min_days=min_days,
    )
