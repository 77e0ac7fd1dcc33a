"""Outcomes the prompt loop makes up (``workflows/contracts/synthetic_outcomes.py``): none of them
is a failure of a tool that ran, so none is remembered by the refusal or counted by the guard
as one (workflows/contracts/outcome.py)."""

from __future__ import annotations

import pytest

from workflows.contracts import ExecutionStatus, TerminalStatus, ToolCall, ToolOutcome
from workflows.contracts.synthetic_outcomes import (
    PERMISSION_DENIED_CONTENT,
    cancelled_outcome,
    duplicate_outcome,
    permission_denied_outcome,
    refused_outcome,
    skipped_outcome,
    worker_lost_outcome,
)
from workflows.seed.failed_call_refusal import refusal_text

CALL = ToolCall(call_id="c9", name="mcp_t")


@pytest.mark.parametrize(
    "outcome",
    [
        cancelled_outcome(
            CALL, policy_tool_name="mcp_t", execution_status=ExecutionStatus.NOT_STARTED
        ),
        cancelled_outcome(
            CALL, policy_tool_name="mcp_t", execution_status=ExecutionStatus.CANCELLED
        ),
        permission_denied_outcome(CALL, policy_tool_name="mcp_t", tool_type="mcp"),
        worker_lost_outcome(CALL, policy_tool_name="mcp_t", tool_type="mcp"),
        duplicate_outcome(CALL, policy_tool_name="mcp_t"),
        skipped_outcome(CALL),
        refused_outcome(CALL, policy_tool_name="mcp_t", tool_type="mcp", reason="r"),
    ],
    ids=["cut", "cancelled", "denied", "worker-lost", "duplicate", "skipped", "refused"],
)
def test_a_made_up_outcome_answers_the_call_and_never_ran_and_failed(outcome: ToolOutcome) -> None:
    assert (outcome.call_id, outcome.tool_name) == ("c9", "mcp_t")
    assert outcome.content
    assert not outcome.ran_and_failed
    assert not outcome.contract_violation


def test_a_refused_repeat_carries_the_refusal_and_its_flag() -> None:
    out = refused_outcome(CALL, policy_tool_name="mcp__s__t", tool_type="mcp", reason="r")

    assert out.refused_repeat is True
    assert (out.status, out.execution_status) == (
        TerminalStatus.ERROR,
        ExecutionStatus.NOT_STARTED,
    )
    assert (out.policy_tool_name, out.tool_type) == ("mcp__s__t", "mcp")
    assert out.content == out.error_message == refusal_text("mcp_t", "r")


def test_a_rejected_permission_is_cancelled_not_started() -> None:
    out = permission_denied_outcome(CALL, policy_tool_name="mcp_t", tool_type="mcp")

    assert (out.status, out.execution_status) == (
        TerminalStatus.CANCELLED,
        ExecutionStatus.NOT_STARTED,
    )
    assert out.content == PERMISSION_DENIED_CONTENT
