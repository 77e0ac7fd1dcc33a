"""Unit tests for the repeated tool execution failure guard (workflows/seed/guard.py, seed 000).

One test (or parametrized test) per bullet of the seed's "Automated unit tests for the pure
reducer" list, named after the bullet, plus the exact semantics workflows/seed/guard.py adds: modes,
reset reasons and their precedence, input-boundary order, candidate ordinals, enforcement
downgrade, fail-open on unseen values, and the data-minimized telemetry record.
"""

from __future__ import annotations

import itertools

import pytest

from workflows.seed.guard import (
    REPEATED_TOOL_FAILURE_BATCH_THRESHOLD,
    REPEATED_TOOL_FAILURE_REMINDER,
    REPEATED_TOOL_FAILURE_STOP_MESSAGE,
    REPEATED_TOOL_FAILURE_THRESHOLD,
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
    batch_count_bucket,
    failure_count_bucket,
    parse_guard_mode,
    reduce,
    telemetry_record,
)

# --- builders ----------------------------------------------------------------------------

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


# --- constants and parse_guard_mode ------------------------------------------------------


def test_thresholds_are_fixed() -> None:
    assert REPEATED_TOOL_FAILURE_THRESHOLD == 8
    assert REPEATED_TOOL_FAILURE_BATCH_THRESHOLD == 2


@pytest.mark.parametrize(
    "value, expected",
    [
        ("off", OFF),
        ("shadow", SHADOW),
        ("warn", WARN),
        ("enforce", ENFORCE),
        ("  Enforce\n", ENFORCE),
        ("SHADOW", SHADOW),
        ("\tWaRn ", WARN),
        (GuardMode.OFF, OFF),
        (None, None),
        ("", None),
        ("   ", None),
        ("enforced", None),
        ("on", None),
        ("true", None),
        ("1", None),
        ("warn,enforce", None),
        ("sha dow", None),
    ],
)
def test_parse_guard_mode(value: str | None, expected: GuardMode | None) -> None:
    assert parse_guard_mode(value) is expected


# --- seed bullet: the full terminal/execution decision table ----------------------------

TERMINALS = ["success", "error", "cancelled"]
EXECUTIONS = [None, "unknown", "not_started", "success", "error", "cancelled", "paused"]

# (terminal, execution) -> (kind, reason, enforcement_disabled afterwards), for one
# observation of TOOL/ERR arriving while KEY is tracked (so a success of TOOL is visible).
DECISION_TABLE: dict[tuple[str, str | None], tuple[DecisionKind, ResetReason | None, bool]] = {
    ("success", None): (RESET, ResetReason.UNKNOWN, True),
    ("success", "unknown"): (RESET, ResetReason.UNKNOWN, True),
    ("success", "not_started"): (RESET, ResetReason.SUCCESS, False),
    ("success", "success"): (RESET, ResetReason.SUCCESS, False),
    ("success", "error"): (RESET, ResetReason.CONTRACT_VIOLATION, True),
    ("success", "cancelled"): (RESET, ResetReason.CONTRACT_VIOLATION, True),
    ("success", "paused"): (RESET, ResetReason.UNKNOWN, True),
    ("error", None): (RESET, ResetReason.UNKNOWN, True),
    ("error", "unknown"): (RESET, ResetReason.UNKNOWN, True),
    ("error", "not_started"): (RESET, ResetReason.NOT_STARTED, False),
    ("error", "success"): (RESET, ResetReason.POST_EXECUTION_FAILURE, False),
    ("error", "error"): (TRACKED, None, False),
    ("error", "cancelled"): (RESET, ResetReason.CANCELLED, False),
    ("error", "paused"): (RESET, ResetReason.UNKNOWN, True),
    **{("cancelled", e): (RESET, ResetReason.CANCELLED, False) for e in EXECUTIONS},
}


def test_decision_table_is_exhaustive() -> None:
    assert set(DECISION_TABLE) == set(itertools.product(TERMINALS, EXECUTIONS))


@pytest.mark.parametrize(
    "terminal, execution",
    list(itertools.product(TERMINALS, EXECUTIONS)),
    ids=lambda v: str(v),
)
def test_full_terminal_execution_decision_table(terminal: str, execution: str | None) -> None:
    kind, reason, disabled = DECISION_TABLE[(terminal, execution)]
    before = tracking(4, 1, ordinal=1)
    decision = step(before, ENFORCE, one(terminal=terminal, execution=execution))
    assert decision.kind is kind
    assert decision.reason is reason
    assert decision.state.enforcement_disabled is disabled
    if kind is RESET:
        assert_reset(decision, reason, before, disabled=disabled)  # type: ignore[arg-type]
    else:
        assert decision.state == before.model_copy(update={"failure_count": 5, "batch_count": 2})


@pytest.mark.parametrize("terminal", ["paused", "timed_out", "", "ERROR"])
@pytest.mark.parametrize("execution", EXECUTIONS)
def test_unseen_terminal_status_is_never_counted(terminal: str, execution: str | None) -> None:
    before = tracking(7, 1)
    decision = step(before, ENFORCE, one(terminal=terminal, execution=execution))
    assert decision.kind is RESET
    assert decision.state.phase is IDLE
    if execution in (None, "unknown", "error", "paused"):
        # An eligible failure needs terminal status error; anything else fails open.
        assert decision.reason is ResetReason.UNKNOWN
        assert decision.state.enforcement_disabled is True


# --- seed bullets: thresholds -------------------------------------------------------------


