"""Unit tests for the exact semantics workflows/seed/guard.py adds to the seed's bullets (those are
in test_guard.py): modes, reset reasons and their precedence, input-boundary order, candidate
ordinals, enforcement downgrade, fail-open on unseen values, idle no-ops, refused repeats and
duplicates, the latched phase, and the data-minimized telemetry record.
"""

from __future__ import annotations

import itertools

import pytest

from tests.workflows.seed.guard_builders import (
    DISABLING,
    ENFORCE,
    ERR,
    IDLE,
    INELIGIBLE_OBS,
    LATCHED,
    NONE,
    OFF,
    PRECEDENCE,
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
    latched,
    obs,
    ok,
    one,
    run,
    step,
    tracking,
    warned,
)
from workflows.seed.guard import (
    DecisionKind,
    GuardDecision,
    GuardMode,
    GuardState,
    Observation,
    ResetReason,
    batch_count_bucket,
    failure_count_bucket,
    telemetry_record,
)

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
