"""Cline's soft/hard identical-call limits and mistake limit, on sequences its source implies."""

from __future__ import annotations

from bench.loop_peers.cline import ClineLoopLimits, cline_soft_message
from workflows.contracts import TerminalStatus, ToolCall, ToolOutcome


def call(name: str = "read_file", **arguments: object) -> ToolCall:
    return ToolCall(call_id="c", name=name, arguments=dict(arguments))


def outcome(status: TerminalStatus, name: str = "read_file") -> ToolOutcome:
    return ToolOutcome(call_id="c", tool_name=name, status=status, content="x")


def turn(
    peer: ClineLoopLimits, c: ToolCall, status: TerminalStatus
) -> tuple[str | None, str | None]:
    """One reply with one call: (stop, warning seen by the model)."""
    assert peer.before_batch([c]) is None
    warning = peer.warning()
    return peer.after_batch([c], [outcome(status, c.name)]), warning


def test_soft_warning_on_the_third_identical_call_only_and_the_call_runs() -> None:
    peer = ClineLoopLimits()
    results = [turn(peer, call(path="a"), TerminalStatus.SUCCESS) for _ in range(4)]
    assert [stop for stop, _ in results] == [None] * 4
    assert [w for _, w in results] == [None, None, cline_soft_message("read_file", 3), None]
    assert results[2][1] == (
        "Detected 3 consecutive identical calls to `read_file`; "
        "consider trying a different approach."
    )


def test_hard_stop_after_the_batch_holding_the_fifth_identical_call() -> None:
    peer = ClineLoopLimits()
    stops = [turn(peer, call(path="a"), TerminalStatus.SUCCESS)[0] for _ in range(5)]
    assert stops == [None, None, None, None, "cline_limits"]


def test_identical_calls_are_counted_inside_one_batch() -> None:
    peer = ClineLoopLimits()
    batch = [call(path="a")] * 5
    assert peer.before_batch(batch) is None
    assert peer.warning() == cline_soft_message("read_file", 3)
    assert peer.after_batch(batch, [outcome(TerminalStatus.SUCCESS)] * 5) == "cline_limits"


def test_a_different_call_restarts_the_identical_count_at_one() -> None:
    peer = ClineLoopLimits()
    sequence = [call(path="a")] * 4 + [call(path="b")] + [call(path="a")] * 4
    stops = [turn(peer, c, TerminalStatus.SUCCESS)[0] for c in sequence]
    assert stops == [None] * 9


def test_signature_sorts_keys_and_the_name_must_match() -> None:
    peer = ClineLoopLimits()
    a = ToolCall(call_id="1", name="grep", arguments={"q": "x", "n": {"b": 1, "a": 2}})
    b = ToolCall(call_id="2", name="grep", arguments={"n": {"a": 2, "b": 1}, "q": "x"})
    warnings = [turn(peer, c, TerminalStatus.SUCCESS)[1] for c in (a, b, a)]
    assert warnings[2] == cline_soft_message("grep", 3)
    other = ToolCall(call_id="3", name="search", arguments={"q": "x", "n": {"b": 1, "a": 2}})
    assert [turn(peer, c, TerminalStatus.SUCCESS)[1] for c in (other, a, a)] == [None] * 3


def test_three_turns_where_every_call_failed_stop_not_two() -> None:
    peer = ClineLoopLimits()
    stops = [turn(peer, call(path=str(i)), TerminalStatus.ERROR)[0] for i in range(3)]
    assert stops == [None, None, "cline_limits"]


def test_a_turn_with_any_success_resets_the_mistake_count() -> None:
    peer = ClineLoopLimits()
    for i in range(2):
        assert turn(peer, call(path=str(i)), TerminalStatus.ERROR)[0] is None
    mixed = [call(path="x"), call(path="y")]
    peer.before_batch(mixed)
    both = [outcome(TerminalStatus.ERROR), outcome(TerminalStatus.SUCCESS)]
    assert peer.after_batch(mixed, both) is None
    for i in range(2):
        assert turn(peer, call(path=f"z{i}"), TerminalStatus.ERROR)[0] is None
    assert turn(peer, call(path="z2"), TerminalStatus.ERROR)[0] == "cline_limits"


def test_a_cancelled_turn_neither_counts_nor_resets() -> None:
    peer = ClineLoopLimits()
    for i in range(2):
        turn(peer, call(path=str(i)), TerminalStatus.ERROR)
    assert turn(peer, call(path="c"), TerminalStatus.CANCELLED)[0] is None
    assert turn(peer, call(path="d"), TerminalStatus.ERROR)[0] == "cline_limits"
