"""Outcome builders shared by every tool runner (built-in, MCP): one shape for a call that
never reached its tool, whatever refused it, and one for a call that ran."""

from __future__ import annotations

from workflows.outcome import ExecutionStatus, TerminalStatus, ToolCall, ToolErrorType, ToolOutcome


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


def settled_outcome(
    call: ToolCall,
    *,
    policy_tool_name: str,
    tool_type: str,
    status: TerminalStatus,
    execution_status: ExecutionStatus,
    content: str,
    error_type: str | None = None,
    error_message: str | None = None,
) -> ToolOutcome:
    """The call reached its tool. The execution error type is frozen here, at
    execute-settle; post-processing may change only the terminal ``error_type``."""
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy_tool_name,
        tool_type=tool_type,
        status=status,
        execution_status=execution_status,
        execution_error_type=error_type,
        error_type=error_type,
        content=content,
        error_message=error_message,
    )
