"""Outcomes of calls no tool answered: made up by the prompt loop, one builder and one text
each.

A call the loop answers itself (a resent call id, a refused repeat, a call past the
tool-call cap, a call the user or an approval rule did not allow), a call cancelled before its
tool settled, and a call whose activity failed outright still settle with a
:class:`ToolOutcome`, so the model gets a result for every call and the guard sees honest
statuses (``workflows.contracts.outcome``). The tool runners and the fixtures reuse
:func:`cancelled_outcome`, so there is one "cancelled" text, not several. Their texts are what
the model reads; changing one changes recorded conversations (never their commands)::

    outcome                           terminal / execution     error type        flag
    provider duplicate                error / not_started      execution_denied  provider_duplicate
    refused repeat                    error / not_started      execution_denied  refused_repeat
    skipped by the tool-call cap      cancelled / not_started  execution_denied
    permission rejected or unanswered cancelled / not_started  execution_denied  denied
    denied by an approval rule        cancelled / not_started  execution_denied  denied
    a denied call asked again         cancelled / not_started  execution_denied  denied
    cancelled before it started       cancelled / not_started
    cancelled while running           cancelled / cancelled
    activity failed, retries spent    error / missing          unhandled_exception
    lost with its worker, not rerun   error / missing          worker_lost

The last two are deliberate: whether the tool ran is unknown, and a missing execution status
is exactly what the guard treats as untrusted.
"""

from __future__ import annotations

from workflows.contracts.outcome import (
    ExecutionStatus,
    TerminalStatus,
    ToolCall,
    ToolErrorType,
    ToolOutcome,
)
from workflows.seed.failed_call_refusal import refusal_text

# The one "cancelled" text, whoever cancelled the call: the loop, or a tool runner that saw
# its activity cancelled.
CANCELLED_CONTENT = "The tool call was cancelled before it finished."
PERMISSION_DENIED_CONTENT = "The user did not approve this call; it was not run."
WORKER_LOST_CONTENT = "The tool call could not be completed by the worker."
RULE_DENIED_CONTENT = (
    "Not run: the approval rule {rule!r} does not allow this call. Do not try it again in "
    "another form; ask the user if it is needed."
)
LOST_CALL_CONTENT = (
    "The worker running this call was lost while it ran, so the call may have run partly or "
    "fully. It was not run again, because {tool} may change things and running it twice "
    "could repeat them. Check its effects (the files, state or remote systems it changes) "
    "before you call it again."
)
DUPLICATE_CALL_CONTENT = (
    "This tool call id was already handled in this prompt; the call was not run again."
)
SKIPPED_CALL_CONTENT = "Not run: this prompt reached its tool-call cap."
DENIED_REPEAT_CONTENT = (
    "Not run: the user already denied this exact call in this prompt, so it was not asked "
    "again. Do not request it again; take another approach or ask the user how to proceed."
)


def cancelled_outcome(
    call: ToolCall,
    *,
    policy_tool_name: str | None,
    execution_status: ExecutionStatus = ExecutionStatus.CANCELLED,
    tool_type: str | None = None,
) -> ToolOutcome:
    """Cancelled before it settled: ``not_started`` when the tool never ran,
    ``cancelled`` when it was cut while running. The one builder for every cancelled
    call, used by the workflow and by the activities' runners."""
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy_tool_name,
        tool_type=tool_type,
        status=TerminalStatus.CANCELLED,
        execution_status=execution_status,
        content=CANCELLED_CONTENT,
    )


def permission_denied_outcome(
    call: ToolCall, *, policy_tool_name: str | None, tool_type: str | None
) -> ToolOutcome:
    """The user rejected the call, or did not answer in time: it never ran."""
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy_tool_name,
        tool_type=tool_type,
        status=TerminalStatus.CANCELLED,
        execution_status=ExecutionStatus.NOT_STARTED,
        error_type=ToolErrorType.EXECUTION_DENIED,
        content=PERMISSION_DENIED_CONTENT,
        denied=True,
    )