@pytest.mark.parametrize("n", [8, 9, 20])
def test_eight_failures_in_one_batch_do_not_warn(n: int) -> None:
    for mode in (SHADOW, WARN, ENFORCE):
        decision = step(GuardState(), mode, fail(n=n))
        assert decision.kind is TRACKED
        assert decision.state.phase is TRACKING
        assert decision.state.failure_count == n
        assert decision.state.batch_count == 1
        # The very next matching batch (even a single failure) warns.
        follow = step(decision.state, mode, fail(n=1))
        assert follow.kind is (WOULD_WARN if mode is SHADOW else WARN_KIND)
        assert follow.state.phase is WARNED
        assert follow.state.failure_count == n + 1
        assert follow.state.batch_count == 2


@pytest.mark.parametrize(
    "sizes, expected",
    [
        ((4, 4), [TRACKED, WARN_KIND]),
        ((7, 1), [TRACKED, WARN_KIND]),
        ((1, 7), [TRACKED, WARN_KIND]),
        ((3, 4), [TRACKED, TRACKED]),
        ((3, 4, 1), [TRACKED, TRACKED, WARN_KIND]),
        ((1, 1, 1, 1, 1, 1, 1, 1), [TRACKED] * 7 + [WARN_KIND]),
    ],
)
def test_eight_failures_across_two_batches_warn(
    sizes: tuple[int, ...], expected: list[DecisionKind]
) -> None:
    decisions = run(WARN, *[fail(n=n) for n in sizes])
    assert kinds(decisions) == expected
    last = decisions[-1].state
    assert last.failure_count == sum(sizes)
    assert last.batch_count == len(sizes)
    assert last.phase is (WARNED if expected[-1] is WARN_KIND else TRACKING)
    assert last.key == KEY


def test_next_matching_batch_stops_only_after_it_settles() -> None:
    before = warned(8, 2)
    # A matching batch that has not provably settled never stops; it resets.
    unsettled = step(before, ENFORCE, fail(n=3), complete=False)
    assert_reset(unsettled, ResetReason.INCOMPLETE, before)
    # The settled matching batch stops, and its whole batch is recorded in the counts.
    settled = step(before, ENFORCE, fail(n=3) + ok("read_file", 2))
    assert settled.kind is STOP
    assert settled.state.phase is LATCHED
    assert settled.state.failure_count == 11
    assert settled.state.batch_count == 3
    assert settled.state.key == KEY
    # The warning itself never stops: the stop needs a later matching batch.
    decisions = run(ENFORCE, fail(n=4), fail(n=4))
    assert kinds(decisions) == [TRACKED, WARN_KIND]
    assert decisions[-1].state.phase is WARNED


# --- seed bullet: resets ----------------------------------------------------------------

START_STATES = pytest.mark.parametrize(
    "before", [tracking(4, 1, ordinal=2), warned(9, 2, ordinal=3)], ids=["tracking", "warned"]
)


@START_STATES
def test_reset_on_same_tool_success(before: GuardState) -> None:
    assert_reset(step(before, ENFORCE, ok(TOOL)), ResetReason.SUCCESS, before)
    # A success clears every failure classification of that tool in the same batch.
    mixed_in = step(before, ENFORCE, fail(n=4) + fail(TOOL, "execution_timeout") + ok(TOOL))
    assert_reset(mixed_in, ResetReason.SUCCESS, before)
    # execution not_started under terminal success is also a success of the tool.
    assert_reset(
        step(before, ENFORCE, one(terminal="success", execution="not_started", err=None)),
        ResetReason.SUCCESS,
        before,
    )
    # After the reset the same key starts a fresh streak instead of stopping.
    again = step(mixed_in.state, ENFORCE, fail(n=8))
    assert again.kind is TRACKED
    assert again.state.batch_count == 1
    assert again.state.candidate_ordinal == before.next_candidate_ordinal


@START_STATES
def test_reset_on_cancellation(before: GuardState) -> None:
    # User/parent cancellation wins arbitration even when execution reported an error.
    for execution in ("error", "cancelled", None):
        decision = step(before, ENFORCE, fail(n=4) + one(terminal="cancelled", execution=execution))
        assert_reset(decision, ResetReason.CANCELLED, before)
    # Execution cancelled under terminal error is a cancellation too.
    decision = step(before, ENFORCE, fail(n=4) + one(terminal="error", execution="cancelled"))
    assert_reset(decision, ResetReason.CANCELLED, before)


@START_STATES
def test_reset_on_not_started(before: GuardState) -> None:
    for err in ("execution_denied", "invalid_tool_params", None):
        decision = step(before, ENFORCE, fail(n=4) + one(execution="not_started", err=err))
        assert_reset(decision, ResetReason.NOT_STARTED, before)


@START_STATES
def test_reset_on_unknown(before: GuardState) -> None:
    for bad in (
        one(execution=None),
        one(execution="unknown"),
        one(err=None),
        one(err="unknown"),
        one(tool=None),
    ):
        decision = step(before, ENFORCE, fail(n=4) + bad)
        assert_reset(decision, ResetReason.UNKNOWN, before, disabled=True)


@START_STATES
def test_reset_on_post_processing_failure(before: GuardState) -> None:
    decision = step(before, ENFORCE, fail(n=4) + one(execution="success", err="unknown"))
    assert_reset(decision, ResetReason.POST_EXECUTION_FAILURE, before, disabled=False)


@START_STATES
def test_reset_on_mixed_failure_keys(before: GuardState) -> None:
    same_tool = fail(n=4) + fail(TOOL, "execution_timeout")
    assert_reset(step(before, ENFORCE, same_tool), ResetReason.MIXED, before)
    same_error = fail(n=4) + fail("grep", ERR)
    assert_reset(step(before, ENFORCE, same_error), ResetReason.MIXED, before)
    two_new_keys = fail("grep", "grep_execution_error") + fail("glob", "glob_execution_error")
    assert_reset(step(before, ENFORCE, two_new_keys), ResetReason.MIXED, before)


