"""pydantic-ai-harness's LoopDetection peer, on call sequences its source implies."""

from __future__ import annotations

import itertools

from bench.loop_peers.pydantic_ai_harness import (
    PydanticAiLoopDetection,
    pydantic_fingerprint,
)
from workflows.contracts import ExecutionStatus, TerminalStatus, ToolCall, ToolOutcome

_ids = itertools.count()


def call(name: str = "read_file", **arguments: object) -> ToolCall:
    return ToolCall(call_id=f"c{next(_ids)}", name=name, arguments=dict(arguments))


def ok(c: ToolCall, content: str) -> ToolOutcome:
    return ToolOutcome(
        call_id=c.call_id,
        tool_name=c.name,
        status=TerminalStatus.SUCCESS,
        execution_status=ExecutionStatus.SUCCESS,
        content=content,
    )


def turn(peer: PydanticAiLoopDetection, c: ToolCall, content: str) -> tuple[str | None, ...]:
    """One reply with one call: (stop before, warning, stop after, warning)."""
    before = peer.before_batch([c])
    first = peer.warning()
    after = peer.after_batch([c], [ok(c, content)])
    return before, first, after, peer.warning()


def test_alternation_fires_at_three_full_cycles_not_before() -> None:
    peer = PydanticAiLoopDetection()
    sequence = [call(path="a"), call(path="b")] * 4 + [call(path="a")]
    warnings = [turn(peer, c, f"r{i}")[1] for i, c in enumerate(sequence)]
    # a, b, a, b, ... : the alternation tier fires first, at the 6th call (3 cycles).
    assert (
        warnings[5] is not None and "alternating between `read_file` and `read_file`" in warnings[5]
    )
    assert warnings[:5] == [None] * 5


def test_exact_repetition_needs_five_in_the_window_not_four() -> None:
    peer = PydanticAiLoopDetection()
    sequence = [
        call(path="a"),
        call(path="x1"),
        call(path="a"),
        call(path="x2"),
        call(path="a"),
        call(path="x3"),
        call(path="a"),
        call(path="x4"),
        call(path="a"),
    ]
    warnings = [turn(peer, c, f"r{i}")[1] for i, c in enumerate(sequence)]
    assert warnings[:8] == [None] * 8
    assert warnings[8] == (
        "[harness:loop-detection] You appear to be repeating the same action (`read_file` "
        "called 5 times with identical arguments). Change approach, or state plainly what "
        "is blocking you."
    )


def test_the_window_is_ten_calls() -> None:
    peer = PydanticAiLoopDetection()
    fillers = [call(path=f"x{i}") for i in range(7)]
    sequence = [call(path="a")] * 4 + fillers + [call(path="a")]  # the 1st "a" left the window
    warnings = [turn(peer, c, f"r{i}")[1] for i, c in enumerate(sequence)]
    assert all(w is None for w in warnings)


def test_identical_results_three_in_a_row_fire_the_error_cycle_tier() -> None:
    peer = PydanticAiLoopDetection()
    results = [turn(peer, call("run_shell_command", command="ls"), "same") for _ in range(3)]
    assert [r[3] for r in results[:2]] == [None, None]
    assert results[2][3] == (
        "[harness:loop-detection] The tool `run_shell_command` returned the same result 3 "
        "times in a row; repeating it is not making progress. Change approach, or state "
        "plainly what is blocking you."
    )
    assert all(r[0] is None and r[2] is None for r in results)  # nudge never stops


def test_a_different_result_resets_the_error_cycle_and_a_hit_resets_its_count() -> None:
    peer = PydanticAiLoopDetection()
    outputs = ["a", "a", "b", "b", "b", "b", "b"]
    warnings = [turn(peer, call("poll", id=1), out)[3] for out in outputs]
    assert [w is not None for w in warnings] == [False, False, False, False, True, False, False]


def test_calls_answered_without_running_are_not_results() -> None:
    peer = PydanticAiLoopDetection()
    for _ in range(4):
        c = call("edit_file", path="a")
        peer.before_batch([c])
        peer.warning()
        invalid = ToolOutcome(
            call_id=c.call_id,
            tool_name=c.name,
            status=TerminalStatus.ERROR,
            execution_status=ExecutionStatus.NOT_STARTED,
            error_message="invalid arguments",
        )
        assert peer.after_batch([c], [invalid]) is None
        assert peer.warning() is None


def test_monologue_three_identical_text_replies_and_a_tool_call_resets_it() -> None:
    peer = PydanticAiLoopDetection()
    peer.observe_model("I am  waiting for instructions.", [])
    peer.observe_model("i am waiting for INSTRUCTIONS.", [])
    peer.before_batch([call()])
    peer.observe_model("I am waiting for instructions.", [])
    peer.observe_model("I am waiting for instructions.", [])
    assert peer.warning() is None
    peer.observe_model("I am waiting for instructions.", [])
    warning = peer.warning()
    assert warning is not None and "3 near-identical responses" in warning


def test_fingerprint_sorts_keys() -> None:
    a = ToolCall(call_id="1", name="grep", arguments={"q": "x", "path": "."})
    b = ToolCall(call_id="2", name="grep", arguments={"path": ".", "q": "x"})
    assert pydantic_fingerprint(a) == pydantic_fingerprint(b) == 'grep({"path": ".", "q": "x"})'
