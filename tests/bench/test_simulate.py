"""The simulator's clock (``bench/simulate.py``; docs/scenarios.md, "Time").

The simulator keeps the workflow's clock without any real time: it starts at 0 and moves
by each scripted model turn's latency and, after each batch, by the longest duration of the
batch's fixture calls; the rules read each call's duration and the clock exactly as in the
workflow (``tests/workflows/prompt/test_clock.py`` checks the two agree on a real server).
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.simulate import simulate_seawall
from tests.scenario_helpers import ok, scenario, scenario_file
from workflows.contracts.prompt import LoopType, StopReason
from workflows.rules.evidence import CallEvidence
from workflows.rules.identical_results import IdenticalResults
from workflows.rules.ladder import RuleFinding, RuleReview
from workflows.seed.guard import GuardMode


@pytest.fixture
def reviews(monkeypatch: pytest.MonkeyPatch) -> list[RuleReview]:
    """Every review the identical-result rule is handed."""
    seen: list[RuleReview] = []
    review = IdenticalResults.review

    def recording(self: IdenticalResults, batch: RuleReview) -> list[RuleFinding]:
        seen.append(batch)
        return review(self, batch)

    monkeypatch.setattr(IdenticalResults, "review", recording)
    return seen


def timed(content: str, seconds: float) -> dict[str, Any]:
    return {**ok(content), "duration_seconds": seconds}


def test_the_clock_moves_by_model_latency_and_the_longest_call_of_each_batch(
    reviews: list[RuleReview],
) -> None:
    spec = scenario(
        mode="enforce",
        profile="recommended",
        approval_mode="yolo",
        tools={
            "job_status": {"outcomes": [timed("running", 30)]},
            "read_file": {"outcomes": [timed("log", 5)]},
        },
        model={
            "turns": [
                {
                    "latency_seconds": 4,
                    "tool_calls": [
                        {"name": "job_status", "arguments": {"job": "1"}},
                        {"name": "read_file", "arguments": {"path": "a.log"}},
                    ],
                },
                {"latency_seconds": 1, "tool_calls": [{"name": "read_file", "arguments": {}}]},
                {"text": "done"},
            ]
        },
    )
    result = simulate_seawall(spec, GuardMode.ENFORCE)

    assert result.stop_reason is StopReason.END_TURN
    # Concurrent calls: 4 + max(30, 5); then 1 + 5.
    assert [r.now for r in reviews] == [34.0, 40.0]
    assert [[c.duration for c in r.batch] for r in reviews] == [[30.0, 5.0], [5.0]]
    first: CallEvidence = reviews[0].batch[0]
    assert first.waits and not reviews[0].batch[1].waits


def test_a_fixture_call_that_never_ran_takes_no_time(reviews: list[RuleReview]) -> None:
    spec = scenario(
        mode="enforce",
        profile="recommended",
        permissions={"deploy": "reject"},
        tools={"deploy": {"mutating": True, "outcomes": [timed("deployed", 300)]}},
        model={"turns": [{"tool_calls": [{"name": "deploy", "arguments": {}}]}, {"text": "ok"}]},
    )
    simulate_seawall(spec, GuardMode.ENFORCE)

    assert [r.now for r in reviews] == [0.0]
    assert [c.duration for c in reviews[0].batch] == [0.0]


def test_polls_that_wait_end_the_turn_and_instant_ones_are_stopped() -> None:
    spec = scenario_file("poll-waiting-job")
    waiting = simulate_seawall(spec, GuardMode.ENFORCE)
    assert (waiting.stop_reason, waiting.loop_type, waiting.rules) == (
        StopReason.END_TURN,
        None,
        [],
    )

    data = spec.model_dump()
    for outcome in data["tools"]["job_status"]["outcomes"]:
        outcome["duration_seconds"] = 0.0
    spinning = simulate_seawall(scenario(**data), GuardMode.ENFORCE)
    assert (spinning.stop_reason, spinning.loop_type) == (
        StopReason.LOOP_DETECTED,
        LoopType.REPEATED_IDENTICAL_RESULT.value,
    )
    assert spinning.last_batch == 9
