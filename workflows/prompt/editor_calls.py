"""Editor-side calls: a ``read_file`` or ``write_file`` an ACP editor runs for the prompt.

docs/acp.md, "Editor-side tools"; the contract is ``workflows/contracts/editor_calls.py``.
This mixin of ``PromptWorkflow`` runs such a call as a durable round trip, the way
``workflows.prompt.permissions`` asks for an approval: the worker plans it
(``seawall.prepare_editor_call``: its path resolved and confined to the workspace, the only
path the editor is ever given), the request is kept as workflow state and announced by an
``editor_request`` event (no path, no content: the bridge reads the request through the
``editor_calls`` query), and the editor's answer arrives through the ``answer_editor_call``
update. No answer within the prompt's tool timeout (the editor closed, the bridge detached)
settles the call as ``editor_unavailable``: whether it ran there is unknown, and the model is
told so. A prompt started before ``EDITOR_TOOLS_PATCH`` never routes a call (its input has
no ``editor_tools``), so the patch is asked only where the new path begins.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow

from workflows.contracts.activity import PREPARE_EDITOR_CALL
from workflows.contracts.editor_calls import (
    EditorAnswer,
    EditorCallPlan,
    EditorRequest,
    EditorRequestsQuery,
    PreparedEditorCall,
    PrepareEditorCallInput,
    editor_outcome,
    editor_unavailable_outcome,
    routes_to_editor,
)
from workflows.contracts.outcome import ExecutionStatus, ToolCall, ToolOutcome
from workflows.contracts.prompt import EventKind, PromptInput
from workflows.contracts.synthetic_outcomes import cancelled_outcome
from workflows.prompt.activity_options import QUICK_ACTIVITY
from workflows.prompt.events import EventLog
from workflows.prompt.patches import EDITOR_TOOLS_PATCH


class EditorCalls:
    """The open editor requests of one prompt and the editor's answers."""

    # PromptWorkflow's: the event log the requests are announced in, and the current batch.
    _log: EventLog
    _batch: int

    def __init__(self) -> None:
        super().__init__()
        self._editor_requests: dict[str, EditorRequest] = {}
        self._editor_answers: dict[str, EditorAnswer] = {}
        self._editor_seq = 0

    @workflow.query
    def editor_calls(self, query: EditorRequestsQuery) -> list[EditorRequest]:
        wanted = set(query.request_ids)
        return [r for r in self._editor_requests.values() if not wanted or r.request_id in wanted]

    @workflow.update
    def answer_editor_call(self, answer: EditorAnswer) -> str:
        self._editor_answers[answer.request_id] = answer
        self._editor_requests.pop(answer.request_id, None)
        return "failed" if answer.failure is not None else "done"

    @answer_editor_call.validator
    def _validate_editor_answer(self, answer: EditorAnswer) -> None:
        request = self._editor_requests.get(answer.request_id)
        if request is None:
            raise ValueError(f"no open editor request {answer.request_id!r}")
        reads = request.plan.operation.value == "read"
        if reads and answer.failure is None and answer.content is None:
            raise ValueError("a read's answer carries the file's content or a failure")
        if not reads and answer.content is not None:
            raise ValueError("a write's answer carries no content")

    def _runs_in_editor(self, prompt: PromptInput, call: ToolCall) -> bool:
        """Whether ``call`` runs through the editor (state only, no command)."""
        return routes_to_editor(prompt.editor_tools, call.name)

    async def _run_in_editor(
        self, prompt: PromptInput, call: ToolCall, summary: str | None
    ) -> ToolOutcome:
        """Plan the call on the worker, hand it to the editor, and settle it from the
        answer (or its absence within the prompt's tool timeout)."""
        workflow.patched(EDITOR_TOOLS_PATCH)
        prepared: PreparedEditorCall = await workflow.execute_activity(
            PREPARE_EDITOR_CALL,
            PrepareEditorCallInput(call=call, workspace_root=prompt.workspace_root),
            result_type=PreparedEditorCall,
            start_to_close_timeout=QUICK_ACTIVITY,
            summary=summary,
        )
        if prepared.refused is not None:
            return prepared.refused
        plan = prepared.plan
        assert plan is not None  # PreparedEditorCall holds exactly one
        return await self._editor_round_trip(prompt, call, plan)

    async def _editor_round_trip(
        self, prompt: PromptInput, call: ToolCall, plan: EditorCallPlan
    ) -> ToolOutcome:
        self._editor_seq += 1
        request_id = f"editor-{self._editor_seq}"
        self._editor_requests[request_id] = EditorRequest(
            request_id=request_id, call_id=call.call_id, tool_name=call.name, plan=plan
        )
        self._log.emit(
            EventKind.EDITOR_REQUEST,
            batch=self._batch,
            call_id=call.call_id,
            tool_name=call.name,
            request_id=request_id,
        )
        timeout = prompt.tool_timeout_seconds
        try:
            await workflow.wait_condition(
                lambda: request_id in self._editor_answers, timeout=timedelta(seconds=timeout)
            )
        except TimeoutError:
            return editor_unavailable_outcome(call, plan, timeout)
        except asyncio.CancelledError:
            # The editor may be doing it: cut while running, not "never started".
            return cancelled_outcome(
                call, policy_tool_name=call.name, execution_status=ExecutionStatus.CANCELLED
            )
        finally:
            self._editor_requests.pop(request_id, None)
        answer = self._editor_answers.pop(request_id)
        return editor_outcome(call, plan, answer, max_chars=prompt.max_output_chars)
