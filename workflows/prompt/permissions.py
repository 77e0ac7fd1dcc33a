"""Permission requests: a call the approval rules say to ask about waits for the user.

docs/architecture.md, "The life of a prompt"; docs/protections.md, "Approval rules". Which calls
run, ask or never run is the approval policy (``workflows/prompt/approval_policy.py``: the
approval mode's preset, the operator's and the session's rules, and the calls the user
allowed for the session); this mixin of ``PromptWorkflow`` keeps the open requests as
workflow state and takes the user's answer through the ``answer_permission`` update. A
rejection, or no answer within the prompt's permission timeout, means the call never runs;
an approval with ``remember`` allows the same call again for the rest of the session. The
``set_approval_mode`` signal (an editor switching its session mode) changes the preset for
later calls, within the loosest mode the operator allowed when the prompt started (a looser
one is ignored: docs/security.md, "What a client may choose").
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from workflows.contracts.approval import ApprovalRule
from workflows.contracts.outcome import ToolCall
from workflows.contracts.prompt import ApprovalModeChange, PermissionAnswer, PermissionRequest
from workflows.contracts.prompt_options import ApprovalMode, PromptOptions
from workflows.prompt.approval_policy import Approval, ApprovalPolicy, remembered_rule
from workflows.prompt.approvals import call_summary, shown_arguments


class PermissionRequests:
    """The open permission requests of one prompt and their answers."""

    def __init__(self) -> None:
        super().__init__()
        self._pending_permissions: dict[str, PermissionRequest] = {}
        self._permission_answers: dict[str, bool] = {}
        self._permission_seq = 0
        # None: the mode the prompt started with.
        self._approval_mode_change: ApprovalMode | None = None
        # The calls asked about, by request id, and those the user allowed for the session.
        self._asked_calls: dict[str, ToolCall] = {}
        self._remembered: list[ApprovalRule] = []
        # The operator's rules, resolved when the prompt starts.
        self._operator_rules: tuple[ApprovalRule, ...] = ()

    @workflow.signal
    def set_approval_mode(self, change: ApprovalModeChange) -> None:
        self._approval_mode_change = change.approval_mode

    def _approval_mode(
        self, started_with: ApprovalMode, loosest: ApprovalMode | None
    ) -> ApprovalMode:
        """The approval mode for a call cleared to run now: the latest switch the operator's
        ``loosest`` mode allows, else the mode the prompt started with."""
        change = self._approval_mode_change
        return change if change is not None and change.allowed_by(loosest) else started_with

    def _approval(self, options: PromptOptions, call: ToolCall, *, mutating: bool) -> Approval:
        """How the policy decides ``call`` now (deterministic: the same rules and answers
        give the same decision on replay)."""
        policy = ApprovalPolicy(
            operator=self._operator_rules,
            session=options.session_approval_rules,
            remembered=(*options.remembered_approvals, *self._remembered),
        )
        mode = self._approval_mode(options.approval_mode, options.loosest_approval_mode)
        return policy.decide(mode, call, mutating=mutating)

    @workflow.update
    def answer_permission(self, answer: PermissionAnswer) -> str:
        request = self._pending_permissions.pop(answer.request_id, None)
        self._permission_answers[answer.request_id] = answer.approve
        call = self._asked_calls.get(answer.request_id)
        if answer.approve and answer.remember and call is not None and request is not None:
            self._remembered.append(remembered_rule(call, request.summary))
            return "approved for this session"
        return "approved" if answer.approve else "rejected"

    @answer_permission.validator
    def _validate_permission_answer(self, answer: PermissionAnswer) -> None:
        if answer.request_id not in self._pending_permissions:
            raise ValueError(f"no pending permission request {answer.request_id!r}")

    def _open_permission_request(
        self, call: ToolCall, batch: int, redacted: tuple[str, ...], rule: str
    ) -> PermissionRequest:
        """Register a request for ``call``, showing its arguments (``redacted``: the names
        never shown) and the ``rule`` that asks; it is pending until answered or timed
        out."""
        self._permission_seq += 1
        shown = shown_arguments(call.arguments or {}, redacted)
        request = PermissionRequest(
            request_id=f"permission-{self._permission_seq}",
            call_id=call.call_id,
            tool_name=call.name,
            batch=batch,
            arguments=shown,
            summary=call_summary(call.name, shown),
            rule=rule,
        )
        self._pending_permissions[request.request_id] = request
        self._asked_calls[request.request_id] = call
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
