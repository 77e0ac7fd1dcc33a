"""Loop profiles on a real Temporal dev server (docs/protections.md, "Loop profiles").

The recommended profile's rules remind and stop through the real ``PromptWorkflow`` exactly
as the pure tests say; the profile and the per-rule modes are resolved once, from the
worker's operator settings, and recorded in history; a session hands them to its prompts.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs
from temporalio.client import Client

from tests.scenario_helpers import fail, ok, run, scenario, scenario_file, tool_messages
from workflows.contracts.prompt import EventKind, EventsQuery, LoopType, PromptResult, StopReason
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.contracts.session import PromptSubmission, SessionInput, SessionSettings
from workflows.contracts.synthetic_outcomes import DENIED_REPEAT_CONTENT, PERMISSION_DENIED_CONTENT
from workflows.prompt.workflow import PromptWorkflow
from workflows.rules.denied_calls import DENIED_CALL_REMINDER, DENIED_CALL_STOP_MESSAGE
from workflows.rules.failure_cycles import FAILURE_CYCLE_REMINDER, FAILURE_CYCLE_STOP_MESSAGE
from workflows.rules.identical_results import IDENTICAL_RESULT_REMINDER
from workflows.session import SessionWorkflow, session_workflow_id

pytestmark = pytest.mark.asyncio


def rule_decisions(result: PromptResult) -> list[tuple[int, str, str]]:
    return [(e.batch, e.rule, e.decision) for e in result.rules]


def without_profile(name: str, **changes: Any) -> Any:
    """An example scenario that leaves the loop profile to the operator."""
    return scenario(**{**scenario_file(name).model_dump(), "profile": None, **changes})


async def test_a_failure_cycle_earns_the_reminder_then_stops_the_prompt(
    client: Client, task_queue: str
) -> None:
    result = await run(client, task_queue, scenario_file("failure-cycle"))

    assert result.loop_profile == "recommended"
    assert (result.stop_reason, result.loop_type) == (
        StopReason.LOOP_DETECTED,
        LoopType.REPEATED_FAILURE_CYCLE,
    )
    assert rule_decisions(result) == [
        (15, "repeated_failure_cycle", "warn"),
        (16, "repeated_identical_result", "warn"),
        (17, "repeated_failure_cycle", "stop"),
    ]
    system = [m.content for m in result.messages if m.role.value == "system"]
    assert system == [FAILURE_CYCLE_REMINDER, IDENTICAL_RESULT_REMINDER, FAILURE_CYCLE_STOP_MESSAGE]
    # Every call ran: the cleanups made the failed-call log forget, so nothing was refused.
    assert result.tool_calls.executed == 17 and result.tool_calls.refused == 0
    # The seeds' guard never got past one failure: each cleanup reset its streak.
    assert {e.decision for e in result.guard} <= {"tracked", "reset"}

    handle = client.get_workflow_handle(result.workflow_id)
    events = await handle.query(PromptWorkflow.events, EventsQuery(after=0))
    assert [e.text for e in events if e.kind is EventKind.REMINDER] == [
        FAILURE_CYCLE_REMINDER,
        IDENTICAL_RESULT_REMINDER,
    ]
    assert [e.status for e in events if e.kind is EventKind.STOP] == ["repeated_failure_cycle"]
    attributes = {
        pair.key.name: pair.value for pair in (await handle.describe()).typed_search_attributes
    }
    assert attributes["SeawallLoopType"] == "repeated_failure_cycle"


async def test_in_shadow_the_rules_only_record_what_they_would_do(
    client: Client, task_queue: str
) -> None:
    spec = scenario(**{**scenario_file("failure-cycle").model_dump(), "mode": "shadow"})
    result = await run(client, task_queue, spec)

    assert result.stop_reason is StopReason.END_TURN
    assert rule_decisions(result) == [
        (15, "repeated_failure_cycle", "would_warn"),
        (16, "repeated_identical_result", "would_warn"),
        (17, "repeated_failure_cycle", "would_stop"),
        (18, "repeated_identical_result", "would_stop"),
    ]
    assert not [m for m in result.messages if m.role.value == "system"]


async def test_a_denied_call_is_not_asked_again_and_denial_rounds_stop(
    client: Client, task_queue: str
) -> None:
    command = {"name": "run_shell_command", "arguments": {"command": "sudo systemctl restart db"}}
    spec = scenario(
        mode="enforce",
        profile="recommended",
        permissions={"run_shell_command": "reject"},
        tools={"run_shell_command": {"mutating": True, "outcomes": [ok()]}},
        model={"turns": [{"tool_calls": [command]}] * 6},
    )
    result = await run(client, task_queue, spec)

    assert result.loop_type is LoopType.REPEATED_DENIED_CALL
    assert [m.content for m in tool_messages(result)] == [PERMISSION_DENIED_CONTENT] + [
        DENIED_REPEAT_CONTENT
    ] * 4
    assert result.tool_calls.denied_repeats == 4
    # Four denial rounds, then the reminder; the fifth round stops.
    assert [d for _, r, d in rule_decisions(result) if r == "repeated_denied_call"] == [
        "answered",
        "answered",
        "answered",
        "warn",
        "answered",
        "stop",
    ]
    assert result.messages[-1].content == DENIED_CALL_STOP_MESSAGE
    assert DENIED_CALL_REMINDER in [m.content for m in result.messages]
    events = await client.get_workflow_handle(result.workflow_id).query(
        PromptWorkflow.events, EventsQuery(after=0)
    )
    # The user was asked once; the re-requests were answered without asking.
    assert sum(e.kind is EventKind.PERMISSION_REQUEST for e in events) == 1


async def test_the_profile_and_rule_modes_come_from_the_operator_settings(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("SEAWALL_LOOP_PROFILE", " Seed ")
    seed = await run(client, task_queue, without_profile("failure-cycle"))
    assert seed.loop_profile == "seed"
    assert seed.rules == [] and seed.stop_reason is StopReason.END_TURN

    monkeypatch.delenv("SEAWALL_LOOP_PROFILE")
    monkeypatch.setenv("SEAWALL_FAILURE_CYCLE_GUARD", "off")
    monkeypatch.setenv("SEAWALL_IDENTICAL_RESULT_GUARD", "warn")
    overridden = await run(client, task_queue, without_profile("failure-cycle"))
    assert overridden.loop_profile == "recommended"
    assert {r for _, r, _ in rule_decisions(overridden)} == {"repeated_identical_result"}
    assert overridden.stop_reason is StopReason.END_TURN

    # Resolved once, by a local activity (docs/capacity.md, "Durable steps per prompt").
    history = await client.get_workflow_handle(overridden.workflow_id).fetch_history()
    scheduled = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    local = [
        json.loads(e.marker_recorded_event_attributes.details["data"].payloads[0].data)[
            "activity_type"
        ]
        for e in history.events
        if e.HasField("marker_recorded_event_attributes")
        and e.marker_recorded_event_attributes.marker_name == "core_local_activity"
    ]
    assert "seawall.resolve_operator_settings" not in scheduled
    # The settings once; the tool list (no MCP server configured) in the other.
    assert local == ["seawall.resolve_operator_settings", "seawall.list_tools_without_mcp"]


async def test_an_invalid_profile_means_the_default_and_one_diagnostic(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("SEAWALL_LOOP_PROFILE", "strictest")
    with capture_logs() as logs:
        result = await run(client, task_queue, without_profile("failure-cycle"))
    assert result.loop_profile == "recommended"
    events = [line["event"] for line in logs if line["log_level"] == "warning"]
    assert events.count("invalid_loop_profile") == 1


async def test_a_session_resolves_the_profile_once_and_hands_it_to_every_prompt(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("SEAWALL_LOOP_PROFILE", "seed")
    session_id = uuid.uuid4().hex[:12]
    settings = SessionSettings(
        workspace_root=str(tmp_path),
        scenario=ScenarioHooks(
            model_script=ModelScript.model_validate({"turns": [{"text": "a"}, {"text": "b"}]})
        ),
        approval_mode=ApprovalMode.YOLO,
    )
    handle = await client.start_workflow(
        SessionWorkflow.run,
        SessionInput(session_id=session_id, settings=settings),
        id=session_workflow_id(session_id),
        task_queue=task_queue,
    )
    first = await handle.execute_update(SessionWorkflow.submit_prompt, PromptSubmission(text="1"))
    second = await handle.execute_update(SessionWorkflow.submit_prompt, PromptSubmission(text="2"))
    # The operator changes the setting while the session runs (once it has resolved its
    # own, which its first task does while the updates may already be answered): its
    # prompts keep the one the session resolved.
    while (await handle.query(SessionWorkflow.status)).loop_profile is None:
        await asyncio.sleep(0.05)
    monkeypatch.setenv("SEAWALL_LOOP_PROFILE", "recommended")
    await handle.signal(SessionWorkflow.close)
    await handle.result()
    for prompt_id in (first.prompt_id, second.prompt_id):
        result: PromptResult = await client.get_workflow_handle(
            prompt_id, result_type=PromptResult
        ).result()
        assert result.loop_profile == "seed"
        history = await client.get_workflow_handle(prompt_id).fetch_history()
        assert not any(
            e.HasField("activity_task_scheduled_event_attributes")
            and e.activity_task_scheduled_event_attributes.activity_type.name
            == "seawall.resolve_operator_settings"
            for e in history.events
        )


async def test_a_relaxed_repeat_runs_and_the_same_failure_is_still_counted(
    client: Client, task_queue: str
) -> None:
    """A transient failure admits the identical retry (the seed refuses it)."""
    fetch = {"name": "fetch", "arguments": {"url": "https://status.example/api"}}
    spec = scenario(
        mode="enforce",
        tools={
            "fetch": {"tool_type": "mcp", "outcomes": [fail("HTTP 503 Service Unavailable"), ok()]}
        },
        model={"turns": [{"tool_calls": [fetch]}, {"tool_calls": [fetch]}, {"text": "done"}]},
    )
    recommended = await run(
        client, task_queue, scenario(**{**spec.model_dump(), "profile": "recommended"})
    )
    seed = await run(client, task_queue, scenario(**{**spec.model_dump(), "profile": "seed"}))

    assert recommended.tool_calls.executed == 2 and recommended.tool_calls.refused == 0
    assert tool_messages(recommended)[-1].content == "ok"
    assert seed.tool_calls.executed == 1 and seed.tool_calls.refused == 1
