"""The repeated tool execution failure guard: a pure reducer over settled tool batches.

Seed 000, "ACP Repeated Tool-Call Protection". The workflow holds a :class:`GuardState` and
calls :func:`reduce` once per fully settled batch; the returned :class:`GuardDecision` says
whether to continue, inject the fixed reminder, or stop. Nothing here does I/O, reads a clock
or logs, so the same inputs give the same decisions on every replay and in the benchmark
simulator. Telemetry is derived from a transition by :func:`telemetry_record` and emitted by
the caller. :class:`Observation` is the narrow batch receipt: it has no arguments, results or
error text, so the guard cannot leak them; :class:`Candidate` is what telemetry may say about
the one eligible failure of a batch.

This docstring is the contract of the **seed profile**: with no progress evidence supplied
(``Observation.progress`` never set), the reducer gives exactly these decisions. Later
improvements may add optional inputs or separate layers, never change these rules.

Modes (the operator's; ``off`` makes every call return ``none`` and emit no telemetry)::

    mode      decisions              reminder injected   prompt stopped
    shadow    would_warn/would_stop  no                  no      (the default)
    warn      warn/would_stop        yes                 no
    enforce   warn/stop              yes                 yes

Shadow advances a *virtual* warned state without injecting anything, so ``would_warn`` and
``would_stop`` estimate volume only; they cannot show how a model reacts to the reminder.
Once ``enforcement_disabled`` is set (the outcome contract or the input boundary could not be
trusted in this prompt), :func:`effective_mode` turns ``enforce`` into ``warn`` for the rest
of the prompt: the reminder is still given, the stop becomes ``would_stop``. Nothing
re-enables it.

``reduce(state, input)``, in exactly this order:

1. **Off or latched.** Mode ``off``, or phase ``latched``: kind ``none``, state unchanged. A
   latched guard emits no further decisions in this prompt, whatever happens.
2. **Input boundary**, first match wins: ``not input_reliable`` → reset ``unreliable_input``
   and set ``enforcement_disabled``; ``has_external_input`` → reset ``external_input``;
   ``has_queued_prompt`` → reset ``queued_prompt``; ``not batch.complete`` → reset
   ``incomplete``. (A batch that arrives with input is not counted, even if it failed.)
3. **Ignore what never ran on its own account.** Drop observations with
   ``provider_duplicate`` or ``refused_repeat`` and (recommended loop profile only) those
   marked ``progress``: a failure of a call that now fails differently than before
   (``workflows.rules.loop_rules``, R0). If none remain: kind ``none``, state unchanged.
4. **Classify** every remaining observation by the table below.
5. **Ineligible?** If any observation classified as a reset reason: reset with the
   highest-precedence reason present, ``contract_violation > cancelled > unknown >
   not_started > post_execution_failure``; and set ``enforcement_disabled`` if *any*
   observation classified as ``contract_violation`` or ``unknown`` (even when a
   higher-precedence reason is reported).
6. **Successes.** Drop the eligible failures of every tool that succeeded in this batch (a
   success has no error type, so it clears every failure classification of that tool in the
   batch). If no failure remains: when the tracked key's tool succeeded → reset ``success``;
   otherwise kind ``none``, state unchanged — a success of another tool neither advances nor
   resets the streak.
7. **Mixed.** More than one distinct failure key remains → reset ``mixed``.
8. **New key.** The one key differs from the tracked key (or nothing is tracked, whatever the
   phase): a new streak — phase ``tracking``, this key, ``failure_count`` = this batch's
   failures, ``batch_count = 1``, ``candidate_ordinal = next_candidate_ordinal``,
   ``next_candidate_ordinal + 1``, ``enforcement_disabled`` kept. Kind ``tracked``.
9. **Same key.** Add this batch's failures to ``failure_count`` and 1 to ``batch_count``,
   take the effective mode of the advanced state, then: phase was ``warned`` → phase
   ``latched``, kind ``stop`` in ``enforce``, else ``would_stop``; else if ``failure_count >=
   REPEATED_TOOL_FAILURE_THRESHOLD`` (8) and ``batch_count >=
   REPEATED_TOOL_FAILURE_BATCH_THRESHOLD`` (2) → phase ``warned``, kind ``would_warn`` in
   ``shadow``, else ``warn``; else kind ``tracked``.

A reset returns the idle state, keeping ``next_candidate_ordinal`` and
``enforcement_disabled`` (or-ed with the reset's own disabling). If that equals the state
before (already idle, nothing disabled anew), the decision is kind ``none`` with no reason;
otherwise kind ``reset`` with the reason.

The failure key is ``(policy_tool_name, execution_error_type)``, the tool identity being
``policy_tool_name`` stripped of blanks. Arguments are deliberately not part of it: parameter
thrashing against the same execution boundary is exactly the loop to catch, and the threshold
plus the two-batch requirement give the false-positive headroom. Classification::

    terminal     execution              classification
    cancelled    anything, or missing   cancelled
    not cancelled  missing or unknown   unknown (disables)
    success      error or cancelled     contract_violation (disables)
    success      success or not_started a success of that tool; no tool identity: unknown (disables)
    success      any other value        unknown (disables)
    error        cancelled              cancelled
    error        not_started            not_started
    error        success                post_execution_failure
    error        error                  an ELIGIBLE FAILURE with a tool identity and an
                                        execution error type neither blank nor "unknown";
                                        else unknown (disables)
    error        any other value        unknown (disables)
    other value  present, not unknown   unknown (disables)

So nothing counts but a call that a registered tool actually ran, that failed, with a
structured classification, in a batch that fully settled. Cancellations (permission
cancellations included), permission denials, validation failures, post-processing failures,
historical unknowns and duplicates never count.

What the workflow does with a decision: ``none``, ``reset``, ``tracked``, ``would_warn`` and
``would_stop`` leave the turn unchanged; ``warn`` appends :data:`REPEATED_TOOL_FAILURE_REMINDER`
after the tool results (and before drained input); ``stop`` ends the prompt with
``repeated_tool_execution_failure`` and :data:`REPEATED_TOOL_FAILURE_STOP_MESSAGE`. One
reminder per candidate streak, not per prompt: a reset followed by a new streak (a new
candidate ordinal) can earn a new reminder, and a streak that warned and then fails with a
*different* key starts a new streak (step 8) rather than stopping. Both texts are fixed system
context: no tool name, argument or error text, never presented as user input.

Invariants, from seed 000's shadow phase, held by ``tests/workflows/seed/test_guard.py`` (the
decision table and the seed's verification list), ``test_guard_semantics.py`` (what this module
adds: modes, reset precedence, ordinals, fail-open), ``test_guard_properties.py`` (random batch
sequences against an independent oracle) and ``tests/test_shadow_invariants.py`` (over the
diagnostic logs of real shadow runs): zero cancelled calls, ``not_started`` calls, unknown
execution classifications or post-execution failures counted; zero decisions on incomplete
batches; zero enforcement after an unreliable input drain; every ``would_stop`` preceded by a
``would_warn`` of the same prompt and candidate ordinal (every ``stop`` by a ``warn``); eight
failures in one batch never warn, eight across two batches do, and the next matching batch
stops only after it settled; the reminder and stop texts are fixed and carry no tool data;
unsupported outcome combinations never enforce; the older protections (duplicate ids, invalid
parameters, the cap) are unchanged.

Departs from the seed:

- *The streak is durable.* Seed 000 keeps the guard in memory and loses it on a restart by
  design; here it is workflow state, so a worker crash or deploy continues the same streak.
- *Refused repeats are ignored* like provider duplicates (step 3): a refused call never ran,
  and the failed-call refusal has its own limit. Seed 000 does not know the refusal.
- *Completeness and reliability are proven differently.* The workflow reduces only after it
  awaited every admitted call's outcome, so its batches are always complete (``incomplete``
  exists for other producers of the input, and for the tests); its own drain of signals is
  durable, so an unreliable drain can only be reported by a host in front of it, through the
  ``report_unreliable_input`` signal, where the seed reads it from the host's drain response.
- *Decision names* are ``warn``/``stop`` (the seed's telemetry says ``warned``/``stopped``),
  plus ``none`` for "nothing changed", which the seed leaves implicit.
- *Scope* is a route, not an ACP session type (docs/protections.md, "Operator settings"):
  Seawall has no Todo or Stop-hook continuations to suspend; a stop ends the prompt workflow.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

REPEATED_TOOL_FAILURE_THRESHOLD = 8
REPEATED_TOOL_FAILURE_BATCH_THRESHOLD = 2
REPEATED_TOOL_FAILURE_REMINDER = (
    "System: the same tool execution has failed repeatedly for the same classified reason. "
    "Do not repeat the same approach. Inspect the returned result, change the approach or "
    "required preconditions, or explain the blocker."
)
REPEATED_TOOL_FAILURE_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the same tool execution failure "
    "continued after a corrective reminder. New user input is required to continue."
)


class GuardMode(StrEnum):
    OFF = "off"
    SHADOW = "shadow"
    WARN = "warn"
    ENFORCE = "enforce"


def parse_guard_mode(value: str | None) -> GuardMode | None:
    """The mode named by ``value`` (case and surrounding blanks ignored), or ``None``."""
    if value is None:
        return None
    try:
        return GuardMode(value.strip().lower())
    except ValueError:
        return None


class GuardPhase(StrEnum):
    IDLE = "idle"
    TRACKING = "tracking"
    WARNED = "warned"
    LATCHED = "latched"


class ResetReason(StrEnum):
    SUCCESS = "success"
    CANCELLED = "cancelled"
    NOT_STARTED = "not_started"
    POST_EXECUTION_FAILURE = "post_execution_failure"
    UNKNOWN = "unknown"
    MIXED = "mixed"
    INCOMPLETE = "incomplete"
    EXTERNAL_INPUT = "external_input"
    QUEUED_PROMPT = "queued_prompt"
    UNRELIABLE_INPUT = "unreliable_input"
    CONTRACT_VIOLATION = "contract_violation"


class DecisionKind(StrEnum):
    NONE = "none"
    RESET = "reset"
    TRACKED = "tracked"
    WOULD_WARN = "would_warn"
    WARN = "warn"
    WOULD_STOP = "would_stop"
    STOP = "stop"


class FailureKey(BaseModel):
    """The private identity of a streak. Never a metric label, never logged."""

    model_config = ConfigDict(frozen=True)

    policy_tool_name: str
    execution_error_type: str


class GuardState(BaseModel):
    model_config = ConfigDict(frozen=True)

    phase: GuardPhase = GuardPhase.IDLE
    key: FailureKey | None = None
    failure_count: int = 0
    batch_count: int = 0
    candidate_ordinal: int = 0
    next_candidate_ordinal: int = 1
    enforcement_disabled: bool = False


class Observation(BaseModel):
    """One entry of the narrow batch receipt: no arguments, results or error text."""

    model_config = ConfigDict(frozen=True)

    call_id: str
    policy_tool_name: str | None = None
    tool_type: str | None = None
    terminal_status: str
    execution_status: str | None = None
    execution_error_type: str | None = None
    provider_duplicate: bool = False
    # A call refused by the failed-call log never ran; like a provider duplicate it neither
    # advances nor resets the streak (workflows/seed/failed_call_refusal.py).
    refused_repeat: bool = False
    # Progress evidence (optional; the seed profile never sets it): a failure whose output
    # says something new for its tool is progress, not repetition, and like a refused repeat
    # it neither advances nor resets the streak (docs/protections.md, "Loop profiles").
    progress: bool = False


class Batch(BaseModel):
    model_config = ConfigDict(frozen=True)

    complete: bool = True
    observations: list[Observation]


class GuardInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    mode: GuardMode
    batch: Batch
    has_external_input: bool = False
    has_queued_prompt: bool = False
    input_reliable: bool = True


class Candidate(BaseModel):
    """What telemetry may say about the one eligible failure of a batch."""

    model_config = ConfigDict(frozen=True)

    tool_type: str | None
    terminal_status: str
    execution_status: str
    execution_error_type: str


class GuardDecision(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: DecisionKind
    state: GuardState
    reason: ResetReason | None = None
    candidate: Candidate | None = None

    @property
    def warns_or_stops(self) -> bool:
        """A warning or a stop, taken or (in shadow) only recorded, or a state one left: what
        an operator lists prompts by, as against a streak merely tracked or reset."""
        return self.kind in _WARNING_OR_STOP or self.state.phase in _WARNED_OR_LATCHED


_WARNING_OR_STOP = frozenset(
    {DecisionKind.WOULD_WARN, DecisionKind.WARN, DecisionKind.WOULD_STOP, DecisionKind.STOP}
)
_WARNED_OR_LATCHED = frozenset({GuardPhase.WARNED, GuardPhase.LATCHED})


# Highest first: the reason a mixed-ineligible batch reports.
_INELIGIBLE_PRECEDENCE: tuple[ResetReason, ...] = (
    ResetReason.CONTRACT_VIOLATION,
    ResetReason.CANCELLED,
    ResetReason.UNKNOWN,
    ResetReason.NOT_STARTED,
    ResetReason.POST_EXECUTION_FAILURE,
)

# Reasons whose observation means the outcome contract cannot be trusted for this prompt.
_DISABLING_REASONS = frozenset({ResetReason.CONTRACT_VIOLATION, ResetReason.UNKNOWN})


class _Success(BaseModel):
    model_config = ConfigDict(frozen=True)
    policy_tool_name: str


class _Failure(BaseModel):
    model_config = ConfigDict(frozen=True)
    key: FailureKey
    candidate: Candidate


_Classified = ResetReason | _Success | _Failure


def effective_mode(mode: GuardMode, state: GuardState) -> GuardMode:
    """``enforce`` is downgraded to ``warn`` once the prompt's contract became untrusted."""
    if mode is GuardMode.ENFORCE and state.enforcement_disabled:
        return GuardMode.WARN
    return mode


