"""The view of a prompt whose workflow closed without a result.

docs/architecture.md, "Cancellation". A prompt normally completes with a ``PromptResult``,
cancelled or not. Some closed without one: prompts cancelled while they resolved their
settings or listed their tools before ``CANCEL_BEFORE_LOOP_PATCH`` (their workflow ended
CANCELED; old histories and old workers still end so), and prompts an operator terminated
or that failed or timed out. Their ``status`` query still replays as "running" and there is
no result to read, so a client polling ``GET /v1/prompts/{id}`` for the result waited
forever. The gateway answers them as finished instead: the status says not running, and a
result made up from what the status and the prompt's input still say, its ``stop_reason``
``cancelled`` for a cancelled workflow and ``error`` otherwise, its ``error`` saying why.
The conversation is not recorded anywhere, so the result carries none.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError

from seawall.client.temporal_ops import RPC_TIMEOUT, failure_message, read
from workflows.contracts.grant import START_REFUSALS
from workflows.contracts.prompt import (
    REFUSED_START_TEXT,
    ErrorReason,
    PromptInput,
    PromptResult,
    PromptStatus,
    StopReason,
    ToolCallCounts,
)
from workflows.contracts.prompt_options import PromptOptions
from workflows.seed import GuardMode

# How each closing without a result reads in the prompt's ``error``.
_CLOSED_AS = {
    WorkflowExecutionStatus.CANCELED: "cancelled",
    WorkflowExecutionStatus.TERMINATED: "terminated",
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.TIMED_OUT: "timed out",
}


def closed_without_result(status: WorkflowExecutionStatus | None) -> bool:
    """Whether a prompt's workflow in ``status`` has finished and will never have a result."""
    return status in _CLOSED_AS


def finished_view(
    prompt_id: str,
    execution: WorkflowExecutionStatus,
    status: PromptStatus,
    refusal_mode: str,
) -> tuple[PromptStatus, PromptResult]:
    """The status and result of a prompt whose workflow closed as ``execution`` without a
    result, from its last ``status`` and its input's refusal mode."""
    stop_reason = (
        StopReason.CANCELLED if execution is WorkflowExecutionStatus.CANCELED else StopReason.ERROR
    )
    finished = status.model_copy(update={"running": False, "stop_reason": stop_reason})
    result = PromptResult(
        workflow_id=prompt_id,
        stop_reason=stop_reason,
        error=(
            f"the prompt's workflow was {_CLOSED_AS[execution]} before it recorded a result; "
            "its conversation was not kept"
        ),
        model_requests=status.model_requests,
        tool_calls=status.tool_calls,
        guard_mode=status.guard_mode or GuardMode.OFF.value,
        refusal_mode=refusal_mode,
        guard=[],
        messages=[],
        loop_profile=status.loop_profile or "seed",
    )
    return finished, result


def refused_view(prompt_id: str, reason: str) -> tuple[PromptStatus, PromptResult]:
    """The status and result of a prompt that never started because the worker refused to
    start its session: ``error`` with ``start_refused`` and the worker's reason."""
    status = PromptStatus(
        running=False,
        batch=0,
        model_requests=0,
        guard_mode=None,
        guard_phase="idle",
        paused_batch=None,
        pending_permissions=[],
        tool_calls=ToolCallCounts(),
        stop_reason=StopReason.ERROR,
    )
    result = PromptResult(
        workflow_id=prompt_id,
        stop_reason=StopReason.ERROR,
        error=REFUSED_START_TEXT.format(reason=reason),
        error_reason=ErrorReason.START_REFUSED,
        model_requests=0,
        tool_calls=ToolCallCounts(),
        guard_mode=GuardMode.OFF.value,
        refusal_mode=PromptOptions().refusal_mode.value,
        guard=[],
        messages=[],
        loop_profile="seed",
    )
    return status, result


async def refusal_mode_of(client: Client, handle: WorkflowHandle[Any, Any]) -> str:
    """The refusal mode the prompt was started with (its input, the first history event)."""
    async for event in handle.fetch_history_events(page_size=1):
        started = event.workflow_execution_started_event_attributes
        (prompt,) = await client.data_converter.decode(started.input.payloads, [PromptInput])
        return str(prompt.refusal_mode.value)
    return str(PromptOptions().refusal_mode.value)


async def closed_prompt_view(
    client: Client,
    handle: WorkflowHandle[Any, Any],
    execution: WorkflowExecutionStatus,
    status: PromptStatus,
) -> tuple[PromptStatus, PromptResult]:
    """``finished_view`` for the prompt of ``handle`` (reads its input); a root prompt whose
    start the worker refused is ``refused_view`` with the worker's reason."""
    if execution is WorkflowExecutionStatus.FAILED:
        try:
            await read(lambda: handle.result(rpc_timeout=RPC_TIMEOUT))
        except WorkflowFailureError as err:
            cause = err.cause
            if isinstance(cause, ApplicationError) and cause.type in START_REFUSALS:
                return refused_view(handle.id, failure_message(cause))
    refusal_mode = await read(lambda: refusal_mode_of(client, handle))
    return finished_view(handle.id, execution, status, refusal_mode)
