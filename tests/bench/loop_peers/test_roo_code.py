"""Roo Code's ToolRepetitionDetector peer, on call sequences its source implies."""

from __future__ import annotations

import json

from bench.loop_peers.roo_code import RooToolRepetition, roo_refusal_text
from workflows.contracts import ToolCall


def call(name: str = "read_file", **arguments: object) -> ToolCall:
    return ToolCall(call_id="c", name=name, arguments=dict(arguments))


def refusals(peer: RooToolRepetition, calls: list[ToolCall]) -> list[bool]:
    return [peer.refuse_call(c) is not None for c in calls]


def test_the_fourth_identical_call_is_refused_not_the_third() -> None:
    peer = RooToolRepetition()
    assert refusals(peer, [call(path="a")] * 4) == [False, False, False, True]


def test_after_a_refusal_the_count_starts_again() -> None:
    peer = RooToolRepetition()
    assert refusals(peer, [call(path="a")] * 8) == [False, False, False, True] * 2


def test_a_different_call_resets_the_run() -> None:
    peer = RooToolRepetition()
    sequence = [call(path="a")] * 3 + [call(path="b")] + [call(path="a")] * 3
    assert not any(refusals(peer, sequence))


def test_identity_is_name_and_arguments_whatever_the_key_order() -> None:
    peer = RooToolRepetition()
    first = ToolCall(call_id="1", name="search", arguments={"q": "x", "path": "."})
    reordered = ToolCall(call_id="2", name="search", arguments={"path": ".", "q": "x"})
    other_tool = ToolCall(call_id="3", name="grep", arguments={"q": "x", "path": "."})
    assert refusals(peer, [first, reordered, reordered]) == [False, False, False]
    assert peer.refuse_call(other_tool) is None
    assert refusals(peer, [first] * 3) == [False, False, False]


def test_the_refusal_is_roos_tool_error_json() -> None:
    peer = RooToolRepetition()
    texts = [peer.refuse_call(call("list_files")) for _ in range(4)]
    assert texts[3] == roo_refusal_text("list_files")
    assert json.loads(texts[3] or "") == {
        "status": "error",
        "message": "The tool execution failed",
        "error": (
            "Tool call repetition limit reached for list_files. Please try a different approach."
        ),
    }


def test_the_unattended_cli_never_halts() -> None:
    peer = RooToolRepetition()
    for _ in range(10):
        assert peer.before_batch([call()]) is None
        assert peer.after_batch([call()], []) is None
