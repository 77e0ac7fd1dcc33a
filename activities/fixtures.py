"""Scenario fixture tools: tools whose outcomes a scenario scripts (docs/scenarios.md, "Running a
scenario").

A fixture reports exactly what it was told, including a missing or never-seen execution
status and contract-violating pairs, so scenarios can drive the guard down its fail-open
paths that no honest built-in tool would ever take. Fixtures reach the activities only
through the scenario channel (``RunToolInput.scenario_fixture`` and friends).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from temporalio import activity

from workflows.contracts.activity import ToolSpec
from workflows.contracts.outcome import (
    ExecutionStatus,
    TerminalStatus,
    ToolCall,
    ToolOutcome,
    file_write,
    is_denial,
)
from workflows.contracts.scenario import FixtureTool
from workflows.contracts.synthetic_outcomes import cancelled_outcome

# Every fixture execution, one JSON line each, under the prompt's workspace: the side-effect
# ledger the chaos suite (scripts/chaos.py) reads to prove that no call the workflow already
# had a result for ran again.
FIXTURE_LEDGER = Path(".seawall") / "fixture-ledger.jsonl"


def record_fixture_run(workspace_root: Path, call_id: str) -> None:
    """Append this execution (which activity, which attempt) to the workspace's ledger."""
    if not activity.in_activity():
        return
    info = activity.info()
    entry = {
        "workflow_id": info.workflow_id,
        "activity_id": info.activity_id,
        "attempt": info.attempt,
        "call_id": call_id,
    }
    ledger = os.path.join(workspace_root, FIXTURE_LEDGER)
    line = (json.dumps(entry) + "\n").encode("utf-8")
    # One append of one line, the directory made only the first time: every fixture call of
    # every scenario and benchmark pays for this, so no Path objects and no mkdir each call.
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    try:
        fd = os.open(ledger, flags, 0o644)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(ledger), exist_ok=True)
        fd = os.open(ledger, flags, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def fixture_tool_spec(name: str, fixture: FixtureTool) -> ToolSpec:
    """The fixture as the model is offered it (it accepts any arguments)."""
    return ToolSpec(
        name=name,
        description=fixture.description,
        parameters={"type": "object"},
        mutating=fixture.mutating,
        tool_type=fixture.tool_type,
    )


def check_fixture(call: ToolCall, fixture: FixtureTool) -> ToolOutcome | None:
    """Fixtures accept any arguments, so a fixture call is always admissible."""
    return None


def cancelled_fixture_outcome(call: ToolCall, fixture: FixtureTool) -> ToolOutcome:
    """What a hanging fixture reports once the prompt cancels it."""
    return cancelled_outcome(
        call,
        policy_tool_name=call.name,
        tool_type=fixture.tool_type,
        execution_status=ExecutionStatus.CANCELLED,
    )


async def run_fixture(call: ToolCall, fixture: FixtureTool, ordinal: int) -> ToolOutcome:
    """The scripted outcome number ``ordinal`` (the last one repeats). A hanging one waits
    for the cancellation the tool runner's heartbeats deliver."""
    scripted = fixture.outcome_for(ordinal)
    if scripted.hang:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return cancelled_fixture_outcome(call, fixture)
    execution_error_type = scripted.execution_error_type
    if execution_error_type is None and scripted.execution_status == ExecutionStatus.ERROR:
        execution_error_type = scripted.error_type
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=call.name,
        tool_type=fixture.tool_type,
        status=scripted.status,
        execution_status=scripted.execution_status,
        execution_error_type=execution_error_type,
        error_type=scripted.error_type,
        content=scripted.content or scripted.message or "",
        error_message=scripted.message,
        # A scripted denial is the tool's own permission layer saying no.
        denied=is_denial(scripted.status, scripted.execution_status, scripted.error_type),
        # What it wrote, digested as a built-in file tool's writes are; only on success.
        writes=(
            tuple(file_write(path, content) for path, content in scripted.writes.items())
            if scripted.status == TerminalStatus.SUCCESS
            else ()
        ),
    )
