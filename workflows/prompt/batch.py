"""After a batch settles: the guard, the loop rules, the stop or the reminders, as one step.

docs/architecture.md, "The life of a prompt", "One round". Once a batch's calls have settled
(``workflows.seed.protections.BatchProtections`` screened and settled them) and the input boundary
was drained, one step decides what the prompt does next: the repeated-failure guard reduces
the batch (``workflows.seed.guard``), the recommended profile's rules review it
(``workflows.rules``), the most specific protection that stops is named, and otherwise the
batch's reminders and the drained input join the conversation.

:func:`after_batch` is that step, pure: ``PromptWorkflow`` calls it and then does the
durable part (events, telemetry, search attributes), and ``bench/simulate.py`` calls the
very same function, so the simulator cannot drift from the workflow on what a batch leads
to. No Temporal, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workflows.contracts.activity import JudgeVerdict
from workflows.contracts.conversation import Message, mid_turn_message, system_message
from workflows.contracts.outcome import ToolOutcome
from workflows.contracts.prompt import GuardEntry, LoopType, RuleEntry
from workflows.rules import RULES, RuleDecision, RuleDecisionKind
from workflows.rules.judge import JUDGE_REMINDER, JUDGE_RULE, JUDGE_STOP_MESSAGE, ProgressJudge
from workflows.seed.guard import (
    REPEATED_TOOL_FAILURE_REMINDER,
    Batch,
    DecisionKind,
    GuardDecision,
    GuardInput,
    GuardMode,
    GuardState,
    Observation,
    reduce,
)
from workflows.seed.protections import BatchProtections, LoopStop


@dataclass(frozen=True)
class DrainedInput:
    """What the input boundary drained after a batch: user input texts, whether a prompt
    is queued behind this one, and whether the boundary reported itself unreliable."""

    texts: list[str]
    queued: bool = False
    unreliable: bool = False

    @property
    def arrived(self) -> bool:
        """Whether anything came from outside (every loop rule resets then)."""
        return bool(self.texts) or self.queued or self.unreliable


@dataclass(frozen=True)
class AfterBatch:
    """What one settled batch leads to.

    ``guard`` is the guard's decision (its new state included) and ``guard_entry`` how the
    result reports it; ``rule_decisions`` the recommended rules' decisions, in table order.
    With ``stop``, the prompt ends: ``messages`` is the stop message and ``requeued`` the
    drained input, which stays queued for the user. Otherwise ``messages`` is what the
    conversation gains before the next model request: ``reminders`` (the guard's first, then
    one per rule) and the drained input as mid-turn messages.
    """

    guard: GuardDecision
    guard_entry: GuardEntry
    rule_decisions: list[RuleDecision]
    stop: LoopStop | None
    reminders: list[str]
    messages: list[Message]
    requeued: list[str]


def after_batch(
    protections: BatchProtections,
    guard_state: GuardState,
    mode: GuardMode,
    outcomes: list[ToolOutcome],
    drained: DrainedInput,
    *,
    batch: int,
    now: float = 0.0,
) -> AfterBatch:
    """The step after batch number ``batch`` settled with ``outcomes``: reduce the guard from
    ``guard_state`` in ``mode``, review the rules at the prompt's clock ``now`` (this
    advances ``protections``' rule state, as settling did its own), choose the stop or the
    reminders."""
    decision = reduce(
        guard_state,
        guard_input(
            mode,
            outcomes,
            external_input=bool(drained.texts),
            queued_prompt=drained.queued,
            input_reliable=not drained.unreliable,
            progress=protections.progress,
        ),
    )
    entry = guard_entry(batch, mode, guard_state, decision)
    rule_decisions = protections.review(
        input_arrived=drained.arrived,
        enforcement_disabled=decision.state.enforcement_disabled,
        now=now,
    )
    stop = protections.stop_after(decision.kind, rule_decisions)
    if stop is not None:
        return AfterBatch(
            guard=decision,
            guard_entry=entry,
            rule_decisions=rule_decisions,
            stop=stop,
            reminders=[],
            messages=[system_message(stop.message)],
            requeued=list(drained.texts),
        )
    reminders = rule_reminders(rule_decisions)
    if decision.kind is DecisionKind.WARN:
        reminders.insert(0, REPEATED_TOOL_FAILURE_REMINDER)
    return AfterBatch(
        guard=decision,
        guard_entry=entry,
        rule_decisions=rule_decisions,
        stop=None,
        reminders=reminders,
        messages=[
            *(system_message(reminder) for reminder in reminders),
            *(mid_turn_message(text) for text in drained.texts),
        ],
        requeued=[],
    )


@dataclass(frozen=True)
class AfterJudgement:
    """What the progress judge's verdict on a batch leads to (docs/protections.md, "The progress
    judge"): its entry in ``PromptResult.rules`` (``None``: the judge was not asked); and either its
    stop (``messages`` is the stop message) or the reminder it earned (``reminders``, ``messages``:
    none or one), which joins the conversation after the batch's other reminders."""

    entry: RuleEntry | None
    reminders: list[str]
    messages: list[Message]
    stop: LoopStop | None


