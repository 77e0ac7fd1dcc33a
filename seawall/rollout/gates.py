"""The seed's promotion gates: each gate's threshold, the owner-level blocked bootstrap
behind its interval, and its status (seed 000, "Rollout", Phases 2 and 3).

This module exists so that what "a gate passes" means is written once: a gate compares a
treatment cohort with its concurrent control over the period both ran in, on a quantity of
:mod:`seawall.rollout.cohorts`, with a 95 % interval from resampling owners ("calls from one
owner are not independent samples"); a gate whose quantity an arm lacks is ``no data``,
never a pass; and each gate's figure is said in one sentence. Public: :class:`Gate`,
:class:`Comparison`, :func:`compare_cohorts`, :func:`judge`, :func:`explain`, the gate tables
and :data:`MIN_OWNERS_PER_ARM`.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from seawall.rollout.cohorts import (
    PHASE3_ARMS,
    CohortStats,
    PromptMetrics,
    arm,
    arms_for,
    cohort_stats,
    concurrent_period,
    owners,
    percentile,
    retried_prompts,
)
from seawall.rollout.records import PromptRecord
from seawall.rollout.wording import in_unit, percent, plural

# Fewer owners than this in either arm: no gate passes, whatever its interval (a bootstrap
# over a handful of owners says little); a whole-interval breach still fails.
MIN_OWNERS_PER_ARM = 10

GateStatus = Literal["pass", "fail", "inconclusive", "no data"]


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
    # (an equivalence test). Each fails when the whole interval is on the wrong side
    # (:func:`judge`).
    rule: Literal["max", "min", "match"]
    threshold: float
    tolerance: float = 0.0
    needs: Needs = "prompts"
    # For the gate's one-sentence explanation: what it measures, each arm's value of it, and
    # what a breach means ("{t}": the treatment cohort, "{c}": the control).
    measures: str = ""
    per_arm: Callable[[CohortStats], str] = lambda stats: ""
    breach: str = ""
    # The whole "what was measured" clause, when the arms' values need more than per_arm
    # (the saved calls: a saving observed against one predicted).
    reading: Callable[[CohortStats, CohortStats, str, str], str] | None = None
    # What a negative estimate means, said when it is negative.
    negative: str = ""


def _ratio(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    return a / b if b > 0 else (1.0 if a == 0 else math.inf)


def _amount(value: float, unit: str, digits: int = 1) -> str:
    return f"{value:,.{digits}f} {unit}" if math.isfinite(value) else "n/a"


def _saved_calls(t: CohortStats, c: CohortStats, treatment: str, control: str) -> str:
    """The saved-calls gate's reading: the saving observed (control's calls per prompt minus
    the treatment's) beside the saving the control's would-stops predicted (its calls after
    a would-stop)."""
    observed = c.executed - t.executed
    said = (
        f"Tool calls per prompt: {treatment} {_amount(t.executed, 'calls')}, {control} "
        f"{_amount(c.executed, 'calls')}, a saving of {_amount(observed, 'calls')}"
    )
    if math.isfinite(observed) and observed < 0:
        said += f" (negative: the {treatment} ran more calls)"
    return (
        f"{said}, where the {control}'s calls after a would-stop predicted a saving of "
        f"{_amount(c.calls_after_stop, 'calls')}"
    )


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
    measures="Prompts whose client dropped the stream or whose owner sent the same text "
    "again within 10 minutes",
    per_arm=lambda s: percent(s.disconnect_or_retry_rate),
    breach="users of the {t} give up on or resend prompts more often",
)
RATIO_GATES: tuple[GateSpec, ...] = (
    GateSpec(
        "p95_latency",
        "p95 latency (treatment / control)",
        "x",
        lambda t, c: _ratio(t.p95_latency, c.p95_latency),
        "max",
        1.10,
        measures="The 95th-percentile time from a prompt's start to its end",
        per_arm=lambda s: _amount(s.p95_latency, "s"),
        breach="the slowest prompts of the {t} take more than 10 % longer",
    ),
    GateSpec(
        "mean_tokens",
        "mean tokens (treatment / control)",
        "x",
        lambda t, c: _ratio(t.mean_tokens, c.mean_tokens),
        "max",
        1.10,
        needs="tokens",
        measures="Mean model tokens per prompt (prompts with known usage)",
        per_arm=lambda s: _amount(s.mean_tokens, "tokens", 0),
        breach="prompts of the {t} spend more than 10 % more tokens",
    ),
    GateSpec(
        "mean_rounds",
        "mean rounds (treatment / control)",
        "x",
        lambda t, c: _ratio(t.mean_rounds, c.mean_rounds),
        "max",
        1.10,
        needs="results",
        measures="Mean model requests per prompt",
        per_arm=lambda s: _amount(s.mean_rounds, "rounds", 2),
        breach="prompts of the {t} take more than 10 % more model rounds",
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
        measures="Prompts the user cancelled, of every prompt that ended",
        per_arm=lambda s: percent(s.cancellation_rate),
        breach="users of the {t} cancel more prompts",
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
        measures="Prompts that ended with end_turn, of every prompt that ended",
        per_arm=lambda s: percent(s.completion_rate),
        breach="the {t} completes fewer prompts than the {c}",
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
        measures="Prompts stopped (or, in warn, that would have been) by the guard or a loop "
        "rule the cohort's mode governs",
        per_arm=lambda s: percent(s.loop_rate),
        breach="enforcement stops a share of prompts unlike what warn mode's would-stops predicted",
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
        reading=_saved_calls,
        negative="observed minus predicted is negative: enforcement saved fewer calls than "
        "warn mode predicted",
        breach="the calls enforcement saves are not the ones warn mode predicted",
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
    # Why the gate has no data, or what tempers its status (few owners); empty otherwise.
    note: str = ""
    # What the figure says, in one sentence: what was measured, against what, so what.
    explanation: str = ""
    # What the gate's quantity needs in both arms (GateSpec.needs).
    needs: Needs = "prompts"


def judge(spec: GateSpec, low: float, high: float) -> GateStatus:
    """A gate's status from its 95 % interval ``[low, high]``: ``pass`` when the whole
    interval meets the threshold, ``fail`` when the whole interval breaches it, and
    ``inconclusive`` when it straddles it (an interval that touches the threshold from the
    wrong side has not breached it). A match gate's threshold is its band, ``threshold`` ±
    ``tolerance`` (an equivalence test): pass inside it, fail wholly outside it."""
    if math.isnan(low) or math.isnan(high):
        return "no data"
    floor, ceiling = -math.inf, math.inf
    if spec.rule == "max":
        ceiling = spec.threshold
    elif spec.rule == "min":
        floor = spec.threshold
    else:
        floor, ceiling = spec.threshold - spec.tolerance, spec.threshold + spec.tolerance
    if floor <= low and high <= ceiling:
        return "pass"
    if high < floor or low > ceiling:
        return "fail"
    return "inconclusive"


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
                "no data" if note else judge(spec, low, high),
                note,
                needs=spec.needs,
            )
        )
    return t_stats, c_stats, results


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


def _few_owners(gates: Sequence[Gate], few: int) -> None:
    """With fewer than :data:`MIN_OWNERS_PER_ARM` owners in the smaller arm no gate passes
    (a bootstrap over a handful of owners is too narrow to trust as a pass); a gate whose
    whole interval breaches its threshold still fails, noting how few owners it rests on."""
    if few >= MIN_OWNERS_PER_ARM:
        return
    for gate in gates:
        if gate.status == "no data":
            continue
        gate.note = (
            f"few owners: {plural(few, 'owner')} in the smaller arm, {MIN_OWNERS_PER_ARM} needed"
        )
        if gate.status == "pass":
            gate.status = "inconclusive"


def _bound(gate: Gate) -> str:
    threshold = in_unit(gate.threshold, gate.unit)
    if gate.rule == "match":
        return f"a band of {threshold} ± {in_unit(gate.tolerance, gate.unit).lstrip('+')}"
    return f"{'at most' if gate.rule == 'max' else 'at least'} {threshold}"


def explain(
    spec: GateSpec, gate: Gate, t: CohortStats, c: CohortStats, names: tuple[str, str], few: int
) -> str:
    """The gate's figure in one sentence: what was measured in each arm, the estimate and
    its interval against the threshold, and what the status means."""
    treatment, control = names
    if spec.reading is not None:
        said = spec.reading(t, c, treatment, control)
    else:
        said = f"{spec.measures}: {treatment} {spec.per_arm(t)}, {control} {spec.per_arm(c)}"
    if gate.status == "no data":
        return f"{said}; no data ({gate.note}), so this gate cannot pass."
    figure = (
        f"{'a ratio' if gate.unit == 'x' else 'a difference'} of "
        f"{in_unit(gate.estimate, gate.unit)} (95 % interval {in_unit(gate.low, gate.unit)} to "
        f"{in_unit(gate.high, gate.unit)}) against {_bound(gate)}"
    )
    if spec.negative and gate.estimate < 0:
        figure += f" ({spec.negative})"
    smaller = f"{plural(few, 'owner')} in the smaller arm"
    if gate.status == "pass":
        meaning = "the whole interval meets it: " + (
            "it matches warn mode" if gate.rule == "match" else "no regression"
        )
    elif gate.status == "fail":
        meaning = "the whole interval is beyond it: " + spec.breach.format(t=treatment, c=control)
        if few < MIN_OWNERS_PER_ARM:
            meaning += f" (on only {smaller})"
    elif judge(spec, gate.low, gate.high) == "pass":
        meaning = (
            f"the whole interval meets it, but with only {smaller} it cannot pass "
            f"({MIN_OWNERS_PER_ARM} needed)"
        )
    else:
        meaning = "the interval straddles it, so the data cannot tell yet"
        if few < MIN_OWNERS_PER_ARM:
            meaning += f" (only {smaller}; {MIN_OWNERS_PER_ARM} needed)"
    return f"{said}; {figure}: {meaning}."


GATES_BY_PHASE: dict[int, tuple[GateSpec, ...]] = {2: PHASE2_GATES, 3: PHASE3_GATES}


def compare_cohorts(
    records: Sequence[PromptRecord], *, resamples: int, seed: int
) -> Comparison | None:
    """The treatment cohort against the control cohort of the same environment over the
    period both ran in (a concurrent control: never an earlier period); None when the window
    has no prompt in ``warn`` or ``enforce`` (Phase 1 only)."""
    arms = arms_for(records)
    if arms is None:
        return None
    retried = retried_prompts(records)
    supported = [r for r in records if not r.unreliable_input]
    treatment = arm(supported, retried, arms.treatment)
    control = arm(supported, retried, arms.control)
    missing = [
        cohort.value
        for cohort, pairs in ((arms.treatment, treatment), (arms.control, control))
        if not pairs
    ]
    since, until = concurrent_period(treatment, control)
    missing_arm = ""
    if missing:
        missing_arm = (
            f"no owned prompt of the {' or the '.join(missing)} cohort: Phase {arms.phase} "
            f"compares the {arms.treatment.value} cohort with a concurrent "
            f"{arms.control.value} cohort (SEAWALL_GUARD_ROLLOUT={arms.policy_hint!r})"
        )
        if arms.phase == 2 and arms.control.value in missing:
            missing_arm += (
                f"; or, if this window is Phase 3 ({PHASE3_ARMS.policy_hint}), no owner of the "
                "enforce cohort sent a prompt in it"
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
        treatment, control, GATES_BY_PHASE[arms.phase], resamples=resamples, seed=seed
    )
    counted = (owners(treatment), owners(control))
    _few_owners(results, min(counted))
    names = (f"{arms.treatment.value} cohort", f"{arms.control.value} cohort")
    for spec, gate in zip(GATES_BY_PHASE[arms.phase], results, strict=True):
        gate.explanation = explain(spec, gate, t_stats, c_stats, names, min(counted))
    return Comparison(
        phase=arms.phase,
        treatment=names[0],
        control=names[1],
        treatment_owners=counted[0],
        control_owners=counted[1],
        treatment_stats=t_stats,
        control_stats=c_stats,
        gates=results,
        concurrent_since=since,
        concurrent_until=until,
        not_concurrent=total - len(treatment) - len(control),
        missing_arm=missing_arm,
    )
