"""The report's verdict and the reasons for it (seed 000, "Rollout").

This module exists so the promotion rule is written once, apart from the numbers it rests
on: any invariant violated is ``return to shadow``; ``promote`` needs every gate to pass and
the data to span the seed's seven days (Phase 1: the days alone, then the manual review);
anything else holds, and every reason is said. Public: :data:`Verdict` and :func:`decide`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from seawall.rollout.gates import MIN_OWNERS_PER_ARM, Comparison, Gate
from seawall.rollout.invariants import Invariant
from seawall.rollout.wording import plural
from workflows.seed.rollout import MAX_ENFORCE_PERCENT

Verdict = Literal["promote", "hold", "return to shadow"]


def _gate_reason(gate: Gate) -> str:
    # Why a gate has no data; few owners have a reason of their own.
    note = gate.note if gate.status == "no data" else ""
    return f"gate {gate.key}: {gate.status}" + (f" ({note})" if note else "")


def _span_reason(days: float, min_days: float, what: str) -> str:
    return (
        f"the data spans {days:.2f} days ({what}); the seed holds each phase at least "
        f"{min_days:g} days"
    )


def decide(
    *,
    environment: str,
    prompts: int,
    invariants: Sequence[Invariant],
    comparison: Comparison | None,
    span_days: float,
    min_days: float,
    review_total: int,
    enforced_share: float,
) -> tuple[Verdict, list[str]]:
    """The verdict and every reason for it."""
    reasons: list[str] = []
    verdict: Verdict
    violated = [i for i in invariants if i.violations]
    if not prompts:
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
                f"{plural(few, 'owner')} in the smaller arm; a gate passes only with "
                f"{MIN_OWNERS_PER_ARM} per arm (a whole-interval breach fails all the same)"
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
    if math.isfinite(enforced_share) and enforced_share * 100 > float(MAX_ENFORCE_PERCENT):
        reasons.append(
            f"{100 * enforced_share:.1f} % of owners are enforced, above the seed's "
            f"{MAX_ENFORCE_PERCENT} %: check treatment saturation before ramping"
        )
    return verdict, reasons
