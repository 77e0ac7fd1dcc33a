"""The faithful peers (bench/loop_peers/) on hand-built sequences their sources imply, the
warning channel into the simulated conversation, and the union."""

from __future__ import annotations

from itertools import count
from pathlib import Path
from typing import Any

from bench.baselines import fresh_baselines
from bench.loop_peers import PEERS, fresh_peers
from bench.loop_peers.any_peer import AnyPeer
from bench.loop_peers.gemini_cli import CUT_TEXT, GeminiLoopDetection, feedback_text
from bench.loop_peers.goose import DECLINED_RESPONSE, GooseRepetitionInspector
from bench.loop_peers.openhands import OpenHandsStuckDetector, nudge_text
from bench.simulate import simulate_baseline
from seawall.scenario.format import load_scenario
from workflows.contracts import ToolCall, ToolOutcome
from workflows.contracts.conversation import Role

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "corpus"
_ids = count()


def call(name: str = "read", **arguments: Any) -> ToolCall:
    return ToolCall(call_id=f"c{next(_ids)}", name=name, arguments=arguments)


def ok(c: ToolCall, content: str = "same result") -> ToolOutcome:
    return ToolOutcome(
        call_id=c.call_id,
        tool_name=c.name,
        status="success",
        execution_status="success",
        content=content,
    )


def failed(c: ToolCall, content: str = "boom", execution_status: str = "error") -> ToolOutcome:
    return ToolOutcome(
        call_id=c.call_id,
        tool_name=c.name,
        status="error",
        execution_status=execution_status,
        content=content,
        error_message=content,
    )


def step(peer: Any, calls: list[ToolCall], outcomes: Any, text: str = "") -> dict[str, Any]:
    """One reply through a peer's hooks in the simulator's order."""
    if hasattr(peer, "observe_model"):
        peer.observe_model(text, calls)
    refused = [peer.refuse_call(c) for c in calls] if hasattr(peer, "refuse_call") else []
    before = peer.before_batch(calls)
    warnings = [peer.warning()] if hasattr(peer, "warning") else []
    after = None
    if before is None:
        settled = [outcomes(c) for c in calls]
        after = peer.after_batch(calls, settled)
        if hasattr(peer, "warning"):
            warnings.append(peer.warning())
    return {
        "before": before,
        "after": after,
        "refused": refused,
        "warnings": [w for w in warnings if w is not None],
    }


# --- OpenHands ----------------------------------------------------------------------------


def test_openhands_halts_at_the_fourth_identical_action_and_observation() -> None:
    peer = OpenHandsStuckDetector()
    verdicts = [step(peer, [call(path="a")], ok, text="checking")["after"] for _ in range(4)]
    assert verdicts == [None, None, None, "openhands_stuck"]
    assert peer.pattern == "action_observation"


def test_openhands_compares_the_reply_text_as_the_actions_thought() -> None:
    peer = OpenHandsStuckDetector()
    verdicts = [step(peer, [call(path="a")], ok, text=f"try {i}")["after"] for i in range(6)]
    assert verdicts == [None] * 6


def test_openhands_same_result_different_arguments_is_no_loop() -> None:
    peer = OpenHandsStuckDetector()
    assert [step(peer, [call(path=str(i))], ok)["after"] for i in range(8)] == [None] * 8


def test_openhands_nudges_at_three_action_errors_and_halts_at_four() -> None:
    peer = OpenHandsStuckDetector()

    def invalid(c: ToolCall) -> ToolOutcome:
        return failed(c, "bad arguments", execution_status="not_started")

    results = [step(peer, [call("edit", path="x")], invalid) for _ in range(4)]
    assert [r["after"] for r in results] == [None, None, None, "openhands_stuck"]
    assert [r["warnings"] for r in results[:3]] == [[], [], [nudge_text("edit", "bad arguments")]]
    assert peer.pattern == "action_observation"  # checked first: the errors are equal too


