"""The seed's protections around each model batch, as pure prompt state.

docs/architecture.md, "The life of a prompt", protections 1, 2 and 5: provider call-id
deduplication, the invalid-parameter guard and the per-prompt tool-call cap, with their
stop messages; and :class:`BatchProtections`, which holds them with the failed-call refusal
(``workflows.seed.failed_call_refusal``) for one prompt. A batch is every tool call of one model
reply.

Before anything runs, :meth:`BatchProtections.screen` decides each call, in call order (the
batch's *screening*; "admission" is the per-owner prompt slot,
``workflows.session.owner_admission``): the whole batch is skipped when it would pass the tool-call
cap; a resent provider call id is answered without running; an unchanged repeat of a call that
already failed is refused with the earlier reason (the failed-call refusal); every other call is
cleared to run, numbered per tool. Once the cleared calls have settled,
:meth:`BatchProtections.settle` puts every outcome in call order (a call cut before it could start
settles as cancelled), forgets the remembered failures after a successful state-changing call, and
records the batch's failures and invalid parameters. After the input drain,
:meth:`BatchProtections.stop_after` names the protection that stops the prompt, most specific first
(``workflows.prompt.batch.after_batch`` asks).

In the recommended loop profile (docs/protections.md, "Loop profiles") the
:class:`~workflows.rules.LoopRules` layer joins in: screening may clear an unchanged repeat
the refusal would refuse, and answers a re-request of a denied call; settlement marks
progress for the guard; :meth:`BatchProtections.review` runs the profile's own rules after
the input drain. In the seed profile that layer is absent and every decision is the seeds'.

No Temporal, no I/O, no clock. ``PromptWorkflow`` runs the cleared calls as activities and
``bench/simulate.py`` as fixtures; both share this one implementation of every decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from pydantic import BaseModel, Field

from workflows.contracts.activity import ToolSpec
from workflows.contracts.outcome import (
    ExecutionStatus,
    TerminalStatus,
    ToolCall,
    ToolErrorType,
    ToolOutcome,
)
from workflows.contracts.prompt import LoopType, ToolCallCounts
from workflows.contracts.prompt_options import DEFAULT_MAX_TOOL_CALLS_PER_TURN, PromptOptions
from workflows.contracts.synthetic_outcomes import (
    cancelled_outcome,
    denied_repeat_outcome,
    duplicate_outcome,
    refused_outcome,
    skipped_outcome,
)
from workflows.rules import RULES, LoopRules, RelaxReason, RuleDecision, RuleDecisionKind
from workflows.seed.failed_call_refusal import (
    STATE_CHANGING_TOOLS,
    FailedCallLog,
    RepeatCheck,
    argument_digest,
    repeat_limit_stop_message,
)
from workflows.seed.guard import REPEATED_TOOL_FAILURE_STOP_MESSAGE, DecisionKind

INVALID_PARAMS_ERROR_TYPES = frozenset(
    {ToolErrorType.INVALID_TOOL_PARAMS, ToolErrorType.TOOL_NOT_REGISTERED}
)

DUPLICATE_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the model kept resending tool calls "
    "that were already handled. New user input is required to continue."
)
INVALID_PARAMS_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the model kept calling a tool with "
    "invalid parameters or an unknown tool name. New user input is required to continue."
)
TOOL_CALL_CAP_STOP_MESSAGE = (
    "System: Automatic continuation stopped because this prompt reached its tool-call cap "
    "({cap} calls); the last batch was not run. New user input is required to continue."
)
ADAPTIVE_CAP_STOP_MESSAGE = (
    "System: Automatic continuation stopped because this prompt passed {cap} tool calls and "
    "kept asking for a call it had already made {repeats} times; the last batch was not run. "
    "New user input is required to continue."
)

# The adaptive default (recommended profile): past the default, a batch stops the prompt
# only when it asks for a call the prompt already asked for this many times (counting it),
# and every batch past ten times the default stops it whatever it asks.
ADAPTIVE_CAP_REPEATS = 6
ADAPTIVE_CAP_BACKSTOP_FACTOR = 10


class CallIdDeduper(BaseModel):
    """Provider call ids already answered in this prompt, with their call fingerprint."""

    handled: dict[str, str] = Field(default_factory=dict)
    duplicates: dict[str, int] = Field(default_factory=dict)
    stop: bool = False

    def is_duplicate(self, call_id: str, fingerprint: str) -> bool:
        """True for a replay of an answered call; the second replay of one id stops."""
        if self.handled.get(call_id) != fingerprint:
            return False
        seen = self.duplicates.get(call_id, 0) + 1
        self.duplicates[call_id] = seen
        if seen >= 2:
            self.stop = True
        return True

    def remember(self, call_id: str, fingerprint: str) -> None:
        self.handled[call_id] = fingerprint


class InvalidParamsGuard(BaseModel):
    """Per tool name, invalid-parameter, unregistered and nameless calls; three stop."""

    limit: int = 3
    counts: dict[str, int] = Field(default_factory=dict)

    def observe(self, outcome: ToolOutcome) -> None:
        # A permission cancellation or an abort is the user's doing, never the model's.
        if outcome.status != TerminalStatus.ERROR or outcome.provider_duplicate:
            return
        if outcome.error_type in INVALID_PARAMS_ERROR_TYPES:
            self.counts[outcome.tool_name] = self.counts.get(outcome.tool_name, 0) + 1

    @property
    def stop(self) -> bool:
        return any(count >= self.limit for count in self.counts.values())


def over_cap(cap: int, calls_so_far: int, batch_size: int) -> bool:
    """The cap (0 disables it) counts every call the model asked for in this prompt."""
    return cap > 0 and calls_so_far + batch_size > cap


def cap_limit(configured: int | None) -> int:
    """The hard cap a prompt runs with: the one it set, else the default."""
    return DEFAULT_MAX_TOOL_CALLS_PER_TURN if configured is None else configured


class ToolCallCap:
    """The per-prompt tool-call cap, fixed or adaptive.

    A cap the prompt (or its session) sets is a hard cap: the batch that would pass it is
    skipped. So is the default in the seed profile. In the recommended profile the unset
    default is *adaptive*: a fixed cap of 100 ends long runs that are making progress (a
    render pipeline verifying every frame of six stages), which is what peers learned too
    (docs/protections.md, "The adaptive tool-call cap"). Past the default, a batch is
    skipped only when it repeats a call the prompt has already asked for
    :data:`ADAPTIVE_CAP_REPEATS` − 1 times, which is what a stuck model does; ten times the
    default stays a hard backstop, so a runaway whose every call differs is still bounded.

    Counts are keyed by the call's private argument digest and live only in workflow state.
    """

    def __init__(self, configured: int | None, *, adaptive: bool = False) -> None:
        self.limit = cap_limit(configured)
        self._configured = configured is not None
        self.adaptive = adaptive and not self._configured
        self.requested = 0
        self._asked: dict[str, int] = {}
        # Why the last over-the-cap batch was skipped: a repeated call (adaptive) or not.
        self.stopped_on_repeat = False

    def make_adaptive(self, adaptive: bool) -> None:
        """Adapt the default cap (the recommended profile); a configured cap stays hard."""
        self.adaptive = adaptive and not self._configured

    def over(self, digests: list[str]) -> bool:
        """Whether the batch of these call digests must not run; counts it when it may."""
        total = self.requested + len(digests)
        if self.limit == 0 or total <= self.limit:
            return self._count(digests)
        if not self.adaptive or total > self.limit * ADAPTIVE_CAP_BACKSTOP_FACTOR:
            return True
        asked = dict(self._asked)
        for digest in digests:
            asked[digest] = asked.get(digest, 0) + 1
            if asked[digest] >= ADAPTIVE_CAP_REPEATS:
                self.stopped_on_repeat = True
                return True
        return self._count(digests)

    def _count(self, digests: list[str]) -> bool:
        self.requested += len(digests)
        for digest in digests:
            self._asked[digest] = self._asked.get(digest, 0) + 1
        return False

    @property
    def backstop(self) -> int:
        return self.limit * ADAPTIVE_CAP_BACKSTOP_FACTOR if self.adaptive else self.limit


# --- one prompt's protections around each batch ---------------------------------------


def call_digest(call: ToolCall) -> str:
    """The call's fingerprint: its tool and arguments (raw text when they were not JSON)."""
    arguments = call.arguments if call.arguments is not None else {"<raw>": call.raw_arguments}
    return argument_digest(call.name, arguments)


