"""The session handlers an editor bridge needs (``seawall acp``), on a real dev server:
switching the approval mode (the running prompt included), withdrawing a queued prompt, and
paging through the retained conversation with each call's settled status."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from tests.workflows.session.test_workflow import (
    BLOCKING_BATCH,
    prompt_result,
    shell,
    start_session,
    submit,
    until_file,
)
from workflows.contracts import Role
from workflows.contracts.prompt import (
    ApprovalModeChange,
    PermissionAnswer,
    StopReason,
    ToolCallsQuery,
)
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.session import PromptWithdrawal, TranscriptQuery
from workflows.prompt.workflow import PromptWorkflow
from workflows.session import SessionWorkflow

WRITE = {"name": "write_file", "arguments": {"path": "out.txt", "content": "x"}}


async def test_a_mode_switch_reaches_the_running_prompts_next_calls(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    # The session starts in yolo: the blocking shell runs without asking.
    turns = [BLOCKING_BATCH, {"tool_calls": [WRITE]}, {"text": "done"}]
    session = await start_session(client, task_queue, tmp_path, turns, guard_mode="shadow")
    prompt_id = await submit(session, "build")
    await until_file(tmp_path / "blocker-started")

    change = ApprovalModeChange(approval_mode=ApprovalMode.DEFAULT)
    assert await session.execute_update(SessionWorkflow.set_approval_mode, change) == change
    (tmp_path / "go").touch()

    prompt = client.get_workflow_handle_for(PromptWorkflow.run, prompt_id)

    async def asked() -> str:
        while True:
            status = await prompt.query(PromptWorkflow.status)
            if status.pending_permissions:
                return status.pending_permissions[0].request_id
            await asyncio.sleep(0.05)

    request_id = await asyncio.wait_for(asked(), 60)
    await prompt.execute_update(
        PromptWorkflow.answer_permission, PermissionAnswer(request_id=request_id, approve=False)
    )
    result = await prompt_result(client, prompt_id)

    assert result.stop_reason is StopReason.END_TURN
    assert not (tmp_path / "out.txt").exists()
    status = await session.query(SessionWorkflow.status)
    assert status.approval_mode is ApprovalMode.DEFAULT
    # The call's arguments, as an editor shows them.
    [write] = await prompt.query(
        PromptWorkflow.tool_calls,
        ToolCallsQuery(call_ids=[result.messages[-3].tool_calls[0].call_id]),
    )
    assert write.name == "write_file" and write.arguments == WRITE["arguments"]


async def test_a_queued_prompt_can_be_withdrawn_and_a_running_one_cannot(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    turns = [BLOCKING_BATCH, {"text": "first done"}]
    session = await start_session(client, task_queue, tmp_path, turns, guard_mode="shadow")
    first = await submit(session, "first")
    await until_file(tmp_path / "blocker-started")
    second = await submit(session, "second")

    await session.execute_update(
        SessionWorkflow.withdraw_prompt, PromptWithdrawal(prompt_id=second)
    )
    with pytest.raises(WorkflowUpdateFailedError):
        await session.execute_update(
            SessionWorkflow.withdraw_prompt, PromptWithdrawal(prompt_id=first)
        )
    assert (await session.query(SessionWorkflow.status)).queued_prompt_ids == []
    (tmp_path / "go").touch()
    assert (await prompt_result(client, first)).stop_reason is StopReason.END_TURN

    await session.signal(SessionWorkflow.close)
    finished = await session.result()
    assert [f.prompt_id for f in finished.finished] == [first]
    with pytest.raises(RPCError) as never:
        await client.get_workflow_handle(second).describe()
    assert never.value.status is RPCStatusCode.NOT_FOUND


async def test_the_transcript_pages_through_the_conversation_with_call_statuses(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    (tmp_path / "there.txt").write_text("here\n")
    reads = {
        "tool_calls": [
            {"name": "read_file", "arguments": {"path": "there.txt"}},
            {"name": "read_file", "arguments": {"path": "missing.txt"}},
        ]
    }
    turns = [reads, {"text": "read both"}, {"tool_calls": [shell("exit 3")]}, {"text": "ran"}]
    session = await start_session(client, task_queue, tmp_path, turns, guard_mode="shadow")
    await prompt_result(client, await submit(session, "first"))
    await prompt_result(client, await submit(session, "second"))

    async def both_recorded() -> None:  # the session takes in a result after the child ends
        while len((await session.query(SessionWorkflow.status)).finished) < 2:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(both_recorded(), 60)
    whole = await session.query(SessionWorkflow.transcript, TranscriptQuery())
    assert whole.next_index == whole.total == len(whole.messages) == 9
    tool_statuses = [
        status
        for message, status in zip(whole.messages, whole.tool_statuses, strict=True)
        if message.role is Role.TOOL
    ]
    assert tool_statuses == ["success", "error", "error"]
    assert all(
        status is None
        for message, status in zip(whole.messages, whole.tool_statuses, strict=True)
        if message.role is not Role.TOOL
    )

    # One message a page when each passes the limit; every message exactly once.
    seen = []
    after = 0
    while after < whole.total:
        page = await session.query(
            SessionWorkflow.transcript, TranscriptQuery(after=after, max_chars=1)
        )
        assert len(page.messages) == 1 and page.next_index == after + 1
        seen.extend(page.messages)
        after = page.next_index
    assert seen == whole.messages