def rule_denied_outcome(
    call: ToolCall, rule: str, *, policy_tool_name: str | None, tool_type: str | None
) -> ToolOutcome:
    """An approval rule denies the call: it never ran, and the model is told which rule (a
    denial the denied-call rule counts like the user's)."""
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy_tool_name,
        tool_type=tool_type,
        status=TerminalStatus.CANCELLED,
        execution_status=ExecutionStatus.NOT_STARTED,
        error_type=ToolErrorType.EXECUTION_DENIED,
        content=RULE_DENIED_CONTENT.format(rule=rule),
        denied=True,
    )


def worker_lost_outcome(
    call: ToolCall, *, policy_tool_name: str | None, tool_type: str | None
) -> ToolOutcome:
    """The tool activity itself failed (a lost worker, every retry spent): whether the tool
    ran is unknown, which the guard treats as untrusted."""
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy_tool_name,
        tool_type=tool_type,
        status=TerminalStatus.ERROR,
        execution_status=None,
        error_type=ToolErrorType.UNHANDLED_EXCEPTION,
        content=WORKER_LOST_CONTENT,
    )


def lost_call_outcome(
    call: ToolCall, *, policy_tool_name: str | None, tool_type: str | None
) -> ToolOutcome:
    """A call whose attempt was lost with its worker, not run again because its tool may
    change things (activities/lost_calls.py): whether it ran is unknown, so its execution
    status is none, which the guard treats as incomplete, like ``worker_lost_outcome``."""
    content = LOST_CALL_CONTENT.format(tool=policy_tool_name or call.name)
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy_tool_name,
        tool_type=tool_type if policy_tool_name else None,
        status=TerminalStatus.ERROR,
        execution_status=None,
        error_type=ToolErrorType.WORKER_LOST,
        content=content,
        error_message=content,
    )


def duplicate_outcome(call: ToolCall, *, policy_tool_name: str | None) -> ToolOutcome:
    """A resent provider call id: answered, not run again."""
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy_tool_name,
        status=TerminalStatus.ERROR,
        execution_status=ExecutionStatus.NOT_STARTED,
        error_type=ToolErrorType.EXECUTION_DENIED,
        content=DUPLICATE_CALL_CONTENT,
        provider_duplicate=True,
    )


def skipped_outcome(call: ToolCall) -> ToolOutcome:
    """A call of the batch that would pass the tool-call cap: nothing of it runs."""
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        status=TerminalStatus.CANCELLED,
        execution_status=ExecutionStatus.NOT_STARTED,
        error_type=ToolErrorType.EXECUTION_DENIED,
        content=SKIPPED_CALL_CONTENT,
    )


def refused_outcome(
    call: ToolCall, *, policy_tool_name: str | None, tool_type: str | None, reason: str
) -> ToolOutcome:
    """An unchanged repeat of a failed call: answered with the earlier failure's reason
    instead of running the tool."""
    text = refusal_text(call.name, reason)
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy_tool_name,
        tool_type=tool_type,
        status=TerminalStatus.ERROR,
        execution_status=ExecutionStatus.NOT_STARTED,
        error_type=ToolErrorType.EXECUTION_DENIED,
        content=text,
        error_message=text,
        refused_repeat=True,
    )


def denied_repeat_outcome(
    call: ToolCall, *, policy_tool_name: str | None, tool_type: str | None
) -> ToolOutcome:
    """An identical re-request of a call the user denied earlier in the prompt: answered as
    denied again without asking (R4, ``workflows.rules.denied_calls``)."""
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy_tool_name,
        tool_type=tool_type,
        status=TerminalStatus.CANCELLED,
        execution_status=ExecutionStatus.NOT_STARTED,
        error_type=ToolErrorType.EXECUTION_DENIED,
        content=DENIED_REPEAT_CONTENT,
        denied=True,
    )
