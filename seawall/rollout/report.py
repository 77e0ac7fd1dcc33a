"""The rollout report: one environment's window of prompts, assembled from the invariants,
the decision volumes, the cohort comparison and the verdict (docs/rollout.md, "The rollout report").

This module exists to put the parts together and to say what the report holds — the one
shape the terminal summary, the JSON and the page are rendered from. Everything is a pure
function of the :class:`~seawall.rollout.records.PromptRecord` list, so the same records give
the same report, byte for byte: the bootstrap draws from a ``random.Random`` seeded by the
caller, over owners sorted by key. Public: :class:`Report` and :func:`build_report`.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from seawall.rollout.cohorts import CohortStats
from seawall.rollout.decisions import Volumes, decision_volumes, in_stop_rate, review_sample
from seawall.rollout.gates import MIN_OWNERS_PER_ARM, Comparison, compare_cohorts
from seawall.rollout.invariants import Invariant, check_invariants
from seawall.rollout.records import PromptRecord
from seawall.rollout.verdict import Evidence, Verdict, decide
from workflows.seed.rollout import Cohort


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
    # What the operator does next, most urgent first (never empty).
    next_steps: list[str] = field(default_factory=list)

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
            "next_steps": self.next_steps,
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
                "loop_rules": [
                    {
                        "decision": d,
                        "rule": rule,
                        "in_stopped_loop_rate": in_stop_rate(d, g),
                        "count": n,
                    }
                    for (d, rule, g), n in self.volumes.by_rule.items()
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
                        "explanation": g.explanation,
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
    comparison = compare_cohorts(records, resamples=resamples, seed=seed) if records else None
    starts = [r.start for r in records]
    first, last = (min(starts), max(starts)) if starts else (None, None)
    span_days = (last - first).total_seconds() / 86400 if first and last else 0.0
    owners_by_cohort: dict[str, set[str]] = defaultdict(set)
    for r in records:
        owners_by_cohort[r.cohort or "unknown"].add(r.block)
    owned = {r.block for r in records if r.owned}
    enforced = {r.block for r in records if r.owned and r.cohort == Cohort.ENFORCE.value}
    share = len(enforced) / len(owned) if owned else math.nan
    decision = decide(
        Evidence(
            environment=environment,
            prompts=len(records),
            invariants=invariants,
            comparison=comparison,
            first_start=first,
            span_days=span_days,
            min_days=min_days,
            review_total=review_total,
            enforced_share=share,
        )
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
        verdict=decision.verdict,
        reasons=decision.reasons,
        next_steps=decision.next_steps,
        resamples=resamples,
        seed=seed,
        cohort_owners={k: len(v) for k, v in sorted(owners_by_cohort.items())},
        enforced_owners=len(enforced),
        enforced_share=share,
        first_start=first,
        last_start=last,
        min_days=min_days,
    )
