"""Builders for the guard's unit tests (workflows/seed/guard.py): observations, batches, states
in each phase and the reset helpers, shared by test_guard.py (the seed's bullets) and
test_guard_semantics.py (what guard.py adds)."""

from __future__ import annotations

import itertools

from workflows.seed.guard import (
    Batch,
    DecisionKind,
    FailureKey,
    GuardDecision,
    GuardInput,
    GuardMode,
    GuardPhase,
    GuardState,
    Observation,
    ResetReason,
    reduce,
)

OFF, SHADOW, WARN, ENFORCE = GuardMode.OFF, GuardMode.SHADOW, GuardMode.WARN, GuardMode.ENFORCE
IDLE, TRACKING, WARNED, LATCHED = (
    GuardPhase.IDLE,
    GuardPhase.TRACKING,
    GuardPhase.WARNED,
    GuardPhase.LATCHED,
)
NONE, RESET, TRACKED = DecisionKind.NONE, DecisionKind.RESET, DecisionKind.TRACKED
WOULD_WARN, WARN_KIND = DecisionKind.WOULD_WARN, DecisionKind.WARN
WOULD_STOP, STOP = DecisionKind.WOULD_STOP, DecisionKind.STOP

TOOL = "shell"
ERR = "execution_failed"
KEY = FailureKey(policy_tool_name=TOOL, execution_error_type=ERR)

_call_ids = itertools.count(1)


def obs(
    tool: str | None = TOOL,
    terminal: str = "error",
    execution: str | None = "error",
    err: str | None = ERR,
    *,
    dup: bool = False,
    refused: bool = False,
    tool_type: str | None = "native",
) -> Observation:
    """One receipt entry; defaults to an eligible failure of ``KEY``."""
    return Observation(
        call_id=f"call-{next(_call_ids)}",
        policy_tool_name=tool,
        tool_type=tool_type,
        terminal_status=terminal,
        execution_status=execution,
        execution_error_type=err,
        provider_duplicate=dup,
        refused_repeat=refused,
    )


def fail(tool: str = TOOL, err: str = ERR, n: int = 1, **kw: object) -> list[Observation]:
    """``n`` eligible failures (terminal error, execution error) of ``(tool, err)``."""
    return [obs(tool, "error", "error", err, **kw) for _ in range(n)]  # type: ignore[arg-type]


def ok(tool: str = "read_file", n: int = 1) -> list[Observation]:
    """``n`` successful calls of ``tool``."""
    return [obs(tool, "success", "success", None) for _ in range(n)]


def one(**kw: object) -> list[Observation]:
    return [obs(**kw)]  # type: ignore[arg-type]


def inp(
    mode: GuardMode,
    observations: list[Observation],
    *,
    complete: bool = True,
    external: bool = False,
    queued: bool = False,
    reliable: bool = True,
) -> GuardInput:
    return GuardInput(
        mode=mode,
        batch=Batch(complete=complete, observations=observations),
        has_external_input=external,
        has_queued_prompt=queued,
        input_reliable=reliable,
    )


def step(
    state: GuardState, mode: GuardMode, observations: list[Observation], **flags: bool
) -> GuardDecision:
    return reduce(state, inp(mode, observations, **flags))


def run(
    mode: GuardMode, *batches: list[Observation], state: GuardState | None = None
) -> list[GuardDecision]:
    """Fold ``reduce`` over complete, reliable batches; return every decision."""
    state = state or GuardState()
    decisions = []
    for observations in batches:
        decision = step(state, mode, observations)
        decisions.append(decision)
        state = decision.state
    return decisions


def kinds(decisions: list[GuardDecision]) -> list[DecisionKind]:
    return [d.kind for d in decisions]


def tracking(
    failures: int = 4,
    batches: int = 1,
    *,
    ordinal: int = 1,
    disabled: bool = False,
    key: FailureKey = KEY,
) -> GuardState:
    return GuardState(
        phase=TRACKING,
        key=key,
        failure_count=failures,
        batch_count=batches,
        candidate_ordinal=ordinal,
        next_candidate_ordinal=ordinal + 1,
        enforcement_disabled=disabled,
    )


def warned(failures: int = 8, batches: int = 2, *, ordinal: int = 1, disabled: bool = False):
    return tracking(failures, batches, ordinal=ordinal, disabled=disabled).model_copy(
        update={"phase": WARNED}
    )


def latched(failures: int = 9, batches: int = 3, *, ordinal: int = 1) -> GuardState:
    return tracking(failures, batches, ordinal=ordinal).model_copy(update={"phase": LATCHED})


def assert_reset(
    decision: GuardDecision,
    reason: ResetReason,
    before: GuardState,
    *,
    disabled: bool | None = None,
) -> None:
    """A reset to idle that keeps the ordinal counter (and, unless told, the disable flag)."""
    if disabled is None:
        disabled = before.enforcement_disabled
    assert decision.kind is RESET
    assert decision.reason is reason
    assert decision.state == GuardState(
        next_candidate_ordinal=before.next_candidate_ordinal, enforcement_disabled=disabled
    )


# Observations that, on their own, produce each ineligible reason.
INELIGIBLE_OBS = {
    ResetReason.CONTRACT_VIOLATION: lambda: obs(terminal="success", execution="error"),
    ResetReason.CANCELLED: lambda: obs(terminal="cancelled", execution="error"),
    ResetReason.UNKNOWN: lambda: obs(execution=None),
    ResetReason.NOT_STARTED: lambda: obs(execution="not_started", err="execution_denied"),
    ResetReason.POST_EXECUTION_FAILURE: lambda: obs(execution="success"),
}
PRECEDENCE = [
    ResetReason.CONTRACT_VIOLATION,
    ResetReason.CANCELLED,
    ResetReason.UNKNOWN,
    ResetReason.NOT_STARTED,
    ResetReason.POST_EXECUTION_FAILURE,
]
DISABLING = {ResetReason.CONTRACT_VIOLATION, ResetReason.UNKNOWN}