def test_other_key_cleared_by_its_own_success_is_not_mixed() -> None:
    before = tracking(4, 1)
    decision = step(before, WARN, fail(n=4) + fail("grep", "grep_execution_error") + ok("grep"))
    assert decision.kind is WARN_KIND
    assert decision.state.failure_count == 8
    assert decision.state.key == KEY


@START_STATES
def test_reset_on_incomplete_batch(before: GuardState) -> None:
    decision = step(before, ENFORCE, fail(n=8), complete=False)
    assert_reset(decision, ResetReason.INCOMPLETE, before)


@START_STATES
def test_reset_on_unreliable_drain(before: GuardState) -> None:
    decision = step(before, ENFORCE, fail(n=8), reliable=False)
    assert_reset(decision, ResetReason.UNRELIABLE_INPUT, before, disabled=True)


@START_STATES
def test_reset_on_queued_prompt(before: GuardState) -> None:
    decision = step(before, ENFORCE, fail(n=8), queued=True)
    assert_reset(decision, ResetReason.QUEUED_PROMPT, before, disabled=False)


@START_STATES
def test_reset_on_new_input(before: GuardState) -> None:
    decision = step(before, ENFORCE, fail(n=8), external=True)
    assert_reset(decision, ResetReason.EXTERNAL_INPUT, before, disabled=False)


# --- seed bullets: other tools' successes, duplicates, new keys -------------------------


def test_successes_from_other_tools_ignored_within_matching_failure_batch() -> None:
    decisions = run(
        ENFORCE,
        fail(n=4) + ok("read_file"),
        ok("edit") + fail(n=4) + ok("read_file", 3),
        fail(n=1) + ok("ls"),
    )
    assert kinds(decisions) == [TRACKED, WARN_KIND, STOP]
    assert [d.state.failure_count for d in decisions] == [4, 8, 9]
    assert [d.state.batch_count for d in decisions] == [1, 2, 3]


def test_successes_from_other_tools_ignored_in_intervening_batches() -> None:
    decisions = run(
        ENFORCE,
        fail(n=4),
        ok("read_file"),
        fail(n=4),
        ok("read_file", 2) + ok("edit"),
        ok("ls"),
        fail(n=1),
    )
    assert kinds(decisions) == [TRACKED, NONE, WARN_KIND, NONE, NONE, STOP]
    for previous, current in itertools.pairwise(decisions):
        if current.kind is NONE:
            assert current.state == previous.state
    assert decisions[-1].state.failure_count == 9
    assert decisions[-1].state.batch_count == 3


def test_duplicate_provider_events_ignored_not_counted_or_reset() -> None:
    before = tracking(4, 1)
    # Duplicates of failing calls are not counted.
    decision = step(before, WARN, fail(n=3) + fail(n=5, dup=True))
    assert decision.kind is TRACKED
    assert decision.state.failure_count == 7
    assert decision.state.batch_count == 2
    # Duplicates that would otherwise reset (success, cancel, unknown, other key) do not.
    resetting_dups = [
        obs(TOOL, "success", "success", None, dup=True),
        obs(terminal="cancelled", execution="cancelled", dup=True),
        obs(execution=None, dup=True),
        obs(terminal="success", execution="error", dup=True),
        obs("grep", err="grep_execution_error", dup=True),
    ]
    decision = step(before, WARN, fail(n=4) + resetting_dups)
    assert decision.kind is WARN_KIND
    assert decision.state.failure_count == 8
    assert decision.state.enforcement_disabled is False
    # A batch of only duplicates changes nothing, even after a warning.
    for start in (before, warned()):
        only_dups = step(start, ENFORCE, resetting_dups + fail(n=3, dup=True))
        assert only_dups.kind is NONE
        assert only_dups.state == start


def test_new_key_starts_new_streak() -> None:
    other = FailureKey(policy_tool_name=TOOL, execution_error_type="execution_timeout")
    for before in (tracking(6, 1, ordinal=2), warned(9, 2, ordinal=2)):
        decision = step(before, ENFORCE, fail(TOOL, "execution_timeout", n=3))
        assert decision.kind is TRACKED
        assert decision.reason is None
        assert decision.state == GuardState(
            phase=TRACKING,
            key=other,
            failure_count=3,
            batch_count=1,
            candidate_ordinal=3,
            next_candidate_ordinal=4,
        )
    # A new streak after a warning must warn again before it can stop.
    decisions = run(
        ENFORCE,
        fail(n=4),
        fail(n=4),
        fail("grep", "grep_execution_error", n=8),
        fail("grep", "grep_execution_error"),
    )
    assert kinds(decisions) == [TRACKED, WARN_KIND, TRACKED, WARN_KIND]
    assert [d.state.candidate_ordinal for d in decisions] == [1, 1, 2, 2]


# --- seed bullet: fixed text ------------------------------------------------------------

TOOL_ERROR_TYPES = [
    "invalid_tool_params",
    "unknown",
    "unhandled_exception",
    "tool_not_registered",
    "execution_failed",
    "execution_denied",
    "file_not_found",
    "file_write_failure",
    "read_content_failure",
    "attempt_to_create_existing_file",
    "file_too_large",
    "permission_denied",
    "no_space_left",
    "target_is_directory",
    "path_not_in_workspace",
    "search_path_not_found",
    "edit_no_occurrence_found",
    "edit_expected_occurrence_mismatch",
    "edit_no_change",
    "glob_execution_error",
    "grep_execution_error",
    "ls_execution_error",
    "mcp_tool_error",
    "shell_execute_error",
    "execution_timeout",
    "output_truncated",
]


