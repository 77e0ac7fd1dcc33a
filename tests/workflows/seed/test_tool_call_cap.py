"""The per-prompt tool-call cap, hard or adaptive (``workflows/seed/protections.py``,
docs/protections.md, "The adaptive tool-call cap"). Pure: no server, no Temporal."""

from __future__ import annotations

from workflows.contracts import ToolCall
from workflows.contracts.activity import ToolSpec
from workflows.contracts.prompt_options import DEFAULT_MAX_TOOL_CALLS_PER_TURN, PromptOptions
from workflows.rules import LoopProfile, LoopRules, LoopSettings
from workflows.seed import GuardMode
from workflows.seed.protections import (
    ADAPTIVE_CAP_BACKSTOP_FACTOR,
    ADAPTIVE_CAP_REPEATS,
    BatchProtections,
    ToolCallCap,
)

TOOLS = {"read_file": ToolSpec(name="read_file")}
DEFAULT = DEFAULT_MAX_TOOL_CALLS_PER_TURN


def distinct(n: int) -> list[str]:
    return [f"call-{i}" for i in range(n)]


def test_the_seed_default_is_a_hard_cap_of_100() -> None:
    cap = ToolCallCap(None)
    assert not cap.over(distinct(DEFAULT))
    assert cap.over(["one more"])
    assert cap.requested == DEFAULT  # the skipped batch is not counted


def test_the_adaptive_default_lets_distinct_calls_run_past_100() -> None:
    cap = ToolCallCap(None, adaptive=True)
    for i in range(DEFAULT * 3):
        assert not cap.over([f"call-{i}"])
    assert cap.requested == DEFAULT * 3


def test_past_100_the_adaptive_cap_stops_a_call_asked_for_the_sixth_time() -> None:
    cap = ToolCallCap(None, adaptive=True)
    # Below the default a call may repeat freely (the loop rules watch repeats there).
    assert not cap.over(["status"] * (ADAPTIVE_CAP_REPEATS - 2))
    assert not cap.over(distinct(DEFAULT - ADAPTIVE_CAP_REPEATS + 2))
    assert cap.requested == DEFAULT
    assert not cap.over(["status"])  # the fifth time
    assert not cap.stopped_on_repeat
    assert cap.over(["other", "status"])  # the sixth time, past the default
    assert cap.stopped_on_repeat
    assert cap.requested == DEFAULT + 1


def test_the_adaptive_cap_has_a_hard_backstop_at_ten_times_the_default() -> None:
    cap = ToolCallCap(None, adaptive=True)
    backstop = DEFAULT * ADAPTIVE_CAP_BACKSTOP_FACTOR
    assert not cap.over(distinct(backstop))
    assert cap.over(["a new call"])
    assert not cap.stopped_on_repeat
    assert cap.backstop == backstop


def test_a_configured_cap_stays_hard_in_every_profile() -> None:
    for configured in (3, DEFAULT):
        cap = ToolCallCap(configured, adaptive=True)
        assert not cap.adaptive
        assert not cap.over(distinct(configured))
        assert cap.over(["one more"])
    unlimited = ToolCallCap(0, adaptive=True)
    assert not unlimited.over(distinct(DEFAULT * ADAPTIVE_CAP_BACKSTOP_FACTOR * 2))


def recommended(options: PromptOptions) -> BatchProtections:
    p = BatchProtections(options, "/ws")
    p.use_loop_rules(
        LoopRules(
            LoopSettings(profile=LoopProfile.RECOMMENDED),
            GuardMode.ENFORCE,
            route_forced_off=False,
        )
    )
    return p


def read(n: int, call_id: str) -> ToolCall:
    return ToolCall(call_id=call_id, name="read_file", arguments={"path": f"f{n}"})


def test_the_recommended_profile_makes_the_unset_cap_adaptive_and_says_why_it_stopped() -> None:
    p = recommended(PromptOptions())
    for n in range(DEFAULT + 20):
        assert not p.screen([read(n, f"c{n}")], TOOLS).capped
    for k in range(ADAPTIVE_CAP_REPEATS - 2):
        assert not p.screen([read(7, f"again{k}")], TOOLS).capped  # f7's 2nd..5th ask
    assert p.screen([read(7, "last")], TOOLS).capped  # the sixth
    stop = p.cap_stop()
    assert f"passed {DEFAULT} tool calls" in stop.message
    assert f"already made {ADAPTIVE_CAP_REPEATS - 1} times" in stop.message


def test_the_recommended_profile_keeps_an_explicit_cap_hard() -> None:
    p = recommended(PromptOptions(max_tool_calls_per_turn=DEFAULT))
    for n in range(DEFAULT):
        assert not p.screen([read(n, f"c{n}")], TOOLS).capped
    assert p.screen([read(DEFAULT, "over")], TOOLS).capped
    assert f"({DEFAULT} calls)" in p.cap_stop().message


def test_the_seed_profile_keeps_the_unset_cap_hard() -> None:
    p = BatchProtections(PromptOptions(), "/ws")
    for n in range(DEFAULT):
        assert not p.screen([read(n, f"c{n}")], TOOLS).capped
    assert p.screen([read(DEFAULT, "over")], TOOLS).capped
    assert f"({DEFAULT} calls)" in p.cap_stop().message
