"""Scenario fixture tools (``activities/fixtures.py``): what a fixture is offered as, and
what it reports once cancelled (docs/scenarios.md, "Running a scenario")."""

from __future__ import annotations

from activities.fixtures import cancelled_fixture_outcome, fixture_tool_spec
from workflows.contracts import ExecutionStatus, TerminalStatus, ToolCall
from workflows.contracts.scenario import FixtureOutcome, FixtureTool
from workflows.contracts.synthetic_outcomes import CANCELLED_CONTENT

CALL = ToolCall(call_id="c1", name="build")
HANGING = FixtureTool(outcomes=[FixtureOutcome(hang=True)], mutating=True, tool_type="mcp")


def test_a_fixture_is_offered_with_its_own_description_and_any_arguments() -> None:
    spec = fixture_tool_spec("build", HANGING)

    assert (spec.name, spec.description) == ("build", HANGING.description)
    assert spec.parameters == {"type": "object"}
    assert (spec.mutating, spec.tool_type) == (True, "mcp")


def test_a_cancelled_fixture_uses_the_one_cancelled_text() -> None:
    outcome = cancelled_fixture_outcome(CALL, HANGING)

    assert (outcome.status, outcome.execution_status) == (
        TerminalStatus.CANCELLED,
        ExecutionStatus.CANCELLED,
    )
    assert outcome.content == CANCELLED_CONTENT
    assert (outcome.policy_tool_name, outcome.tool_type) == ("build", "mcp")
