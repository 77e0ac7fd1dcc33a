"""Editor-side calls (workflows/prompt/editor_calls.py) on the real dev server and worker,
answered here as the ACP bridge would answer them (seawall/acp/editor_fs.py)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError

from tests.scenario_helpers import tool_messages
from workflows.contracts.editor_calls import (
    EditorAnswer,
    EditorFailure,
    EditorRequest,
    EditorRequestsQuery,
    EditorTools,
)
from workflows.contracts.prompt import (
    EventKind,
    EventsQuery,
    PromptInput,
    PromptResult,
    StopReason,
)
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode


async def start(
    client: Client,
    task_queue: str,
    workspace: Path,
    calls: list[dict[str, Any]],
    *,
    timeout: float = 600,
) -> WorkflowHandle[PromptWorkflow, PromptResult]:
    script = {"turns": [{"tool_calls": calls}, {"text": "done"}]}
    return await client.start_workflow(
        PromptWorkflow.run,
        PromptInput(
            prompt="go",
            workspace_root=str(workspace),
            guard_mode=GuardMode.ENFORCE,
            approval_mode=ApprovalMode.YOLO,
            editor_tools=EditorTools.FS,
            tool_timeout_seconds=timeout,
            scenario=ScenarioHooks(model_script=ModelScript.model_validate(script)),
        ),
        id=f"prompt-editor-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )


async def open_requests(handle: WorkflowHandle[Any, Any], count: int) -> list[EditorRequest]:
    """The prompt's open editor requests, once there are ``count`` of them."""
    for _ in range(2000):
        found = await handle.query(PromptWorkflow.editor_calls, EditorRequestsQuery())
        if len(found) >= count:
            return found
        await asyncio.sleep(0.02)
    raise AssertionError("no editor request opened")


async def settled_reasons(handle: WorkflowHandle[Any, Any]) -> list[str]:
    """Why each settled call failed, as the prompt's events say it (classified words)."""
    events = await handle.query(PromptWorkflow.events, EventsQuery())
    return [e.reason or "" for e in events if e.kind is EventKind.TOOL_CALL_SETTLED]


def read(path: str, **window: int) -> dict[str, Any]:
    return {"name": "read_file", "arguments": {"path": path, **window}}


def write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


async def test_a_read_and_a_write_settle_from_the_editors_answers(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    handle = await start(
        client, task_queue, tmp_path, [read("a.txt", offset=1, limit=1), write("d/b.txt", "hi")]
    )

    reading, writing = sorted(await open_requests(handle, 2), key=lambda r: r.tool_name)
    # The worker resolved both paths; a write's missing parent was made for the editor.
    assert reading.plan.path == str(tmp_path / "a.txt")
    assert (writing.plan.path, writing.plan.content) == (str(tmp_path / "d" / "b.txt"), "hi")
    assert (tmp_path / "d").is_dir() and not (tmp_path / "d" / "b.txt").exists()
    with pytest.raises(WorkflowUpdateFailedError):  # a write's answer carries no content
        await handle.execute_update(
            PromptWorkflow.answer_editor_call,
            EditorAnswer(request_id=writing.request_id, content="x"),
        )
    with pytest.raises(WorkflowUpdateFailedError):
        await handle.execute_update(
            PromptWorkflow.answer_editor_call, EditorAnswer(request_id="editor-99")
        )
    await handle.execute_update(
        PromptWorkflow.answer_editor_call,
        EditorAnswer(request_id=reading.request_id, content="one\ntwo\nthree\n"),
    )
    await handle.execute_update(
        PromptWorkflow.answer_editor_call, EditorAnswer(request_id=writing.request_id)
    )
    result = await handle.result()

    assert result.stop_reason is StopReason.END_TURN
    shown, wrote = (m.content for m in tool_messages(result))
    assert shown == "[Showing lines 2-2 of 3 in 'a.txt'. Use offset=2 to read more.]\ntwo\n"
    assert wrote == "Wrote 2 bytes to 'd/b.txt'."


async def test_an_editor_that_never_answers_settles_the_call_as_unavailable(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    handle = await start(client, task_queue, tmp_path, [write("b.txt", "hi")], timeout=1)

    result = await handle.result()

    [message] = tool_messages(result)
    assert "did not answer this write of 'b.txt' within 1 seconds" in message.content
    assert "Read the file before you write it again" in message.content
    assert await handle.query(PromptWorkflow.editor_calls, EditorRequestsQuery()) == []
    assert await settled_reasons(handle) == ["the editor did not answer"]


async def test_a_failure_is_classified_and_a_path_outside_never_opens_a_request(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "link.txt").symlink_to(outside)
    calls = [read("missing.txt"), read("../outside.txt"), read(str(outside)), read("link.txt")]
    handle = await start(client, task_queue, workspace, calls)

    [request] = await open_requests(handle, 1)
    await handle.execute_update(
        PromptWorkflow.answer_editor_call,
        EditorAnswer(request_id=request.request_id, failure=EditorFailure.NOT_FOUND),
    )
    result = await handle.result()

    assert request.plan.path == str(workspace / "missing.txt")
    missing, *escapes = tool_messages(result)
    assert "'missing.txt' does not exist" in missing.content
    assert all("outside the workspace" in m.content for m in escapes)
    assert all("secret" not in m.content for m in tool_messages(result))
    # In the order they settled, which the activities' timing decides.
    assert sorted(await settled_reasons(handle)) == ["not found", *["outside the workspace"] * 3]
    events = await handle.query(PromptWorkflow.events, EventsQuery())
    assert [e.kind for e in events].count(EventKind.EDITOR_REQUEST) == 1
