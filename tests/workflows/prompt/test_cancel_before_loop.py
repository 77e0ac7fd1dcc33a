"""A prompt cancelled before its loop starts, while its ``seawall.list_tools`` activity waits
on an MCP server (docs/architecture.md, "Cancellation"): it settles like any cancelled
prompt, with a result, its ``prompt_finished`` event and its search attributes, on a real
Temporal dev server and a worker whose MCP server never answers ``initialize``.

The chaos suite caught the old behaviour: the workflow ended CANCELED without a result, and
a client polling for that result waited forever.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus

from seawall.worker.build import build_activities, build_worker
from tests.activities.mcp_helpers import servers_env, silent_server, wait_for_scheduled
from tests.trust_helpers import harness_trust
from workflows.contracts import search_attributes
from workflows.contracts.activity import LIST_TOOLS, ModelSpec
from workflows.contracts.prompt import EventKind, EventsQuery, PromptInput, PromptResult, StopReason
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.prompt.patches import (
    CANCEL_BEFORE_LOOP_PATCH,
    NEWEST_START_PATCH,
)
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode

pytestmark = pytest.mark.asyncio


def silent_mcp_environ(tmp_path: Path) -> dict[str, str]:
    """A worker environment with a private config home and one MCP server that never
    answers, so that every tool listing waits (up to the connect timeout, raised far above
    any test's length)."""
    home = tmp_path / "home"
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "xdg"),
        "SEAWALL_MCP_SERVERS": servers_env({"silent": silent_server()}),
        "SEAWALL_MCP_CONNECT_TIMEOUT_SECONDS": "3600",
    }


def patch_ids(events: list[Any]) -> list[str]:
    ids = []
    for event in events:
        marker = event.marker_recorded_event_attributes
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED and (
            marker.marker_name == "core_patch"
        ):
            ids.append(json.loads(marker.details["patch-data"].payloads[0].data)["id"])
    return ids


# With a cache and without one (every workflow task replays the prompt from its history, as
# a worker that took it over mid-way does): the patch asked in the handler replays.
@pytest.mark.parametrize("cached", [1000, 0], ids=["cached", "replaying"])
async def test_a_prompt_cancelled_while_its_tools_list_ends_cancelled_with_a_result(
    client: Client, tmp_path: Path, cached: int
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    queue = f"cancel-before-loop-{uuid.uuid4().hex[:8]}"
    activities = build_activities(silent_mcp_environ(tmp_path), trust=harness_trust())
    async with build_worker(client, queue, activities, max_cached_workflows=cached):
        handle = await client.start_workflow(
            PromptWorkflow.run,
            PromptInput(
                prompt="list your tools",
                workspace_root=str(workspace),
                guard_mode=GuardMode.ENFORCE,
                model=ModelSpec(),
                scenario=ScenarioHooks(
                    model_script=ModelScript.model_validate({"turns": [{"text": "never"}]})
                ),
            ),
            id=f"cancel-before-loop-{uuid.uuid4().hex[:10]}",
            task_queue=queue,
        )
        await wait_for_scheduled(handle, LIST_TOOLS)
        await handle.cancel()
        result = await handle.result()
        events = await handle.query(PromptWorkflow.events, EventsQuery(after=0))
        described = await handle.describe()
        history = await handle.fetch_history()

    assert isinstance(result, PromptResult)
    assert result.stop_reason is StopReason.CANCELLED
    assert result.model_requests == 0
    assert result.error is None
    assert described.status == WorkflowExecutionStatus.COMPLETED
    finished = [event for event in events if event.kind is EventKind.PROMPT_FINISHED]
    assert [event.status for event in finished] == ["cancelled"]
    values = {pair.key.name: pair.value for pair in described.typed_search_attributes}
    assert values[search_attributes.STOP_REASON.name] == "cancelled"
    # Since ONE_MARKER_PATCH the patch is taken as given: one marker, asked at the start (the
    # newest start patch's, which takes every one before it as given).
    assert patch_ids(list(history.events)) == [NEWEST_START_PATCH]
    failed = [
        e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    ]
    assert failed == []


# Cancelled as it starts: the first workflow task carries the cancel request, so the settings'
# local activity is cancelled before it ran. A cancelled prompt all the same.
@pytest.mark.parametrize("cached", [1000, 0], ids=["cached", "replaying"])
async def test_a_prompt_cancelled_as_it_starts_ends_cancelled_with_a_result(
    client: Client, tmp_path: Path, cached: int
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    queue = f"cancel-at-start-{uuid.uuid4().hex[:8]}"
    prompt = PromptInput(
        prompt="go",
        workspace_root=str(workspace),
        scenario=ScenarioHooks(
            model_script=ModelScript.model_validate({"turns": [{"text": "never"}]})
        ),
    )
    # Started and cancelled before any worker polls the queue.
    handle = await client.start_workflow(
        PromptWorkflow.run, prompt, id=f"cancel-at-start-{uuid.uuid4().hex[:10]}", task_queue=queue
    )
    await handle.cancel()
    activities = build_activities(silent_mcp_environ(tmp_path), trust=harness_trust())
    async with build_worker(client, queue, activities, max_cached_workflows=cached):
        result = await handle.result()
        history = await handle.fetch_history()

    assert isinstance(result, PromptResult)
    assert result.stop_reason is StopReason.CANCELLED
    assert result.model_requests == 0
    # Surfaced as asyncio.CancelledError (cancelled before the local activity was started):
    # the path prompts always took, so the patch is not asked (nor, since ONE_MARKER_PATCH,
    # recorded at all).
    assert CANCEL_BEFORE_LOOP_PATCH not in patch_ids(list(history.events))
    failed = [
        e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    ]
    assert failed == []
