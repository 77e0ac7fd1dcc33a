"""The report's verdict, the reasons for it, and what the operator does next (seed 000,
"Rollout").

This module exists so the promotion rule is written once, apart from the numbers it rests
on: any invariant violated is ``return to shadow``; ``promote`` needs every gate to pass and
the data to span the seed's seven days (Phase 1: the days alone, then the manual review);
anything else holds, and every reason is said. Each verdict, and each gate's status behind
it, comes with concrete next steps: the exact ``SEAWALL_GUARD_ROLLOUT`` value to roll back
or move on with, how many more owners to wait for, until when to keep a phase running.
Public: :data:`Verdict`, :class:`Evidence`, :class:`Decision` and :func:`decide`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from seawall.rollout.cohorts import ARMS_BY_PHASE, PHASE1_PROMOTION, Arms
from seawall.rollout.gates import MIN_OWNERS_PER_ARM, Comparison, Gate
from seawall.rollout.invariants import Invariant
from seawall.rollout.wording import plural
from workflows.seed.rollout import MAX_ENFORCE_PERCENT

Verdict = Literal["promote", "hold", "return to shadow"]


@dataclass(frozen=True)
class Evidence:
    """What the verdict rests on: one environment's window, already computed."""

    environment: str
    prompts: int
    invariants: Sequence[Invariant]
    comparison: Comparison | None
    # The data's own span (first to last prompt start), in days, and the seed's minimum.
    first_start: datetime | None
    span_days: float
    min_days: float
    review_total: int
    enforced_share: float


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reasons: list[str]
    next_steps: list[str]


def decide(evidence: Evidence) -> Decision:
    """The verdict, every reason for it, and the steps to take next."""
    verdict, reasons = _verdict(evidence)
    return Decision(verdict, reasons, _next_steps(evidence, verdict))


def _gate_reason(gate: Gate) -> str:
    # Why a gate has no data; few owners have a reason of their own.
    note = gate.note if gate.status == "no data" else ""
    return f"gate {gate.key}: {gate.status}" + (f" ({note})" if note else "")


def _span_reason(days: float, min_days: float, what: str) -> str:
    return (
        f"the data spans {days:.2f} days ({what}); the seed holds each phase at least "
        f"{min_days:g} days"
    )


def _wide(share: float) -> bool:
    return math.isfinite(share) and share * 100 > float(MAX_ENFORCE_PERCENT)


def _verdict(evidence: Evidence) -> tuple[Verdict, list[str]]:
    reasons: list[str] = []
    verdict: Verdict
    comparison = evidence.comparison
    violated = [i for i in evidence.invariants if i.violations]
    if not evidence.prompts:
        verdict = "hold"
        reasons.append(f"no prompts in environment {evidence.environment!r} in this window")
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
                f"{plural(few, 'owner')} in the smaller arm; a gate passes only with "
                f"{MIN_OWNERS_PER_ARM} per arm (a whole-interval breach fails all the same)"
            )
        reasons.extend(_gate_reason(g) for g in failing)
        short = comparison.span_days < evidence.min_days
        if short:
            reasons.append(
                _span_reason(
                    comparison.span_days, evidence.min_days, "both cohorts running concurrently"
                )
            )
        if failing or short or comparison.missing_arm:
            verdict = "hold"
        else:
            verdict = "promote"
            reasons.append(f"Phase {comparison.phase}: every gate passes, every invariant is zero")
    elif evidence.span_days < evidence.min_days:
        verdict = "hold"
        reasons.append(_span_reason(evidence.span_days, evidence.min_days, "first to last prompt"))
    else:
        verdict = "promote"
        reasons.append(
            "Phase 1: every invariant is zero; advance to warn after the manual review of "
            f"{plural(evidence.review_total, 'would-stop prompt')} (sample listed)"
        )
    if _wide(evidence.enforced_share):
        reasons.append(
            f"{100 * evidence.enforced_share:.1f} % of owners are enforced, above the seed's "
            f"{MAX_ENFORCE_PERCENT} %: check treatment saturation before ramping"
        )
    return verdict, reasons


# --- what to do next ------------------------------------------------------------------------