def test_openhands_action_error_streak_ignores_the_error_text() -> None:
    peer = OpenHandsStuckDetector()
    results = []
    for i in range(4):

        def invalid(c: ToolCall, i: int = i) -> ToolOutcome:
            return failed(c, f"bad arguments #{i}", execution_status="not_started")

        results.append(step(peer, [call("edit", path="x")], invalid))
    assert [r["after"] for r in results] == [None, None, None, "openhands_stuck"]
    assert results[2]["warnings"] == [nudge_text("edit", "bad arguments #2")]
    assert peer.pattern == "action_error"


def test_openhands_a_tool_that_ran_and_failed_is_an_observation_not_an_agent_error() -> None:
    peer = OpenHandsStuckDetector()
    results = [step(peer, [call("sh", cmd="make")], failed) for _ in range(4)]
    assert [r["after"] for r in results] == [None, None, None, "openhands_stuck"]
    assert all(not r["warnings"] for r in results)
    assert peer.pattern == "action_observation"


def test_openhands_alternating_pattern_halts_at_the_sixth_pair() -> None:
    peer = OpenHandsStuckDetector()
    verdicts = []
    for i in range(6):
        path = "a" if i % 2 == 0 else "b"
        verdicts.append(step(peer, [call(path=path)], lambda c, p=path: ok(c, p))["after"])
    assert verdicts == [None] * 5 + ["openhands_stuck"]
    assert peer.pattern == "alternating"


# --- gemini-cli ---------------------------------------------------------------------------


def test_gemini_cuts_the_fifth_identical_call_warns_then_halts_on_the_next() -> None:
    peer = GeminiLoopDetection()
    results = [step(peer, [call(path="a")], ok) for _ in range(6)]
    assert [r["refused"] for r in results[:4]] == [[None]] * 4
    assert results[4]["refused"] == [CUT_TEXT]
    detail = 'Repeated tool call: read with arguments {"path":"a"}'
    assert results[4]["warnings"] == [feedback_text(detail)]
    assert results[4]["before"] is None and results[4]["after"] is None
    assert results[5]["before"] == "gemini_loop_detection"


def test_gemini_detects_a_cycle_of_period_two_at_its_tenth_call() -> None:
    peer = GeminiLoopDetection()
    refused = [step(peer, [call(path="ab"[i % 2])], ok)["refused"][0] for i in range(10)]
    assert refused == [None] * 9 + [CUT_TEXT]


def test_gemini_keys_on_the_arguments_as_written_key_order_included() -> None:
    peer = GeminiLoopDetection()
    for i in range(8):
        arguments = {"a": 1, "b": 2} if i % 2 else {"b": 2, "a": 1}
        c = ToolCall(call_id=f"g{i}", name="read", arguments=arguments)
        assert step(peer, [c], ok)["refused"] == [None]


def test_gemini_calls_before_the_detected_one_still_run() -> None:
    peer = GeminiLoopDetection()
    for _ in range(4):
        step(peer, [call(path="a")], ok)
    result = step(peer, [call(path="other"), call(path="a"), call(path="a")], ok)
    assert result["refused"] == [None, None, None]  # "other" broke the run
    peer = GeminiLoopDetection()
    for _ in range(4):
        step(peer, [call(path="a")], ok)
    result = step(peer, [call(path="a"), call(path="later")], ok)
    assert result["refused"] == [CUT_TEXT, CUT_TEXT]


def test_gemini_content_chanting_cuts_the_whole_reply() -> None:
    peer = GeminiLoopDetection()
    chant = "I will now try the same approach again. " * 30
    result = step(peer, [call(path="a")], ok, text=chant)
    assert result["refused"] == [CUT_TEXT]
    assert result["warnings"][0].startswith(
        "System: Potential loop detected. Details: Repeating content detected:"
    )


def test_gemini_a_list_of_distinct_items_is_no_chant() -> None:
    peer = GeminiLoopDetection()
    text = "".join(f"- updated module number {i} of the package as planned\n" for i in range(40))
    assert step(peer, [call(path="a")], ok, text=text)["refused"] == [None]


# --- goose --------------------------------------------------------------------------------


