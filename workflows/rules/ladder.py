"""One reminder, then a stop: the escalation every recommended-profile rule shares.

docs/protections.md, "Loop profiles". This module is also the shape every rule's counter
takes (:class:`RuleCounter`): one ``review`` of one settled batch, whatever the rule counts,
so ``workflows.rules.loop_rules`` walks the table (``workflows.rules.registry``) instead of
naming each rule. A rule counts *offences* per key (a tool, a call, the
prompt). When a key's count reaches the rule's threshold the model gets the rule's fixed
reminder once; the key's next offence in a later batch, after the model read the reminder,
stops the prompt. The mode decides what happens, exactly as for the guard: ``shadow``
records ``would_warn`` / ``would_stop`` and changes nothing, ``warn`` reminds but never
stops, ``enforce`` reminds and stops (and acts as ``warn`` once the prompt's enforcement
was disabled). A key that stopped (or would have) is latched: it decides nothing more in
this prompt. A reset (new user input, or the rule's own evidence that the key works now)
returns the key to the bottom.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from workflows.rules.evidence import CallEvidence
from workflows.seed.guard import GuardMode


class RuleDecisionKind(StrEnum):
    WARN = "warn"
    WOULD_WARN = "would_warn"
    STOP = "stop"
    WOULD_STOP = "would_stop"
    # The denied-call rule answering an identical re-request without asking the user.
    ANSWERED = "answered"
    WOULD_ANSWER = "would_answer"


# One decision of a rule in one batch: ``(key, decision, the key's count)``.
RuleFinding = tuple[str, RuleDecisionKind, int]


class Rung(BaseModel):
    """Where one key stands: its offences so far, whether it was reminded, and whether it
    is done deciding."""

    model_config = ConfigDict(frozen=True)

    count: int = 0
    warned: bool = False
    latched: bool = False


def effective_rule_mode(mode: GuardMode, enforcement_disabled: bool) -> GuardMode:
    """``enforce`` acts as ``warn`` once the prompt's enforcement was disabled (the guard's
    rule: an unreliable input boundary or an untrusted outcome contract)."""
    if mode is GuardMode.ENFORCE and enforcement_disabled:
        return GuardMode.WARN
    return mode


def climb(
    rung: Rung, offences: int, threshold: int, mode: GuardMode
) -> tuple[Rung, RuleDecisionKind | None]:
    """Add one batch's ``offences`` of a key; the decision, if the key crossed a rung.

    ``mode`` is the effective mode (never ``off``: an off rule does not count at all).
    """
    if offences <= 0 or rung.latched:
        return rung, None
    if rung.warned:
        stop = RuleDecisionKind.STOP if mode is GuardMode.ENFORCE else RuleDecisionKind.WOULD_STOP
        return rung.model_copy(update={"count": rung.count + offences, "latched": True}), stop
    count = rung.count + offences
    if count >= threshold:
        warn = RuleDecisionKind.WOULD_WARN if mode is GuardMode.SHADOW else RuleDecisionKind.WARN
        return Rung(count=count, warned=True), warn
    return Rung(count=count), None


def escalate(
    rungs: dict[str, Rung], offences: dict[str, int], threshold: int, mode: GuardMode
) -> list[RuleFinding]:
    """Climb every key that offended in one batch; the decisions, in key order of first
    offence: ``(key, decision, the key's count)``."""
    decisions: list[RuleFinding] = []
    for key, count in offences.items():
        rung, decision = climb(rungs.get(key, Rung()), count, threshold, mode)
        rungs[key] = rung
        if decision is not None:
            decisions.append((key, decision, rung.count))
    return decisions


@dataclass(frozen=True)
class RuleReview:
    """What every rule reads after the input drain: the settled batch as evidence, how many
    batches before it a waiting call succeeded in (``wait_epoch``: time passed), whether the
    batch arrived with user input (every rule resets then), the rule's effective mode, and
    the prompt's clock."""

    batch: list[CallEvidence]
    wait_epoch: int
    input_arrived: bool
    mode: GuardMode
    # The prompt's clock when the batch settled: seconds since the prompt started.
    now: float = 0.0
    # Whether the prompt has the progress rules (``PROGRESS_RULES_PATCH``): evidence they
    # brought (an observation that changed, say) is read only then.
    progress_rules: bool = False


class RuleCounter(BaseModel):
    """One prompt's state of one rule: what it remembers, and where each key stands on the
    ladder. A rule subclasses it and implements :meth:`review`; a rule that settles a call at
    screening, without running it, also overrides :meth:`answers` (the denied-call rule)."""

    threshold: int = Field(ge=1)
    rungs: dict[str, Rung] = Field(default_factory=dict)

    def review(self, review: RuleReview) -> list[RuleFinding]:
        """Remember one settled batch and climb the keys that offended in it."""
        raise NotImplementedError

    def answers(self, digest: str) -> bool:
        """Whether a re-request of the call ``digest`` is answered without running it."""
        return False
