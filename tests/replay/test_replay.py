"""Replay every recorded history against today's PromptWorkflow.

A failure here means a change to workflow code would break prompts already running: put
the change behind ``workflow.patched`` instead of regenerating the fixtures. Histories
recorded with payloads in External Storage replay through the filesystem driver over
``payloads/`` (what ``scripts/record_histories.py`` stored).

The suite checks itself: ``test_an_incompatible_change_is_caught_as_nondeterminism`` replays
the ``warn-then-stop`` history against ``tests/replay/incompatible.py``, a ``PromptWorkflow``
that schedules one extra activity first, and expects a ``NondeterminismError``. It must keep
failing to replay: if it ever passes, the replayer is not checking commands (a wrong
workflow, a swallowed error) and every green replay test here is meaningless.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.converter import ExternalStorage
from temporalio.worker import Replayer

from seawall.runtime.plugin import WORKFLOWS, SeawallPlugin
from seawall.runtime.storage import FilesystemStorageDriver
from tests.replay.incompatible import ReorderedPromptWorkflow

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))
PAYLOADS = Path(__file__).parent / "payloads"
STORAGE = ExternalStorage(drivers=[FilesystemStorageDriver(PAYLOADS)])


def load(path: Path) -> WorkflowHistory:
    return WorkflowHistory.from_json(path.stem, path.read_text(encoding="utf-8"))


def replayer(*workflows: type, storage: ExternalStorage | None = STORAGE) -> Replayer:
    """A replayer with the worker's plugin: its converter (reading the recorded stored
    payloads) and sandbox, and ``workflows``."""
    return Replayer(workflows=[], plugins=[SeawallPlugin(workflows=workflows, storage=storage)])


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
        # Recorded after EDITOR_TOOLS_PATCH: a read and a write answered by the editor.
        "editor-tools-read-write",
        # Recorded after CONTEXT_POLICY_PATCH; the first with its payloads stored.
        "context-policy-long-prompt",
        "session-context-policy",
        # The per-owner prompt limit's admission workflow, through continue-as-new.
        "owner-admission",
        # Recorded after DURABLE_STEPS_PATCH: one patch marker, settings from a local
        # activity or the session, search attributes upserted on change only.
        "durable-steps-warn-then-stop",
        "durable-steps-denied-call",
        "durable-steps-session",
        "durable-steps-session-prompt",
        # Recorded after TOOLS_WITHOUT_HOP_PATCH (-v2): the tools from a local activity.
        "tools-without-hop-v2-warn-then-stop",
        # Recorded after SESSION_START_CHECK_PATCH: a session started with its guard mode
        # checks its grant through the operator-settings activity.
        "session-start-check",
        # Recorded after per-owner quotas: sessions and bytes counted, a closed one freed.
        "owner-admission-quotas",
        # Recorded after PROMPT_ID_REUSE_POLICY: a taken prompt id fails that prompt only.
        "session-remembered-submits",
        # A prompt cancelled while its tool listing waited: recorded before
        # CANCEL_BEFORE_LOOP_PATCH (ended CANCELED, no result) and after it (a result).
        "cancel-before-loop-unpatched",
        "cancel-before-loop",
        # Recorded after PROGRESS_RULES_PATCH: scripted durations on the prompt's clock, and
        # evidence beyond the call itself (an observed change, a refusal, four denials).
        "progress-rules-long-poll",
        "progress-rules-scroll-feed",
        "progress-rules-tool-call-limit",
        "progress-rules-denied-call",
        # Recorded after MODEL_RETRY_WINDOW_PATCH: model requests retried for a window.
        "model-retry-window-warn-then-stop",
        # Recorded after ONE_MARKER_PATCH: one marker; guard attributes from the warning on.
        "one-marker-warn-then-stop",
        "one-marker-denied-call",
        # Recorded after LOOP_QUALITY_V4_PATCH: the normalizer, R9 and R11, the judge.
        "loop-quality-v4-reasked-question",
        "loop-quality-v4-wrapped-sweep",
        "loop-quality-v4-self-wait-judged",
        # Recorded after grants named their run: the grant signal before the start check
        # (a session waits for it on a timer), and an admission workflow checked by
        # seawall.check_start after ADMISSION_START_CHECK_PATCH.
        "run-grant-warn-then-stop",
        "session-run-grant",
        "owner-admission-start-check",
        # Recorded after INPUTS_BY_REFERENCE_PATCH: tools, script and fixtures named.
        "inputs-by-reference-warn-then-stop",
        "inputs-by-reference-failure-cycle",
        # Recorded after RESULTS_BY_REFERENCE_PATCH, every payload without its defaults (the
        # converter of seawall/runtime/converter.py): outputs kept by their calls' ids.
        "results-by-reference-warn-then-stop",
        "results-by-reference-failure-cycle",
        "results-by-reference-long-prompt",
        # Recorded after STALE_WAITS_PATCH: R12 reminds and stops a wait on oneself.
        "stale-waits-stop",
        "stale-waits-self-wait-judged",
        # Recorded after MOVED_COUNTS_PATCH: R11 reads answers that differ in a count as one.
        "moved-counts-context-footer",
        # Recorded after SHELL_READS_PATCH: any tool given a command is a shell; curl reads.
        "shell-reads-bash-curl-poll",
        # Recorded after LOOKS_AND_IDS_PATCH: waits that look at nothing; labelled ids.
        "looks-and-ids-heartbeat",
        "looks-and-ids-powershell-rereads",
        # Recorded after WORLD_IDS_PATCH: mutations on the ids one query listed; echoes.
        "world-ids-listed-issues",
        # Recorded after REFUSALS_PATCH: the same refusal of a missing tool, reworded.
        "refusals-missing-tool",
        "world-ids-heartbeat",
        "session-wire-format",
        "owner-admission-wire-format",
    } <= names


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_recorded_history_replays(path: Path) -> None:
    result = await replayer(*WORKFLOWS).replay_workflow(load(path))
    assert result.replay_failure is None


async def test_an_incompatible_change_is_caught_as_nondeterminism() -> None:
    history = load(next(p for p in HISTORIES if p.stem == "warn-then-stop"))
    with pytest.raises(workflow.NondeterminismError):
        await replayer(ReorderedPromptWorkflow).replay_workflow(history)


async def test_a_history_with_stored_payloads_needs_the_store_to_replay() -> None:
    history = load(next(p for p in HISTORIES if p.stem == "context-policy-long-prompt"))
    assert "externalPayloads" in history.to_json()

    assert (await replayer(*WORKFLOWS).replay_workflow(history)).replay_failure is None
    with pytest.raises(RuntimeError, match="external storage is not configured"):
        await replayer(*WORKFLOWS, storage=None).replay_workflow(history)


def test_the_wire_format_fixtures_hold_what_they_pin() -> None:
    """The fixtures recorded with the converter that leaves defaults out pin that format: a
    tool call's input without its defaults or its parsed arguments, and model requests that
    keep outputs by their calls' ids (RESULTS_BY_REFERENCE_PATCH)."""
    recorded = load(next(p for p in HISTORIES if p.stem == "results-by-reference-failure-cycle"))
    inputs = {
        e.activity_task_scheduled_event_attributes.activity_type.name: json.loads(
            e.activity_task_scheduled_event_attributes.input.payloads[0].data
        )
        for e in recorded.events
        if e.HasField("activity_task_scheduled_event_attributes")
    }
    run_tool = inputs["seawall.run_tool"]
    assert "owner_id" not in run_tool and "arguments" not in run_tool["call"]
    kept = [
        part
        for e in recorded.events
        if e.activity_task_scheduled_event_attributes.activity_type.name == "seawall.call_model"
        for part in json.loads(e.activity_task_scheduled_event_attributes.input.payloads[0].data)
        .get("conversation", {})
        .get("parts", [])
        if "result_of" in part
    ]
    assert kept
