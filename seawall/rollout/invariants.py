"""The seed's Phase 1 invariants, checked against what history recorded (seed 000,
"Rollout").

This module exists so the one question that sends a rollout back to shadow — did the guard
ever count what it must not, or stop without a warning — is answered in one place, against
the tool activities and outcomes history holds rather than against the guard's own view of
itself: a batch's activities are compared with the guard decision the prompt's result
reports for that batch. Public: :class:`Invariant` and :func:`check_invariants`.

The invariants: a batch whose tool activities include a cancelled call
(``cancelled_counted``), a ``not_started``, unknown or missing execution status or a failure
after a successful execution (``ineligible_counted``), or an activity that never produced an
outcome (``incomplete_batch_decision``) must not carry a counting decision (``tracked``,
``would_warn``, ``warn``, ``would_stop``, ``stop``); no ``stop`` after an ``unreliable_input``
reset; every ``would_stop`` or ``stop`` preceded by a ``would_warn`` or ``warn`` of the same
candidate ordinal in the same prompt; every Seawall search attribute within its bounded
vocabulary (``raw_fields_in_telemetry``: the part of telemetry the report can see; logs and
metric labels are ``tests/test_privacy.py``'s); no call id run twice and no more calls than a
set cap (``protections_changed``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from seawall.rollout.records import UNRELIABLE_INPUT, PromptRecord, ToolActivity
from workflows.contracts import search_attributes
from workflows.contracts.prompt import GuardEntry, LoopType, StopReason
from workflows.seed.guard import DecisionKind, GuardMode, GuardPhase
from workflows.seed.rollout import Cohort, label_value

# The guard decisions that count a batch towards a streak.
COUNTING = frozenset({"tracked", "would_warn", "warn", "would_stop", "stop"})


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
        for batch, tools in record.batches().items():
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
        if entry.reason == UNRELIABLE_INPUT:
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
