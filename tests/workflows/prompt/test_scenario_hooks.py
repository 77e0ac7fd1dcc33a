"""The scenario driver's hooks (``workflows/prompt/scenario_hooks.py``) on a real dev server: a
paused batch is held until released, so the driver's events land at the same point of a
batch on every run (docs/scenarios.md, "Running a scenario")."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from tests.scenario_helpers import run, scenario_file
from workflows.contracts.prompt import PromptInput, StopReason
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.prompt.scenario_hooks import BatchRelease, DriverWait
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode

pytestmark = pytest.mark.asyncio


async def test_a_paused_batch_is_reported_and_held_until_released(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    listing = {"tool_calls": [{"name": "list_directory", "arguments": {}}]}
    script = ModelScript.model_validate({"turns": [listing, listing, {"text": "done"}]})
    handle = await client.start_workflow(
        PromptWorkflow.run,
        PromptInput(
            prompt="look around",
            workspace_root=str(tmp_path),
            guard_mode=GuardMode.ENFORCE,
            scenario=ScenarioHooks(model_script=script, pause_at_batches=[2]),
        ),
        id=f"prompt-pause-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )

    pause = await handle.execute_update(PromptWorkflow.wait_for_driver, DriverWait())
    assert pause.paused_batch == 2
    assert not pause.finished
    status = await handle.query(PromptWorkflow.status)
    # Held after batch 2's call settled: no third model request yet.
    assert (status.paused_batch, status.model_requests, status.running) == (2, 2, True)
    assert status.tool_calls.executed == 2

    await handle.signal(PromptWorkflow.release_batch, BatchRelease(batch=2))
    result = await handle.result()

    assert result.stop_reason is StopReason.END_TURN
    assert result.model_requests == 3


async def test_without_a_pause_the_drivers_wait_ends_with_the_prompt(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    script = ModelScript.model_validate({"turns": [{"text": "nothing to do"}]})
    handle = await client.start_workflow(
        PromptWorkflow.run,
        PromptInput(
            prompt="hello",
            workspace_root=str(tmp_path),
            guard_mode=GuardMode.ENFORCE,
            scenario=ScenarioHooks(model_script=script),
        ),
        id=f"prompt-no-pause-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )

    pause = await handle.execute_update(PromptWorkflow.wait_for_driver, DriverWait())

    assert pause.finished
    assert (pause.paused_batch, pause.pending_permissions) == (None, [])
    assert (await handle.result()).stop_reason is StopReason.END_TURN


async def test_events_land_at_the_same_batch_on_every_run(client: Client, task_queue: str) -> None:
    spec = scenario_file("mid-turn-input-reset")
    results = [await run(client, task_queue, spec) for _ in range(3)]

    assert all(r.guard == results[0].guard for r in results)
    assert all(r.messages == results[0].messages for r in results)