def test_warning_and_stop_text_fixed_and_contain_no_tool_data() -> None:
    assert REPEATED_TOOL_FAILURE_REMINDER == (
        "System: the same tool execution has failed repeatedly for the same classified reason."
        " Do not repeat the same approach. Inspect the returned result, change the approach or"
        " required preconditions, or explain the blocker."
    )
    assert REPEATED_TOOL_FAILURE_STOP_MESSAGE == (
        "System: Automatic continuation stopped because the same tool execution failure"
        " continued after a corrective reminder. New user input is required to continue."
    )
    forbidden = [
        *TOOL_ERROR_TYPES,
        "read_file",
        "write_file",
        "mcp__",
        "shell",
        "grep",
        "glob",
        "/",
        "\\",
        "{",
        "}",
        "%s",
        "native",
        "mcp",
        "Error",
        "Exception",
        "Traceback",
    ]
    for text in (REPEATED_TOOL_FAILURE_REMINDER, REPEATED_TOOL_FAILURE_STOP_MESSAGE):
        assert text.startswith("System: ")
        assert "\n" not in text
        for word in forbidden:
            assert word not in text, word


# --- seed bullet: unsupported outcome combinations never enforce -----------------------

UNSUPPORTED = {
    "success/error": lambda: one(terminal="success", execution="error"),
    "success/cancelled": lambda: one(terminal="success", execution="cancelled"),
    "missing execution": lambda: one(execution=None),
    "unknown execution": lambda: one(execution="unknown"),
    "unseen execution": lambda: one(execution="paused"),
    "unseen execution on success": lambda: one(terminal="success", execution="timed_out"),
    "missing tool": lambda: one(tool=None),
    "missing tool on success": lambda: one(tool=None, terminal="success", execution="success"),
    "missing error type": lambda: one(err=None),
    "unknown error type": lambda: one(err="unknown"),
}


@pytest.mark.parametrize("name", list(UNSUPPORTED))
def test_unsupported_outcome_combinations_never_enforce(name: str) -> None:
    decisions = run(
        ENFORCE,
        fail(n=4),
        UNSUPPORTED[name](),
        fail(n=4),
        fail(n=4),
        fail(n=1),
        fail(n=30),
    )
    assert kinds(decisions) == [TRACKED, RESET, TRACKED, WARN_KIND, WOULD_STOP, NONE]
    assert decisions[1].state.enforcement_disabled is True
    assert all(d.state.enforcement_disabled for d in decisions[1:])
    assert decisions[4].state.phase is LATCHED
    assert STOP not in kinds(decisions)


# --- modes --------------------------------------------------------------------------------


def test_mode_off_never_reduces() -> None:
    for start in (GuardState(), tracking(7, 1), warned(), tracking(4, 1, disabled=True)):
        state = start
        for _ in range(20):
            decision = step(state, OFF, fail(n=1))
            assert decision.kind is NONE
            assert decision.reason is None
            assert decision.state == start
            state = decision.state
        # Off ignores boundaries and ineligible outcomes too.
        for flags in ({"reliable": False}, {"external": True}, {"complete": False}):
            assert step(start, OFF, fail(n=20), **flags) == GuardDecision(kind=NONE, state=start)
        for bad in (ok(TOOL), one(execution=None), one(terminal="success", execution="error")):
            assert step(start, OFF, bad) == GuardDecision(kind=NONE, state=start)
    # Twenty failures in off across batches leave a fresh guard untouched.
    assert all(d.kind is NONE and d.state == GuardState() for d in run(OFF, *[fail(n=4)] * 5))


@pytest.mark.parametrize(
    "mode, warn_kind, stop_kind",
    [(SHADOW, WOULD_WARN, WOULD_STOP), (WARN, WARN_KIND, WOULD_STOP), (ENFORCE, WARN_KIND, STOP)],
)
def test_mode_decisions(mode: GuardMode, warn_kind: DecisionKind, stop_kind: DecisionKind) -> None:
    decisions = run(mode, fail(n=4), fail(n=4), fail(n=1), fail(n=5), ok(TOOL))
    assert kinds(decisions) == [TRACKED, warn_kind, stop_kind, NONE, NONE]
    assert [d.state.phase for d in decisions] == [TRACKING, WARNED, LATCHED, LATCHED, LATCHED]
    assert all(d.reason is None for d in decisions)


def test_mode_can_change_between_batches() -> None:
    # Shadow advances a virtual warned state; a later enforce batch acts on it.
    first = step(tracking(4, 1), SHADOW, fail(n=4))
    assert first.kind is WOULD_WARN
    assert step(first.state, ENFORCE, fail()).kind is STOP
    assert step(first.state, WARN, fail()).kind is WOULD_STOP
    assert step(first.state, SHADOW, fail()).kind is WOULD_STOP


# --- reset reasons and precedence -----------------------------------------------------

RESET_SCENARIOS: dict[ResetReason, tuple[dict[str, bool], object]] = {
    ResetReason.SUCCESS: ({}, lambda: ok(TOOL)),
    ResetReason.MIXED: ({}, lambda: fail() + fail(TOOL, "execution_timeout")),
    ResetReason.INCOMPLETE: ({"complete": False}, fail),
    ResetReason.EXTERNAL_INPUT: ({"external": True}, fail),
    ResetReason.QUEUED_PROMPT: ({"queued": True}, fail),
    ResetReason.UNRELIABLE_INPUT: ({"reliable": False}, fail),
    **{r: ({}, lambda r=r: [INELIGIBLE_OBS[r]()]) for r in PRECEDENCE},
}


