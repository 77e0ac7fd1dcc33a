"""Batch screening and settlement (``workflows/seed/protections.py``) and the guard's view of a
settled batch (``workflows/prompt/batch.py``): the decisions ``PromptWorkflow``
and the benchmark simulator share (docs/architecture.md, "The life of a prompt";
workflows/seed/failed_call_refusal.py). Pure: no server, no Temporal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from workflows.contracts import (
    ExecutionStatus,
    TerminalStatus,
    ToolCall,
    ToolErrorType,
    ToolOutcome,
)
from workflows.contracts.activity import ToolSpec
from workflows.contracts.prompt import LoopType
from workflows.contracts.prompt_options import PromptOptions
from workflows.contracts.synthetic_outcomes import (
    CANCELLED_CONTENT,
    DUPLICATE_CALL_CONTENT,
    SKIPPED_CALL_CONTENT,
)
from workflows.prompt.batch import guard_entry, guard_input
from workflows.seed.failed_call_refusal import MAX_REPEATS, RefusalMode, RepeatCheck
from workflows.seed.guard import (
    REPEATED_TOOL_FAILURE_STOP_MESSAGE,
    DecisionKind,
    GuardMode,
    GuardState,
    reduce,
)
from workflows.seed.protections import Answered, BatchProtections, BatchScreening, Cleared

WS = "/ws"
TOOLS = {
    "read_file": ToolSpec(name="read_file"),
    "deploy": ToolSpec(name="deploy", mutating=True),
    "lookup": ToolSpec(name="lookup", tool_type="mcp"),
}


def protections(**options: Any) -> BatchProtections:
    return BatchProtections(PromptOptions(**options), WS)


def call(name: str = "read_file", call_id: str = "c1", **arguments: Any) -> ToolCall:
    return ToolCall(call_id=call_id, name=name, arguments=arguments or {"path": "a"})


def failed(c: ToolCall, message: str = "no such file") -> ToolOutcome:
    return ToolOutcome(
        call_id=c.call_id,
        tool_name=c.name,
        policy_tool_name=c.name,
        status=TerminalStatus.ERROR,
        execution_status=ExecutionStatus.ERROR,
        execution_error_type=ToolErrorType.FILE_NOT_FOUND,
        error_type=ToolErrorType.FILE_NOT_FOUND,
        content=message,
        error_message=message,
    )


def succeeded(c: ToolCall) -> ToolOutcome:
    return ToolOutcome(
        call_id=c.call_id,
        tool_name=c.name,
        policy_tool_name=c.name,
        status=TerminalStatus.SUCCESS,
        execution_status=ExecutionStatus.SUCCESS,
        content="ok",
    )


def invalid(c: ToolCall) -> ToolOutcome:
    return ToolOutcome(
        call_id=c.call_id,
        tool_name=c.name,
        status=TerminalStatus.ERROR,
        execution_status=ExecutionStatus.NOT_STARTED,
        error_type=ToolErrorType.INVALID_TOOL_PARAMS,
        content="bad arguments",
    )


def run_batch(
    p: BatchProtections,
    calls: list[ToolCall],
    outcome_of: Any = failed,
    tools: dict[str, ToolSpec] = TOOLS,
) -> tuple[BatchScreening, list[ToolOutcome]]:
    """Admit a batch, run every admitted call with ``outcome_of`` and settle it."""
    screening = p.screen(calls, tools)
    ran = {a.index: outcome_of(a.call) for a in screening.cleared}
    return screening, p.settle(screening, ran)


def answered(screening: BatchScreening) -> list[ToolOutcome]:
    return [d.outcome for d in screening.decisions if isinstance(d, Answered)]


# --- screening ----------------------------------------------------------------------------


def test_purity_importing_the_batch_module_loads_no_temporal() -> None:
    root = Path(__file__).resolve().parents[3]
    code = "import sys, workflows.prompt.batch; sys.exit('temporalio' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=root).returncode == 0


def test_every_call_of_a_fresh_batch_is_cleared_in_call_order() -> None:
    p = protections()
    screening = p.screen([call(call_id="a"), call("deploy", "b"), call("nope", "c")], TOOLS)

    assert [type(d) for d in screening.decisions] == [Cleared, Cleared, Cleared]
    assert [d.index for d in screening.decisions] == [0, 1, 2]
    # A call of a tool the prompt did not list has no policy name.
    assert [a.policy_tool_name for a in screening.cleared] == ["read_file", "deploy", None]
    assert p.counts.executed == 3
    assert not screening.capped


def test_ordinals_count_earlier_runs_of_the_same_tool_across_batches() -> None:
    p = protections()
    calls = [call(n=1, call_id="a"), call("deploy", "b"), call(n=2, call_id="c")]
    first, _ = run_batch(p, calls, succeeded)
    second = p.screen([call(n=3, call_id="d"), call("deploy", "e")], TOOLS)

    assert [a.ordinal for a in first.cleared] == [0, 0, 1]
    assert [a.ordinal for a in second.cleared] == [2, 1]


def test_the_batch_that_would_pass_the_cap_is_skipped_whole() -> None:
    p = protections(max_tool_calls_per_turn=3)
    run_batch(p, [call(n=1, call_id="a"), call(n=2, call_id="b")])
    screening = p.screen([call(n=3, call_id="c"), call(n=4, call_id="d")], TOOLS)

    assert screening.capped
    assert screening.decisions == []
    assert [o.content for o in screening.skipped] == [SKIPPED_CALL_CONTENT] * 2
    assert {(o.status, o.execution_status) for o in screening.skipped} == {
        (TerminalStatus.CANCELLED, ExecutionStatus.NOT_STARTED)
    }
    assert (p.counts.executed, p.counts.skipped) == (2, 2)
    stop = p.cap_stop()
    assert stop.loop_type is LoopType.TURN_TOOL_CALL_CAP
    assert "(3 calls)" in stop.message


def test_the_cap_counts_every_requested_call_and_zero_disables_it() -> None:
    p = protections(max_tool_calls_per_turn=2)
    same = call(call_id="dup")
    run_batch(p, [same])
    # A resent call is answered without running, but it still counts toward the cap.
    run_batch(p, [same])
    assert p.screen([call(n=9, call_id="x")], TOOLS).capped

    unlimited = protections(max_tool_calls_per_turn=0)
    for n in range(5):
        assert not unlimited.screen([call(n=n, call_id=f"c{n}")] * 50, TOOLS).capped


def test_a_resent_call_id_is_answered_without_running_and_a_second_resend_stops() -> None:
    p = protections()
    original = call(call_id="dup-1")
    run_batch(p, [original], succeeded)

    screening, outcomes = run_batch(p, [original, call(n=2, call_id="fresh")], succeeded)
    (duplicate,) = answered(screening)
    assert duplicate.provider_duplicate
    assert duplicate.content == DUPLICATE_CALL_CONTENT
    assert duplicate.execution_status == ExecutionStatus.NOT_STARTED
    assert [a.call.call_id for a in screening.cleared] == ["fresh"]
    assert [o.call_id for o in outcomes] == ["dup-1", "fresh"]
    assert p.stop_after(DecisionKind.NONE) is None

    run_batch(p, [original], succeeded)
    assert p.counts.duplicates == 2
    stop = p.stop_after(DecisionKind.NONE)
    assert stop is not None and stop.loop_type is LoopType.GLOBAL_TOOL_CALL_DUPLICATE


def test_a_reused_call_id_with_other_arguments_is_a_new_call() -> None:
    p = protections()
    run_batch(p, [call(path="a", call_id="same")], succeeded)
    screening = p.screen([call(path="b", call_id="same")], TOOLS)

    assert len(screening.cleared) == 1
    assert p.counts.duplicates == 0


def test_an_unchanged_repeat_of_a_failed_call_is_refused_with_the_earlier_reason() -> None:
    p = protections()
    run_batch(p, [call("lookup", "a", q="x")], lambda c: failed(c, "backend down"))

    screening = p.screen([call("lookup", "b", q="x"), call("lookup", "c", q="y")], TOOLS)

    (refused,) = answered(screening)
    assert refused.refused_repeat and refused.call_id == "b"
    assert "backend down" in refused.content
    assert refused.tool_type == "mcp"
    assert [a.call.call_id for a in screening.cleared] == ["c"]
    # Telemetry names the tool by policy name and type only.
    assert [(f.check, f.policy_tool_name, f.tool_type) for f in screening.flagged_repeats] == [
        (RepeatCheck.REFUSE, "lookup", "mcp")
    ]
    assert (p.counts.executed, p.counts.refused) == (2, 1)


def test_shadow_refusal_runs_the_repeat_and_only_flags_it() -> None:
    p = protections(refusal_mode=RefusalMode.SHADOW)
    run_batch(p, [call(call_id="a")])
    screening = p.screen([call(call_id="b")], TOOLS)

    assert len(screening.cleared) == 1
    assert [f.check for f in screening.flagged_repeats] == [RepeatCheck.WOULD_REFUSE]
    assert p.counts.refused == 0


def test_refusal_off_neither_refuses_nor_flags() -> None:
    p = protections(refusal_mode=RefusalMode.OFF)
    run_batch(p, [call(call_id="a")])
    screening = p.screen([call(call_id="b")], TOOLS)

    assert len(screening.cleared) == 1
    assert screening.flagged_repeats == []


def test_more_refusals_than_max_repeats_stop_the_prompt() -> None:
    p = protections()
    run_batch(p, [call(call_id="first")])
    for n in range(MAX_REPEATS):
        run_batch(p, [call(call_id=f"again-{n}")])
        assert p.stop_after(DecisionKind.NONE) is None
    run_batch(p, [call(call_id="once-more")])

    stop = p.stop_after(DecisionKind.NONE)
    assert stop is not None and stop.loop_type is LoopType.REPEATED_FAILED_CALL
    assert str(MAX_REPEATS) in stop.message


# --- settlement ---------------------------------------------------------------------------


def test_settled_outcomes_are_in_call_order_whatever_settled_first() -> None:
    p = protections()
    run_batch(p, [call(call_id="x")])  # fails: its repeat below is refused
    calls = [call(n=1, call_id="a"), call(call_id="refused"), call(n=2, call_id="b")]
    screening = p.screen(calls, TOOLS)
    ran = {2: succeeded(calls[2]), 0: succeeded(calls[0])}

    outcomes = p.settle(screening, ran)

    assert [o.call_id for o in outcomes] == ["a", "refused", "b"]


def test_a_call_cut_before_it_started_settles_as_cancelled_not_started() -> None:
    p = protections()
    cut = call(call_id="cut")
    screening = p.screen([cut], TOOLS)

    (outcome,) = p.settle(screening, {0: None})

    assert (outcome.status, outcome.execution_status) == (
        TerminalStatus.CANCELLED,
        ExecutionStatus.NOT_STARTED,
    )
    assert outcome.content == CANCELLED_CONTENT
    assert outcome.policy_tool_name == "read_file"
    assert not outcome.ran_and_failed


@pytest.mark.parametrize(
    "changer",
    [
        pytest.param("edit_file", id="a state-changing built-in"),
        pytest.param("deploy", id="a mutating listed tool"),
    ],
)
def test_a_state_changing_success_forgets_earlier_failures(changer: str) -> None:
    p = protections()
    run_batch(p, [call("run_shell_command", "t1", command="pytest")])
    run_batch(p, [call(changer, "fix")], succeeded)

    recheck = p.screen([call("run_shell_command", "t2", command="pytest")], TOOLS)

    assert len(recheck.cleared) == 1


def test_a_read_only_success_keeps_the_failures() -> None:
    p = protections()
    run_batch(p, [call("run_shell_command", "t1", command="pytest")])
    run_batch(p, [call(call_id="look")], succeeded)

    recheck = p.screen([call("run_shell_command", "t2", command="pytest")], TOOLS)

    assert recheck.cleared == []


def test_forgetting_waits_for_permission_which_is_asked_only_after_a_change() -> None:
    p = protections()
    asked: list[bool] = []

    def may_forget() -> bool:
        asked.append(True)
        return False

    first = p.screen([call("run_shell_command", "t1", command="pytest")], TOOLS)
    p.settle(first, {0: failed(first.calls[0])}, may_forget=may_forget)
    assert asked == []  # nothing changed state
    fix = p.screen([call("edit_file", "fix")], TOOLS)
    p.settle(fix, {0: succeeded(fix.calls[0])}, may_forget=may_forget)
    assert asked == [True]

    recheck = p.screen([call("run_shell_command", "t2", command="pytest")], TOOLS)
    assert recheck.cleared == []  # not allowed to forget: the failure is still refused


def test_failures_settled_with_a_state_change_are_remembered() -> None:
    p = protections()
    calls = [call("run_shell_command", "t1", command="pytest"), call("edit_file", "fix")]
    screening = p.screen(calls, TOOLS)
    p.settle(screening, {0: failed(calls[0]), 1: succeeded(calls[1])})

    recheck = p.screen([call("run_shell_command", "t2", command="pytest")], TOOLS)

    assert recheck.cleared == []


def test_three_invalid_parameter_calls_of_one_tool_stop_the_prompt() -> None:
    p = protections()
    for n in range(2):
        run_batch(p, [call(n=n, call_id=f"c{n}")], invalid)
        assert p.stop_after(DecisionKind.NONE) is None
    run_batch(p, [call(n=9, call_id="c9")], invalid)

    stop = p.stop_after(DecisionKind.NONE)
    assert stop is not None and stop.loop_type is LoopType.INVALID_TOOL_PARAMS_STAGNATION


def test_the_most_specific_protection_names_the_stop() -> None:
    p = protections()
    assert p.stop_after(DecisionKind.WARN) is None
    guard_stop = p.stop_after(DecisionKind.STOP)
    assert guard_stop is not None
    assert guard_stop.loop_type is LoopType.REPEATED_TOOL_EXECUTION_FAILURE
    assert guard_stop.message == REPEATED_TOOL_FAILURE_STOP_MESSAGE

    same = call(call_id="dup", n=0)
    for _ in range(3):
        run_batch(p, [same, call(n=1, call_id="i1"), call(n=2, call_id="i2")], invalid)
    stop = p.stop_after(DecisionKind.STOP)
    # Duplicates, invalid parameters and a guard stop all hold: dedup is the most specific.
    assert stop is not None and stop.loop_type is LoopType.GLOBAL_TOOL_CALL_DUPLICATE


# --- the guard's view ---------------------------------------------------------------------


def test_the_guard_input_observes_every_settled_call_and_the_input_boundary() -> None:
    p = protections()
    run_batch(p, [call(call_id="a")])
    _, outcomes = run_batch(p, [call(call_id="a"), call(call_id="b"), call("x", "c")])

    gi = guard_input(
        GuardMode.ENFORCE, outcomes, external_input=True, queued_prompt=False, input_reliable=False
    )

    observations = gi.batch.observations
    assert [o.call_id for o in observations] == ["a", "b", "c"]
    assert [(o.provider_duplicate, o.refused_repeat) for o in observations] == [
        (True, False),
        (False, True),
        (False, False),
    ]
    assert observations[2].policy_tool_name == "x"  # as the outcome reported it
    assert (gi.has_external_input, gi.has_queued_prompt, gi.input_reliable) == (True, False, False)
    assert gi.mode is GuardMode.ENFORCE


def test_the_guard_entry_reports_the_decision_and_both_phases() -> None:
    p = protections()
    _, outcomes = run_batch(p, [call(n=n, call_id=f"c{n}") for n in range(4)])
    before = GuardState()
    settled = guard_input(
        GuardMode.ENFORCE, outcomes, external_input=False, queued_prompt=False, input_reliable=True
    )
    decision = reduce(before, settled)

    entry = guard_entry(7, GuardMode.ENFORCE, before, decision)

    assert entry.batch == 7
    assert entry.decision == decision.kind.value == "tracked"
    assert (entry.phase_before, entry.phase_after) == ("idle", decision.state.phase.value)
    assert entry.failure_count == decision.state.failure_count == 4
    assert entry.mode == "enforce"
    assert entry.reason is None
