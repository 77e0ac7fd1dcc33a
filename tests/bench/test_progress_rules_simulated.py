"""The progress rules R5 (call cycles) and R6 (repeated verifications) in the benchmark
simulator, which replays a scenario through the same pure code as ``PromptWorkflow``
(docs/protections.md, "Loop profiles"; docs/benchmarks.md).

Scenarios are written inline in the scenario format (docs/scenarios.md), one per shape: the
loop each rule stops, and a legitimate neighbour it must let finish. The seed profile, which
has neither rule, lets every one of them run to its end.
"""

from __future__ import annotations

from typing import Any

from bench.simulate import SimResult, simulate_seawall
from seawall.scenario.format import Scenario
from workflows.contracts.conversation import Role
from workflows.rules import SEED_SETTINGS
from workflows.rules.call_cycles import CALL_CYCLE_STOP_MESSAGE, CALL_CYCLE_THRESHOLD
from workflows.rules.repeated_verifications import (
    REPEATED_VERIFICATION_STOP_MESSAGE,
    REPEATED_VERIFICATION_THRESHOLD,
)

Json = dict[str, Any]


def ok(content: str) -> Json:
    return {"status": "success", "execution_status": "success", "content": content}


def turn(name: str, **arguments: object) -> Json:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def scenario(name: str, tools: dict[str, Json], turns: list[Json]) -> Scenario:
    return Scenario.model_validate(
        {
            "name": name,
            "mode": "enforce",
            "tools": tools,
            "model": {"turns": [*turns, {"text": "Done."}]},
        }
    )


def decisions(result: SimResult) -> list[tuple[int, str, str]]:
    return [(r.batch, r.rule, r.decision) for r in result.rules]


def last_system_message(result: SimResult) -> str:
    return [m.content for m in result.messages if m.role is Role.SYSTEM][-1]


def test_a_cycle_of_successful_inspections_is_stopped_as_a_call_cycle() -> None:
    # git_status is a mutating tool (as a shell command is): R3 resets on it every round.
    tools: dict[str, Json] = {
        "git_status": {"mutating": True, "outcomes": [ok("nothing to commit, working tree clean")]},
        "read_file": {"outcomes": [ok("def main():\n    return 1\n")]},
        "list_dir": {"outcomes": [ok("app.py\nutil.py")]},
    }
    cycle = [turn("git_status"), turn("read_file", path="src/app.py"), turn("list_dir", path="src")]
    spec = scenario("cycle", tools, cycle * 12)
    result = simulate_seawall(spec)
    assert result.halted and result.loop_type == "repeated_call_cycle"
    # Batch 1 reports git_status's change for the first time (progress, so the count starts
    # there); the cycle's fourth time round ends at batch 12, its fifth at 15.
    warned = 3 * (CALL_CYCLE_THRESHOLD + 1)
    assert decisions(result) == [
        (warned, "repeated_call_cycle", "warn"),
        # Nothing new since batch 3: the no-new-state rule's twelfth stale batch (R11) is
        # the batch the cycle stops in; the narrower cause is the one recorded.
        (warned + 3, "repeated_call_cycle", "stop"),
        (warned + 3, "repeated_stagnation", "warn"),
    ]
    assert last_system_message(result) == CALL_CYCLE_STOP_MESSAGE
    assert not simulate_seawall(spec, loop=SEED_SETTINGS).halted


def test_a_green_suite_rerun_to_confirm_is_stopped_as_a_repeated_verification() -> None:
    tools = {"run_shell_command": {"outcomes": [ok("120 passed in 8.2s")]}}
    commands = ["pytest", "pytest -q", "pytest -v", "pytest tests/", "pytest -q --no-header"]
    turns = [turn("run_shell_command", command=c) for c in commands * 4]
    spec = scenario("confirm", tools, turns)
    result = simulate_seawall(spec)
    assert result.halted and result.loop_type == "repeated_verification"
    warned = REPEATED_VERIFICATION_THRESHOLD + 1
    assert decisions(result) == [
        (warned, "repeated_verification", "warn"),
        (warned + 1, "repeated_verification", "stop"),
    ]
    assert last_system_message(result) == REPEATED_VERIFICATION_STOP_MESSAGE
    assert not simulate_seawall(spec, loop=SEED_SETTINGS).halted


def test_fix_then_recheck_with_the_same_green_result_runs_to_its_end() -> None:
    tools: dict[str, Json] = {
        "edit_file": {"mutating": True, "outcomes": [ok("Edited (1 replacement).")]},
        "read_file": {"outcomes": [ok("def h():\n    return old_api()\n")]},
        "run_shell_command": {"outcomes": [ok("120 passed in 8.2s")]},
    }
    turns: list[Json] = []
    for i in range(15):
        turns += [
            turn("read_file", path=f"src/h{i}.py"),
            turn("edit_file", path=f"src/h{i}.py", old_string="old_api(", new_string="api("),
            turn("run_shell_command", command="pytest -q"),
            turn("run_shell_command", command="ruff check ."),
        ]
    result = simulate_seawall(scenario("refactor", tools, turns))
    assert not result.halted and result.rules == []