def reset_scenario(reason: ResetReason) -> tuple[dict[str, bool], list[Observation]]:
    flags, make = RESET_SCENARIOS[reason]
    return flags, make()  # type: ignore[operator]


def test_every_reset_reason_has_a_scenario() -> None:
    assert len(ResetReason) == 11
    assert set(RESET_SCENARIOS) == set(ResetReason)


@pytest.mark.parametrize("reason", list(ResetReason))
def test_every_reset_reason_is_produced(reason: ResetReason) -> None:
    flags, observations = reset_scenario(reason)
    before = tracking(5, 1, ordinal=4)
    decision = step(before, SHADOW, observations, **flags)
    disabled = reason in DISABLING or reason is ResetReason.UNRELIABLE_INPUT
    assert_reset(decision, reason, before, disabled=disabled)


@pytest.mark.parametrize(
    "higher, lower",
    list(itertools.combinations(PRECEDENCE, 2)),
    ids=lambda r: r.value,
)
def test_ineligible_precedence_pairs(higher: ResetReason, lower: ResetReason) -> None:
    before = tracking(4, 1)
    for order in ((higher, lower), (lower, higher)):
        batch = fail(n=2) + [INELIGIBLE_OBS[r]() for r in order]
        decision = step(before, ENFORCE, batch)
        disabled = bool(set(order) & DISABLING)
        assert_reset(decision, higher, before, disabled=disabled)


def test_ineligible_precedence_adjacent_pairs_are_ordered() -> None:
    assert PRECEDENCE == [
        ResetReason.CONTRACT_VIOLATION,
        ResetReason.CANCELLED,
        ResetReason.UNKNOWN,
        ResetReason.NOT_STARTED,
        ResetReason.POST_EXECUTION_FAILURE,
    ]
    before = tracking(4, 1)
    for higher, lower in itertools.pairwise(PRECEDENCE):
        decision = step(before, ENFORCE, [INELIGIBLE_OBS[lower](), INELIGIBLE_OBS[higher]()])
        assert decision.reason is higher


@pytest.mark.parametrize("rotation", range(len(PRECEDENCE)))
def test_ineligible_precedence_full_set(rotation: int) -> None:
    order = PRECEDENCE[rotation:] + PRECEDENCE[:rotation]
    before = tracking(4, 1)
    batch = fail(n=2) + ok(TOOL) + [INELIGIBLE_OBS[r]() for r in order]
    assert_reset(
        step(before, ENFORCE, batch), ResetReason.CONTRACT_VIOLATION, before, disabled=True
    )
    # Without the contract violation, cancellation wins, and so on down the list.
    for i, expected in enumerate(PRECEDENCE):
        rest = [INELIGIBLE_OBS[r]() for r in order if PRECEDENCE.index(r) >= i]
        decision = step(before, ENFORCE, fail(n=2) + rest)
        assert decision.reason is expected


def test_cancellation_with_unknown_still_disables_enforcement() -> None:
    before = tracking(4, 1)
    decision = step(before, ENFORCE, [INELIGIBLE_OBS[r]() for r in PRECEDENCE[1:]])
    assert_reset(decision, ResetReason.CANCELLED, before, disabled=True)
    decision = step(before, ENFORCE, [INELIGIBLE_OBS[r]() for r in (ResetReason.CANCELLED,)])
    assert_reset(decision, ResetReason.CANCELLED, before, disabled=False)


BOUNDARY_ORDER = ["reliable", "external", "queued", "complete"]
BOUNDARY_REASON = {
    "reliable": ResetReason.UNRELIABLE_INPUT,
    "external": ResetReason.EXTERNAL_INPUT,
    "queued": ResetReason.QUEUED_PROMPT,
    "complete": ResetReason.INCOMPLETE,
}


@pytest.mark.parametrize(
    "active",
    [combo for n in range(1, 5) for combo in itertools.combinations(BOUNDARY_ORDER, n)],
    ids=lambda c: "+".join(c),
)
def test_input_boundary_order(active: tuple[str, ...]) -> None:
    flags = {
        "reliable": "reliable" not in active,
        "external": "external" in active,
        "queued": "queued" in active,
        "complete": "complete" not in active,
    }
    expected = BOUNDARY_REASON[active[0]]
    before = warned(9, 2)
    # The batch itself would be a contract violation; the boundary is checked first, so
    # only an unreliable drain disables enforcement.
    batch = fail(n=4) + one(terminal="success", execution="error")
    decision = step(before, ENFORCE, batch, **flags)
    assert_reset(decision, expected, before, disabled="reliable" in active)


# --- candidate ordinals ---------------------------------------------------------------


def test_candidate_ordinal_reused_while_key_active() -> None:
    decisions = run(ENFORCE, fail(n=2), fail(n=2), ok("ls"), fail(n=4), fail(n=1))
    assert kinds(decisions) == [TRACKED, TRACKED, NONE, WARN_KIND, STOP]
    assert [d.state.candidate_ordinal for d in decisions] == [1, 1, 1, 1, 1]
    assert [d.state.next_candidate_ordinal for d in decisions] == [2, 2, 2, 2, 2]


