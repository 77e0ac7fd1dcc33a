"""The durable steps a prompt takes besides its model and tool activities
(docs/capacity.md, "Durable steps per prompt"): one patch marker, operator settings
resolved by the session or in one local activity, the guard's search attributes from its
first warning or stop on and then only when they change, and the operator's context budget
for prompts that set none."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

from seawall.worker.build import build_activities, build_worker
from tests.model_request_helpers import model_requests
from tests.scenario_helpers import calls, decisions, fail, ok
from tests.trust_helpers import harness_trust
from workflows.contracts import search_attributes
from workflows.contracts.activity import RESOLVE_OPERATOR_SETTINGS
from workflows.contracts.conversation import Message, Role, conversation_chars
from workflows.contracts.prompt import PromptInput, PromptResult, StopReason
from workflows.contracts.scenario import FixtureTool, ModelScript, ScenarioHooks
from workflows.contracts.session import PromptSubmission, SessionInput, SessionSettings
from workflows.prompt.patches import NEWEST_START_PATCH
from workflows.prompt.workflow import PromptWorkflow
from workflows.rules import LoopSettings
from workflows.seed import GuardMode
from workflows.session import SessionWorkflow, session_workflow_id

pytestmark = pytest.mark.asyncio

SMALL_BUDGET = 12_000


def operator_environ(tmp_path: Path, **settings: str) -> dict[str, str]:
    """A worker environment with a private config home and only ``settings``."""
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), **settings}


def hooks(tools: dict[str, Any], turns: list[dict[str, Any]]) -> ScenarioHooks:
    return ScenarioHooks(
        model_script=ModelScript.model_validate({"turns": turns}),
        fixture_tools={name: FixtureTool.model_validate(spec) for name, spec in tools.items()},
    )


async def run_prompt(client: Client, queue: str, prompt: PromptInput) -> PromptResult:
    return await client.execute_workflow(
        PromptWorkflow.run, prompt, id=f"durable-{uuid.uuid4().hex[:10]}", task_queue=queue
    )


async def run_session_prompt(
    client: Client, queue: str, settings: SessionSettings, text: str = "hello"
) -> str:
    """Start a session with ``settings``, run one prompt to its end, close the session;
    the prompt's workflow id."""
    session_id = f"durable-{uuid.uuid4().hex[:8]}"
    handle = await client.start_workflow(
        SessionWorkflow.run,
        SessionInput(session_id=session_id, settings=settings),
        id=session_workflow_id(session_id),
        task_queue=queue,
    )
    submitted = await handle.execute_update(
        SessionWorkflow.submit_prompt, PromptSubmission(text=text)
    )
    await handle.signal(SessionWorkflow.close)
    await handle.result()
    return submitted.prompt_id


async def history_of(client: Client, workflow_id: str) -> WorkflowHistory:
    return await client.get_workflow_handle(workflow_id).fetch_history()


def patch_ids(history: WorkflowHistory) -> list[str]:
    ids = []
    for event in history.events:
        if event.event_type != EventType.EVENT_TYPE_MARKER_RECORDED:
            continue
        marker = event.marker_recorded_event_attributes
        if marker.marker_name == "core_patch":
            ids.append(json.loads(marker.details["patch-data"].payloads[0].data)["id"])
    return ids


def markers(history: WorkflowHistory, name: str) -> int:
    return sum(
        1
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and e.marker_recorded_event_attributes.marker_name == name
    )


def scheduled_activities(history: WorkflowHistory) -> list[str]:
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]


def version_upserts(history: WorkflowHistory) -> int:
    """The SDK's own ``TemporalChangeVersion`` upserts: one per patch marker recorded."""
    return sum(
        1
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES
        and "TemporalChangeVersion"
        in e.upsert_workflow_search_attributes_event_attributes.search_attributes.indexed_fields
    )


def upserted_keys(history: WorkflowHistory) -> list[set[str]]:
    """The Seawall keys of each upsert (the SDK's own TemporalChangeVersion left out)."""
    upserts = []
    for e in history.events:
        if e.event_type != EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
            continue
        fields = e.upsert_workflow_search_attributes_event_attributes.search_attributes
        keys = {k for k in fields.indexed_fields if k.startswith("Seawall")}
        if keys:
            upserts.append(keys)
    return upserts