@dataclass(frozen=True)
class Answered:
    """A call settled at screening without running: a resent call id, a refused repeat, or
    a re-request a rule answered."""

    index: int
    outcome: ToolOutcome


@dataclass(frozen=True)
class Cleared:
    """A call cleared to run. ``ordinal`` counts the earlier runs of its tool in the prompt
    (it picks a fixture's scripted outcome, whatever the retries)."""

    index: int
    call: ToolCall
    policy_tool_name: str | None
    ordinal: int


@dataclass(frozen=True)
class FlaggedRepeat:
    """An unchanged repeat of a failed call: refused (``enforce``), in ``shadow`` only
    counted, or (recommended profile) cleared to run for the ``relaxed`` reason. Telemetry
    names the tool by its policy name and type only."""

    check: RepeatCheck
    policy_tool_name: str | None
    tool_type: str | None
    relaxed: RelaxReason | None = None

    @property
    def outcome(self) -> str:
        """The refusal telemetry's ``outcome`` label (stable values: ``admitted_*`` for a
        relaxed repeat, as dashboards know them)."""
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
class BatchScreening:
    """What screening decided for one batch, call by call, in call order."""

    calls: list[ToolCall]
    decisions: list[Answered | Cleared] = field(default_factory=list)
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
    def cleared(self) -> list[Cleared]:
        return [d for d in self.decisions if isinstance(d, Cleared)]

    @property
    def answered(self) -> list[Answered]:
        return [d for d in self.decisions if isinstance(d, Answered)]


class LoopStop(NamedTuple):
    """The protection that stops the prompt, and the message the conversation ends with."""

    loop_type: LoopType
    message: str