def test_goose_denies_the_sixth_identical_call_and_never_halts() -> None:
    peer = GooseRepetitionInspector()
    results = [step(peer, [call(path="a")], ok) for _ in range(7)]
    assert [r["refused"][0] for r in results] == [None] * 5 + [DECLINED_RESPONSE] * 2
    assert all(r["before"] is None and r["after"] is None for r in results)
    assert step(peer, [call(path="b")], ok)["refused"] == [None]


def test_goose_compares_arguments_as_values_not_text() -> None:
    peer = GooseRepetitionInspector()
    for i in range(6):
        arguments = {"a": 1, "b": 2} if i % 2 else {"b": 2, "a": 1}
        c = ToolCall(call_id=f"k{i}", name="read", arguments=arguments)
        refused = step(peer, [c], ok)["refused"][0]
    assert refused == DECLINED_RESPONSE


def test_goose_denies_a_tool_after_three_identical_errors_then_lets_it_retry() -> None:
    peer = GooseRepetitionInspector()
    for i in range(3):
        assert step(peer, [call("sh", cmd=str(i))], failed)["refused"] == [None]
    assert step(peer, [call("sh", cmd="new"), call("read")], ok)["refused"] == [
        DECLINED_RESPONSE,
        None,
    ]
    assert step(peer, [call("sh", cmd="again")], ok)["refused"] == [None]


# --- the simulator: refusals, warnings, the union -----------------------------------------


def test_peers_in_the_simulator_on_a_poll_of_eight_identical_calls() -> None:
    scenario = load_scenario(CORPUS / "legit-poll-job-until-done.yaml")
    gemini = simulate_baseline(scenario, GeminiLoopDetection())
    assert (gemini.loop_type, gemini.last_batch, gemini.tool_calls.executed) == (
        "gemini_loop_detection",
        6,
        4,
    )
    assert gemini.warnings == 1
    warned = [m for m in gemini.messages if m.content.startswith("System: Potential loop")]
    assert len(warned) == 1 and warned[0].role == Role.USER
    assert any(m.role == Role.TOOL and m.content == CUT_TEXT for m in gemini.messages)

    openhands = simulate_baseline(scenario, OpenHandsStuckDetector())
    assert (openhands.loop_type, openhands.last_batch, openhands.warnings) == (
        "openhands_stuck",
        4,
        0,
    )

    goose = simulate_baseline(scenario, GooseRepetitionInspector())
    assert goose.stop_reason.value == "end_turn"
    assert (goose.tool_calls.executed, goose.tool_calls.refused) == (5, 3)

    union = simulate_baseline(
        scenario,
        AnyPeer([OpenHandsStuckDetector(), GeminiLoopDetection(), GooseRepetitionInspector()]),
    )
    assert (union.loop_type, union.last_batch) == ("openhands_stuck", 4)


def test_the_union_halts_at_the_first_peer_and_joins_warnings() -> None:
    union = AnyPeer([GeminiLoopDetection(), OpenHandsStuckDetector()])
    results = [step(union, [call(path="a")], ok, text="again") for _ in range(4)]
    assert [r["after"] for r in results] == [None, None, None, "openhands_stuck"]

    union = AnyPeer([GeminiLoopDetection(), GooseRepetitionInspector()])
    results = [step(union, [call(path="a")], ok) for _ in range(6)]
    assert results[4]["refused"] == [CUT_TEXT]  # gemini's text first, goose asked too
    assert results[4]["warnings"] and results[5]["before"] == "gemini_loop_detection"


def test_registry_and_report_names_are_unique() -> None:
    names = [p.name for p in [*fresh_baselines(), *fresh_peers()]]
    assert len(names) == len(set(names))
    assert len(fresh_peers()) == len(PEERS) + 1


def test_openhands_restarts_its_window_after_a_user_message() -> None:
    peer = OpenHandsStuckDetector()
    for _ in range(3):
        assert step(peer, [call(path="a")], ok)["after"] is None
    peer.observe_user(["keep polling, the job takes a while"])  # arrives during batch 4
    assert step(peer, [call(path="a")], ok)["after"] is None  # batches 1-4 are cut
    verdicts = [step(peer, [call(path="a")], ok)["after"] for _ in range(4)]
    assert verdicts == [None, None, None, "openhands_stuck"]
