"""hermes-agent's tool guardrails peer, on call sequences its source implies."""

from __future__ import annotations

import itertools
import json

from bench.loop_peers.hermes import HermesGuardrails
from workflows.contracts import TerminalStatus, ToolCall, ToolOutcome

_ids = itertools.count()


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(call_id=f"c{next(_ids)}", name=name, arguments=dict(arguments))


def turn(
    peer: HermesGuardrails, c: ToolCall, result: str = "ok", failed: bool = False
) -> tuple[str | None, str | None, str | None]:
    """One reply with one call: (refusal text, stop, warning)."""
    refusal = peer.refuse_call(c)
    assert peer.before_batch([c]) is None
    if refusal is not None:
        outcome = ToolOutcome(
            call_id=c.call_id,
            tool_name=c.name,
            status=TerminalStatus.ERROR,
            error_message=refusal,
        )
    elif failed:
        outcome = ToolOutcome(
            call_id=c.call_id, tool_name=c.name, status=TerminalStatus.ERROR, error_message=result
        )
    else:
        outcome = ToolOutcome(
            call_id=c.call_id, tool_name=c.name, status=TerminalStatus.SUCCESS, content=result
        )
    stop = peer.after_batch([c], [outcome])
    return refusal, stop, peer.warning()


def test_identical_successful_calls_get_a_note_from_the_third_and_halt_after_the_fifth() -> None:
    peer = HermesGuardrails()
    results = [turn(peer, call("run_shell_command", command="make test")) for _ in range(5)]
    assert [stop for _, stop, _ in results] == [None, None, None, None, "hermes_guardrails"]
    assert [r for r, _, _ in results] == [None] * 5  # a halt lets the call run
    warnings = [w for _, _, w in results]
    assert warnings[:2] == [None, None]
    assert warnings[2] is not None and warnings[2].startswith(
        "[hermes note: this is the 3rd consecutive identical call to run_shell_command"
    )
    assert warnings[4] is not None
    assert "[Tool loop hard stop: identical_call_streak_halt; count=5;" in warnings[4]


def test_a_different_result_restarts_the_streak() -> None:
    peer = HermesGuardrails()
    outputs = ["a", "a", "a", "a", "b", "b", "b", "b"]
    stops = [turn(peer, call("run_shell_command", command="date"), out)[1] for out in outputs]
    assert stops == [None] * 8


def test_results_compare_as_canonical_json_and_arguments_ignore_key_order() -> None:
    peer = HermesGuardrails()
    forms = ['{"a": 1, "b": 2}', '{"b":2,"a":1}'] * 2 + ['{"a":1, "b":2}']
    stops = []
    for i, form in enumerate(forms):
        arguments = {"x": 1, "y": 2} if i % 2 else {"y": 2, "x": 1}
        stops.append(turn(peer, call("mcp__db__query", **arguments), form)[1])
    assert stops == [None, None, None, None, "hermes_guardrails"]


def test_pollers_are_exempt_from_the_streak() -> None:
    peer = HermesGuardrails()
    results = [turn(peer, call("get_command_output", pid=1), "running") for _ in range(12)]
    assert all(stop is None and warning is None for _, stop, warning in results)


def test_the_sixth_identical_failing_call_is_blocked_then_the_turn_halts() -> None:
    peer = HermesGuardrails()
    c = call("mcp__db__query", sql="select 1")
    # Different error texts each time, so the identical-result streak never forms.
    for i in range(5):
        refusal, stop, warning = turn(peer, c, f"error {i}", failed=True)
        assert (refusal, stop) == (None, None)
        assert (warning is not None) == (i >= 1)  # exact-failure warning from the 2nd
    refusal, stop, _ = turn(peer, c, "error 5", failed=True)
    assert refusal is not None and stop == "hermes_guardrails"
    payload = json.loads(refusal)
    assert payload["guardrail"]["code"] == "repeated_exact_failure_block"
    assert payload["error"].startswith("Blocked mcp__db__query: the same tool call failed 5 times")


