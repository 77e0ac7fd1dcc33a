"""SessionWorkflow on a real dev server: FIFO prompts as child workflows, queued-prompt
and mid-turn input forwarding, cancellation of the running prompt only, continue-as-new."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from workflows.contracts.conversation import MID_TURN_INPUT_PREFIX, Role
from workflows.contracts.prompt import LoopType, PromptResult, StopReason, UserInput
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.contracts.session import (
    PromptSubmission,
    SessionInput,
    SessionSettings,
    SessionStatus,
)
from workflows.prompt.workflow import PromptWorkflow
from workflows.session import SessionWorkflow, session_workflow_id


def shell(command: str) -> dict[str, Any]:
    return {"name": "run_shell_command", "arguments": {"command": command}}


def failing(n: int, start: int = 0) -> dict[str, Any]:
    return {"tool_calls": [shell(f"echo try-{start + i}; exit 1") for i in range(n)]}


BLOCKING_BATCH = {
    "tool_calls": [
        shell("echo a; exit 1"),
        shell("echo b; exit 1"),
        shell("echo c; exit 1"),
        shell("touch blocker-started; while [ ! -f go ]; do sleep 0.05; done; exit 1"),
    ]
}


async def start_session(
    client: Client,
    task_queue: str,
    workspace: Path,
    turns: list[dict[str, Any]],
    **carry: Any,
) -> WorkflowHandle[SessionWorkflow, SessionStatus]:
    session_id = uuid.uuid4().hex[:12]
    settings = SessionSettings(
        workspace_root=str(workspace),
        scenario=ScenarioHooks(model_script=ModelScript.model_validate({"turns": turns})),
        approval_mode=ApprovalMode.YOLO,
    )
    started = await client.start_workflow(
        SessionWorkflow.run,
        SessionInput(session_id=session_id, settings=settings, **carry),
        id=session_workflow_id(session_id),
        task_queue=task_queue,
    )
    # Address the session by id alone, so messages follow it across continue-as-new.
    return client.get_workflow_handle_for(SessionWorkflow.run, started.id)


async def submit(handle: WorkflowHandle[SessionWorkflow, SessionStatus], text: str) -> str:
    accepted = await handle.execute_update(
        SessionWorkflow.submit_prompt, PromptSubmission(text=text)
    )
    return accepted.prompt_id


async def prompt_result(client: Client, prompt_id: str) -> PromptResult:
    """The prompt's result; a queued prompt's workflow starts only when its turn comes."""
    handle = client.get_workflow_handle(prompt_id, result_type=PromptResult)

    async def started() -> None:
        while True:
            try:
                await handle.describe()
                return
            except RPCError as err:
                if err.status is not RPCStatusCode.NOT_FOUND:
                    raise
            await asyncio.sleep(0.05)

    await asyncio.wait_for(started(), 60)
    result: PromptResult = await handle.result()
    return result


async def until_file(path: Path, timeout: float = 30) -> None:
    async def poll() -> None:
        while not path.exists():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), timeout)


async def test_two_prompts_run_in_order_and_the_second_resets_the_first_streak(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    turns = [failing(4), BLOCKING_BATCH, {"text": "first done"}, {"text": "second done"}]
    session = await start_session(client, task_queue, tmp_path, turns, guard_mode="enforce")
    first = await submit(session, "first")
    await until_file(tmp_path / "blocker-started")

    accepted = await session.execute_update(
        SessionWorkflow.submit_prompt, PromptSubmission(text="second")
    )
    status = await session.query(SessionWorkflow.status)
    assert status.running_prompt_id == first
    assert status.queued_prompt_ids == [accepted.prompt_id]
    assert accepted.position == 0
    (tmp_path / "go").touch()

    first_result = await prompt_result(client, first)
    second_result = await prompt_result(client, accepted.prompt_id)

    assert [e.decision for e in first_result.guard] == ["tracked", "reset"]
    assert first_result.guard[1].reason == "queued_prompt"
    assert first_result.stop_reason is StopReason.END_TURN
    # The second prompt ran after the first, on the conversation the first left behind.
    user_turns = [m.content for m in second_result.messages if m.role is Role.USER]
    assert user_turns == ["first", "second"]
    assert second_result.messages[-1].content == "second done"


async def test_mid_turn_input_is_forwarded_to_the_running_prompt(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    session = await start_session(
        client,
        task_queue,
        tmp_path,
        [failing(4), BLOCKING_BATCH, {"text": "ok"}],
        guard_mode="enforce",
    )
    prompt_id = await submit(session, "build")
    await until_file(tmp_path / "blocker-started")

    delivery = await session.execute_update(
        SessionWorkflow.send_input, UserInput(text="try the other branch")
    )
    (tmp_path / "go").touch()
    result = await prompt_result(client, prompt_id)

    assert delivery.prompt_id == prompt_id
    assert [e.decision for e in result.guard] == ["tracked", "reset"]
    assert result.guard[1].reason == "external_input"
    assert MID_TURN_INPUT_PREFIX + "try the other branch" in [m.content for m in result.messages]


async def test_input_with_no_running_prompt_is_rejected(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    session = await start_session(client, task_queue, tmp_path, [], guard_mode="enforce")

    with pytest.raises(WorkflowUpdateFailedError):
        await session.execute_update(SessionWorkflow.send_input, UserInput(text="hello?"))


async def test_a_prompt_stopped_by_the_guard_leaves_the_session_usable(
    client: Client, task_queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEAWALL_REPEATED_TOOL_FAILURE_GUARD", "enforce")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    turns = [failing(4), failing(4, 4), failing(1, 8), {"text": "never"}]
    session = await start_session(client, task_queue, tmp_path, turns)
    first = await submit(session, "loop")
    stopped = await prompt_result(client, first)
    second = await submit(session, "again")
    fresh = await prompt_result(client, second)

    assert stopped.loop_type is LoopType.REPEATED_TOOL_EXECUTION_FAILURE
    assert stopped.guard_mode == "enforce"  # resolved once by the session, from the worker env
    assert fresh.stop_reason is StopReason.END_TURN
    assert fresh.guard == []  # a fresh guard: nothing carried from the stopped prompt
    await session.signal(SessionWorkflow.close)
    status = await session.result()
    assert [(f.prompt_id, f.stop_reason) for f in status.finished] == [
        (first, StopReason.LOOP_DETECTED),
        (second, StopReason.END_TURN),
    ]


async def test_cancel_stops_the_running_prompt_only_and_the_queue_stays(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    session = await start_session(
        client, task_queue, tmp_path, [BLOCKING_BATCH, {"text": "next ran"}], guard_mode="enforce"
    )
    first = await submit(session, "build")
    await until_file(tmp_path / "blocker-started")
    second = await submit(session, "then this")

    await client.get_workflow_handle(first).cancel()
    cancelled = await prompt_result(client, first)
    after = await prompt_result(client, second)

    assert cancelled.stop_reason is StopReason.CANCELLED
    assert after.stop_reason is StopReason.END_TURN
    assert after.messages[-1].content == "next ran"


async def test_session_prompts_are_prompt_workflows_the_gateway_can_address(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    session = await start_session(client, task_queue, tmp_path, [{"text": "hi"}], guard_mode="off")
    prompt_id = await submit(session, "hello")
    await prompt_result(client, prompt_id)

    described = await client.get_workflow_handle(prompt_id).describe()
    assert described.workflow_type == "PromptWorkflow"
    status = await client.get_workflow_handle(prompt_id).query(PromptWorkflow.status)
    assert status.running is False
