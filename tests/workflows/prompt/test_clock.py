"""The prompt's clock in ``PromptWorkflow`` on a real Temporal dev server
(workflows/rules/evidence.py, "Time as evidence"; docs/scenarios.md, "Time").

A scenario's scripted time moves the clock and nothing really waits: 30 polls that each hold
for 30 s take milliseconds here, and the prompt ends as the simulator says it does. The
same polls answering at once are stopped by the identical-result rule, in both. The rules
read the workflow's clock (workflow time since the prompt started plus the scripted time),
and the history replays to the same decisions.
"""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import Client

from bench.simulate import result_verdict, simulate_seawall, verdict_differences
from seawall.runtime.plugin import WORKFLOWS
from seawall.scenario.format import Scenario
from tests.replay.test_replay import replayer
from tests.scenario_helpers import run, scenario, scenario_file
from tests.workflows.prompt.test_durable_steps import patch_ids
from workflows.contracts.prompt import LoopType, StopReason
from workflows.prompt.patches import NEWEST_START_PATCH
from workflows.rules.identical_results import IdenticalResults
from workflows.rules.ladder import RuleFinding, RuleReview
from workflows.seed.guard import GuardMode

pytestmark = pytest.mark.asyncio

POLLS = 30
# Each poll: the model's 2 s, then the status call's 30 s (scenarios/poll-waiting-job.yaml).
SCRIPTED_SECONDS_PER_BATCH = 32.0


def without_durations(spec: Scenario) -> Scenario:
    """``spec`` with every fixture outcome instant."""
    data: dict[str, Any] = spec.model_dump()
    for tool in data["tools"].values():
        for outcome in tool["outcomes"]:
            outcome["duration_seconds"] = 0.0
    return scenario(**data)


async def test_polls_that_wait_end_the_turn_and_the_simulator_agrees(
    client: Client, task_queue: str
) -> None:
    spec = scenario_file("poll-waiting-job")
    result = await run(client, task_queue, spec)

    assert (result.stop_reason, result.loop_type) == (StopReason.END_TURN, None)
    assert result.tool_calls.executed == POLLS and result.model_requests == POLLS + 1
    assert result.rules == []
    simulated = simulate_seawall(spec, GuardMode.ENFORCE).verdict()
    assert verdict_differences(simulated, result_verdict(result)) == []

    # The history carries the patch and replays to the same commands and decisions.
    handle = client.get_workflow_handle(result.workflow_id)
    history = await handle.fetch_history()
    # The newest start patch brings ONE_MARKER_PATCH, and with it PROGRESS_RULES_PATCH,
    # without their own markers.
    assert patch_ids(history) == [NEWEST_START_PATCH]
    assert (await replayer(*WORKFLOWS).replay_workflow(history)).replay_failure is None


async def test_the_same_polls_answering_at_once_are_stopped_and_the_simulator_agrees(
    client: Client, task_queue: str
) -> None:
    spec = without_durations(scenario_file("poll-waiting-job"))
    result = await run(client, task_queue, spec)

    assert (result.stop_reason, result.loop_type) == (
        StopReason.LOOP_DETECTED,
        LoopType.REPEATED_IDENTICAL_RESULT,
    )
    assert [(e.batch, e.rule, e.decision) for e in result.rules] == [
        (8, "repeated_identical_result", "warn"),
        (9, "repeated_identical_result", "stop"),
    ]
    simulated = simulate_seawall(spec, GuardMode.ENFORCE).verdict()
    assert verdict_differences(simulated, result_verdict(result)) == []


async def test_the_rules_read_the_workflows_clock(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workflow's rules module is passed through the sandbox, so a recording counter
    sees the clock each review is handed: at least the scripted time so far (the real time
    the run took comes on top), and never going back."""
    seen: list[float] = []
    review = IdenticalResults.review

    def recording(self: IdenticalResults, batch: RuleReview) -> list[RuleFinding]:
        seen.append(batch.now)
        return review(self, batch)

    monkeypatch.setattr(IdenticalResults, "review", recording)
    spec = scenario_file("poll-waiting-job")
    result = await run(client, task_queue, spec)

    assert result.stop_reason is StopReason.END_TURN
    assert len(seen) == POLLS
    assert all(now >= SCRIPTED_SECONDS_PER_BATCH * (n + 1) for n, now in enumerate(seen))
    assert seen == sorted(seen)