def test_candidate_ordinal_fresh_after_reset_and_key_change() -> None:
    decisions = run(
        WARN,
        fail(n=2),  # tracked, ordinal 1
        one(execution="not_started"),  # reset
        fail(n=2),  # same key again: ordinal 2
        fail(TOOL, "execution_timeout"),  # key change: ordinal 3
        fail(TOOL, "execution_timeout"),  # same key: ordinal 3
        fail(),  # back to the first key: ordinal 4
        [],  # nothing: none
        ok(TOOL),  # reset success
        ok(TOOL),  # idle, nothing changes: none
        fail(),  # ordinal 5
    )
    assert kinds(decisions) == [
        TRACKED,
        RESET,
        TRACKED,
        TRACKED,
        TRACKED,
        TRACKED,
        NONE,
        RESET,
        NONE,
        TRACKED,
    ]
    assert [d.state.candidate_ordinal for d in decisions] == [1, 0, 2, 3, 3, 4, 4, 0, 0, 5]
    assert [d.state.next_candidate_ordinal for d in decisions] == [2, 2, 3, 4, 4, 5, 5, 5, 5, 6]


@pytest.mark.parametrize("reason", list(ResetReason))
def test_resets_keep_next_candidate_ordinal(reason: ResetReason) -> None:
    flags, observations = reset_scenario(reason)
    before = warned(9, 2, ordinal=41)
    decision = step(before, WARN, observations, **flags)
    assert decision.kind is RESET
    assert decision.state.next_candidate_ordinal == 42
    follow = step(decision.state, WARN, fail())
    assert follow.state.candidate_ordinal == 42
    assert follow.state.next_candidate_ordinal == 43


# --- enforcement downgrade and fail-open -------------------------------------------------


def test_enforcement_disabled_downgrades_enforce_to_warn() -> None:
    state = GuardState()
    unreliable = step(state, ENFORCE, fail(n=4), reliable=False)
    assert_reset(unreliable, ResetReason.UNRELIABLE_INPUT, state, disabled=True)
    decisions = run(
        ENFORCE,
        fail(n=4),
        [],  # none
        fail(n=4),
        state=unreliable.state,
    )
    assert kinds(decisions) == [TRACKED, NONE, WARN_KIND]
    # Later resets keep the flag.
    reset = step(decisions[-1].state, ENFORCE, fail(), external=True)
    assert_reset(reset, ResetReason.EXTERNAL_INPUT, decisions[-1].state, disabled=True)
    reset = step(tracking(3, 1, disabled=True), ENFORCE, ok(TOOL))
    assert reset.state.enforcement_disabled is True
    later = run(ENFORCE, fail(n=4), fail(n=4), fail(), state=reset.state)
    assert kinds(later) == [TRACKED, WARN_KIND, WOULD_STOP]
    assert all(d.state.enforcement_disabled for d in later)
    # A new key also keeps it.
    new_key = step(warned(disabled=True), ENFORCE, fail("grep", "grep_execution_error"))
    assert new_key.state.enforcement_disabled is True


def test_enforcement_disabled_does_not_change_shadow_or_warn() -> None:
    for mode, expected in ((SHADOW, WOULD_WARN), (WARN, WARN_KIND), (ENFORCE, WARN_KIND)):
        assert step(tracking(4, 1, disabled=True), mode, fail(n=4)).kind is expected
        assert step(warned(disabled=True), mode, fail()).kind is WOULD_STOP


@pytest.mark.parametrize("terminal", ["error", "success"])
@pytest.mark.parametrize("execution", ["paused", "timed_out", "", "ERROR", "Success"])
def test_unseen_execution_status_fails_open(terminal: str, execution: str) -> None:
    before = tracking(6, 1)
    decision = step(before, ENFORCE, fail(n=2) + one(terminal=terminal, execution=execution))
    assert_reset(decision, ResetReason.UNKNOWN, before, disabled=True)
    later = run(ENFORCE, fail(n=4), fail(n=4), fail(), state=decision.state)
    assert kinds(later) == [TRACKED, WARN_KIND, WOULD_STOP]


@pytest.mark.parametrize(
    "tool, err",
    [(None, ERR), ("", ERR), (TOOL, None), (TOOL, ""), (TOOL, "unknown"), (None, None)],
)
def test_missing_identity_or_error_type_is_unknown(tool: str | None, err: str | None) -> None:
    before = tracking(6, 1)
    decision = step(before, ENFORCE, one(tool=tool, err=err))
    assert_reset(decision, ResetReason.UNKNOWN, before, disabled=True)


@pytest.mark.parametrize("tool, err", [("   ", ERR), (TOOL, "  "), ("\t", "\n")])
def test_blank_identity_or_error_type_is_unknown(tool: str, err: str) -> None:
    # Seed, "Identity and eligibility": "Unknown tools, blank identities, unclassified
    # errors ... are not eligible"; eligibility needs a non-empty structured error type.
    before = tracking(6, 1)
    decision = step(before, ENFORCE, one(tool=tool, err=err))
    assert_reset(decision, ResetReason.UNKNOWN, before, disabled=True)


def test_success_without_tool_identity_is_unknown() -> None:
    before = tracking(6, 1)
    for tool in (None, ""):
        decision = step(before, ENFORCE, [obs(tool, "success", "success", None)])
        assert_reset(decision, ResetReason.UNKNOWN, before, disabled=True)


# --- idle no-ops, refused repeats, duplicates-only, latched ------------------------------

IDLE_NOOPS = {
    "external": ({"external": True}, fail),
    "queued": ({"queued": True}, fail),
    "incomplete": ({"complete": False}, fail),
    "cancelled": ({}, lambda: one(terminal="cancelled", execution="cancelled")),
    "not_started": ({}, lambda: one(execution="not_started")),
    "post_execution": ({}, lambda: one(execution="success")),
    "mixed": ({}, lambda: fail() + fail("grep", "grep_execution_error")),
    "same tool success": ({}, lambda: ok(TOOL)),
    "other success": ({}, lambda: ok("read_file")),
    "success clears failure": ({}, lambda: fail() + ok(TOOL)),
    "empty": ({}, list),
}


