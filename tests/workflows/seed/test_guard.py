"""Unit tests for the repeated tool execution failure guard (workflows/seed/guard.py, seed 000).

One test (or parametrized test) per bullet of the seed's "Automated unit tests for the pure
reducer" list, named after the bullet; the exact semantics workflows/seed/guard.py adds are
in test_guard_semantics.py.
"""

from __future__ import annotations

import itertools

import pytest

from tests.workflows.seed.guard_builders import (
    ENFORCE,
    ERR,
    IDLE,
    KEY,
    LATCHED,
    NONE,
    OFF,
    RESET,
    SHADOW,
    STOP,
    TOOL,
    TRACKED,
    TRACKING,
    WARN,
    WARN_KIND,
    WARNED,
    WOULD_STOP,
    WOULD_WARN,
    assert_reset,
    fail,
    kinds,
    obs,
    ok,
    one,
    run,
    step,
    tracking,
    warned,
)
from workflows.seed.guard import (
    REPEATED_TOOL_FAILURE_BATCH_THRESHOLD,
    REPEATED_TOOL_FAILURE_REMINDER,
    REPEATED_TOOL_FAILURE_STOP_MESSAGE,
    REPEATED_TOOL_FAILURE_THRESHOLD,
    DecisionKind,
    FailureKey,
    GuardMode,
    GuardState,
    ResetReason,
    parse_guard_mode,
)

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