async def test_a_standalone_prompt_resolves_its_settings_in_one_local_activity(
    client: Client, tmp_path: Path
) -> None:
    queue = f"durable-{uuid.uuid4().hex[:8]}"
    environ = operator_environ(tmp_path, SEAWALL_REPEATED_TOOL_FAILURE_GUARD="warn")
    prompt = PromptInput(
        prompt="go",
        workspace_root=str(tmp_path),
        scenario=hooks({"probe": {"outcomes": [ok()]}}, [calls("probe", 2), {"text": "done"}]),
    )
    async with build_worker(client, queue, build_activities(environ, trust=harness_trust())):
        result = await run_prompt(client, queue, prompt)

    assert result.guard_mode == "warn"
    assert result.stop_reason is StopReason.END_TURN
    history = await history_of(client, result.workflow_id)
    # One patch marker (and the one version upsert the SDK adds to it), not one for the
    # leaner sequence, one for the tool listing without a hop, one for the progress rules
    # and one for the model retry window.
    assert patch_ids(history) == [NEWEST_START_PATCH]
    assert version_upserts(history) == 1
    # The settings and the tools came from local activities: markers, no activity hop.
    assert markers(history, "core_local_activity") == 2
    assert scheduled_activities(history) == [
        "seawall.call_model",
        "seawall.run_tool",
        "seawall.run_tool",
        "seawall.call_model",
    ]