def test_a_successful_edit_between_failures_makes_the_retry_a_new_experiment() -> None:
    peer = HermesGuardrails()
    c = call("mcp__db__query", sql="select 1")
    for i in range(5):
        turn(peer, c, f"error {i}", failed=True)
    turn(peer, call("edit_file", path="schema.sql"), "edited")
    refusal, stop, _ = turn(peer, c, "error 5", failed=True)
    assert (refusal, stop) == (None, None)


def test_one_tool_failing_with_any_arguments_halts_after_the_eighth() -> None:
    peer = HermesGuardrails()
    stops = [
        turn(peer, call("mcp__db__query", sql=f"q{i}"), f"e{i}", failed=True)[1] for i in range(8)
    ]
    assert stops == [None] * 7 + ["hermes_guardrails"]


def test_failure_tolerant_tools_never_halt_on_distinct_failures() -> None:
    peer = HermesGuardrails()
    results = [
        turn(peer, call("run_shell_command", command=f"cmd{i}"), f"e{i}", failed=True)
        for i in range(20)
    ]
    assert all(stop is None for _, stop, _ in results)
    assert results[2][2] is not None and "has failed 3 times this turn" in results[2][2]


def test_a_read_only_call_returning_the_same_result_five_times_is_blocked_the_sixth() -> None:
    peer = HermesGuardrails()
    paths = ["a", "b", "c", "d", "e"]  # a cycle of period 5: longer than the cycle detector's 4
    for _ in range(5):
        for path in paths:
            refusal, stop, _ = turn(peer, call("read_file", path=path), f"content of {path}")
            assert (refusal, stop) == (None, None)
    refusal, stop, _ = turn(peer, call("read_file", path="a"), "content of a")
    assert refusal is not None and stop == "hermes_guardrails"
    assert json.loads(refusal)["guardrail"]["code"] == "idempotent_no_progress_block"


def test_a_two_call_cycle_gets_a_note_at_three_laps_and_halts_after_five() -> None:
    peer = HermesGuardrails()
    a = call("run_shell_command", command="git status")
    b = call("run_shell_command", command="git diff")
    results = [turn(peer, c, "clean") for c in [a, b] * 5]
    assert [stop for _, stop, _ in results] == [None] * 9 + ["hermes_guardrails"]
    assert results[4][2] is None
    assert results[5][2] is not None and results[5][2].startswith(
        "[hermes note: the last 3 rounds repeated the same cycle of 2 tool calls"
    )


def test_the_fifty_first_web_search_is_blocked() -> None:
    peer = HermesGuardrails()
    for i in range(50):
        assert turn(peer, call("google_web_search", query=f"q{i}"), f"r{i}")[0] is None
    refusal, stop, _ = turn(peer, call("google_web_search", query="q50"), "r50")
    assert refusal is not None and stop == "hermes_guardrails"
    assert json.loads(refusal)["guardrail"]["code"] == "loop_web_search_cap"


def test_a_refused_call_is_not_observed() -> None:
    peer = HermesGuardrails()
    c = call("mcp__db__query", sql="select 1")
    for i in range(5):
        turn(peer, c, f"error {i}", failed=True)
    refused = call("mcp__db__query", sql="select 1")
    other = call("mcp__db__query", sql="select 2")
    texts = [peer.refuse_call(refused), peer.refuse_call(other)]
    assert texts[0] is not None and texts[1] is None
    outcomes = [
        ToolOutcome(
            call_id=refused.call_id,
            tool_name=refused.name,
            status=TerminalStatus.ERROR,
            error_message=texts[0],
        ),
        ToolOutcome(call_id=other.call_id, tool_name=other.name, status="success", content="1"),
    ]
    assert peer.after_batch([refused, other], outcomes) == "hermes_guardrails"
    # The refused call was not counted as a 6th failure; the success cleared only its own
    # signature and its tool's same-tool count.
    assert peer.exact_failure_counts == {peer._signature(refused): 5}
    assert peer.same_tool_failure_counts == {}
