"""Batch admission and settlement: the protections around each model batch, as pure state.

docs/architecture.md, "The prompt loop". A batch is every tool call of one model reply.
Before anything runs, :meth:`BatchProtections.admit` decides each call, in call order: the
whole batch is skipped when it would pass the tool-call cap; a resent provider call id is
answered without running; an unchanged repeat of a call that already failed is refused
with the earlier reason (the failed-call refusal); every other call is admitted to run,
numbered per tool. Once the admitted calls have settled, :meth:`BatchProtections.settle`
puts every outcome in call order (a call cut before it could start settles as cancelled),
forgets the remembered failures after a successful state-changing call, and records the
batch's failures and invalid parameters. The guard then reads the batch through
:func:`guard_input`, and :meth:`BatchProtections.stop_after` names the protection that
stops the prompt, most specific first.

In the recommended loop profile (docs/architecture.md, "Loop profiles") a
:class:`~workflows.progress_rules.LoopRules` layer joins in: admission may admit an
unchanged repeat the refusal would refuse, and answers a re-request of a denied call;
settlement marks progress for the guard; :meth:`BatchProtections.review` runs the
profile's own rules after the input drain. In the seed profile that layer is absent and
every decision is the seeds'.

No Temporal, no I/O, no clock. ``PromptWorkflow`` runs the admitted calls as activities and
``bench/simulate.py`` as fixtures; both share this one implementation of every decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from workflows.activity_io import ToolSpec
from workflows.denied_calls import DENIED_CALL_REMINDER, DENIED_CALL_STOP_MESSAGE
from workflows.failure_cycles import FAILURE_CYCLE_REMINDER, FAILURE_CYCLE_STOP_MESSAGE
from workflows.guard import (
    REPEATED_TOOL_FAILURE_STOP_MESSAGE,
    Batch,
    DecisionKind,
    GuardDecision,
    GuardInput,
    GuardMode,
    GuardState,
    Observation,
)
from workflows.identical_results import IDENTICAL_RESULT_REMINDER, IDENTICAL_RESULT_STOP_MESSAGE
from workflows.loop_profile import LoopRule
from workflows.outcome import ExecutionStatus, TerminalStatus, ToolCall, ToolOutcome
from workflows.progress_rules import RULE_ORDER, LoopRules, RelaxReason, RuleDecision
from workflows.prompt_io import GuardEntry, LoopType, RuleEntry, ToolCallCounts
from workflows.prompt_options import PromptOptions
from workflows.protections import (
    ADAPTIVE_CAP_REPEATS,
    ADAPTIVE_CAP_STOP_MESSAGE,
    DUPLICATE_STOP_MESSAGE,
    INVALID_PARAMS_STOP_MESSAGE,
    TOOL_CALL_CAP_STOP_MESSAGE,
    CallIdDeduper,
    InvalidParamsGuard,
    ToolCallCap,
)
from workflows.repeats import (
    STATE_CHANGING_TOOLS,
    FailedCallLog,
    RepeatCheck,
    argument_digest,
    repeat_limit_stop_message,
)
from workflows.rule_ladder import RuleDecisionKind
from workflows.synthetic_outcomes import (
    cancelled_outcome,
    denied_repeat_outcome,
    duplicate_outcome,
    refused_outcome,
    skipped_outcome,
)


def call_digest(call: ToolCall) -> str:
    """The call's fingerprint: its tool and arguments (raw text when they were not JSON)."""
    arguments = call.arguments if call.arguments is not None else {"<raw>": call.raw_arguments}
    return argument_digest(call.name, arguments)


@dataclass(frozen=True)
class Answered:
    """A call settled at admission without running: a resent call id or a refused repeat."""

    index: int
    outcome: ToolOutcome


@dataclass(frozen=True)
class Admitted:
    """A call that runs. ``ordinal`` counts the earlier runs of its tool in the prompt (it
    picks a fixture's scripted outcome, whatever the retries)."""

    index: int
    call: ToolCall
    policy_tool_name: str | None
    ordinal: int


@dataclass(frozen=True)
class FlaggedRepeat:
    """An unchanged repeat of a failed call: refused (``enforce``), in ``shadow`` only
    counted, or (recommended profile) admitted for ``relaxed`` reason. Telemetry names the
    tool by its policy name and type only."""

    check: RepeatCheck
    policy_tool_name: str | None
    tool_type: str | None
    relaxed: RelaxReason | None = None

    @property
    def outcome(self) -> str:
        """The refusal telemetry's ``outcome`` label."""
        if self.relaxed is not None:
            return f"admitted_{self.relaxed.value}"
        return "repeat" if self.check is RepeatCheck.REFUSE else self.check.value


@dataclass(frozen=True)
class DeniedRepeat:
    """An identical re-request of a call the user denied: ``answered`` without asking, or
    in shadow ``would_answer`` (asked as usual)."""

    decision: RuleDecision
    policy_tool_name: str | None
    tool_type: str | None


