"""Outcome builders shared by every tool runner (built-in, MCP, scenario fixtures): one
shape for a call that never reached its tool, whatever refused it, one each for a call whose
tool succeeded or failed, and one for a call the prompt cancelled
(workflows/contracts/outcome.py)."""

from __future__ import annotations

from workflows.contracts import (
    ExecutionStatus,
    TerminalStatus,
    ToolCall,
    ToolErrorType,
    ToolOutcome,
)

# A call the prompt cancelled looks the same whoever noticed: the workflow or a runner.
from workflows.contracts.synthetic_outcomes import CANCELLED_CONTENT, cancelled_outcome

__all__ = [
    "CANCELLED_CONTENT",
    "cancelled_outcome",
    "failed_outcome",
    "not_started_outcome",
    "succeeded_outcome",
]


def not_started_outcome(
    call: ToolCall,
    error_type: ToolErrorType,
    message: str,
    *,
    policy_tool_name: str | None,
    tool_type: str | None,
) -> ToolOutcome:
    """The call was refused before its tool ran (unknown tool, invalid arguments, …)."""
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy_tool_name,
        tool_type=tool_type if policy_tool_name else None,
        status=TerminalStatus.ERROR,
        execution_status=ExecutionStatus.NOT_STARTED,
        error_type=error_type,
        content=message,
        error_message=message,
    )


def succeeded_outcome(
    call: ToolCall,
    content: str,
    *,
    policy_tool_name: str,
    tool_type: str,
    writes: tuple[tuple[str, str], ...] = (),
) -> ToolOutcome:
    """The call ran and its tool succeeded (``writes``: the files it changed, as private
    digests, when the tool knows them)."""
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy_tool_name,
        tool_type=tool_type,
        status=TerminalStatus.SUCCESS,
        execution_status=ExecutionStatus.SUCCESS,
        content=content,
        writes=writes,
    )


def failed_outcome(
    call: ToolCall,
    error_type: ToolErrorType,
    message: str,
    *,
    policy_tool_name: str,
    tool_type: str,
) -> ToolOutcome:
    """The call ran and its tool failed. The execution error type is frozen here, at
    execute-settle; post-processing may change only the terminal ``error_type``."""
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy_tool_name,
        tool_type=tool_type,
        status=TerminalStatus.ERROR,
        execution_status=ExecutionStatus.ERROR,
        execution_error_type=error_type,
        error_type=error_type,
        content=message,
        error_message=message,
    )
