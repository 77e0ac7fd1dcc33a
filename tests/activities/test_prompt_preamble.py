"""What a prompt named instead of carrying (RESULTS_BY_REFERENCE_PATCH), read back from its
recorded history (activities/prompt_preamble.py): the start input's scenario and the tools the
prompt listed, from a local activity's marker (stored in External Storage) or from the older
``seawall.list_tools`` activity; a fixture the start input does not script fails loudly."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError

from activities.prompt_preamble import (
    FIXTURE_UNRESOLVED,
    Preamble,
    PromptPreambles,
    PromptRun,
    read_preamble,
)
from tests.replay.test_replay import STORAGE

pytestmark = pytest.mark.asyncio

HISTORIES = Path(__file__).resolve().parents[1] / "replay" / "histories"
CONVERTER = dataclasses.replace(pydantic_data_converter, external_storage=STORAGE)
PROMPT = PromptRun("wf", "run")


def recorded(name: str) -> WorkflowHistory:
    path = HISTORIES / f"{name}.json"
    return WorkflowHistory.from_json(name, path.read_text(encoding="utf-8"))


async def events(history: WorkflowHistory) -> AsyncIterator[HistoryEvent]:
    for event in history.events:
        yield event


async def test_the_scenario_and_the_listed_tools_are_read_from_the_history() -> None:
    preamble = await read_preamble(CONVERTER, events(recorded("inputs-by-reference-failure-cycle")))
    assert preamble.scenario is not None and preamble.scenario.fixture_tools
    assert preamble.tools is not None
    names = {tool.name for tool in preamble.tools}
    # The fixtures are listed beside the built-ins: what the first request named.
    assert set(preamble.scenario.fixture_tools) <= names and "read_file" in names


async def test_an_older_history_lists_its_tools_in_an_activity() -> None:
    preamble = await read_preamble(CONVERTER, events(recorded("warn-then-stop")))
    assert preamble.tools is not None and "read_file" in {t.name for t in preamble.tools}


async def test_a_worker_reads_a_prompts_preamble_once() -> None:
    history = recorded("inputs-by-reference-failure-cycle")

    async def source(prompt: PromptRun) -> Preamble:
        assert prompt == PROMPT
        return await read_preamble(CONVERTER, events(history))

    preambles = PromptPreambles(source)
    [name, *_] = (await preambles.of(PROMPT)).scenario.fixture_tools  # type: ignore[union-attr]
    fixture = await preambles.fixture(PROMPT, name)
    assert fixture.outcomes
    assert preambles.history_reads == 1


async def test_a_fixture_the_start_input_does_not_script_fails_naming_the_prompt() -> None:
    async def source(prompt: PromptRun) -> Preamble:
        return await read_preamble(CONVERTER, events(recorded("warn-then-stop")))

    with pytest.raises(ApplicationError) as failed:
        await PromptPreambles(source).fixture(PROMPT, "read_file")
    assert failed.value.type == FIXTURE_UNRESOLVED and failed.value.non_retryable
    assert "prompt wf" in str(failed.value)
