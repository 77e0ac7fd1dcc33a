"""Run a scenario through the real ``PromptWorkflow`` and drive its events.

The driver lands each event inside exactly the batch the scenario names: the workflow
pauses once that batch's calls have settled (all but those scripted to hang), the driver
sends the event's signal (or cancels) and releases the batch. Signals are ordered in
history before the batch's drain, so every run sees the same thing. Permission requests
are answered from the scenario.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.service import RPCError

from seawall.scenario.format import Scenario, ScenarioError, scenario_loop_settings
from workflows.contracts.prompt import (
    InputBoundaryReport,
    PermissionAnswer,
    PromptInput,
    PromptResult,
    QueuedPrompt,
    UserInput,
)
from workflows.contracts.scenario import ScenarioHooks
from workflows.prompt.scenario_hooks import BatchRelease, DriverWait
from workflows.prompt.workflow import PromptWorkflow
from workflows.rules import LoopSettings
from workflows.seed import GuardMode


def prepare_workspace(scenario: Scenario, root: Path) -> Path:
    """Create the scenario's files under ``root``; paths may not leave it."""
    root = root.resolve()
    for relative, content in scenario.workspace.files.items():
        target = (root / relative).resolve()
        if target != root and root not in target.parents:
            raise ScenarioError(f"workspace file {relative!r} is outside the workspace")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return root


def prompt_input(
    scenario: Scenario,
    workspace: Path,
    mode_override: GuardMode | None = None,
    loop_override: LoopSettings | None = None,
) -> PromptInput:
    """The scenario as a prompt: its options, and its script, fixtures and event batches
    through the scenario channel. The overrides replace the scenario's guard mode and loop
    settings (``seawall run --mode``, the benchmark's policies)."""
    return PromptInput(
        prompt=scenario.prompt,
        workspace_root=str(workspace),
        route=scenario.route,
        client_metadata={"channel": True} if scenario.channel else {},
        guard_mode=mode_override or scenario.mode,
        loop_settings=loop_override or scenario_loop_settings(scenario),
        refusal_mode=scenario.refusal,
        max_tool_calls_per_turn=scenario.max_tool_calls_per_turn,
        max_model_requests=scenario.max_model_requests,
        approval_mode=scenario.approval_mode,
        permission_timeout_seconds=scenario.permission_timeout_seconds,
        max_output_chars=scenario.max_output_chars,
        context_budget_chars=scenario.context_budget_chars,
        scenario=ScenarioHooks(
            model_script=scenario.model,
            fixture_tools=scenario.tools,
            pause_at_batches=sorted({event.batch for event in scenario.events}),
        ),
    )


def workflow_id_for(scenario: Scenario) -> str:
    slug = "".join(c if c.isalnum() or c in "-_" else "-" for c in scenario.name)[:60]
    return f"prompt-{slug}-{uuid.uuid4().hex[:12]}"


async def drive(handle: WorkflowHandle[PromptWorkflow, PromptResult], scenario: Scenario) -> None:
    """Answer pauses and permission requests until the prompt finishes."""
    ignored: list[str] = []
    while True:
        try:
            pause = await handle.execute_update(
                PromptWorkflow.wait_for_driver, DriverWait(ignored_permissions=ignored)
            )
        except (WorkflowUpdateFailedError, RPCError):
            return  # the prompt ended between two driver steps
        if pause.finished:
            return
        for request in pause.pending_permissions:
            choice = scenario.permissions.get(request.tool_name, "approve")
            if choice == "ignore":
                ignored.append(request.request_id)
                continue
            try:
                await handle.execute_update(
                    PromptWorkflow.answer_permission,
                    PermissionAnswer(request_id=request.request_id, approve=choice == "approve"),
                )
            except WorkflowUpdateFailedError:
                # The request was settled meanwhile (timed out, or its batch cancelled): on a
                # loaded machine the prompt can get there between two driver steps.
                continue
        if pause.paused_batch is None:
            continue
        for event in (e for e in scenario.events if e.batch == pause.paused_batch):
            if event.input is not None:
                await handle.signal(PromptWorkflow.submit_input, UserInput(text=event.input))
            elif event.queued_prompt:
                await handle.signal(PromptWorkflow.set_queued_prompt, QueuedPrompt())
            elif event.unreliable_input:
                await handle.signal(PromptWorkflow.report_unreliable_input, InputBoundaryReport())
        if any(e.cancel for e in scenario.events if e.batch == pause.paused_batch):
            await handle.cancel()
            return
        await handle.signal(PromptWorkflow.release_batch, BatchRelease(batch=pause.paused_batch))


async def run_scenario(
    client: Client,
    scenario: Scenario,
    *,
    task_queue: str,
    workspace: Path,
    mode_override: GuardMode | None = None,
    workflow_id: str | None = None,
    loop_override: LoopSettings | None = None,
) -> PromptResult:
    prepare_workspace(scenario, workspace)
    handle = await client.start_workflow(
        PromptWorkflow.run,
        prompt_input(scenario, workspace, mode_override, loop_override),
        id=workflow_id or workflow_id_for(scenario),
        task_queue=task_queue,
        static_summary=f"scenario {scenario.name}",
    )
    await drive(handle, scenario)
    return await handle.result()
