"""A long output is read where its call ran, in ``PromptWorkflow`` on a real Temporal dev
server (workflows/rules/normalize.py, "Bounded cost"): the tool activity's result carries its
reading, the workflow decides on it as the simulator does, and its history replays to the
same decisions. The reading's own cases are in ``tests/workflows/rules/test_normalize.py``.
"""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from bench.simulate import result_verdict, simulate_seawall, verdict_differences
from seawall.runtime.plugin import WORKFLOWS
from tests.replay.test_replay import replayer
from tests.scenario_helpers import run, scenario_file
from workflows.contracts import ToolOutcome
from workflows.contracts.activity import RUN_TOOL
from workflows.contracts.prompt import LoopType, StopReason
from workflows.rules.identical_results import IDENTICAL_RESULT_THRESHOLD
from workflows.rules.normalize import read_whole_exchange
from workflows.seed.guard import GuardMode

pytestmark = pytest.mark.asyncio


async def test_the_tool_activity_reads_a_long_output_and_the_rules_decide_on_it(
    client: Client, task_queue: str
) -> None:
    spec = scenario_file("repeated-log-query")
    result = await run(client, task_queue, spec)

    assert (result.stop_reason, result.loop_type) == (
        StopReason.LOOP_DETECTED,
        LoopType.REPEATED_IDENTICAL_RESULT,
    )
    assert [(e.batch, e.decision) for e in result.rules] == [
        (IDENTICAL_RESULT_THRESHOLD + 1, "warn"),
        (IDENTICAL_RESULT_THRESHOLD + 2, "stop"),
    ]
    simulated = simulate_seawall(spec, GuardMode.ENFORCE).verdict()
    assert verdict_differences(simulated, result_verdict(result)) == []

    history = await client.get_workflow_handle(result.workflow_id).fetch_history()
    runs = {
        event.event_id
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and event.activity_task_scheduled_event_attributes.activity_type.name == RUN_TOOL
    }
    outcomes: list[ToolOutcome] = []
    for event in history.events:
        completed = event.activity_task_completed_event_attributes
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED and (
            completed.scheduled_event_id in runs
        ):
            payloads = list(completed.result.payloads)
            [outcome] = await client.data_converter.decode(payloads, [ToolOutcome])
            outcomes.append(outcome)
    assert len(outcomes) == result.tool_calls.executed
    call = spec.model.turns[0].tool_calls[0]
    for outcome in outcomes:
        # Every answer differs in its bytes; each one's reading is the normalizer's own.
        read = read_whole_exchange(
            call.name, call.arguments, outcome.content, labelled_ids=True, world_ids=True
        )
        assert outcome.readings == read.wire()
        assert outcome.readings.named  # three arguments: it names what it asks for
    assert len({outcome.content for outcome in outcomes}) == len(outcomes)
    assert (await replayer(*WORKFLOWS).replay_workflow(history)).replay_failure is None
