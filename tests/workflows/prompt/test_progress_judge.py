"""The progress judge in ``PromptWorkflow`` on a real Temporal dev server (docs/protections.md, "The
progress judge"): a ``sleep 30; pgrep -f`` self-wait that every cheap rule lets run
(scenarios/self-wait-judged.yaml), judged by its script. In ``warn`` the judge reminds and never
stops; in ``enforce`` its second ``no_progress`` after the reminder stops the prompt; ``off`` (and a
route that forces the guard off) never runs the activity; a judge whose activity fails is
``unknown`` and the prompt goes on. The simulator reaches the same verdict every time, and the
histories replay.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.exceptions import ApplicationError

from activities.model import ModelActivities
from bench.simulate import result_verdict, simulate_seawall, verdict_differences
from seawall.runtime.plugin import WORKFLOWS
from seawall.scenario.format import Scenario
from seawall.worker.build import build_activities, build_worker, model_providers
from tests.replay.test_replay import replayer
from tests.scenario_helpers import count_text, run, scenario_file
from tests.trust_helpers import harness_trust
from workflows.contracts.activity import (
    JUDGE_PROGRESS,
    JudgeProgressInput,
    JudgeProgressOutput,
)
from workflows.contracts.prompt import (
    EventKind,
    EventsQuery,
    LoopType,
    PromptResult,
    Route,
    StopReason,
)
from workflows.prompt.workflow import PromptWorkflow
from workflows.rules.judge import JUDGE_REMINDER, JUDGE_STOP_MESSAGE
from workflows.seed.guard import GuardMode

COMMAND = "pgrep -f"


def self_wait(mode: GuardMode, **changes: object) -> Scenario:
    spec = scenario_file("self-wait-judged")
    return spec.model_copy(update={"progress_judge": mode, **changes})


async def history_of(client: Client, result: PromptResult) -> WorkflowHistory:
    return await client.get_workflow_handle(result.workflow_id).fetch_history()


def judge_requests(history: WorkflowHistory) -> list[int]:
    """The event ids of the judge's scheduled activities."""
    return [
        e.event_id
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == JUDGE_PROGRESS
    ]


async def judge_inputs(client: Client, history: WorkflowHistory) -> list[JudgeProgressInput]:
    inputs = []
    for e in history.events:
        attributes = e.activity_task_scheduled_event_attributes
        if (
            e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
            and attributes.activity_type.name == JUDGE_PROGRESS
        ):
            [request] = await client.data_converter.decode(
                attributes.input.payloads, type_hints=[JudgeProgressInput]
            )
            inputs.append(request)
    return inputs


def agrees_with_the_simulator(spec: Scenario, result: PromptResult) -> None:
    simulated = simulate_seawall(spec, None).verdict()
    assert verdict_differences(simulated, result_verdict(result)) == []


def judge_entries(result: PromptResult) -> list[tuple[int, str, str, int]]:
    return [(e.batch, e.decision, e.mode, e.count) for e in result.rules]


async def test_in_warn_the_judge_reminds_once_and_never_stops(
    client: Client, task_queue: str
) -> None:
    spec = self_wait(GuardMode.WARN)
    result = await run(client, task_queue, spec)

    assert (result.stop_reason, result.loop_type) == (StopReason.END_TURN, None)
    assert [e.rule for e in result.rules] == ["progress_judge", "progress_judge"]
    assert judge_entries(result) == [(8, "warn", "warn", 6), (14, "would_stop", "warn", 12)]
    assert count_text(result.messages, JUDGE_REMINDER) == 1
    assert count_text(result.messages, JUDGE_STOP_MESSAGE) == 0
    # The reminder follows batch 8's tool result and reaches the next model request.
    reminder_at = next(i for i, m in enumerate(result.messages) if m.content == JUDGE_REMINDER)
    assert result.messages[reminder_at - 1].role.value == "tool"
    handle = client.get_workflow_handle(result.workflow_id)
    events = await handle.query(PromptWorkflow.events, EventsQuery(after=0))
    assert [e.text for e in events if e.kind is EventKind.REMINDER] == [JUDGE_REMINDER]
    agrees_with_the_simulator(spec, result)

    history = await history_of(client, result)
    assert len(judge_requests(history)) == 2
    # The judge saw tool names and masked excerpts, never the calls' arguments.
    for request in await judge_inputs(client, history):
        assert request.user_prompt == spec.prompt
        assert request.batches and len(request.batches) <= 6
        assert {c.tool for b in request.batches for c in b.calls} == {"run_shell_command"}
        assert COMMAND not in request.model_dump_json()
    assert (await replayer(*WORKFLOWS).replay_workflow(history)).replay_failure is None


