"""The scenario channel (``workflows/contracts/scenario.py``): scenario data rides in one optional
field, ordinary prompts carry none, and payloads from before the channel still decode
(docs/scenarios.md, "Running a scenario"; docs/architecture.md, "Versioning")."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from workflows.contracts.activity import (
    CallModelInput,
    CheckToolCallInput,
    ListToolsInput,
    ModelSpec,
    RunToolInput,
)
from workflows.contracts.prompt import PromptInput
from workflows.contracts.scenario import FixtureOutcome, FixtureTool, ModelScript, ScenarioHooks
from workflows.contracts.session import SessionInput, SessionSettings

HISTORIES = Path(__file__).resolve().parents[2] / "replay" / "histories"
SCRIPT = {"turns": [{"text": "hi", "tool_calls": [{"name": "flaky"}]}], "after_reminder": None}
FIXTURE = {"outcomes": [{"status": "error", "execution_status": "error"}]}
CALL = {"call_id": "c1", "name": "flaky", "arguments": {}, "raw_arguments": "{}"}


def legacy_prompt(**fields: Any) -> dict[str, Any]:
    """A ``PromptInput`` payload as workers before the scenario channel wrote it."""
    return {
        "prompt": "go",
        "workspace_root": "/ws",
        "model": {"provider": "scripted", "script": SCRIPT, "model": None},
        "fixture_tools": {},
        "pause_at_batches": [],
        **fields,
    }


def started_input(history: str) -> bytes:
    events = json.loads((HISTORIES / f"{history}.json").read_text(encoding="utf-8"))["events"]
    payload = events[0]["workflowExecutionStartedEventAttributes"]["input"]["payloads"][0]
    return base64.b64decode(payload["data"])


# --- ordinary prompts -----------------------------------------------------------------------


def test_an_ordinary_prompt_carries_no_scenario_and_the_operators_provider() -> None:
    prompt = PromptInput(prompt="go", workspace_root="/ws")
    payload = json.loads(prompt.model_dump_json())

    assert prompt.scenario is None
    assert payload["model"] == {"provider": "operator", "model": None}
    assert payload["scenario"] is None
    assert not {"fixture_tools", "pause_at_batches"} & set(payload)


def test_a_scenario_prompt_round_trips_through_json() -> None:
    hooks = ScenarioHooks(
        model_script=ModelScript.model_validate(SCRIPT),
        fixture_tools={"flaky": FixtureTool.model_validate(FIXTURE)},
        pause_at_batches=[2],
    )
    prompt = PromptInput(prompt="go", workspace_root="/ws", scenario=hooks)

    assert PromptInput.model_validate_json(prompt.model_dump_json()) == prompt


# --- legacy payloads ----------------------------------------------------------------------


def test_a_legacy_scenario_prompt_lifts_its_keys_into_the_scenario() -> None:
    prompt = PromptInput.model_validate(
        legacy_prompt(fixture_tools={"flaky": FIXTURE}, pause_at_batches=[2, 3])
    )

    assert prompt.model == ModelSpec()
    assert prompt.scenario is not None
    assert prompt.scenario.model_script == ModelScript.model_validate(SCRIPT)
    assert list(prompt.scenario.fixture_tools) == ["flaky"]
    assert prompt.scenario.pause_at_batches == [2, 3]


@pytest.mark.parametrize("provider", ["demo", "openai"])
def test_a_legacy_ordinary_prompt_keeps_its_provider_and_gets_no_scenario(provider: str) -> None:
    # Every legacy payload serialized an (empty) script, whatever its provider.
    legacy = legacy_prompt(model={"provider": provider, "script": {"turns": []}, "model": "m"})

    prompt = PromptInput.model_validate(legacy)

    assert prompt.model == ModelSpec(provider=provider, model="m")  # type: ignore[arg-type]
    assert prompt.scenario is None


def test_the_legacy_default_provider_was_the_script() -> None:
    prompt = PromptInput.model_validate(legacy_prompt(model={"script": SCRIPT}))

    assert prompt.scenario is not None
    assert prompt.scenario.model_script == ModelScript.model_validate(SCRIPT)


def test_a_legacy_scripted_session_lifts_its_script_for_every_prompt() -> None:
    settings = SessionSettings.model_validate(
        {"workspace_root": "/ws", "model": {"provider": "scripted", "script": SCRIPT}}
    )

    assert settings.model == ModelSpec()
    assert settings.scenario == ScenarioHooks(model_script=ModelScript.model_validate(SCRIPT))


@pytest.mark.parametrize(
    ("history", "fixtures", "pauses"),
    [
        ("cancellation", ["slow_build", "quick_check"], [2]),
        ("warn-then-stop", [], []),
    ],
)
def test_recorded_prompt_inputs_decode_into_the_scenario_channel(
    history: str, fixtures: list[str], pauses: list[int]
) -> None:
    prompt = PromptInput.model_validate_json(started_input(history))

    assert prompt.scenario is not None
    assert prompt.scenario.model_script is not None
    assert list(prompt.scenario.fixture_tools) == fixtures
    assert prompt.scenario.pause_at_batches == pauses


def test_the_recorded_session_input_decodes_into_the_scenario_channel() -> None:
    session = SessionInput.model_validate_json(started_input("session-two-prompts"))

    assert session.settings.scenario is not None
    assert session.settings.scenario.model_script is not None


def test_legacy_activity_inputs_lift_their_scenario_fields() -> None:
    model = CallModelInput.model_validate(
        {
            "model": {"provider": "scripted", "script": SCRIPT},
            "messages": [],
            "request_number": 1,
        }
    )
    run = RunToolInput.model_validate({"call": CALL, "workspace_root": "/ws", "fixture": FIXTURE})
    check = CheckToolCallInput.model_validate({"call": CALL, "fixture": None})
    listed = ListToolsInput.model_validate({"fixture_tools": {"flaky": FIXTURE}})

    assert model.scenario_script == ModelScript.model_validate(SCRIPT)
    assert model.model == ModelSpec()
    assert run.scenario_fixture == FixtureTool.model_validate(FIXTURE)
    assert check.scenario_fixture is None
    assert listed.scenario_tools is not None and list(listed.scenario_tools) == ["flaky"]


# --- the hooks ----------------------------------------------------------------------------


def test_a_fixture_repeats_its_last_outcome() -> None:
    fixture = FixtureTool(
        outcomes=[FixtureOutcome(content="first"), FixtureOutcome(content="last")]
    )

    assert [fixture.outcome_for(n).content for n in range(4)] == ["first", "last", "last", "last"]


def test_scripted_hangs_and_pauses_are_read_per_call_and_batch() -> None:
    hang_second = FixtureTool(outcomes=[FixtureOutcome(), FixtureOutcome(hang=True)])
    hooks = ScenarioHooks(fixture_tools={"build": hang_second}, pause_at_batches=[2])

    assert [hooks.scripted_to_hang("build", n) for n in range(3)] == [False, True, True]
    assert not hooks.scripted_to_hang("read_file", 1)
    assert [hooks.pauses_at(batch) for batch in (1, 2, 3)] == [False, True, False]


def test_scripted_durations_are_read_per_call_and_none_for_other_tools() -> None:
    poll = FixtureTool(outcomes=[FixtureOutcome(duration_seconds=30), FixtureOutcome()])
    hooks = ScenarioHooks(fixture_tools={"job_status": poll})

    assert [hooks.scripted_duration("job_status", n) for n in range(3)] == [30.0, 0.0, 0.0]
    assert hooks.scripted_duration("read_file", 0) is None
