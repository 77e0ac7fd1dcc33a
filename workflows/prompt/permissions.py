"""Permission requests: a mutating call waits for the user's approval before it runs.

docs/architecture.md, "The prompt loop". Which calls ask is the prompt's approval mode
(:meth:`~workflows.contracts.prompt_options.ApprovalMode.asks_before`); this mixin of
``PromptWorkflow`` keeps the open requests as workflow state and takes the user's answer
through the ``answer_permission`` update. A rejection, or no answer within the prompt's
permission timeout, means the call never runs. The ``set_approval_mode`` signal (an editor
switching its session mode) changes which later calls ask, within the loosest mode the
operator allowed when the prompt started (a looser one is ignored: docs/security.md, "What a
client may choose").
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from workflows.contracts.outcome import ToolCall
from workflows.contracts.prompt import ApprovalModeChange, PermissionAnswer, PermissionRequest
from workflows.contracts.prompt_options import ApprovalMode


class PermissionRequests:
    """The open permission requests of one prompt and their answers."""

    def __init__(self) -> None:
        super().__init__()
        self._pending_permissions: dict[str, PermissionRequest] = {}
        self._permission_answers: dict[str, bool] = {}
        self._permission_seq = 0
        # None: the mode the prompt started with.
        self._approval_mode_change: ApprovalMode | None = None

    @workflow.signal
    def set_approval_mode(self, change: ApprovalModeChange) -> None:
        self._approval_mode_change = change.approval_mode

    def _approval_mode(
        self, started_with: ApprovalMode, loosest: ApprovalMode | None = None
    ) -> ApprovalMode:
        """The approval mode for a call cleared to run now: the latest switch the operator's
        ``loosest`` mode allows, else the mode the prompt started with."""
        change = self._approval_mode_change
        return change if change is not None and change.allowed_by(loosest) else started_with

    @workflow.update
    def answer_permission(self, answer: PermissionAnswer) -> str:
        self._pending_permissions.pop(answer.request_id, None)
        self._permission_answers[answer.request_id] = answer.approve
        return "approved" if answer.approve else "rejected"

    @answer_permission.validator
    def _validate_permission_answer(self, answer: PermissionAnswer) -> None:
        if answer.request_id not in self._pending_permissions:
            raise ValueError(f"no pending permission request {answer.request_id!r}")

    def _open_permission_request(self, call: ToolCall, batch: int) -> PermissionRequest:
        """Register a request for ``call``; it is pending until answered or timed out."""
        self._permission_seq += 1
        request = PermissionRequest(
            request_id=f"permission-{self._permission_seq}",
            call_id=call.call_id,
            tool_name=call.name,
            batch=batch,
        )
        self._pending_permissions[request.request_id] = request
        return request

    async def _permission_granted(self, request: PermissionRequest, timeout_seconds: float) -> bool:
        """Wait for the user's answer; a rejection or no answer in time is a refusal."""
        request_id = request.request_id
        try:
            await workflow.wait_condition(
                lambda: request_id in self._permission_answers,
                timeout=timedelta(seconds=timeout_seconds),
            )
        except TimeoutError:
            pass
        finally:
            self._pending_permissions.pop(request_id, None)
        return self._permission_answers.get(request_id, False)
