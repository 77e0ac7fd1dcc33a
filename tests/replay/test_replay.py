"""Replay every recorded history against today's PromptWorkflow.

A failure here means a change to workflow code would break prompts already running: put
the change behind ``workflow.patched`` instead of regenerating the fixtures.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from seawall.runtime.plugin import WORKFLOWS, SeawallPlugin
from tests.replay.incompatible import ReorderedPromptWorkflow

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def load(path: Path) -> WorkflowHistory:
    return WorkflowHistory.from_json(path.stem, path.read_text(encoding="utf-8"))


def replayer(*workflows: type) -> Replayer:
    """A replayer with the worker's plugin: its converter and sandbox, and ``workflows``."""
    return Replayer(workflows=[], plugins=[SeawallPlugin(workflows=workflows)])


def test_the_representative_scenarios_are_all_recorded() -> None:
    names = {path.stem for path in HISTORIES}
    assert {
        "warn-then-stop",
        "shadow",
        "warn-mode",
        "mid-turn-input-reset",
        "queued-prompt",
        "cancellation",
        "permission-rejection",
        "refusal",
        "invalid-parameter-stop",
        "cap-stop",
        "session-two-prompts",
        # Recorded after LOOP_PROFILE_PATCH (the recommended profile's rules).
        "loop-profile-failure-cycle",
        "loop-profile-denied-call",
        # Recorded after model text streamed: publish_model_delta signals mid-request.
        "streamed-demo-reply",
        # The handlers seawall acp added: a mode switch reaching a running prompt (its next
        # write asks), a queued prompt withdrawn.
        "session-editor-handlers",
        "prompt-approval-mode-switch",
        # Recorded after rollout cohorts: the session's cohort resolved for its owner.
        "session-rollout-cohort",
    } <= names


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_recorded_history_replays(path: Path) -> None:
    result = await replayer(*WORKFLOWS).replay_workflow(load(path))
    assert result.replay_failure is None


async def test_an_incompatible_change_is_caught_as_nondeterminism() -> None:
    history = load(next(p for p in HISTORIES if p.stem == "warn-then-stop"))
    with pytest.raises(workflow.NondeterminismError):
        await replayer(ReorderedPromptWorkflow).replay_workflow(history)