def classify(observation: Observation) -> _Classified:
    """Place one observation in the terminal/execution decision table (the module docstring)."""
    terminal = observation.terminal_status
    execution = observation.execution_status
    tool = (observation.policy_tool_name or "").strip() or None
    if terminal == "cancelled":
        return ResetReason.CANCELLED
    if execution is None or execution == "unknown":
        return ResetReason.UNKNOWN
    if terminal == "success":
        if execution in ("error", "cancelled"):
            return ResetReason.CONTRACT_VIOLATION
        if execution in ("success", "not_started"):
            return _Success(policy_tool_name=tool) if tool else ResetReason.UNKNOWN
        return ResetReason.UNKNOWN
    if terminal != "error":
        return ResetReason.UNKNOWN
    if execution == "cancelled":
        return ResetReason.CANCELLED
    if execution == "not_started":
        return ResetReason.NOT_STARTED
    if execution == "success":
        return ResetReason.POST_EXECUTION_FAILURE
    if execution != "error":
        return ResetReason.UNKNOWN
    error_type = (observation.execution_error_type or "").strip() or None
    if tool is None or error_type is None or error_type == "unknown":
        return ResetReason.UNKNOWN
    return _Failure(
        key=FailureKey(policy_tool_name=tool, execution_error_type=error_type),
        candidate=Candidate(
            tool_type=observation.tool_type,
            terminal_status=terminal,
            execution_status=execution,
            execution_error_type=error_type,
        ),
    )


