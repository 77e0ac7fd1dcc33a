"""Permission requests (``workflows/prompt/permissions.py``) on a real dev server: a mutating call
waits for the user's approval; a rejection or no answer in time means it never runs
(docs/architecture.md, "The life of a prompt")."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError

from tests.scenario_helpers import decisions, run, scenario, scenario_file, tool_messages
from workflows.contracts.prompt import PermissionAnswer, PromptInput, StopReason
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.prompt.scenario_hooks import DriverWait
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode

pytestmark = pytest.mark.asyncio


async def test_permission_rejection_never_counts_and_writes_nothing(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    result = await run(client, task_queue, scenario_file("permission-rejected"), workspace=tmp_path)

    assert result.stop_reason is StopReason.END_TURN
    assert set(decisions(result)) == {"none"}  # cancelled from idle changes nothing
    assert not list(tmp_path.glob("*.txt"))
    assert all("did not approve" in m.content for m in tool_messages(result))


async def test_unanswered_permission_times_out_as_cancelled(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    spec = scenario(
        mode="enforce",
        permissions={"write_file": "ignore"},
        permission_timeout_seconds=0.5,
        model={
            "turns": [
                {"tool_calls": [{"name": "write_file", "arguments": {"path": "x", "content": "1"}}]}
            ]
        },
    )
    result = await run(client, task_queue, spec, workspace=tmp_path)

    assert "did not approve" in tool_messages(result)[0].content
    assert not (tmp_path / "x").exists()


async def test_approved_write_runs(client: Client, task_queue: str, tmp_path: Path) -> None:
    spec = scenario(
        mode="enforce",
        model={
            "turns": [
                {
                    "tool_calls": [
                        {"name": "write_file", "arguments": {"path": "x.txt", "content": "hi"}}
                    ]
                }
            ]
        },
    )
    await run(client, task_queue, spec, workspace=tmp_path)

    assert (tmp_path / "x.txt").read_text() == "hi"


async def test_answer_permission_rejects_an_unknown_request(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    write = {"name": "write_file", "arguments": {"path": "x.txt", "content": "1"}}
    handle = await client.start_workflow(
        PromptWorkflow.run,
        PromptInput(
            prompt="write",
            workspace_root=str(tmp_path),
            guard_mode=GuardMode.ENFORCE,
            scenario=ScenarioHooks(
                model_script=ModelScript.model_validate({"turns": [{"tool_calls": [write]}]})
            ),
        ),
        id=f"prompt-permission-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )
    pause = await handle.execute_update(PromptWorkflow.wait_for_driver, DriverWait())
    (request,) = pause.pending_permissions

    with pytest.raises(WorkflowUpdateFailedError):
        await handle.execute_update(
            PromptWorkflow.answer_permission, PermissionAnswer(request_id="nope", approve=True)
        )
    await handle.execute_update(
        PromptWorkflow.answer_permission,
        PermissionAnswer(request_id=request.request_id, approve=True),
    )
    result = await handle.result()

    assert (tmp_path / "x.txt").read_text() == "1"
    assert result.stop_reason is StopReason.END_TURN