@pytest.mark.parametrize("name", list(IDLE_NOOPS))
@pytest.mark.parametrize(
    "before",
    [GuardState(), GuardState(next_candidate_ordinal=5, enforcement_disabled=True)],
    ids=["fresh", "disabled"],
)
def test_reset_from_idle_that_changes_nothing_is_none(name: str, before: GuardState) -> None:
    flags, make = IDLE_NOOPS[name]
    decision = step(before, ENFORCE, make(), **flags)
    assert decision.kind is NONE
    assert decision.reason is None
    assert decision.state == before


def test_disabling_reset_from_idle_reports_once() -> None:
    fresh = GuardState()
    for flags, observations in (
        ({"reliable": False}, fail()),
        ({}, one(execution=None)),
        ({}, one(terminal="success", execution="cancelled")),
    ):
        first = step(fresh, SHADOW, observations, **flags)
        assert first.kind is RESET
        assert first.state == GuardState(enforcement_disabled=True)
        second = step(first.state, SHADOW, observations, **flags)
        assert second.kind is NONE
        assert second.state == first.state


def test_refused_repeats_ignored_like_duplicates() -> None:
    before = tracking(4, 1)
    refused = [
        obs(execution="not_started", err="execution_denied", refused=True),
        obs(execution="not_started", err=None, refused=True),
        obs(refused=True),
    ]
    decision = step(before, WARN, fail(n=4) + refused)
    assert decision.kind is WARN_KIND
    assert decision.state.failure_count == 8
    assert decision.state.batch_count == 2
    decision = step(before, WARN, fail(n=3) + fail(n=9, refused=True))
    assert decision.kind is TRACKED
    assert decision.state.failure_count == 7
    for start in (GuardState(), before, warned()):
        only_refused = step(start, ENFORCE, refused)
        assert only_refused.kind is NONE
        assert only_refused.state == start


@pytest.mark.parametrize(
    "before", [GuardState(), tracking(5, 1), warned()], ids=["idle", "tracking", "warned"]
)
def test_batch_with_only_duplicates_is_none_and_state_unchanged(before: GuardState) -> None:
    dups = [
        *fail(n=8, dup=True),
        obs(TOOL, "success", "success", None, dup=True),
        obs(execution=None, dup=True),
        obs(terminal="cancelled", execution="cancelled", dup=True, refused=True),
    ]
    for mode in (SHADOW, WARN, ENFORCE):
        decision = step(before, mode, dups)
        assert decision == GuardDecision(kind=NONE, state=before)


@pytest.mark.parametrize("mode", list(GuardMode))
def test_latched_is_none_forever(mode: GuardMode) -> None:
    before = latched(ordinal=3)
    inputs: list[tuple[dict[str, bool], list[Observation]]] = [
        ({}, fail()),
        ({}, fail(n=20)),
        ({}, ok(TOOL)),
        ({}, fail("grep", "grep_execution_error")),
        ({}, fail() + fail("grep", "grep_execution_error")),
        ({}, one(execution=None)),
        ({}, one(terminal="success", execution="error")),
        ({"reliable": False}, fail()),
        ({"external": True}, fail()),
        ({"queued": True}, fail()),
        ({"complete": False}, fail()),
        ({}, []),
    ]
    for flags, observations in inputs:
        decision = step(before, mode, observations, **flags)
        assert decision.kind is NONE
        assert decision.reason is None
        assert decision.state == before


def test_latched_after_stop_stays_latched() -> None:
    decisions = run(
        ENFORCE, fail(n=4), fail(n=4), fail(), ok(TOOL), fail(), fail(TOOL, "execution_timeout")
    )
    assert kinds(decisions) == [TRACKED, WARN_KIND, STOP, NONE, NONE, NONE]
    assert all(d.state == decisions[2].state for d in decisions[2:])


# --- telemetry ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "count, bucket",
    [
        *[(-1, "0"), (0, "0"), (1, "1-2"), (2, "1-2"), (3, "3-4"), (4, "3-4")],
        *[(5, "5-7"), (6, "5-7"), (7, "5-7"), (8, "8+"), (9, "8+"), (1000, "8+")],
    ],
)
def test_failure_count_bucket(count: int, bucket: str) -> None:
    assert failure_count_bucket(count) == bucket


@pytest.mark.parametrize(
    "count, bucket", [(-1, "0"), (0, "0"), (1, "1"), (2, "2"), (3, "3+"), (4, "3+"), (99, "3+")]
)
def test_batch_count_bucket(count: int, bucket: str) -> None:
    assert batch_count_bucket(count) == bucket


def test_telemetry_none_for_off() -> None:
    for before in (GuardState(), tracking(7, 1), warned()):
        decision = step(before, OFF, fail(n=4))
        assert telemetry_record(before, OFF, decision) is None
    # Even a would-be transition computed elsewhere is not reported under off.
    before = tracking(4, 1)
    decision = step(before, WARN, fail(n=4))
    assert decision.kind is WARN_KIND
    assert telemetry_record(before, OFF, decision) is None


def test_telemetry_none_once_latched() -> None:
    before = latched()
    for mode in (SHADOW, WARN, ENFORCE):
        for flags in ({}, {"reliable": False}):
            decision = step(before, mode, fail(), **flags)
            assert telemetry_record(before, mode, decision) is None


def test_telemetry_none_for_idle_to_idle_unchanged() -> None:
    for before in (GuardState(), GuardState(next_candidate_ordinal=9, enforcement_disabled=True)):
        for flags, make in IDLE_NOOPS.values():
            decision = step(before, SHADOW, make(), **flags)
            assert telemetry_record(before, SHADOW, decision) is None