def _reset(state: GuardState, reason: ResetReason, *, disable: bool = False) -> GuardDecision:
    after = GuardState(
        next_candidate_ordinal=state.next_candidate_ordinal,
        enforcement_disabled=state.enforcement_disabled or disable,
    )
    if after == state:
        return GuardDecision(kind=DecisionKind.NONE, state=state)
    return GuardDecision(kind=DecisionKind.RESET, state=after, reason=reason)


def reduce(state: GuardState, guard_input: GuardInput) -> GuardDecision:
    """Advance the guard by one fully settled batch (the module docstring)."""
    mode = guard_input.mode
    if mode is GuardMode.OFF or state.phase is GuardPhase.LATCHED:
        return GuardDecision(kind=DecisionKind.NONE, state=state)

    if not guard_input.input_reliable:
        return _reset(state, ResetReason.UNRELIABLE_INPUT, disable=True)
    if guard_input.has_external_input:
        return _reset(state, ResetReason.EXTERNAL_INPUT)
    if guard_input.has_queued_prompt:
        return _reset(state, ResetReason.QUEUED_PROMPT)
    if not guard_input.batch.complete:
        return _reset(state, ResetReason.INCOMPLETE)

    observations = [
        o
        for o in guard_input.batch.observations
        if not (o.provider_duplicate or o.refused_repeat or o.progress)
    ]
    if not observations:
        return GuardDecision(kind=DecisionKind.NONE, state=state)

    classified = [classify(o) for o in observations]
    ineligible = {c for c in classified if isinstance(c, ResetReason)}
    if ineligible:
        reason = next(r for r in _INELIGIBLE_PRECEDENCE if r in ineligible)
        return _reset(state, reason, disable=bool(ineligible & _DISABLING_REASONS))

    succeeded = {c.policy_tool_name for c in classified if isinstance(c, _Success)}
    failures = [
        c for c in classified if isinstance(c, _Failure) and c.key.policy_tool_name not in succeeded
    ]
    if not failures:
        if state.key is not None and state.key.policy_tool_name in succeeded:
            return _reset(state, ResetReason.SUCCESS)
        # Only other tools succeeded: the streak neither advances nor resets.
        return GuardDecision(kind=DecisionKind.NONE, state=state)

    keys = {f.key for f in failures}
    if len(keys) > 1:
        return _reset(state, ResetReason.MIXED)
    (key,) = keys
    candidate = failures[0].candidate

    if key != state.key:
        tracked = GuardState(
            phase=GuardPhase.TRACKING,
            key=key,
            failure_count=len(failures),
            batch_count=1,
            candidate_ordinal=state.next_candidate_ordinal,
            next_candidate_ordinal=state.next_candidate_ordinal + 1,
            enforcement_disabled=state.enforcement_disabled,
        )
        return GuardDecision(kind=DecisionKind.TRACKED, state=tracked, candidate=candidate)

    advanced = state.model_copy(
        update={
            "failure_count": state.failure_count + len(failures),
            "batch_count": state.batch_count + 1,
        }
    )
    mode = effective_mode(mode, advanced)
    if state.phase is GuardPhase.WARNED:
        kind = DecisionKind.STOP if mode is GuardMode.ENFORCE else DecisionKind.WOULD_STOP
        latched = advanced.model_copy(update={"phase": GuardPhase.LATCHED})
        return GuardDecision(kind=kind, state=latched, candidate=candidate)
    if (
        advanced.failure_count >= REPEATED_TOOL_FAILURE_THRESHOLD
        and advanced.batch_count >= REPEATED_TOOL_FAILURE_BATCH_THRESHOLD
    ):
        kind = DecisionKind.WOULD_WARN if mode is GuardMode.SHADOW else DecisionKind.WARN
        warned = advanced.model_copy(update={"phase": GuardPhase.WARNED})
        return GuardDecision(kind=kind, state=warned, candidate=candidate)
    return GuardDecision(kind=DecisionKind.TRACKED, state=advanced, candidate=candidate)