async def test_a_prompt_given_its_settings_resolves_nothing(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    prompt = PromptInput(
        prompt="go",
        workspace_root=str(tmp_path),
        guard_mode=GuardMode.ENFORCE,
        loop_settings=LoopSettings(),
        context_budget_chars=SMALL_BUDGET,
        scenario=hooks({}, [{"text": "done"}]),
    )
    result = await run_prompt(client, task_queue, prompt)

    history = await history_of(client, result.workflow_id)
    # No settings to resolve; the tools (no MCP server configured) in one local activity.
    assert markers(history, "core_local_activity") == 1
    assert scheduled_activities(history) == ["seawall.call_model"]


def upserted_values(history: WorkflowHistory, key: str) -> list[str]:
    """The values upserted for the Seawall keyword ``key``, in order."""
    values = []
    for e in history.events:
        if e.event_type != EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
            continue
        fields = e.upsert_workflow_search_attributes_event_attributes.search_attributes
        if key in fields.indexed_fields:
            values.append(json.loads(fields.indexed_fields[key].data))
    return values


async def test_a_streak_the_guard_only_tracks_upserts_no_guard_attribute(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    # A failing call with new arguments each batch: the guard tracks the same streak in
    # four batches and never warns, so nothing an operator lists prompts by happened.
    turns = [
        {
            "tool_calls": [
                {"name": "fetch", "arguments": {"n": b}},
                {"name": "flaky", "arguments": {"attempt": b}},
            ]
        }
        for b in range(4)
    ]
    prompt = PromptInput(
        prompt="go",
        workspace_root=str(tmp_path),
        guard_mode=GuardMode.ENFORCE,
        loop_settings=LoopSettings(),
        scenario=hooks(
            {"fetch": {"outcomes": [ok()]}, "flaky": {"outcomes": [fail()]}},
            [*turns, {"text": "gave up"}],
        ),
    )
    result = await run_prompt(client, task_queue, prompt)

    assert decisions(result) == ["tracked"] * 4
    history = await history_of(client, result.workflow_id)
    assert upserted_keys(history) == [{search_attributes.STOP_REASON.name}]
    described = await client.get_workflow_handle(result.workflow_id).describe()
    values = {pair.key.name: pair.value for pair in described.typed_search_attributes}
    assert search_attributes.GUARD_PHASE.name not in values
    assert values[search_attributes.STOP_REASON.name] == "end_turn"


# The seed's failure loop (scenarios/read-missing-file-loop.yaml): 4, 4 and 1 calls of one
# tool, each failing the same way with new arguments; or the same two batches and then
# another tool's success.
FAILURE_LOOP = [calls("flaky", 4), calls("flaky", 4, start=4), calls("flaky", 1, start=8)]
RECOVERED = [calls("flaky", 4), calls("flaky", 4, start=4), calls("fetch", 1)]


@pytest.mark.parametrize(
    ("mode", "turns", "phases", "last_decisions"),
    [
        # Tracked (no upsert), warned (the first upsert), then stopped: each change once.
        (GuardMode.ENFORCE, FAILURE_LOOP, ["warned", "latched"], ["warn", "stop"]),
        # After the warning even a quiet decision is a change: the phase stays, the last
        # decision follows (an attribute set once is kept true).
        (GuardMode.ENFORCE, RECOVERED, ["warned"], ["warn", "none"]),
        # Shadow records what it would have done: the evidence an operator lists.
        (GuardMode.SHADOW, FAILURE_LOOP, ["warned", "latched"], ["would_warn", "would_stop"]),
    ],
    ids=["enforce-stopped", "enforce-recovered", "shadow"],
)
async def test_guard_attributes_start_at_the_first_warning_and_follow_every_change(
    client: Client,
    task_queue: str,
    tmp_path: Path,
    mode: GuardMode,
    turns: list[dict[str, Any]],
    phases: list[str],
    last_decisions: list[str],
) -> None:
    prompt = PromptInput(
        prompt="go",
        workspace_root=str(tmp_path),
        guard_mode=mode,
        loop_settings=LoopSettings(),
        scenario=hooks(
            {"fetch": {"outcomes": [ok()]}, "flaky": {"outcomes": [fail()]}},
            [*turns, {"text": "gave up"}],
        ),
    )
    result = await run_prompt(client, task_queue, prompt)

    assert decisions(result)[0] == "tracked"
    history = await history_of(client, result.workflow_id)
    assert upserted_values(history, search_attributes.GUARD_PHASE.name) == phases
    assert upserted_values(history, search_attributes.LAST_DECISION.name) == last_decisions
    described = await client.get_workflow_handle(result.workflow_id).describe()
    values = {pair.key.name: pair.value for pair in described.typed_search_attributes}
    assert (
        values[search_attributes.GUARD_PHASE.name],
        values[search_attributes.LAST_DECISION.name],
    ) == (phases[-1], last_decisions[-1])


def long_history(pages: int, chars: int) -> list[Message]:
    history: list[Message] = []
    for n in range(pages):
        history.append(Message(role=Role.USER, content=f"page {n} " + "p" * chars))
        history.append(Message(role=Role.ASSISTANT, content=f"read page {n}"))
    return history


@pytest.mark.parametrize(
    ("prompt_budget", "sent_at_most"), [(None, SMALL_BUDGET), (400_000, 400_000)]
)
async def test_a_prompt_without_a_budget_of_its_own_takes_the_operators(
    client: Client, tmp_path: Path, prompt_budget: int | None, sent_at_most: int
) -> None:
    queue = f"durable-{uuid.uuid4().hex[:8]}"
    environ = operator_environ(tmp_path, SEAWALL_CONTEXT_BUDGET_CHARS=str(SMALL_BUDGET))
    history = long_history(pages=6, chars=5_000)
    prompt = PromptInput(
        prompt="summarise",
        workspace_root=str(tmp_path),
        history=history,
        guard_mode=GuardMode.ENFORCE,
        loop_settings=LoopSettings(),
        context_budget_chars=prompt_budget,
        scenario=hooks({}, [{"text": "summary"}]),
    )
    async with build_worker(client, queue, build_activities(environ, trust=harness_trust())):
        result = await run_prompt(client, queue, prompt)

    [request] = await model_requests(client, await history_of(client, result.workflow_id))
    assert conversation_chars(request.messages) <= sent_at_most
    # The operator's budget cut the view; an explicit budget on the prompt kept it whole.
    whole = conversation_chars([*history, Message(role=Role.USER, content="summarise")])
    assert (conversation_chars(request.messages) < whole) == (prompt_budget is None)
    assert request.messages[-1].content == "summarise"


async def test_a_session_hands_its_prompts_the_operators_budget_and_theirs_wins(
    client: Client, tmp_path: Path
) -> None:
    queue = f"durable-{uuid.uuid4().hex[:8]}"
    environ = operator_environ(tmp_path, SEAWALL_CONTEXT_BUDGET_CHARS=str(SMALL_BUDGET))
    budgets = []
    async with build_worker(client, queue, build_activities(environ, trust=harness_trust())):
        for own_budget in (None, 50_000):
            prompt_id = await run_session_prompt(
                client,
                queue,
                SessionSettings(
                    workspace_root=str(tmp_path),
                    scenario=hooks({}, [{"text": "one"}]),
                    context_budget_chars=own_budget,
                ),
            )
            prompt_history = await history_of(client, prompt_id)
            started = prompt_history.events[0].workflow_execution_started_event_attributes
            [prompt] = await client.data_converter.decode(
                started.input.payloads, type_hints=[PromptInput]
            )
            budgets.append(prompt.context_budget_chars)
            # The session resolved the settings; its prompt resolves none (its one local
            # activity lists the tools).
            assert markers(prompt_history, "core_local_activity") == 1
            assert RESOLVE_OPERATOR_SETTINGS not in scheduled_activities(prompt_history)

    assert budgets == [SMALL_BUDGET, 50_000]


def activity_summaries(history: WorkflowHistory) -> list[str]:
    """The summary each scheduled activity carries in the UI ("" for none)."""
    summaries = []
    for event in history.events:
        if event.event_type != EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            continue
        payload = event.user_metadata.summary
        summaries.append(json.loads(payload.data) if event.HasField("user_metadata") else "")
    return summaries


@pytest.mark.parametrize("setting", [None, "true", "false"])
async def test_activity_summaries_are_the_operators_choice_and_off_by_default(
    client: Client, tmp_path: Path, setting: str | None
) -> None:
    """docs/settings.md, ``activity_summaries``: each summary is one more payload per
    activity, so a prompt names its activities in the UI only when the operator asks —
    standalone (resolved in its local activity) and in a session (resolved by the session)."""
    queue = f"durable-{uuid.uuid4().hex[:8]}"
    extra = {} if setting is None else {"SEAWALL_ACTIVITY_SUMMARIES": setting}
    environ = operator_environ(tmp_path, **extra)
    scenario = hooks({"probe": {"outcomes": [ok()]}}, [calls("probe", 2), {"text": "done"}])
    async with build_worker(client, queue, build_activities(environ, trust=harness_trust())):
        standalone = await run_prompt(
            client, queue, PromptInput(prompt="go", workspace_root=str(tmp_path), scenario=scenario)
        )
        session_prompt = await run_session_prompt(
            client, queue, SessionSettings(workspace_root=str(tmp_path), scenario=scenario), "go"
        )

    # A tool call is named as a permission request shows it: the call on one line.
    named = ["model request 1", "probe n=0 (batch 1)", "probe n=1 (batch 1)", "model request 2"]
    for prompt_id in (standalone.workflow_id, session_prompt):
        summaries = activity_summaries(await history_of(client, prompt_id))
        if setting == "true":
            assert summaries == named
        else:
            assert summaries == [""] * len(named)


async def test_a_prompt_replayed_at_every_step_takes_the_same_steps(
    client: Client, tmp_path: Path
) -> None:
    """A worker without a cache replays the prompt's history before every workflow task, as
    any worker does after a restart or an eviction: the patches, the two local activities
    and the batches must replay exactly as they were recorded (a patch first asked after a
    local activity of the same task did not: ``-v1`` of the tool listing's patch)."""
    queue = f"durable-{uuid.uuid4().hex[:8]}"
    environ = operator_environ(tmp_path, SEAWALL_REPEATED_TOOL_FAILURE_GUARD="enforce")
    prompt = PromptInput(
        prompt="go",
        workspace_root=str(tmp_path),
        scenario=hooks(
            {"probe": {"outcomes": [ok()]}},
            [calls("probe", 2), calls("probe", 2, start=2), {"text": "done"}],
        ),
    )
    async with build_worker(
        client, queue, build_activities(environ, trust=harness_trust()), max_cached_workflows=0
    ):
        result = await run_prompt(client, queue, prompt)

    assert result.stop_reason is StopReason.END_TURN
    assert result.guard_mode == "enforce"
    history = await history_of(client, result.workflow_id)
    assert patch_ids(history) == [NEWEST_START_PATCH]
    assert markers(history, "core_local_activity") == 2
    failed = [
        e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    ]
    assert failed == []