@dataclass(frozen=True)
class BatchAdmission:
    """What admission decided for one batch, call by call, in call order."""

    calls: list[ToolCall]
    decisions: list[Answered | Admitted] = field(default_factory=list)
    flagged_repeats: list[FlaggedRepeat] = field(default_factory=list)
    denied_repeats: list[DeniedRepeat] = field(default_factory=list)
    # The batch would pass the tool-call cap: nothing of it runs, every call is skipped.
    skipped: list[ToolOutcome] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)
    # Tools whose successful call forgets the remembered failures.
    state_changing: frozenset[str] = frozenset()

    @property
    def capped(self) -> bool:
        return bool(self.skipped)

    @property
    def admitted(self) -> list[Admitted]:
        return [d for d in self.decisions if isinstance(d, Admitted)]

    @property
    def answered(self) -> list[Answered]:
        return [d for d in self.decisions if isinstance(d, Answered)]


class LoopStop(NamedTuple):
    """The protection that stops the prompt, and the message the conversation ends with."""

    loop_type: LoopType
    message: str


class BatchProtections:
    """One prompt's admission and settlement state across its batches."""

    def __init__(
        self, options: PromptOptions, workspace_root: str, loop_rules: LoopRules | None = None
    ) -> None:
        self._cap = ToolCallCap(options.max_tool_calls_per_turn)
        self._workspace_root = workspace_root
        self._runs_per_tool: dict[str, int] = {}
        self._deduper = CallIdDeduper()
        self._invalid_params = InvalidParamsGuard()
        self.failed_calls = FailedCallLog(
            mode=options.refusal_mode,
            remembered_limit=options.remembered_failures,
            max_repeats=options.max_repeats,
        )
        self.counts = ToolCallCounts()
        # The recommended profile's layer; None in the seed profile.
        self.loop_rules = loop_rules if loop_rules is not None and loop_rules.active else None
        self._cap.make_adaptive(self.loop_rules is not None)
        # Per outcome of the last settled batch: progress evidence for the guard.
        self.progress: list[bool] = []

    def use_loop_rules(self, rules: LoopRules) -> None:
        """Join the recommended profile's layer in (ignored for the seed profile)."""
        self.loop_rules = rules if rules.active else None
        # The recommended profile's default cap adapts; a configured cap stays hard.
        self._cap.make_adaptive(self.loop_rules is not None)

    # --- admission ------------------------------------------------------------------------

    def admit(self, calls: list[ToolCall], tools: Mapping[str, ToolSpec]) -> BatchAdmission:
        """Decide every call of a batch before any runs; ``tools`` are the prompt's listed
        tools (a call of another name has no policy name)."""
        if self._cap.over([call_digest(call) for call in calls]):
            self.counts.skipped += len(calls)
            return BatchAdmission(calls=calls, skipped=[skipped_outcome(c) for c in calls])
        admission = BatchAdmission(
            calls=calls,
            state_changing=STATE_CHANGING_TOOLS
            | frozenset(name for name, spec in tools.items() if spec.mutating),
        )
        for index, call in enumerate(calls):
            policy = call.name if call.name in tools else None
            tool_type = tools[call.name].tool_type if policy else None
            digest = call_digest(call)
            admission.digests.append(digest)
            if self._deduper.is_duplicate(call.call_id, digest):
                self.counts.duplicates += 1
                outcome = duplicate_outcome(call, policy_tool_name=policy)
                admission.decisions.append(Answered(index, outcome))
                continue
            self._deduper.remember(call.call_id, digest)
            rules = self.loop_rules
            denial = rules.denial_check(digest) if rules else None
            if denial is not None:
                assert rules is not None
                decision = RuleDecision(
                    LoopRule.DENIED_CALL, denial, rules.modes[LoopRule.DENIED_CALL], 1
                )
                admission.denied_repeats.append(DeniedRepeat(decision, policy, tool_type))
                if denial is RuleDecisionKind.ANSWERED:
                    self.counts.denied_repeats += 1
                    outcome = denied_repeat_outcome(
                        call, policy_tool_name=policy, tool_type=tool_type
                    )
                    admission.decisions.append(Answered(index, outcome))
                    continue
            relaxed = (
                rules.relaxation(digest, call)
                if rules and self.failed_calls.earlier_reason(digest) is not None
                else None
            )
            check = self.failed_calls.check(digest) if relaxed is None else RepeatCheck.ADMIT
            if check is not RepeatCheck.ADMIT or relaxed is not None:
                admission.flagged_repeats.append(
                    FlaggedRepeat(check, policy, tool_type, relaxed=relaxed)
                )
            if check is RepeatCheck.REFUSE:
                self.counts.refused += 1
                reason = self.failed_calls.earlier_reason(digest) or ""
                outcome = refused_outcome(
                    call, policy_tool_name=policy, tool_type=tool_type, reason=reason
                )
                admission.decisions.append(Answered(index, outcome))
                continue
            self.counts.executed += 1
            ordinal = self._runs_per_tool.get(call.name, 0)
            self._runs_per_tool[call.name] = ordinal + 1
            admission.decisions.append(Admitted(index, call, policy, ordinal))
        return admission

    # --- settlement -----------------------------------------------------------------------

    def settle(
        self,
        admission: BatchAdmission,
        ran: Mapping[int, ToolOutcome | None],
        *,
        may_forget: Callable[[], bool] = lambda: True,
    ) -> list[ToolOutcome]:
        """Every outcome of the batch in call order, with the protections' state updated.

        ``ran`` has the outcome of every admitted call by index, ``None`` for a call cut
        before it could start (it settles as cancelled, not started). ``may_forget`` is
        asked only when a state-changing call succeeded, before its failures are
        forgotten (the workflow's patch check).
        """
        outcomes: list[ToolOutcome] = []
        for decision in admission.decisions:
            if isinstance(decision, Answered):
                outcomes.append(decision.outcome)
                continue
            outcome = ran[decision.index]
            if outcome is None:
                outcome = cancelled_outcome(
                    decision.call,
                    policy_tool_name=decision.policy_tool_name,
                    execution_status=ExecutionStatus.NOT_STARTED,
                )
            outcomes.append(outcome)
        changed = any(
            o.status == TerminalStatus.SUCCESS and o.tool_name in admission.state_changing
            for o in outcomes
        )
        if changed and may_forget():
            self.failed_calls.forget_failures()
        for digest, outcome in zip(admission.digests, outcomes, strict=True):
            self.failed_calls.record(digest, outcome, self._workspace_root)
            self._invalid_params.observe(outcome)
        self.progress = (
            self.loop_rules.settle(
                admission.calls, admission.digests, outcomes, admission.state_changing
            )
            if self.loop_rules
            else []
        )
        return outcomes

    def review(self, *, input_arrived: bool, enforcement_disabled: bool) -> list[RuleDecision]:
        """The recommended profile's rules on the settled batch, after the input drain
        (nothing in the seed profile)."""
        if self.loop_rules is None:
            return []
        return self.loop_rules.review(
            input_arrived=input_arrived, enforcement_disabled=enforcement_disabled
        )

    # --- stopping -------------------------------------------------------------------------

    def cap_stop(self) -> LoopStop:
        if self._cap.stopped_on_repeat:
            message = ADAPTIVE_CAP_STOP_MESSAGE.format(
                cap=self._cap.limit, repeats=ADAPTIVE_CAP_REPEATS - 1
            )
        else:
            message = TOOL_CALL_CAP_STOP_MESSAGE.format(cap=self._cap.backstop)
        return LoopStop(LoopType.TURN_TOOL_CALL_CAP, message)

    def stop_after(
        self, decision_kind: DecisionKind, rule_decisions: Sequence[RuleDecision] = ()
    ) -> LoopStop | None:
        """The protection that stops the prompt after a settled batch, most specific
        first; only that one records the loop type. The recommended profile's rules come
        after the seeds' protections, in :data:`~workflows.progress_rules.RULE_ORDER`."""
        if self._deduper.stop:
            return LoopStop(LoopType.GLOBAL_TOOL_CALL_DUPLICATE, DUPLICATE_STOP_MESSAGE)
        if self._invalid_params.stop:
            return LoopStop(LoopType.INVALID_TOOL_PARAMS_STAGNATION, INVALID_PARAMS_STOP_MESSAGE)
        if self.failed_calls.limit_exceeded or (
            self.loop_rules is not None
            and self.loop_rules.unchanged_failures_over(self.failed_calls.max_repeats)
        ):
            return LoopStop(
                LoopType.REPEATED_FAILED_CALL,
                repeat_limit_stop_message(self.failed_calls.max_repeats),
            )
        if decision_kind is DecisionKind.STOP:
            return LoopStop(
                LoopType.REPEATED_TOOL_EXECUTION_FAILURE, REPEATED_TOOL_FAILURE_STOP_MESSAGE
            )
        for rule in RULE_ORDER:
            if any(d.rule is rule and d.kind is RuleDecisionKind.STOP for d in rule_decisions):
                return LoopStop(LoopType(rule.value), RULE_STOP_MESSAGES[rule])
        return None


RULE_REMINDERS: Mapping[LoopRule, str] = {
    LoopRule.DENIED_CALL: DENIED_CALL_REMINDER,
    LoopRule.FAILURE_CYCLE: FAILURE_CYCLE_REMINDER,
    LoopRule.IDENTICAL_RESULT: IDENTICAL_RESULT_REMINDER,
}
RULE_STOP_MESSAGES: Mapping[LoopRule, str] = {
    LoopRule.DENIED_CALL: DENIED_CALL_STOP_MESSAGE,
    LoopRule.FAILURE_CYCLE: FAILURE_CYCLE_STOP_MESSAGE,
    LoopRule.IDENTICAL_RESULT: IDENTICAL_RESULT_STOP_MESSAGE,
}


def rule_reminders(rule_decisions: Sequence[RuleDecision]) -> list[str]:
    """The reminders a batch earned from the recommended profile's rules, one per rule, in
    :data:`~workflows.progress_rules.RULE_ORDER` (after the guard's own reminder)."""
    return [
        RULE_REMINDERS[rule]
        for rule in RULE_ORDER
        if any(d.rule is rule and d.kind is RuleDecisionKind.WARN for d in rule_decisions)
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
