"""Property tests for the repeated tool execution failure guard.

Random sequences of settled batches are folded through :func:`workflows.seed.guard.reduce`; every
step is checked against the seed's shadow-phase "Required invariants" and workflows/seed/guard.py.
Eligibility is judged here by an independent oracle, not by the module's own classifier.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from workflows.seed.guard import (
    REPEATED_TOOL_FAILURE_BATCH_THRESHOLD,
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
    reduce,
    telemetry_record,
)

# --- builders and strategies -------------------------------------------------------------

TOOLS = ["shell", "read_file", "mcp__srv__query"]
ERRORS = ["execution_failed", "file_not_found"]
BAD_TOOLS = [None, "", "  "]
BAD_ERRORS = [None, "", " ", "unknown"]
TERMINALS = ["success", "error", "cancelled"]
EXECUTIONS = [None, "unknown", "not_started", "success", "error", "cancelled", "paused"]

HOT = object()  # placeholder for the sequence's hot tool / error type
# One of every kind of ineligible outcome (tool, terminal, execution, error type).
ODD_OUTCOMES = [
    (HOT, "cancelled", "error", HOT),  # cancellation wins arbitration
    (HOT, "cancelled", None, None),
    (HOT, "error", "cancelled", HOT),
    (HOT, "error", "not_started", "execution_denied"),  # permission / validation denial
    (HOT, "error", None, HOT),  # missing execution status
    (HOT, "error", "unknown", HOT),
    (HOT, "error", "paused", HOT),  # never-seen execution status
    (HOT, "timed_out", "error", HOT),  # never-seen terminal status
    (HOT, "error", "success", HOT),  # post-execution failure
    (HOT, "success", "error", None),  # contract violation
    (HOT, "success", "cancelled", None),  # contract violation
    (HOT, "success", None, None),
    (HOT, "success", "paused", None),
    (None, "error", "error", HOT),  # missing tool identity
    ("", "error", "error", HOT),
    ("  ", "error", "error", HOT),  # blank tool identity
    (None, "success", "success", None),  # success without identity
    (HOT, "error", "error", None),  # missing error type
    (HOT, "error", "error", ""),
    (HOT, "error", "error", " "),
    (HOT, "error", "error", "unknown"),  # unclassified error
]

COUNTING = {DecisionKind.TRACKED, DecisionKind.WOULD_WARN, DecisionKind.WARN}
COUNTING |= {DecisionKind.WOULD_STOP, DecisionKind.STOP}
WARNS = {DecisionKind.WARN, DecisionKind.WOULD_WARN}
STOPS = {DecisionKind.STOP, DecisionKind.WOULD_STOP}

_ids = itertools.count(1)


def obs(
    tool: str | None,
    terminal: str,
    execution: str | None,
    err: str | None,
    *,
    dup: bool = False,
    refused: bool = False,
) -> Observation:
    return Observation(
        call_id=f"c{next(_ids)}",
        policy_tool_name=tool,
        tool_type="mcp" if tool and tool.startswith("mcp__") else "native",
        terminal_status=terminal,
        execution_status=execution,
        execution_error_type=err,
        provider_duplicate=dup,
        refused_repeat=refused,
    )


def rarely(p_true: int = 1, out_of: int = 12) -> st.SearchStrategy[bool]:
    """``True`` with probability about ``p_true / out_of``."""
    return st.sampled_from([True] * p_true + [False] * (out_of - p_true))


@st.composite
def observations(draw: st.DrawFn, hot_tool: str, hot_err: str) -> Observation:
    shape = draw(
        st.sampled_from(["hot"] * 6 + ["fail", "ok", "ok_hot", "random", "random", "bad_id"])
    )
    dup = draw(rarely(1, 10))
    refused = draw(rarely(1, 10))
    if shape == "hot":
        return obs(hot_tool, "error", "error", hot_err, dup=dup, refused=refused)
    if shape == "fail":
        tool, err = draw(st.sampled_from(TOOLS)), draw(st.sampled_from(ERRORS))
        return obs(tool, "error", "error", err, dup=dup, refused=refused)
    if shape == "ok":
        return obs(draw(st.sampled_from(TOOLS)), "success", "success", None, dup=dup)
    if shape == "ok_hot":
        return obs(hot_tool, "success", "success", None, dup=dup, refused=refused)
    if shape == "bad_id":
        tool = draw(st.sampled_from([*BAD_TOOLS, hot_tool]))
        err = draw(st.sampled_from([*BAD_ERRORS, hot_err]))
        return obs(tool, "error", "error", err, dup=dup, refused=refused)
    return obs(
        draw(st.sampled_from([*TOOLS, *BAD_TOOLS])),
        draw(st.sampled_from([*TERMINALS, "timed_out"])),
        draw(st.sampled_from(EXECUTIONS)),
        draw(st.sampled_from([*ERRORS, *BAD_ERRORS])),
        dup=dup,
        refused=refused,
    )


@st.composite
def ignored_observations(draw: st.DrawFn, hot_tool: str, hot_err: str) -> Observation:
    """Any observation, marked as a provider duplicate or a refused repeat."""
    o = draw(observations(hot_tool, hot_err))
    flag = draw(st.sampled_from(["provider_duplicate", "refused_repeat"]))
    return o.model_copy(update={flag: True})


@st.composite
def batch_observations(draw: st.DrawFn, hot_tool: str, hot_err: str) -> list[Observation]:
    shapes = ["clean"] * 9 + ["tainted"] * 2 + ["messy", "ignored", "other_ok"]
    shape = draw(st.sampled_from(shapes))
    if shape == "messy":
        return draw(st.lists(observations(hot_tool, hot_err), min_size=0, max_size=6))
    if shape == "ignored":
        return draw(st.lists(ignored_observations(hot_tool, hot_err), min_size=1, max_size=4))
    # A clean streak batch: failures of the hot key, other tools' successes, ignored entries.
    hot = [obs(hot_tool, "error", "error", hot_err) for _ in range(draw(st.integers(1, 5)))]
    others = [t for t in TOOLS if t != hot_tool]
    successes = [
        obs(t, "success", "success", None)
        for t in draw(st.lists(st.sampled_from(others), max_size=2))
    ]
    ignored = draw(st.lists(ignored_observations(hot_tool, hot_err), max_size=2))
    if shape == "other_ok":
        # An intervening batch in which only other tools ran, and succeeded.
        extra = obs(others[0], "success", "success", None)
        return draw(st.permutations([*successes, *ignored, extra]))
    if shape == "tainted":
        # One odd outcome (any terminal/execution pair, blank identity, unclassified error)
        # in an otherwise clean streak batch.
        tool, terminal, execution, err = draw(st.sampled_from(ODD_OUTCOMES))
        odd = obs(
            hot_tool if tool is HOT else tool,
            terminal,
            execution,
            hot_err if err is HOT else err,
        )
        hot.append(odd)
    return draw(st.permutations(hot + successes + ignored))


@st.composite
def guard_inputs(draw: st.DrawFn, base_mode: GuardMode, hot_tool: str, hot_err: str) -> GuardInput:
    mode = draw(st.sampled_from([base_mode] * 8 + list(GuardMode)))
    return GuardInput(
        mode=mode,
        batch=Batch(
            complete=not draw(rarely()), observations=draw(batch_observations(hot_tool, hot_err))
        ),
        has_external_input=draw(rarely()),
        has_queued_prompt=draw(rarely()),
        input_reliable=not draw(rarely(1, 40)),
    )


@st.composite
def sequences(draw: st.DrawFn) -> list[GuardInput]:
    base_mode = draw(st.sampled_from([*GuardMode, GuardMode.ENFORCE, GuardMode.ENFORCE]))
    hot_tool = draw(st.sampled_from(TOOLS))
    hot_err = draw(st.sampled_from(ERRORS))
    length = draw(st.integers(1, 12))
    batch = guard_inputs(base_mode, hot_tool, hot_err)
    return draw(st.lists(batch, min_size=length, max_size=length))


@dataclass(frozen=True)
class Step:
    before: GuardState
    guard_input: GuardInput
    decision: GuardDecision

    @property
    def after(self) -> GuardState:
        return self.decision.state

    @property
    def kind(self) -> DecisionKind:
        return self.decision.kind

    @property
    def live(self) -> list[Observation]:
        """Observations left after dropping provider duplicates and refused repeats."""
        return [
            o
            for o in self.guard_input.batch.observations
            if not (o.provider_duplicate or o.refused_repeat)
        ]

    @property
    def boundary(self) -> bool:
        i = self.guard_input
        return (
            not i.input_reliable
            or i.has_external_input
            or i.has_queued_prompt
            or not i.batch.complete
        )

    @property
    def active(self) -> bool:
        """The reducer looked at this batch (mode not off, guard not latched)."""
        return self.guard_input.mode is not GuardMode.OFF and self.before.phase is not (
            GuardPhase.LATCHED
        )


def fold(inputs: list[GuardInput]) -> list[Step]:
    state = GuardState()
    steps = []
    for guard_input in inputs:
        decision = reduce(state, guard_input)
        steps.append(Step(state, guard_input, decision))
        state = decision.state
    return steps


def is_ineligible(o: Observation) -> bool:
    """Independent oracle: cancelled, not_started, unknown, post-execution failure, contract
    violation, missing tool or missing/unknown error type (workflows/seed/guard.py, seed
    eligibility)."""
    terminal, execution = o.terminal_status, o.execution_status
    if terminal == "cancelled" or execution in (None, "unknown"):
        return True
    if terminal == "success":
        return not (execution in ("success", "not_started") and (o.policy_tool_name or "").strip())
    if terminal != "error" or execution != "error":
        return True
    tool = (o.policy_tool_name or "").strip()
    err = (o.execution_error_type or "").strip()
    return not tool or err in ("", "unknown")


def is_untrusted(o: Observation) -> bool:
    """Oracle: an unknown or contract-violating outcome, which disables enforcement."""
    if not is_ineligible(o) or o.terminal_status == "cancelled":
        return False
    benign = ("cancelled", "not_started", "success")
    return not (o.terminal_status == "error" and o.execution_status in benign)


def failure_key(o: Observation) -> FailureKey | None:
    """The (tool, error type) key of an eligible failure, else ``None``."""
    if is_ineligible(o) or o.terminal_status != "error":
        return None
    return FailureKey(
        policy_tool_name=(o.policy_tool_name or "").strip(),
        execution_error_type=(o.execution_error_type or "").strip(),
    )


def advanced(step: Step) -> bool:
    return (
        step.after.failure_count > step.before.failure_count
        or step.after.batch_count > step.before.batch_count
    )


PROPERTY_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


# --- properties ----------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(sequences())
def test_ineligible_batches_never_advance(inputs: list[GuardInput]) -> None:
    for step in fold(inputs):
        if any(is_ineligible(o) for o in step.live):
            event("ineligible batch")
            assert step.kind in (DecisionKind.RESET, DecisionKind.NONE)
            assert not advanced(step)
            assert step.after.key is None or step.after == step.before


@PROPERTY_SETTINGS
@given(sequences())
def test_every_stop_preceded_by_warn_with_same_ordinal(inputs: list[GuardInput]) -> None:
    warned_ordinals: set[int] = set()
    for step in fold(inputs):
        if step.kind in WARNS:
            warned_ordinals.add(step.after.candidate_ordinal)
        if step.kind in STOPS:
            event(f"{step.kind.value}")
            assert step.after.candidate_ordinal in warned_ordinals
            assert step.before.phase is GuardPhase.WARNED
            assert step.after.candidate_ordinal == step.before.candidate_ordinal


@PROPERTY_SETTINGS
@given(sequences())
def test_incomplete_batch_never_advances(inputs: list[GuardInput]) -> None:
    for step in fold(inputs):
        if not step.guard_input.batch.complete:
            assert step.kind in (DecisionKind.RESET, DecisionKind.NONE)
            assert not advanced(step)


@PROPERTY_SETTINGS
@given(sequences())
def test_latched_is_terminal(inputs: list[GuardInput]) -> None:
    latched_at: GuardState | None = None
    for step in fold(inputs):
        if latched_at is not None:
            assert step.kind is DecisionKind.NONE
            assert step.after == step.before == latched_at
            assert telemetry_record(step.before, step.guard_input.mode, step.decision) is None
        elif step.after.phase is GuardPhase.LATCHED:
            assert step.kind in STOPS
            latched_at = step.after


@PROPERTY_SETTINGS
@given(sequences())
def test_stop_only_in_enforce_without_disabled_enforcement(inputs: list[GuardInput]) -> None:
    for step in fold(inputs):
        if step.kind is DecisionKind.STOP:
            assert step.guard_input.mode is GuardMode.ENFORCE
            assert not step.before.enforcement_disabled
            assert not step.after.enforcement_disabled
        if step.kind is DecisionKind.WOULD_STOP and step.guard_input.mode is GuardMode.ENFORCE:
            assert step.before.enforcement_disabled


@PROPERTY_SETTINGS
@given(sequences())
def test_unreliable_input_disables_enforcement_for_the_rest(inputs: list[GuardInput]) -> None:
    disabled = False
    for step in fold(inputs):
        if step.active and not step.guard_input.input_reliable:
            disabled = True
        if disabled:
            event("after unreliable input")
            assert step.after.enforcement_disabled
            assert step.kind is not DecisionKind.STOP
        # The flag is monotone whatever set it.
        if step.before.enforcement_disabled:
            assert step.after.enforcement_disabled


@PROPERTY_SETTINGS
@given(sequences())
def test_enforcement_disabled_exactly_by_untrusted_outcomes(inputs: list[GuardInput]) -> None:
    """Unreliable input, unknown outcomes and contract violations disable enforcement;
    nothing else does (cancellation, not_started, post-execution failure, successes)."""
    for step in fold(inputs):
        if not step.active:
            continue
        if not step.guard_input.input_reliable:
            expected = True
        elif step.boundary:
            expected = step.before.enforcement_disabled
        else:
            untrusted = any(is_untrusted(o) for o in step.live)
            if untrusted:
                event("untrusted outcome")
                assert step.kind in (DecisionKind.RESET, DecisionKind.NONE)
            expected = step.before.enforcement_disabled or untrusted
        assert step.after.enforcement_disabled is expected


@PROPERTY_SETTINGS
@given(sequences())
def test_other_tools_successes_leave_streak_unchanged(inputs: list[GuardInput]) -> None:
    for step in fold(inputs):
        if not step.active or step.boundary or not step.live:
            continue
        tracked_tool = step.before.key.policy_tool_name if step.before.key else None
        if all(
            o.terminal_status == "success"
            and o.execution_status in ("success", "not_started")
            and (o.policy_tool_name or "").strip() not in ("", tracked_tool)
            for o in step.live
        ):
            event("only other tools succeeded")
            assert step.kind is DecisionKind.NONE
            assert step.after == step.before


@PROPERTY_SETTINGS
@given(sequences())
def test_mode_off_never_changes_state(inputs: list[GuardInput]) -> None:
    for step in fold(inputs):
        if step.guard_input.mode is GuardMode.OFF:
            assert step.kind is DecisionKind.NONE
            assert step.after == step.before
            assert telemetry_record(step.before, GuardMode.OFF, step.decision) is None


@PROPERTY_SETTINGS
@given(sequences())
def test_warn_only_at_threshold(inputs: list[GuardInput]) -> None:
    for step in fold(inputs):
        if step.kind in WARNS:
            event("warned")
            assert step.after.failure_count >= REPEATED_TOOL_FAILURE_THRESHOLD
            assert step.after.batch_count >= REPEATED_TOOL_FAILURE_BATCH_THRESHOLD
            assert step.before.phase is GuardPhase.TRACKING
            assert step.after.phase is GuardPhase.WARNED
            mode = step.guard_input.mode
            assert (step.kind is DecisionKind.WOULD_WARN) is (mode is GuardMode.SHADOW)


@PROPERTY_SETTINGS
@given(sequences())
def test_duplicate_or_refused_only_batch_never_changes_state(inputs: list[GuardInput]) -> None:
    for step in fold(inputs):
        if not step.live and not step.boundary:
            event("nothing live")
            assert step.kind is DecisionKind.NONE
            assert step.after == step.before


# --- further structural properties --------------------------------------------------------


@PROPERTY_SETTINGS
@given(sequences())
def test_state_shape_and_ordinals(inputs: list[GuardInput]) -> None:
    for step in fold(inputs):
        before, after = step.before, step.after
        assert after.next_candidate_ordinal >= before.next_candidate_ordinal
        if step.kind is DecisionKind.RESET:
            assert step.decision.reason is not None
            assert after == GuardState(
                next_candidate_ordinal=before.next_candidate_ordinal,
                enforcement_disabled=after.enforcement_disabled,
            )
            assert after != before
        else:
            assert step.decision.reason is None
        if step.kind is DecisionKind.NONE:
            assert after == before
        if after.phase is GuardPhase.IDLE:
            assert after.key is None
            assert (after.failure_count, after.batch_count, after.candidate_ordinal) == (0, 0, 0)
        else:
            assert after.key is not None
            assert 1 <= after.candidate_ordinal < after.next_candidate_ordinal
            assert after.failure_count >= after.batch_count >= 1
        if step.kind in COUNTING:
            assert all(not is_ineligible(o) for o in step.live)
            assert not step.boundary
            assert after.key is not None
            # Exactly the batch's live failures of the key are counted.
            added = sum(1 for o in step.live if failure_key(o) == after.key)
            assert added >= 1
            if after.key != before.key:
                assert step.kind is DecisionKind.TRACKED
                assert after.batch_count == 1
                assert after.failure_count == added
                assert after.candidate_ordinal == before.next_candidate_ordinal
            else:
                assert after.candidate_ordinal == before.candidate_ordinal
                assert after.batch_count == before.batch_count + 1
                assert after.failure_count == before.failure_count + added


@PROPERTY_SETTINGS
@given(sequences(), st.randoms(use_true_random=False))
def test_reduction_is_order_independent_within_a_batch(inputs: list[GuardInput], rnd) -> None:
    for step in fold(inputs):
        shuffled = list(step.guard_input.batch.observations)
        rnd.shuffle(shuffled)
        again = reduce(
            step.before,
            step.guard_input.model_copy(
                update={
                    "batch": Batch(complete=step.guard_input.batch.complete, observations=shuffled)
                }
            ),
        )
        assert (again.kind, again.state, again.reason) == (
            step.kind,
            step.after,
            step.decision.reason,
        )


@PROPERTY_SETTINGS
@given(sequences())
def test_telemetry_metric_attributes_never_carry_private_fields(inputs: list[GuardInput]) -> None:
    for step in fold(inputs):
        mode = step.guard_input.mode
        record = telemetry_record(step.before, mode, step.decision)
        if mode is GuardMode.OFF or step.before.phase is GuardPhase.LATCHED:
            assert record is None
            continue
        if step.before.phase is GuardPhase.IDLE and step.after == step.before:
            assert record is None
            continue
        assert record is not None
        assert record.decision is step.kind
        assert record.reset_reason is step.decision.reason
        described = step.before if step.kind is DecisionKind.RESET else step.after
        assert record.candidate_ordinal == described.candidate_ordinal
        attributes = record.metric_attributes()
        assert "candidate_ordinal" not in attributes
        assert "execution_error_type" not in attributes
        for value in attributes.values():
            assert value not in TOOLS
            assert value not in ERRORS


# --- progress evidence (the recommended loop profile) -------------------------------------


@PROPERTY_SETTINGS
@given(sequences(), st.data())
def test_a_progress_observation_is_ignored_like_a_refused_repeat(
    inputs: list[GuardInput], data: st.DataObject
) -> None:
    """Marking any observation as progress decides exactly as leaving it out of the batch;
    with no observation marked, the reducer is the seed's (docs/protections.md, "Loop profiles")."""
    marked_state = dropped_state = GuardState()
    for guard_input in inputs:
        observations = guard_input.batch.observations
        flags = data.draw(
            st.lists(st.booleans(), min_size=len(observations), max_size=len(observations))
        )
        marked = guard_input.model_copy(
            update={
                "batch": guard_input.batch.model_copy(
                    update={
                        "observations": [
                            o.model_copy(update={"progress": f})
                            for o, f in zip(observations, flags, strict=True)
                        ]
                    }
                )
            }
        )
        dropped = guard_input.model_copy(
            update={
                "batch": guard_input.batch.model_copy(
                    update={
                        "observations": [
                            o for o, f in zip(observations, flags, strict=True) if not f
                        ]
                    }
                )
            }
        )
        a, b = reduce(marked_state, marked), reduce(dropped_state, dropped)
        assert a == b
        marked_state, dropped_state = a.state, b.state