def _setting(environment: str, policy: str) -> str:
    """The exact setting for one environment's workers (:data:`SETTING_NOTE` says how it
    applies)."""
    return f"SEAWALL_GUARD_ROLLOUT='{environment}={policy}' on the {environment} workers"


# Said once, after the steps, when a step names a setting.
SETTING_NOTE = (
    "When changing SEAWALL_GUARD_ROLLOUT (or guard_rollout in config.yaml), keep any other "
    "environment's part after a ';'; sessions take their cohort when they start, so open "
    "sessions keep theirs."
)


def _until(start: datetime | None, min_days: float) -> str:
    if start is None:
        return f"it spans {min_days:g} days"
    return (start + timedelta(days=min_days)).isoformat(timespec="minutes")


def _keys(gates: Sequence[Gate]) -> str:
    return ", ".join(g.key for g in gates)


def _next_steps(evidence: Evidence, verdict: Verdict) -> list[str]:
    environment = evidence.environment
    if not evidence.prompts:
        return [
            "Check the environment and the window: prompts are found by their "
            "SeawallEnvironment, which a worker sets from SEAWALL_DEPLOYMENT_ENVIRONMENT; "
            "report the environment the workers run as, or a wider --since."
        ]
    if verdict == "return to shadow":
        return [
            f"Roll back now: set {_setting(environment, 'shadow:rest')}.",
            "Open the prompts listed under the Phase 1 invariants (workflow ids) with "
            "authorized trace access and fix what the guard counted wrongly before leaving "
            "shadow again.",
            SETTING_NOTE,
        ]
    comparison = evidence.comparison
    steps = (
        _phase1_steps(evidence, verdict)
        if comparison is None
        else _comparison_steps(evidence, comparison, ARMS_BY_PHASE[comparison.phase], verdict)
    )
    if _wide(evidence.enforced_share):
        steps.append(
            f"Check treatment saturation before any wider enforcement: "
            f"{100 * evidence.enforced_share:.1f} % of owners are enforced, above the seed's "
            f"{MAX_ENFORCE_PERCENT} %, or go back to "
            f"{_setting(environment, ARMS_BY_PHASE[3].policy_hint)}."
        )
    if any("SEAWALL_GUARD_ROLLOUT=" in step for step in steps):
        steps.append(SETTING_NOTE)
    return steps


def _phase1_steps(evidence: Evidence, verdict: Verdict) -> list[str]:
    steps = []
    if verdict != "promote":
        steps.append(
            f"Keep shadow running until {_until(evidence.first_start, evidence.min_days)} "
            f"(the data spans {evidence.span_days:.2f} of {evidence.min_days:g} days), then "
            "report again."
        )
    if evidence.review_total:
        steps.append(
            f"Review the {plural(evidence.review_total, 'would-stop prompt')} (the sample "
            "above) with authorized trace access: each should be a real loop."
        )
    else:
        steps.append("Nothing to review yet: no prompt on a supported host had a would-stop.")
    steps.append(
        ("Then" if verdict != "promote" else "After the review")
        + f" start Phase 2, warn with a concurrent shadow control: "
        f"{_setting(evidence.environment, PHASE1_PROMOTION)}."
    )
    return steps


