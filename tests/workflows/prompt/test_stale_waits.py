"""The stale-wait rule (R12) in ``PromptWorkflow`` on a real Temporal dev server
(docs/protections.md, "The rules"): a ``sleep 300; pgrep -f`` wait on oneself
(scenarios/stale-wait.yaml) that every other cheap rule lets run. In ``enforce`` it reminds after
half an hour of unchanged answers and stops when a second half hour ends; ``warn`` reminds once
and never stops; ``shadow`` changes nothing; the rule's own ``off`` never counts. The simulator
reaches the same verdict, the history replays, and the decisions name the rule, never the
command.
"""

from __future__ import annotations

from temporalio.client import Client

from bench.simulate import result_verdict, simulate_seawall, verdict_differences
from seawall.runtime.plugin import WORKFLOWS
from seawall.scenario.format import Scenario
from tests.replay.test_replay import replayer
from tests.scenario_helpers import count_text, run, scenario_file
from workflows.contracts.prompt import LoopType, PromptResult, StopReason
from workflows.rules.stale_waits import STALE_WAIT_REMINDER, STALE_WAIT_STOP_MESSAGE
from workflows.seed.guard import GuardMode

COMMAND = "pgrep -f"


def stale_wait(**changes: object) -> Scenario:
    return scenario_file("stale-wait").model_copy(update=changes)


def entries(result: PromptResult) -> list[tuple[int, str, str, str, int]]:
    return [(e.batch, e.rule, e.decision, e.mode, e.count) for e in result.rules]


def agrees_with_the_simulator(spec: Scenario, result: PromptResult) -> None:
    simulated = simulate_seawall(spec, None).verdict()
    assert verdict_differences(simulated, result_verdict(result)) == []


async def test_in_enforce_it_reminds_after_half_an_hour_and_stops_after_an_hour(
    client: Client, task_queue: str
) -> None:
    spec = stale_wait()
    result = await run(client, task_queue, spec)

    assert (result.stop_reason, result.loop_type) == (
        StopReason.LOOP_DETECTED,
        LoopType.REPEATED_STALE_WAIT,
    )
    assert entries(result) == [
        (8, "repeated_stale_wait", "warn", "enforce", 1),
        (14, "repeated_stale_wait", "stop", "enforce", 2),
    ]
    assert count_text(result.messages, STALE_WAIT_REMINDER) == 1
    assert result.messages[-1].content == STALE_WAIT_STOP_MESSAGE
    assert result.model_requests == 14  # no model request after the stop
    # What the rule recorded names the rule and counts, never the command it waited on.
    assert COMMAND not in "".join(e.model_dump_json() for e in result.rules)
    agrees_with_the_simulator(spec, result)

    history = await client.get_workflow_handle(result.workflow_id).fetch_history()
    assert (await replayer(*WORKFLOWS).replay_workflow(history)).replay_failure is None


async def test_in_warn_it_reminds_once_and_the_prompt_runs_to_its_end(
    client: Client, task_queue: str
) -> None:
    spec = stale_wait(mode=GuardMode.WARN)
    result = await run(client, task_queue, spec)

    assert (result.stop_reason, result.loop_type) == (StopReason.END_TURN, None)
    assert entries(result) == [
        (8, "repeated_stale_wait", "warn", "warn", 1),
        (14, "repeated_stale_wait", "would_stop", "warn", 2),
    ]
    assert count_text(result.messages, STALE_WAIT_REMINDER) == 1
    assert count_text(result.messages, STALE_WAIT_STOP_MESSAGE) == 0
    agrees_with_the_simulator(spec, result)


async def test_in_shadow_it_records_and_changes_nothing(client: Client, task_queue: str) -> None:
    shadow = await run(client, task_queue, stale_wait(mode=GuardMode.SHADOW))
    off = await run(client, task_queue, stale_wait(rule_modes={"stale_wait": GuardMode.OFF}))

    assert [e.decision for e in shadow.rules] == ["would_warn", "would_stop"]
    assert off.rules == []
    assert off.stop_reason is StopReason.END_TURN
    assert [m.content for m in shadow.messages] == [m.content for m in off.messages]