# --- telemetry --------------------------------------------------------------------------


def failure_count_bucket(count: int) -> str:
    if count <= 0:
        return "0"
    if count <= 2:
        return "1-2"
    if count <= 4:
        return "3-4"
    if count <= 7:
        return "5-7"
    return "8+"


def batch_count_bucket(count: int) -> str:
    if count <= 0:
        return "0"
    if count <= 2:
        return str(count)
    return "3+"


class TelemetryRecord(BaseModel):
    """One reducer transition, data-minimized (seed "Telemetry and privacy").

    Every field except ``candidate_ordinal`` and ``execution_error_type`` is low-cardinality
    and may become a metric label; those two belong in the diagnostic log only.
    """

    model_config = ConfigDict(frozen=True)

    mode: GuardMode
    phase_before: GuardPhase
    phase_after: GuardPhase
    decision: DecisionKind
    reset_reason: ResetReason | None
    failure_count_bucket: str
    batch_count_bucket: str
    candidate_ordinal: int
    tool_type: str | None = None
    terminal_status: str | None = None
    execution_status: str | None = None
    execution_error_type: str | None = None

    def metric_attributes(self) -> dict[str, str]:
        """The low-cardinality labels; never the ordinal or the error type."""
        return {
            "mode": self.mode.value,
            "phase_before": self.phase_before.value,
            "phase_after": self.phase_after.value,
            "decision": self.decision.value,
            "reset_reason": self.reset_reason.value if self.reset_reason else "none",
            "failure_count_bucket": self.failure_count_bucket,
            "batch_count_bucket": self.batch_count_bucket,
            "tool_type": self.tool_type or "none",
            "terminal_status": self.terminal_status or "none",
            "execution_status": self.execution_status or "none",
        }


def telemetry_record(
    before: GuardState, mode: GuardMode, decision: GuardDecision
) -> TelemetryRecord | None:
    """The record for one transition, or ``None`` when there is nothing to say.

    Nothing is emitted in mode ``off``, once latched, or for an idle observation that left
    the state exactly as it was. A reset describes the streak it ended (its counts and
    ordinal); every other decision describes the state it produced.
    """
    if mode is GuardMode.OFF or before.phase is GuardPhase.LATCHED:
        return None
    after = decision.state
    if before.phase is GuardPhase.IDLE and after == before:
        return None
    described = before if decision.kind is DecisionKind.RESET else after
    candidate = decision.candidate
    return TelemetryRecord(
        mode=mode,
        phase_before=before.phase,
        phase_after=after.phase,
        decision=decision.kind,
        reset_reason=decision.reason,
        failure_count_bucket=failure_count_bucket(described.failure_count),
        batch_count_bucket=batch_count_bucket(described.batch_count),
        candidate_ordinal=described.candidate_ordinal,
        tool_type=candidate.tool_type if candidate else None,
        terminal_status=candidate.terminal_status if candidate else None,
        execution_status=candidate.execution_status if candidate else None,
        execution_error_type=candidate.execution_error_type if candidate else None,
    )
