"""The seed's Phase 1 (shadow) invariants, checked over the emitted diagnostic logs.

A batch of scripted prompts runs in ``shadow``: the seed's loop, a model that heeds the
reminder, user and scripted cancellations, permission rejections, not_started / invalid
parameters, unknown and missing execution statuses, unclassified errors, post-execution
failures, mid-turn input, a queued prompt and an unreliable input drain. From the
``guard_transition`` lines the worker logged (nothing else) we check:

* every ``would_stop`` is preceded by a ``would_warn`` for the same prompt and candidate
  ordinal;
* no cancelled, not_started, unknown or post-execution outcome was counted: a batch that
  contains one never shows ``tracked``/``would_warn``/``would_stop`` and never raises the
  failure count;
* ``stop`` and ``warn`` never appear in shadow, and nothing changes the turn;
* idle→idle emits nothing, and every other transition emits exactly one line.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from seawall.scenario.driver import run_scenario
from seawall.scenario.format import Scenario
from tests.scenario_helpers import calls, fail, reminders, scenario, scenario_file, stops
from workflows.contracts.prompt import EventKind, EventsQuery, PromptResult
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed.guard import GuardMode, failure_count_bucket

COUNTING = frozenset({"tracked", "would_warn", "would_stop", "warn", "stop"})
FAILURE_BUCKETS = ["0", "1-2", "3-4", "5-7", "8+"]

# Fixture tools whose every outcome the guard must never count.
INELIGIBLE: dict[str, dict[str, Any]] = {
    "cancelled": {"status": "cancelled", "execution_status": "cancelled"},
    # An execution error that raced with a cancellation: the terminal status wins.
    "cancelled_after_error": {
        "status": "cancelled",
        "execution_status": "error",
        "error_type": "execution_failed",
    },
    # Denied before it ran (invalid parameters are covered by invalid-params-stop, whose
    # own protection stops the prompt at the third).
    "not_started": {
        "status": "error",
        "execution_status": "not_started",
        "error_type": "execution_denied",
    },
    "unknown_status": {
        "status": "error",
        "execution_status": "unknown",
        "error_type": "execution_failed",
    },
    "missing_status": {"status": "error", "error_type": "execution_failed"},
    "unclassified": {"status": "error", "execution_status": "error", "error_type": "unknown"},
    "post_execution": {
        "status": "error",
        "execution_status": "success",
        "error_type": "output_truncated",
    },
}


def mixed(*turns: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [call for turn in turns for call in turn["tool_calls"]]}


def ineligible_streaks(kind: str) -> Scenario:
    """Streaks of an eligible failure interrupted by ``kind``; batches 2, 3 and 6 carry it.

    1: 4 failures (tracked) · 2: 3 failures + 1 ``kind`` · 3: only ``kind`` ·
    4: 4 failures (tracked) · 5: 4 failures (would_warn) · 6: 2 failures + 2 ``kind`` ·
    7: 1 failure (tracked again, never would_stop).
    """
    bad = f"bad_{kind}"
    return scenario(
        name=f"shadow-{kind}",
        tools={"flaky": {"outcomes": [fail()]}, bad: {"outcomes": [INELIGIBLE[kind]]}},
        model={
            "turns": [
                calls("flaky", 4),
                mixed(calls("flaky", 3, 10), calls(bad, 1)),
                calls(bad, 4, 10),
                calls("flaky", 4, 20),
                calls("flaky", 4, 30),
                mixed(calls("flaky", 2, 40), calls(bad, 2, 20)),
                calls("flaky", 1, 50),
            ]
        },
    )


def permission_rejections() -> Scenario:
    """A mutating tool the user rejects, between and after eligible failures."""
    return scenario(
        name="shadow-permission-rejected",
        tools={
            "flaky": {"outcomes": [fail()]},
            "deploy": {"mutating": True, "outcomes": [fail("deploy failed")]},
        },
        permissions={"deploy": "reject"},
        model={
            "turns": [
                calls("flaky", 4),
                mixed(calls("flaky", 4, 10), calls("deploy", 1)),
                calls("deploy", 4, 10),
                calls("flaky", 4, 20),
                calls("flaky", 4, 30),
                mixed(calls("flaky", 1, 40), calls("deploy", 1, 20)),
            ]
        },
    )


def user_cancel_after_warning() -> Scenario:
    """Would-warn, then the user cancels while the next failing batch runs."""
    return scenario(
        name="shadow-user-cancel",
        tools={"flaky": {"outcomes": [fail()]}, "slow": {"outcomes": [{"hang": True}]}},
        model={
            "turns": [
                calls("flaky", 4),
                calls("flaky", 4, 10),
                mixed(calls("flaky", 1, 20), calls("slow", 1)),
            ]
        },
        events=[{"batch": 3, "cancel": True}],
    )


def unreliable_drain() -> Scenario:
    return scenario(
        name="shadow-unreliable-input",
        tools={"flaky": {"outcomes": [fail()]}},
        model={"turns": [calls("flaky", 4), calls("flaky", 4, 10), calls("flaky", 4, 20)]},
        events=[{"batch": 2, "unreliable_input": True}],
    )


def shadow_batch() -> list[tuple[Scenario, set[int]]]:
    """Every scenario with the batches known to carry an ineligible outcome (those that
    the workflow's settled events do not reveal by a cancelled status)."""
    specs: list[tuple[Scenario, set[int]]] = [
        (scenario_file("read-missing-file-loop"), set()),
        (scenario_file("reminder-heeded"), set()),
        (scenario_file("cancel-mid-batch"), {2}),
        (scenario_file("permission-rejected"), {1, 2, 3}),
        (scenario_file("invalid-params-stop"), {1, 2, 3}),
        (scenario_file("mid-turn-input-reset"), set()),
        (scenario_file("queued-prompt"), set()),
        (scenario_file("repeated-failed-call"), set()),
        (permission_rejections(), {2, 3, 6}),
        (user_cancel_after_warning(), {3}),
        (unreliable_drain(), set()),
    ]
    specs += [(ineligible_streaks(kind), {2, 3, 6}) for kind in INELIGIBLE]
    return [(spec.model_copy(update={"mode": GuardMode.SHADOW}), bad) for spec, bad in specs]


@dataclass
class Run:
    spec: Scenario
    result: PromptResult
    ineligible_batches: set[int]


def transition_lines(records: list[logging.LogRecord]) -> list[dict[str, Any]]:
    fields = (
        "prompt_id",
        "batch",
        "mode",
        "route",
        "decision",
        "phase_before",
        "phase_after",
        "reset_reason",
        "failure_count_bucket",
        "batch_count_bucket",
        "candidate_ordinal",
        "execution_error_type",
    )
    return [
        {name: getattr(record, name, None) for name in fields}
        for record in records
        if record.name == "temporalio.workflow"
        and record.getMessage().startswith("guard_transition")
    ]


async def run_batch(client: Client, task_queue: str) -> list[Run]:
    async def one(spec: Scenario, bad: set[int]) -> Run:
        with tempfile.TemporaryDirectory() as workspace:
            result = await run_scenario(
                client, spec, task_queue=task_queue, workspace=Path(workspace)
            )
        # Batches in which a call settled as cancelled (user cancellation, rejection).
        events = await client.get_workflow_handle(result.workflow_id).query(
            PromptWorkflow.events, EventsQuery()
        )
        cancelled = {
            e.batch
            for e in events
            if e.kind is EventKind.TOOL_CALL_SETTLED and e.status == "cancelled"
        }
        return Run(spec, result, bad | cancelled)

    return await asyncio.wait_for(
        asyncio.gather(*(one(spec, bad) for spec, bad in shadow_batch())), 180
    )


async def test_shadow_invariants_hold_over_the_diagnostic_logs(
    client: Client, task_queue: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="temporalio.workflow")
    runs = await run_batch(client, task_queue)
    lines = transition_lines(caplog.records)
    by_prompt: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_prompt.setdefault(line["prompt_id"], []).append(line)

    # Shadow never changes the turn and never enforces.
    for run in runs:
        assert reminders(run.result) == 0 and stops(run.result) == 0, run.spec.name
        assert run.result.loop_type != "repeated_tool_execution_failure"
    assert {line["mode"] for line in lines} == {"shadow"}
    assert {line["decision"] for line in lines} <= {
        "reset",
        "tracked",
        "would_warn",
        "would_stop",
        "none",
    }

    for run in runs:
        prompt_id = run.result.workflow_id
        emitted = by_prompt.get(prompt_id, [])
        entries = {entry.batch: entry for entry in run.result.guard}

        # Exactly one line per transition; idle→idle (and anything once latched) emits
        # nothing. Lines come in batch order and agree with the result's guard entries.
        expected = [
            e.batch
            for e in run.result.guard
            if e.phase_before != "latched"
            and not (e.phase_before == e.phase_after == "idle" and e.decision == "none")
        ]
        assert [line["batch"] for line in emitted] == expected, run.spec.name
        for line in emitted:
            entry = entries[line["batch"]]
            assert (line["decision"], line["phase_before"], line["phase_after"]) == (
                entry.decision,
                entry.phase_before,
                entry.phase_after,
            )

        # Every would_stop follows a would_warn of the same prompt and candidate ordinal.
        for index, line in enumerate(emitted):
            if line["decision"] == "would_stop":
                earlier = emitted[:index]
                assert any(
                    e["decision"] == "would_warn"
                    and e["candidate_ordinal"] == line["candidate_ordinal"]
                    and e["batch"] < line["batch"]
                    for e in earlier
                ), (run.spec.name, line)

        # A batch with a cancelled, not_started, unknown or post-execution outcome never
        # counts: its line (if any) is a reset that does not raise the failure count.
        previous_bucket = "0"
        for line in emitted:
            if line["batch"] in run.ineligible_batches:
                assert line["decision"] == "reset", (run.spec.name, line)
                assert line["phase_after"] == "idle"
                assert FAILURE_BUCKETS.index(line["failure_count_bucket"]) <= (
                    FAILURE_BUCKETS.index(previous_bucket)
                ), (run.spec.name, line)
            previous_bucket = "0" if line["phase_after"] == "idle" else line["failure_count_bucket"]
        for batch in run.ineligible_batches & set(entries):
            entry = entries[batch]
            assert entry.decision in ("reset", "none"), (run.spec.name, entry)
            assert entry.decision not in COUNTING
            assert entry.failure_count == 0 or entry.decision == "none", (run.spec.name, entry)
            if entry.decision == "none":
                assert entry.phase_before == entry.phase_after == "idle", (run.spec.name, entry)

    # The batch was not vacuous: it warned, would stop, and reset for every reason.
    decisions = [line["decision"] for line in lines]
    assert decisions.count("would_stop") >= 1
    assert decisions.count("would_warn") >= len(INELIGIBLE) + 2
    reasons = {line["reset_reason"] for line in lines if line["decision"] == "reset"}
    assert reasons >= {
        "cancelled",
        "not_started",
        "unknown",
        "post_execution_failure",
        "external_input",
        "queued_prompt",
        "unreliable_input",
    }, reasons
    by_name = {run.spec.name: run for run in runs}
    for kind in INELIGIBLE:
        guard = by_name[f"shadow-{kind}"].result.guard
        assert [e.decision for e in guard] == [
            "tracked",
            "reset",
            "none",
            "tracked",
            "would_warn",
            "reset",
            "tracked",
        ], kind
        # A new streak, a new ordinal: 1, then 2 (warned), then 3.
        assert [e.candidate_ordinal for e in guard if e.decision in COUNTING] == [1, 2, 2, 3]
    # The seed's loop in shadow: tracked → would_warn → would_stop, one candidate.
    seed = by_prompt[by_name["read-missing-file-loop"].result.workflow_id]
    assert [(line["decision"], line["candidate_ordinal"]) for line in seed] == [
        ("tracked", 1),
        ("would_warn", 1),
        ("would_stop", 1),
    ]
    assert seed[-1]["failure_count_bucket"] == failure_count_bucket(9)