async def test_in_enforce_a_second_no_progress_after_the_reminder_stops_the_prompt(
    client: Client, task_queue: str
) -> None:
    spec = self_wait(GuardMode.ENFORCE)
    result = await run(client, task_queue, spec)

    assert (result.stop_reason, result.loop_type) == (
        StopReason.LOOP_DETECTED,
        LoopType.JUDGED_NO_PROGRESS,
    )
    assert judge_entries(result) == [(8, "warn", "enforce", 6), (14, "stop", "enforce", 12)]
    assert result.messages[-1].content == JUDGE_STOP_MESSAGE
    assert count_text(result.messages, JUDGE_REMINDER) == 1
    assert result.model_requests == 14  # no model request after the stop
    agrees_with_the_simulator(spec, result)
    history = await history_of(client, result)
    assert (await replayer(*WORKFLOWS).replay_workflow(history)).replay_failure is None


async def test_the_judges_tokens_count_as_the_prompts(client: Client, task_queue: str) -> None:
    """In shadow the conversation is the one ``off`` has, so the only difference in tokens
    is the judge's two requests (the scripted judge estimates its tokens like the scripted
    model: ``NO_PROGRESS`` is 2 output tokens)."""
    shadow = await run(client, task_queue, self_wait(GuardMode.SHADOW))
    off = await run(client, task_queue, self_wait(GuardMode.OFF))
    assert judge_entries(shadow) == [
        (8, "would_warn", "shadow", 6),
        (14, "would_stop", "shadow", 12),
    ]
    assert shadow.messages == off.messages
    assert shadow.input_tokens is not None and off.input_tokens is not None
    assert shadow.input_tokens > off.input_tokens
    assert shadow.output_tokens == (off.output_tokens or 0) + 2 * (len("NO_PROGRESS") // 4)


@pytest.mark.parametrize(
    "changes",
    [{"progress_judge": GuardMode.OFF}, {"progress_judge": None}, {"route": Route.CRON}],
    ids=["off", "unset", "cron-route"],
)
async def test_off_never_runs_the_judge(
    client: Client, task_queue: str, changes: dict[str, object]
) -> None:
    spec = self_wait(GuardMode.ENFORCE, **changes)
    result = await run(client, task_queue, spec)
    assert result.stop_reason is StopReason.END_TURN
    assert result.rules == []
    assert count_text(result.messages, JUDGE_REMINDER) == 0
    assert judge_requests(await history_of(client, result)) == []
    agrees_with_the_simulator(spec, result)


class BrokenJudge(ModelActivities):
    """The worker's model activities with a judge whose every request fails for good."""

    @activity.defn(name=JUDGE_PROGRESS)
    async def judge_progress(self, request: JudgeProgressInput) -> JudgeProgressOutput:
        raise ApplicationError("the judge's endpoint refused", type="JudgeDown", non_retryable=True)


@pytest_asyncio.fixture
async def broken_judge_queue(client: Client) -> AsyncIterator[str]:
    queue = f"test-judge-{uuid.uuid4().hex[:10]}"
    trust = harness_trust()
    activities = dataclasses.replace(
        build_activities(trust=trust),
        model=BrokenJudge(model_providers(os.environ), trust=trust),
    )
    async with build_worker(client, queue, activities):
        yield queue


async def test_a_failed_judge_is_unknown_and_never_fails_the_prompt(
    client: Client, broken_judge_queue: str
) -> None:
    spec = self_wait(GuardMode.ENFORCE)
    result = await run(client, broken_judge_queue, spec)
    assert (result.stop_reason, result.loop_type) == (StopReason.END_TURN, None)
    assert judge_entries(result) == [
        (8, "unknown", "enforce", 6),
        (14, "unknown", "enforce", 12),
        (20, "unknown", "enforce", 18),
    ]
    assert count_text(result.messages, JUDGE_REMINDER) == 0
    # Tokens of the failed requests are not known, and count nothing.
    assert result.input_tokens is not None
    history = await history_of(client, result)
    assert len(judge_requests(history)) == 3
