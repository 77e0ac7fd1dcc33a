"""Outcome builders shared by every tool runner (built-in, MCP): one shape for a call that
never reached its tool, whatever refused it."""

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