def _comparison_steps(
    evidence: Evidence, comparison: Comparison, arms: Arms, verdict: Verdict
) -> list[str]:
    environment = evidence.environment
    treatment, control = comparison.treatment, comparison.control
    owners = (comparison.treatment_owners, comparison.control_owners)
    few = min(owners) < MIN_OWNERS_PER_ARM
    by_status: dict[str, list[Gate]] = {}
    for gate in comparison.gates:
        by_status.setdefault(gate.status, []).append(gate)
    steps = []
    failing = by_status.get("fail", [])
    if failing and few:
        steps.append(
            f"Do not widen the {treatment}: {_keys(failing)} "
            f"{'fails' if len(failing) == 1 else 'fail'} with the whole interval beyond the "
            f"threshold, but on only {plural(min(owners), 'owner')} in the smaller arm. Read "
            f"the {treatment}'s prompts of the concurrent period; if the regression is real, "
            f"roll back with {_setting(environment, arms.rollback)}."
        )
    elif failing:
        steps.append(
            f"Roll back the {treatment}: {_keys(failing)} "
            f"{'fails' if len(failing) == 1 else 'fail'} with the whole interval beyond the "
            f"threshold. Set {_setting(environment, arms.rollback)}, then find the cause (each "
            "gate's sentence above says which quantity regressed) before trying again."
        )
    if comparison.missing_arm:
        steps.append(
            f"Run both cohorts side by side: set {_setting(environment, arms.policy_hint)} "
            f"({comparison.missing_arm})."
        )
    elif few:
        steps.append(_more_owners(comparison))
    straddling = [g for g in by_status.get("inconclusive", []) if not few]
    if straddling:
        steps.append(
            f"Keep Phase {comparison.phase} running: {_keys(straddling)} "
            f"{'straddles its threshold' if len(straddling) == 1 else 'straddle their thresholds'}"
            "; more owners and days narrow the intervals."
        )
    for gate in by_status.get("no data", []):
        if not comparison.missing_arm:
            steps.append(_no_data_step(gate))
    if comparison.span_days < evidence.min_days and not comparison.missing_arm:
        steps.append(
            f"Keep Phase {comparison.phase} running until "
            f"{_until(comparison.concurrent_since, evidence.min_days)} (the {treatment} and "
            f"the {control} have run together {comparison.span_days:.2f} of "
            f"{evidence.min_days:g} days), then report again."
        )
    if verdict == "promote":
        what = (
            "widen enforcement one step, after checking treatment saturation (above 5 % needs "
            "SEAWALL_GUARD_ROLLOUT_ALLOW_WIDE_ENFORCE=true): "
            if comparison.phase == 3
            else "start Phase 3, 5 % of owners enforced with the rest in warn as the control: "
        )
        steps.append(
            f"Promote: {what}{_setting(environment, arms.promotion)}; report it again after "
            f"{evidence.min_days:g} days."
        )
    return steps


def _more_owners(comparison: Comparison) -> str:
    """How many more owners each arm needs, roughly how many active owners give them at this
    window's split, and which cohort to widen otherwise."""
    arms_owners = (
        (comparison.treatment, comparison.treatment_owners),
        (comparison.control, comparison.control_owners),
    )
    short = [
        f"the {name} has {plural(n, 'owner')} ({MIN_OWNERS_PER_ARM - n} more)"
        for name, n in arms_owners
        if n < MIN_OWNERS_PER_ARM
    ]
    step = (
        f"Wait for more owners: {' and '.join(short)}; each arm needs {MIN_OWNERS_PER_ARM} "
        "owners with prompts in the concurrent period"
    )
    name, smaller = min(arms_owners, key=lambda arm: arm[1])
    total = sum(n for _, n in arms_owners)
    if smaller:
        step += (
            f". At this window's split ({smaller} of {total} owners in the {name}) that takes "
            f"about {math.ceil(MIN_OWNERS_PER_ARM * total / smaller)} active owners"
        )
    return f"{step}; with fewer owners, widen the {name}: {WIDEN[comparison.phase, name]}."


# How to widen a phase's cohort: (phase, cohort) -> the policy change.
WIDEN = {
    (3, "enforce cohort"): "a larger enforce share (above 5 % only with "
    "SEAWALL_GUARD_ROLLOUT_ALLOW_WIDE_ENFORCE=true and the saturation check)",
    (3, "warn cohort"): "a smaller enforce share, the warn cohort being the rest (such as "
    "enforce:5%,warn:rest)",
    (2, "warn cohort"): "a larger warn share (such as warn:95%,shadow:rest)",
    (2, "shadow cohort"): "a larger shadow share (such as warn:90%,shadow:rest)",
}


def _no_data_step(gate: Gate) -> str:
    fix = {
        "tokens": "use a model endpoint that reports token usage, so tokens can be compared",
        "results": "find out in the Temporal UI why the prompts ended without a result (failed, "
        "terminated, timed out)",
    }.get(gate.needs, "wait for ended prompts in both arms")
    return f"{gate.key} has no data ({gate.note}): {fix}."