def test_telemetry_unreliable_from_idle_reported_once() -> None:
    before = GuardState()
    decision = step(before, SHADOW, fail(), reliable=False)
    record = telemetry_record(before, SHADOW, decision)
    assert record is not None
    assert record.decision is RESET
    assert record.reset_reason is ResetReason.UNRELIABLE_INPUT
    assert (record.phase_before, record.phase_after) == (IDLE, IDLE)
    again = step(decision.state, SHADOW, fail(), reliable=False)
    assert telemetry_record(decision.state, SHADOW, again) is None


def test_telemetry_record_for_tracked() -> None:
    before = GuardState(next_candidate_ordinal=3)
    decision = step(before, SHADOW, fail("mcp__srv__query", "mcp_tool_error", n=3, tool_type="mcp"))
    record = telemetry_record(before, SHADOW, decision)
    assert record is not None
    assert record.mode is SHADOW
    assert (record.phase_before, record.phase_after) == (IDLE, TRACKING)
    assert record.decision is TRACKED
    assert record.reset_reason is None
    assert (record.failure_count_bucket, record.batch_count_bucket) == ("3-4", "1")
    assert record.candidate_ordinal == 3
    assert record.tool_type == "mcp"
    assert (record.terminal_status, record.execution_status) == ("error", "error")
    assert record.execution_error_type == "mcp_tool_error"


def test_telemetry_record_for_warn_and_stop() -> None:
    before = tracking(5, 1, ordinal=2)
    warn = step(before, ENFORCE, fail(n=3))
    record = telemetry_record(before, ENFORCE, warn)
    assert record is not None
    assert record.decision is WARN_KIND
    assert (record.phase_before, record.phase_after) == (TRACKING, WARNED)
    assert (record.failure_count_bucket, record.batch_count_bucket) == ("8+", "2")
    assert record.candidate_ordinal == 2
    assert record.reset_reason is None
    assert record.execution_error_type == ERR

    stop = step(warn.state, ENFORCE, fail(n=1))
    record = telemetry_record(warn.state, ENFORCE, stop)
    assert record is not None
    assert record.decision is STOP
    assert (record.phase_before, record.phase_after) == (WARNED, LATCHED)
    assert (record.failure_count_bucket, record.batch_count_bucket) == ("8+", "3+")
    assert record.candidate_ordinal == 2

    would = step(warn.state, SHADOW, fail(n=1))
    record = telemetry_record(warn.state, SHADOW, would)
    assert record is not None
    assert record.decision is WOULD_STOP
    assert record.mode is SHADOW


def test_telemetry_reset_record_describes_ended_streak() -> None:
    before = warned(9, 2, ordinal=3)
    decision = step(before, WARN, ok(TOOL))
    record = telemetry_record(before, WARN, decision)
    assert record is not None
    assert record.decision is RESET
    assert record.reset_reason is ResetReason.SUCCESS
    assert (record.phase_before, record.phase_after) == (WARNED, IDLE)
    assert (record.failure_count_bucket, record.batch_count_bucket) == ("8+", "2")
    assert record.candidate_ordinal == 3
    assert record.tool_type is None
    assert record.terminal_status is None
    assert record.execution_status is None
    assert record.execution_error_type is None

    before = tracking(2, 1, ordinal=6)
    decision = step(before, WARN, fail(), queued=True)
    record = telemetry_record(before, WARN, decision)
    assert record is not None
    assert record.reset_reason is ResetReason.QUEUED_PROMPT
    assert (record.failure_count_bucket, record.batch_count_bucket) == ("1-2", "1")
    assert record.candidate_ordinal == 6


SENTINEL_TOOL = "zz_sentinel_tool_qx7"
SENTINEL_ERR = "zz_sentinel_error_qx7"
SENTINEL_ORDINAL = 4242


def test_metric_attributes_exclude_ordinal_error_type_and_tool_name() -> None:
    start = GuardState(next_candidate_ordinal=SENTINEL_ORDINAL)
    batches = [fail(SENTINEL_TOOL, SENTINEL_ERR, n=4)] * 2 + [fail(SENTINEL_TOOL, SENTINEL_ERR)]
    transitions = []
    state = start
    for observations in batches:
        decision = step(state, ENFORCE, observations)
        transitions.append((state, ENFORCE, decision))
        state = decision.state
    # and resets of a streak with the sentinel key
    streak = step(start, WARN, batches[0]).state
    transitions.append((streak, WARN, step(streak, WARN, ok(SENTINEL_TOOL))))
    transitions.append((streak, SHADOW, step(streak, SHADOW, one(execution=None))))
    assert [d.kind for _, _, d in transitions] == [TRACKED, WARN_KIND, STOP, RESET, RESET]

    required = {"mode", "phase_before", "phase_after", "decision", "reset_reason"}
    required |= {"failure_count_bucket", "batch_count_bucket", "tool_type"}
    for before, mode, decision in transitions:
        record = telemetry_record(before, mode, decision)
        assert record is not None
        assert record.candidate_ordinal == SENTINEL_ORDINAL
        attributes = record.metric_attributes()
        assert required <= set(attributes)
        assert "candidate_ordinal" not in attributes
        assert "execution_error_type" not in attributes
        for value in attributes.values():
            assert isinstance(value, str)
            assert SENTINEL_TOOL not in value
            assert SENTINEL_ERR not in value
            assert str(SENTINEL_ORDINAL) not in value
        # The tool name is never part of the record at all.
        assert SENTINEL_TOOL not in repr(record.model_dump())