# A batch the judge was not asked about.
NOT_JUDGED = AfterJudgement(None, [], [], None)


def after_judgement(
    judge: ProgressJudge, verdict: JudgeVerdict, *, batch: int, enforcement_disabled: bool
) -> AfterJudgement:
    """The step after the judge answered about batch number ``batch`` (asked because
    ``judge.due`` said so, after :func:`after_batch` stopped nothing). Pure, like
    :func:`after_batch`, and shared with ``bench/simulate.py`` in the same way."""
    decision = judge.decide(verdict, enforcement_disabled=enforcement_disabled)
    entry = RuleEntry(
        batch=batch,
        rule=JUDGE_RULE,
        decision=decision.decision,
        mode=decision.mode.value,
        count=decision.count,
    )
    if decision.stops:
        stop = LoopStop(LoopType.JUDGED_NO_PROGRESS, JUDGE_STOP_MESSAGE)
        return AfterJudgement(entry, [], [system_message(JUDGE_STOP_MESSAGE)], stop)
    reminders = [JUDGE_REMINDER] if decision.warns else []
    return AfterJudgement(entry, reminders, [system_message(r) for r in reminders], None)


# The decisions of a protection in shadow that clients are shown (EventKind.SHADOW_DECISION).
SHADOW_KINDS = frozenset({DecisionKind.WOULD_WARN.value, DecisionKind.WOULD_STOP.value})


def shadow_decisions(step: AfterBatch, judged: Sequence[RuleEntry] = ()) -> list[tuple[str, str]]:
    """``(would_warn | would_stop, loop type)`` for each reminder or stop a protection in
    shadow would have made after this batch: the guard's first, then the rules' in table
    order, then the progress judge's."""
    found: list[tuple[str, str]] = []
    if step.guard.kind.value in SHADOW_KINDS:
        found.append((step.guard.kind.value, LoopType.REPEATED_TOOL_EXECUTION_FAILURE.value))
    found.extend(
        (d.kind.value, d.rule.value) for d in step.rule_decisions if d.kind.value in SHADOW_KINDS
    )
    found.extend((e.decision, e.rule) for e in judged if e.decision in SHADOW_KINDS)
    return found


def rule_reminders(rule_decisions: Sequence[RuleDecision]) -> list[str]:
    """The reminders a batch earned from the recommended profile's rules, one per rule, in
    the table's order (after the guard's own reminder)."""
    return [
        spec.reminder
        for spec in RULES
        if any(d.rule is spec.rule and d.kind is RuleDecisionKind.WARN for d in rule_decisions)
    ]


def rule_entry(batch: int, decision: RuleDecision) -> RuleEntry:
    """A rule decision as ``PromptResult.rules`` reports it."""
    return RuleEntry(
        batch=batch,
        rule=decision.rule.value,
        decision=decision.kind.value,
        mode=decision.mode.value,
        count=decision.count,
    )


# --- the guard's view of a batch ----------------------------------------------------------


def observation(outcome: ToolOutcome, progress: bool = False) -> Observation:
    """What the repeated-failure guard reads of one settled call (``progress``: the
    recommended profile's evidence that this failure said something new)."""
    return Observation(
        call_id=outcome.call_id,
        policy_tool_name=outcome.policy_tool_name,
        tool_type=outcome.tool_type,
        terminal_status=outcome.status,
        execution_status=outcome.execution_status,
        execution_error_type=outcome.execution_error_type,
        provider_duplicate=outcome.provider_duplicate,
        refused_repeat=outcome.refused_repeat,
        progress=progress,
    )


def guard_input(
    mode: GuardMode,
    outcomes: list[ToolOutcome],
    *,
    external_input: bool,
    queued_prompt: bool,
    input_reliable: bool,
    progress: Sequence[bool] = (),
) -> GuardInput:
    """The guard's input for one settled batch and what the input boundary drained;
    ``progress`` (recommended profile only) marks the failures that said something new."""
    marks = list(progress) or [False] * len(outcomes)
    return GuardInput(
        mode=mode,
        batch=Batch(
            observations=[
                observation(outcome, mark) for outcome, mark in zip(outcomes, marks, strict=True)
            ]
        ),
        has_external_input=external_input,
        has_queued_prompt=queued_prompt,
        input_reliable=input_reliable,
    )


def guard_entry(
    batch: int, mode: GuardMode, before: GuardState, decision: GuardDecision
) -> GuardEntry:
    """The batch's guard decision as ``PromptResult.guard`` reports it."""
    return GuardEntry(
        batch=batch,
        decision=decision.kind.value,
        phase_before=before.phase.value,
        phase_after=decision.state.phase.value,
        reason=decision.reason.value if decision.reason else None,
        failure_count=decision.state.failure_count,
        batch_count=decision.state.batch_count,
        candidate_ordinal=decision.state.candidate_ordinal,
        mode=mode.value,
    )
