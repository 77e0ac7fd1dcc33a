"""PromptWorkflow on a real Temporal dev server: the seed's integration shape and the
Session-level behaviours of seeds 000 and 004 (workflows/seed/failed_call_refusal.py,
"The prompt loop", "Scenario runs")."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from structlog.testing import capture_logs
from temporalio.client import Client

from tests.activities.sandbox_helpers import host_pids_running, marker
from tests.scenario_helpers import (
    calls,
    decisions,
    fail,
    ok,
    reminders,
    run,
    scenario,
    scenario_file,
    stops,
    tool_messages,
)
from workflows.contracts.conversation import MID_TURN_INPUT_PREFIX, Role
from workflows.contracts.prompt import (
    EventKind,
    EventsQuery,
    LoopType,
    PromptInput,
    StopReason,
)
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed.failed_call_refusal import MAX_REPEATS
from workflows.seed.guard import REPEATED_TOOL_FAILURE_REMINDER, GuardMode

pytestmark = pytest.mark.asyncio


# --- the seed's integration shape -------------------------------------------------------


async def test_enforce_warns_after_batch_two_and_stops_after_batch_three(
    client: Client, task_queue: str
) -> None:
    result = await run(client, task_queue, scenario_file("read-missing-file-loop"))

    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert result.loop_type is LoopType.REPEATED_TOOL_EXECUTION_FAILURE
    assert result.model_requests == 3
    assert result.tool_calls.executed == 9
    assert decisions(result) == ["tracked", "warn", "stop"]
    assert reminders(result) == 1
    assert stops(result) == 1
    # Order: batch-2 results, then the reminder; batch-3 result kept, then the stop message.
    roles = [m.role for m in result.messages]
    reminder_at = next(
        i for i, m in enumerate(result.messages) if m.content == REPEATED_TOOL_FAILURE_REMINDER
    )
    assert roles[reminder_at - 4 : reminder_at] == [Role.TOOL] * 4
    assert result.messages[-2].role is Role.TOOL
    assert "missing-9.txt" in result.messages[-2].content
    assert result.messages[-1].role is Role.SYSTEM
    assert len(tool_messages(result)) == 9


async def test_shadow_runs_the_script_to_its_end_without_injected_text(
    client: Client, task_queue: str
) -> None:
    result = await run(
        client, task_queue, scenario_file("read-missing-file-loop"), mode=GuardMode.SHADOW
    )

    assert result.stop_reason is StopReason.END_TURN
    assert decisions(result) == ["tracked", "would_warn", "would_stop"]
    assert result.model_requests == 4
    assert reminders(result) == 0
    assert stops(result) == 0
    assert all(m.role is not Role.SYSTEM for m in result.messages)


async def test_warn_mode_reminds_once_and_never_stops(client: Client, task_queue: str) -> None:
    result = await run(
        client, task_queue, scenario_file("read-missing-file-loop"), mode=GuardMode.WARN
    )

    assert result.stop_reason is StopReason.END_TURN
    assert decisions(result) == ["tracked", "warn", "would_stop"]
    assert reminders(result) == 1
    assert stops(result) == 0


async def test_off_does_no_guard_work(client: Client, task_queue: str) -> None:
    result = await run(
        client, task_queue, scenario_file("read-missing-file-loop"), mode=GuardMode.OFF
    )

    assert result.guard_mode == "off"
    assert set(decisions(result)) == {"none"}
    assert all(entry.phase_after == "idle" for entry in result.guard)
    assert result.stop_reason is StopReason.END_TURN
    assert reminders(result) == 0


async def test_model_that_heeds_the_reminder_finishes_normally(
    client: Client, task_queue: str
) -> None:
    result = await run(client, task_queue, scenario_file("reminder-heeded"))

    assert result.stop_reason is StopReason.END_TURN
    assert decisions(result) == ["tracked", "warn", "none", "reset"]
    assert result.guard[-1].reason == "success"
    assert reminders(result) == 1
    assert result.messages[-1].content == "notes.txt says hello."


# --- Session-level behaviours of seed 000 -------------------------------------------------


async def test_frozen_execution_error_type_survives_a_post_processing_error_type(
    client: Client, task_queue: str
) -> None:
    # Post-processing replaces the terminal error type on every other call; the guard keys
    # on the execution error type frozen at execute-settle, so the streak stays one key.
    flaky = {
        "outcomes": [
            {**fail(error_type="execution_failed")},
            {**fail(error_type="output_truncated"), "execution_error_type": "execution_failed"},
        ]
        * 8
    }
    spec = scenario(
        mode="enforce",
        tools={"flaky": flaky},
        model={"turns": [calls("flaky", 4), calls("flaky", 4, 4), calls("flaky", 1, 8)]},
    )
    result = await run(client, task_queue, spec)

    assert decisions(result) == ["tracked", "warn", "stop"]
    assert result.loop_type is LoopType.REPEATED_TOOL_EXECUTION_FAILURE


async def test_warn_injects_exactly_one_reminder_per_candidate(
    client: Client, task_queue: str
) -> None:
    flaky = {"outcomes": [fail()] * 8 + [ok()] + [fail()] * 20}
    spec = scenario(
        mode="warn",
        tools={"flaky": flaky},
        model={
            "turns": [
                calls("flaky", 4),
                calls("flaky", 4, 10),  # warn: candidate 1
                calls("flaky", 1, 20),  # succeeds: reset success
                calls("flaky", 4, 30),
                calls("flaky", 4, 40),  # warn: candidate 2
                calls("flaky", 4, 50),  # would_stop, latched
                calls("flaky", 4, 60),  # latched: nothing more
            ]
        },
    )
    result = await run(client, task_queue, spec)

    assert decisions(result) == [
        "tracked",
        "warn",
        "reset",
        "tracked",
        "warn",
        "would_stop",
        "none",
    ]
    assert reminders(result) == 2
    warned = [e.candidate_ordinal for e in result.guard if e.decision == "warn"]
    assert warned == [1, 2]
    assert result.stop_reason is StopReason.END_TURN


async def test_mid_turn_input_resets_and_reaches_the_model_after_tool_results(
    client: Client, task_queue: str
) -> None:
    result = await run(client, task_queue, scenario_file("mid-turn-input-reset"))

    assert decisions(result) == ["tracked", "reset", "tracked"]
    assert result.guard[1].reason == "external_input"
    assert result.stop_reason is StopReason.END_TURN
    prefixed = [m for m in result.messages if m.content.startswith(MID_TURN_INPUT_PREFIX)]
    assert [m.content for m in prefixed] == [
        MID_TURN_INPUT_PREFIX + "stop calling the API, it is down"
    ]
    index = result.messages.index(prefixed[0])
    assert [m.role for m in result.messages[index - 4 : index]] == [Role.TOOL] * 4


async def test_queued_prompt_takes_precedence_over_enforcement(
    client: Client, task_queue: str
) -> None:
    result = await run(client, task_queue, scenario_file("queued-prompt"))

    assert decisions(result) == ["tracked", "reset", "tracked"]
    assert result.guard[1].reason == "queued_prompt"
    assert result.stop_reason is StopReason.END_TURN
    assert reminders(result) == 0


async def test_cancellation_mid_batch_settles_running_calls_as_cancelled(
    client: Client, task_queue: str
) -> None:
    result = await run(client, task_queue, scenario_file("cancel-mid-batch"))

    assert result.stop_reason is StopReason.CANCELLED
    assert result.model_requests == 2
    contents = {m.tool_call_id: m.content for m in tool_messages(result)}
    assert "cancelled" in contents["call_2_0"]
    assert contents["call_2_1"] == "ok"
    events = await client.get_workflow_handle(result.workflow_id).query(
        PromptWorkflow.events, EventsQuery()
    )
    settled = {e.call_id: e.status for e in events if e.kind is EventKind.TOOL_CALL_SETTLED}
    assert settled == {"call_1_0": "success", "call_2_0": "cancelled", "call_2_1": "success"}
    assert stops(result) == 0


async def test_unreliable_input_boundary_downgrades_enforce_to_warn(
    client: Client, task_queue: str
) -> None:
    spec = scenario(
        mode="enforce",
        tools={"flaky": {"outcomes": [fail()]}},
        model={
            "turns": [
                calls("flaky", 4),
                calls("flaky", 4, 10),
                calls("flaky", 4, 20),
                calls("flaky", 4, 30),
            ]
        },
        events=[{"batch": 1, "unreliable_input": True}],
    )
    result = await run(client, task_queue, spec)

    assert decisions(result) == ["reset", "tracked", "warn", "would_stop"]
    assert result.guard[0].reason == "unreliable_input"
    assert result.enforcement_disabled is True
    assert result.stop_reason is StopReason.END_TURN
    assert reminders(result) == 1


@pytest.mark.parametrize("routing", [{"channel": True}, {"route": "cron"}, {"route": "background"}])
async def test_channel_and_non_interactive_prompts_are_forced_off(
    client: Client, task_queue: str, routing: dict[str, object]
) -> None:
    spec = scenario(**{**scenario_file("read-missing-file-loop").model_dump(), **routing})

    result = await run(client, task_queue, spec, mode=GuardMode.ENFORCE)

    assert result.guard_mode == "off"
    assert set(decisions(result)) == {"none"}
    assert result.stop_reason is StopReason.END_TURN
    assert reminders(result) == 0


# --- seed 004 end to end ----------------------------------------------------------------


async def test_unchanged_repeat_is_refused_with_the_earlier_reason_and_the_tool_ran_once(
    client: Client, task_queue: str
) -> None:
    result = await run(client, task_queue, scenario_file("repeated-failed-call"))

    assert result.tool_calls.executed == 1
    assert result.tool_calls.refused == MAX_REPEATS + 1
    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert result.loop_type is LoopType.REPEATED_FAILED_CALL
    first, *refused = tool_messages(result)
    assert all(m.content.startswith("Refused: this exact read_file call") for m in refused)
    assert all(first.content in m.content for m in refused)
    assert "MAX_REPEATS" in result.messages[-1].content
    # Refusals are ignored by the guard like provider duplicates.
    assert decisions(result) == ["tracked"] + ["none"] * (MAX_REPEATS + 1)


async def test_changed_call_runs(client: Client, task_queue: str) -> None:
    spec = scenario(
        mode="enforce",
        model={
            "turns": [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "b.txt"}}]},
            ]
        },
    )
    result = await run(client, task_queue, spec)

    assert result.tool_calls.executed == 2
    assert result.tool_calls.refused == 0


async def test_repeated_successful_call_runs(client: Client, task_queue: str) -> None:
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}
    spec = scenario(
        mode="enforce", workspace={"files": {"notes.txt": "hello"}}, model={"turns": [read, read]}
    )
    result = await run(client, task_queue, spec)

    assert result.tool_calls.executed == 2
    assert result.tool_calls.refused == 0
    assert [m.content for m in tool_messages(result)] == [tool_messages(result)[0].content] * 2


async def test_refusal_shadow_mode_runs_the_repeat(client: Client, task_queue: str) -> None:
    spec = scenario(**{**scenario_file("repeated-failed-call").model_dump(), "refusal": "shadow"})
    result = await run(client, task_queue, spec)

    assert result.tool_calls.refused == 0
    assert result.tool_calls.executed == 5
    assert result.loop_type is None


# --- the other protections --------------------------------------------------------------


async def test_invalid_parameters_three_times_stop(client: Client, task_queue: str) -> None:
    result = await run(client, task_queue, scenario_file("invalid-params-stop"))

    assert result.loop_type is LoopType.INVALID_TOOL_PARAMS_STAGNATION
    assert result.model_requests == 3
    assert set(decisions(result)) == {"none"}  # not_started from idle: nothing to reset


async def test_tool_call_cap_skips_the_batch_that_would_pass_it(
    client: Client, task_queue: str
) -> None:
    result = await run(client, task_queue, scenario_file("tool-call-cap"))

    assert result.loop_type is LoopType.TURN_TOOL_CALL_CAP
    assert result.tool_calls.executed == 3
    assert result.tool_calls.skipped == 3
    assert len(result.guard) == 1  # the skipped batch never settled


async def test_provider_duplicate_is_answered_without_running_and_a_second_replay_stops(
    client: Client, task_queue: str
) -> None:
    same = {"tool_calls": [{"id": "dup-1", "name": "read_file", "arguments": {"path": "n"}}]}
    spec = scenario(mode="enforce", model={"turns": [same, same, same, {"text": "x"}]})
    result = await run(client, task_queue, spec)

    assert result.tool_calls.executed == 1
    assert result.tool_calls.duplicates == 2
    assert result.loop_type is LoopType.GLOBAL_TOOL_CALL_DUPLICATE


async def test_max_model_requests_ends_the_prompt(client: Client, task_queue: str) -> None:
    spec = scenario(
        mode="off",
        max_model_requests=2,
        workspace={"files": {"n": "x"}},
        model={"turns": [{"tool_calls": [{"name": "list_directory"}]}] * 5},
    )
    result = await run(client, task_queue, spec)

    assert result.stop_reason is StopReason.MAX_TURN_REQUESTS
    assert result.model_requests == 2


# --- concurrency ------------------------------------------------------------------------


async def test_a_batch_of_eight_runs_concurrently_and_is_reduced_once_settled(
    client: Client, task_queue: str
) -> None:
    # Each call waits until all eight have started: run one at a time, they would time out.
    barrier = (
        "touch started-{n}; "
        "for i in $(seq 200); do [ $(ls started-* | wc -l) -ge 8 ] && break; sleep 0.05; done; "
        "[ $(ls started-* | wc -l) -ge 8 ] && exit 7"
    )
    batch = {
        "tool_calls": [
            {
                "name": "run_shell_command",
                "arguments": {"command": barrier.format(n=n), "timeout_seconds": 30},
            }
            for n in range(8)
        ]
    }
    spec = scenario(mode="enforce", approval_mode="yolo", model={"turns": [batch]})
    result = await run(client, task_queue, spec)

    assert all("Exit code: 7" in m.content for m in tool_messages(result))
    assert len(result.guard) == 1
    assert result.guard[0].decision == "tracked"
    assert result.guard[0].failure_count == 8


# --- the operator mode ------------------------------------------------------------------


async def test_operator_mode_is_resolved_in_a_local_activity_from_the_worker_environment(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SEAWALL_REPEATED_TOOL_FAILURE_GUARD", " WARN ")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    spec = scenario(**{**scenario_file("read-missing-file-loop").model_dump(), "mode": None})

    result = await run(client, task_queue, spec)

    assert result.guard_mode == "warn"
    assert decisions(result) == ["tracked", "warn", "would_stop"]
    history = await client.get_workflow_handle(result.workflow_id).fetch_history()
    activity_types = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    # docs/capacity.md, "Durable steps per prompt": recorded as a local activity's
    # marker before the first activity, not as an activity hop.
    assert "seawall.resolve_operator_settings" not in activity_types
    first_command = next(
        e
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
        or (
            e.HasField("marker_recorded_event_attributes")
            and e.marker_recorded_event_attributes.marker_name == "core_local_activity"
        )
    )
    assert first_command.HasField("marker_recorded_event_attributes")


async def test_invalid_operator_mode_falls_back_to_shadow_and_a_project_env_is_ignored(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / ".seawall").mkdir(parents=True)
    (project / ".env").write_text("SEAWALL_REPEATED_TOOL_FAILURE_GUARD=enforce\n")
    (project / ".seawall" / "config.yaml").write_text("repeated_tool_failure_guard: enforce\n")
    monkeypatch.chdir(project)
    monkeypatch.delenv("SEAWALL_REPEATED_TOOL_FAILURE_GUARD", raising=False)
    monkeypatch.setenv("QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD", "sometimes")
    # Only the seed profile starts a worker with an invalid mode (any other refuses it at
    # startup, docs/settings.md, "Bad values"); each session then resolves it the seed's way.
    monkeypatch.setenv("SEAWALL_LOOP_PROFILE", "seed")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    spec = scenario(**{**scenario_file("read-missing-file-loop").model_dump(), "mode": None})

    with capture_logs() as logs:
        result = await run(client, task_queue, spec, workspace=project)

    assert result.guard_mode == "shadow"
    diagnostics = [line for line in logs if line["log_level"] == "warning"]
    assert len(diagnostics) == 1


async def test_cancelling_a_prompt_cancels_its_running_shell_command(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    # The command runs in the sandbox's pid namespace, so its own $$ means nothing here: it
    # is found on the host by its unique argument.
    sleep_for = marker()
    long_call = {
        "name": "run_shell_command",
        "arguments": {"command": f"exec sleep {sleep_for}", "timeout_seconds": 120},
    }
    handle = await client.start_workflow(
        PromptWorkflow.run,
        PromptInput(
            prompt="build",
            workspace_root=str(tmp_path),
            guard_mode=GuardMode.ENFORCE,
            approval_mode=ApprovalMode.YOLO,
            scenario=ScenarioHooks(
                model_script=ModelScript.model_validate({"turns": [{"tool_calls": [long_call]}]})
            ),
        ),
        id=f"prompt-cancel-shell-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )
    await asyncio.wait_for(_until(lambda: host_pids_running(sleep_for)), 30)
    running = host_pids_running(sleep_for)

    await handle.cancel()
    result = await asyncio.wait_for(handle.result(), 60)

    assert result.stop_reason is StopReason.CANCELLED
    events = await handle.query(PromptWorkflow.events, EventsQuery())
    settled = [e.status for e in events if e.kind is EventKind.TOOL_CALL_SETTLED]
    assert settled == ["cancelled"]
    await asyncio.wait_for(_until(lambda: not any(_alive(pid) for pid in running)), 10)


async def _until(condition: Callable[[], object]) -> None:
    while not condition():
        await asyncio.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_recheck_after_a_successful_edit_runs_instead_of_being_refused(
    client: Client, task_queue: str
) -> None:
    test_run = {"tool_calls": [{"name": "run_shell_command", "arguments": {"command": "pytest"}}]}
    spec = scenario(
        mode="enforce",
        tools={
            "run_shell_command": {
                "outcomes": [fail("1 failed", "shell_execute_error")] * 4 + [ok("passed")]
            },
            "edit_file": {"outcomes": [ok("edited")]},
        },
        model={
            "turns": [
                turn
                for n in range(4)
                for turn in (
                    test_run,
                    {"tool_calls": [{"name": "edit_file", "arguments": {"fix": n}}]},
                )
            ]
            + [test_run, {"text": "all green"}]
        },
    )
    result = await run(client, task_queue, spec)

    assert result.tool_calls.refused == 0
    assert result.tool_calls.executed == 9
    assert result.stop_reason is StopReason.END_TURN
    assert result.messages[-1].content == "all green"


async def test_a_conversation_past_the_old_size_stop_runs_on_within_its_context_budget(
    client: Client, task_queue: str
) -> None:
    # Prompts started before the context policy ended here with an error (1,000,000
    # characters); now the next request carries the policy's view and the prompt goes on
    # (workflows/contracts/conversation.py; the recorded histories keep the old stop).
    big = {"outcomes": [ok("x" * 300_000)]}
    spec = scenario(
        mode="enforce",
        tools={"dump": big},
        model={"turns": [calls("dump", 4), {"text": "reached"}]},
    )
    result = await run(client, task_queue, spec)

    assert result.stop_reason is StopReason.END_TURN
    assert result.error is None
    assert result.model_requests == 2
    assert [len(m.content) for m in tool_messages(result)] == [300_000] * 4