class BatchProtections:
    """One prompt's screening and settlement state across its batches."""

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

    # --- screening ------------------------------------------------------------------------

    def screen(self, calls: list[ToolCall], tools: Mapping[str, ToolSpec]) -> BatchScreening:
        """Screen every call of a batch before any runs; ``tools`` are the prompt's listed
        tools (a call of another name has no policy name)."""
        digests = [call_digest(call) for call in calls]
        if self._cap.over(digests):
            self.counts.skipped += len(calls)
            return BatchScreening(calls=calls, skipped=[skipped_outcome(c) for c in calls])
        screening = BatchScreening(
            calls=calls,
            digests=digests,
            state_changing=STATE_CHANGING_TOOLS
            | frozenset(name for name, spec in tools.items() if spec.mutating),
        )
        executed = 0  # added once, after the batch (a model's field costs to set)
        for index, (call, digest) in enumerate(zip(calls, digests, strict=True)):
            policy = call.name if call.name in tools else None
            tool_type = tools[call.name].tool_type if policy else None
            if self._deduper.is_duplicate(call.call_id, digest):
                self.counts.duplicates += 1
                outcome = duplicate_outcome(call, policy_tool_name=policy)
                screening.decisions.append(Answered(index, outcome))
                continue
            self._deduper.remember(call.call_id, digest)
            rules = self.loop_rules
            answer = rules.answer_check(digest) if rules else None
            if answer is not None:
                screening.denied_repeats.append(DeniedRepeat(answer, policy, tool_type))
                if answer.kind is RuleDecisionKind.ANSWERED:
                    self.counts.denied_repeats += 1
                    outcome = denied_repeat_outcome(
                        call, policy_tool_name=policy, tool_type=tool_type
                    )
                    screening.decisions.append(Answered(index, outcome))
                    continue
            relaxed = (
                rules.relaxation(digest, call)
                if rules and self.failed_calls.earlier_reason(digest) is not None
                else None
            )
            check = self.failed_calls.check(digest) if relaxed is None else RepeatCheck.RUN
            if check is not RepeatCheck.RUN or relaxed is not None:
                screening.flagged_repeats.append(
                    FlaggedRepeat(check, policy, tool_type, relaxed=relaxed)
                )
            if check is RepeatCheck.REFUSE:
                self.counts.refused += 1
                reason = self.failed_calls.earlier_reason(digest) or ""
                outcome = refused_outcome(
                    call, policy_tool_name=policy, tool_type=tool_type, reason=reason
                )
                screening.decisions.append(Answered(index, outcome))
                continue
            executed += 1
            ordinal = self._runs_per_tool.get(call.name, 0)
            self._runs_per_tool[call.name] = ordinal + 1
            screening.decisions.append(Cleared(index, call, policy, ordinal))
        if executed:
            self.counts.executed += executed
        return screening

    # --- settlement -----------------------------------------------------------------------

    def settle(
        self,
        screening: BatchScreening,
        ran: Mapping[int, ToolOutcome | None],
        *,
        may_forget: Callable[[], bool] = lambda: True,
        durations: Mapping[int, float] | None = None,
    ) -> list[ToolOutcome]:
        """Every outcome of the batch in call order, with the protections' state updated.

        ``ran`` has the outcome of every cleared call by index, ``None`` for a call cut
        before it could start (it settles as cancelled, not started). ``may_forget`` is
        asked only when a state-changing call succeeded, before its failures are
        forgotten (the workflow's patch check). ``durations``: the seconds each call that
        ran took on the prompt's clock, by index (the recommended rules' time evidence;
        a call without one took none).
        """
        outcomes: list[ToolOutcome] = []
        for decision in screening.decisions:
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
            o.status == TerminalStatus.SUCCESS and o.tool_name in screening.state_changing
            for o in outcomes
        )
        if changed and may_forget():
            self.failed_calls.forget_failures()
        for digest, outcome in zip(screening.digests, outcomes, strict=True):
            self.failed_calls.record(digest, outcome, self._workspace_root)
            self._invalid_params.observe(outcome)
        self.progress = (
            self.loop_rules.settle(
                screening.calls,
                screening.digests,
                outcomes,
                screening.state_changing,
                [(durations or {}).get(d.index, 0.0) for d in screening.decisions],
            )
            if self.loop_rules
            else []
        )
        return outcomes

    def review(
        self, *, input_arrived: bool, enforcement_disabled: bool, now: float = 0.0
    ) -> list[RuleDecision]:
        """The recommended profile's rules on the settled batch, after the input drain, at
        the prompt's clock ``now`` (nothing in the seed profile)."""
        if self.loop_rules is None:
            return []
        return self.loop_rules.review(
            input_arrived=input_arrived, enforcement_disabled=enforcement_disabled, now=now
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
        after the seeds' protections, in the table's order (``workflows.rules.RULES``)."""
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
        for spec in RULES:
            if any(d.rule is spec.rule and d.kind is RuleDecisionKind.STOP for d in rule_decisions):
                return LoopStop(LoopType(spec.loop_type), spec.stop_message)
        return None
