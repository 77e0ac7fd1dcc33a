"""What the guard and the loop rules decided, and how often: the guard's decision volumes per
tool type and route over time, the loop rules' per rule, and the sample of would-stop prompts
for the manual review (seed 000, "Rollout", Phase 1).

This module exists because the volumes answer a different question from the gates: not
"does the treatment regress anything" but "how often would a reminder or a stop fire, and
where" — the evidence an operator reads in shadow, before any cohort is compared — and which
rules a cohort's stopped-loop rate comes from. Prompts from unreliable-input hosts are
counted apart. Public: :class:`Volumes`,
:func:`decision_volumes`, :func:`in_stop_rate`, :func:`review_sample`.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from seawall.rollout.cohorts import STOPS
from seawall.rollout.records import PromptRecord, ToolActivity

VOLUME_DECISIONS = ("would_warn", "would_stop", "warn", "stop")


def _tool_type(tools: Iterable[ToolActivity]) -> str:
    for tool in tools:
        if tool.outcome is not None and tool.outcome.status == "error":
            return tool.outcome.tool_type or "unknown"
    return "unknown"


@dataclass
class Volumes:
    # The guard's decisions: (decision, tool type, route) -> decisions
    by_kind: dict[tuple[str, str, str], int] = field(default_factory=dict)
    # The loop rules' decisions: (decision, rule, the cohort's mode governs it) -> decisions.
    # A governed stop or would-stop is in the cohorts' stopped-loop rate beside the guard's.
    by_rule: dict[tuple[str, str, bool], int] = field(default_factory=dict)
    # time bucket start (ISO) -> decision -> decisions
    over_time: dict[str, dict[str, int]] = field(default_factory=dict)
    prompts: int = 0
    unreliable_prompts: int = 0
    unreliable_decisions: dict[str, int] = field(default_factory=dict)


def in_stop_rate(decision: str, governed: bool) -> bool:
    """A loop rule's decision is in the cohorts' stopped-loop rate: a stop or would-stop of a
    rule the cohort's mode governs (:func:`seawall.rollout.cohorts.stop_batches`)."""
    return governed and decision in STOPS


def decision_volumes(
    records: Sequence[PromptRecord], since: datetime, until: datetime, buckets: int = 24
) -> Volumes:
    """The guard's would_warn / would_stop (and warn / stop) per tool type and route, over
    time, and the loop rules' decisions per rule; prompts from unreliable-input hosts
    counted apart."""
    volumes = Volumes()
    span = max((until - since).total_seconds(), 1.0)
    width = timedelta(seconds=span / buckets)
    for n in range(buckets):
        volumes.over_time[(since + width * n).isoformat()] = dict.fromkeys(VOLUME_DECISIONS, 0)
    keys = list(volumes.over_time)
    by_kind: Counter[tuple[str, str, str]] = Counter()
    by_rule: Counter[tuple[str, str, bool]] = Counter()
    apart: Counter[str] = Counter()
    for record in records:
        if record.unreliable_input:
            volumes.unreliable_prompts += 1
            apart.update(e.decision for e in record.guard if e.decision in VOLUME_DECISIONS)
            continue
        volumes.prompts += 1
        batches = record.batches()
        slot = min(int((record.start - since).total_seconds() / width.total_seconds()), buckets - 1)
        for entry in record.guard:
            if entry.decision not in VOLUME_DECISIONS:
                continue
            tool_type = _tool_type(batches.get(entry.batch, []))
            by_kind[(entry.decision, tool_type, record.route)] += 1
            volumes.over_time[keys[max(slot, 0)]][entry.decision] += 1
        if record.result is not None:
            by_rule.update((e.decision, e.rule, record.governs(e)) for e in record.result.rules)
    volumes.by_kind = dict(sorted(by_kind.items()))
    volumes.by_rule = dict(sorted(by_rule.items()))
    volumes.unreliable_decisions = dict(sorted(apart.items()))
    return volumes


def _would_stop(record: PromptRecord) -> bool:
    """The prompt has a would-stop of the guard or of a loop rule its cohort's mode governs:
    a stop enforcement would have made."""
    if any(e.decision == "would_stop" for e in record.guard):
        return True
    rules = record.result.rules if record.result is not None else []
    return any(e.decision == "would_stop" and record.governs(e) for e in rules)


def review_sample(records: Sequence[PromptRecord], size: int) -> tuple[int, list[str]]:
    """Prompts with a would-stop (the guard's or a governed loop rule's; supported hosts
    only) and a deterministic sample of their workflow ids for the manual review; ids only,
    never content."""
    candidates = sorted(r.workflow_id for r in records if not r.unreliable_input and _would_stop(r))
    ordered = sorted(candidates, key=lambda wid: hashlib.sha256(wid.encode()).hexdigest())
    return len(candidates), sorted(ordered[:size])
