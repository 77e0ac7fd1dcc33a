"""The benchmark simulator (``bench/simulate.py``) replays the progress rules that read what a
call wrote and what it searched for: a scenario fixture's ``writes`` reach R7 as a built-in
file tool's would, and search churn reaches R8 (docs/protections.md, "Loop profiles")."""

from __future__ import annotations

from typing import Any

from bench.simulate import simulate_seawall
from tests.scenario_helpers import ok, scenario
from workflows.contracts.prompt import StopReason
from workflows.rules import LoopRule
from workflows.rules.reformulations import REFORMULATION_BUDGET, REFORMULATION_REMINDER
from workflows.rules.workspace_states import (
    WORKSPACE_REVISIT_REMINDER,
    WORKSPACE_REVISIT_THRESHOLD,
)
from workflows.seed import GuardMode


def wrote(files: dict[str, str | None]) -> dict[str, Any]:
    return {**ok("Wrote the file."), "writes": files}


def turns(*tool_calls: dict[str, Any], times: int = 1) -> list[dict[str, Any]]:
    return [{"tool_calls": list(tool_calls)} for _ in range(times)]


def test_a_fixture_rewriting_the_same_file_forever_is_stopped_by_the_workspace_rule() -> None:
    spec = scenario(
        name="rewrite-forever",
        mode=GuardMode.ENFORCE,
        tools={"write_file": {"mutating": True, "outcomes": [wrote({"report.md": "# Report\n"})]}},
        model={
            "turns": turns({"name": "write_file", "arguments": {"path": "report.md"}}, times=30)
        },
    )
    result = simulate_seawall(spec)

    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert result.loop_type == LoopRule.WORKSPACE_REVISIT.value
    # One new state, the threshold's revisits (the reminder), then one more (the stop).
    assert result.tool_calls.executed == WORKSPACE_REVISIT_THRESHOLD + 2
    assert sum(m.content == WORKSPACE_REVISIT_REMINDER for m in result.messages) == 1


def test_a_formatter_undoing_every_edit_is_stopped_and_real_edits_are_not() -> None:
    edit = {"name": "edit_file", "arguments": {"path": "app.py"}}
    fmt = {"name": "run_shell_command", "arguments": {"command": "ruff format app.py"}}
    cycle = scenario(
        name="formatter-cycle",
        mode=GuardMode.ENFORCE,
        tools={
            "edit_file": {"mutating": True, "outcomes": [wrote({"app.py": "x=1\n"})]},
            "run_shell_command": {"outcomes": [ok("1 file reformatted")]},
        },
        model={"turns": turns(edit, fmt, times=20)},
    )
    progress = scenario(
        name="real-edits",
        mode=GuardMode.ENFORCE,
        tools={
            "edit_file": {
                "mutating": True,
                "outcomes": [wrote({"app.py": f"x = {i}\n"}) for i in range(20)],
            },
            "run_shell_command": {"outcomes": [ok("1 file reformatted")]},
        },
        model={"turns": [*turns(edit, fmt, times=20), {"text": "done"}]},
    )

    assert simulate_seawall(cycle).loop_type == LoopRule.WORKSPACE_REVISIT.value
    assert simulate_seawall(progress).stop_reason is StopReason.END_TURN


def test_search_churn_is_stopped_and_searching_then_reading_is_not() -> None:
    churn = scenario(
        name="search-churn",
        mode=GuardMode.ENFORCE,
        tools={
            "mcp__github__search_code": {"tool_type": "mcp", "outcomes": [ok("total_count: 0")]}
        },
        model={
            "turns": [
                {"tool_calls": [{"name": "mcp__github__search_code", "arguments": {"q": f"s{i}"}}]}
                for i in range(40)
            ]
        },
    )
    explore_turns: list[dict[str, Any]] = []
    for i in range(20):
        explore_turns.append({"tool_calls": [{"name": "grep_search", "arguments": {"p": f"h{i}"}}]})
        explore_turns.append({"tool_calls": [{"name": "read_file", "arguments": {"path": f"{i}"}}]})
    explore = scenario(
        name="search-then-read",
        mode=GuardMode.ENFORCE,
        tools={"grep_search": {"outcomes": [ok("h.py:1")]}, "read_file": {"outcomes": [ok("x")]}},
        model={"turns": [*explore_turns, {"text": "found it"}]},
    )

    stopped = simulate_seawall(churn)
    assert stopped.loop_type == LoopRule.REFORMULATION.value
    assert stopped.tool_calls.executed == REFORMULATION_BUDGET + 2
    assert sum(m.content == REFORMULATION_REMINDER for m in stopped.messages) == 1
    explored = simulate_seawall(explore)
    assert explored.stop_reason is StopReason.END_TURN and explored.warnings == 0
