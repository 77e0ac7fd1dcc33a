"""The benchmark corpus and its simulator (``bench/``): labels, acceptance, fidelity.

Fast tests need no server: every corpus file loads and is labeled, the simulator replays it,
and Seawall's simulated verdicts meet the acceptance (no legit scenario halted, every loop
its design covers stopped; the exceptions are named in ``labels.yaml``). One test runs three
small scenarios through the real workflow and checks that the simulator agrees.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.client import Client

from bench import loops, make_corpus
from bench.baselines import IdenticalCalls, SameError, ToolBudget
from bench.simulate import result_verdict, simulate_seawall, verdict_differences
from seawall.scenario.driver import run_scenario
from seawall.scenario.format import Scenario, load_scenario
from workflows.guard import GuardMode
from workflows.outcome import ToolCall, ToolOutcome

CORPUS = make_corpus.CORPUS
LABELS: dict[str, dict[str, Any]] = yaml.safe_load((CORPUS / "labels.yaml").read_text())
FILES = sorted(p.name for p in CORPUS.glob("*.yaml") if p.name != "labels.yaml")


def by_label(kind: str) -> list[str]:
    return [name for name in FILES if LABELS[name]["label"] == kind]


def scenario(name: str) -> Scenario:
    return load_scenario(CORPUS / name)


def test_corpus_is_large_and_fully_labeled() -> None:
    assert len(FILES) >= 100
    assert set(LABELS) == set(FILES)
    assert len(by_label("loop")) >= 40 and len(by_label("legit")) >= 40
    for name in by_label("loop"):
        assert LABELS[name]["loop_starts_at_batch"] >= 1, name


def test_half_the_corpus_is_modelled_on_real_public_incidents() -> None:
    real = [name for name in FILES if LABELS[name].get("url")]
    assert len(real) >= 50 and 2 * len(real) >= len(FILES)
    assert len({LABELS[name]["url"] for name in real}) == len(real), "one incident, one scenario"
    for name in real:
        assert LABELS[name]["url"].startswith("https://github.com/"), name
    # Both labels are drawn from the incidents, not just the easy one.
    assert len([n for n in real if LABELS[n]["label"] == "loop"]) >= 20
    assert len([n for n in real if LABELS[n]["label"] == "legit"]) >= 20


def test_todays_verdict_labels_say_so() -> None:
    """Labels that record what today's protections miss or halt on a real incident start
    with "today:", so they are easy to find and drop as the protections catch up."""
    for name in FILES:
        if not LABELS[name].get("url"):
            continue
        for key in ("out_of_scope", "known_gap"):
            if LABELS[name].get(key):
                assert LABELS[name][key].startswith("today:"), (name, key)


def test_corpus_files_are_what_the_generator_writes() -> None:
    expected = make_corpus.corpus_files()
    actual = {p.name: p.read_text(encoding="utf-8") for p in CORPUS.glob("*.yaml")}
    assert actual == expected, "run `python bench/make_corpus.py` after changing it"


@pytest.mark.parametrize("name", FILES)
def test_every_file_loads_and_replays(name: str) -> None:
    spec = scenario(name)
    assert spec.mode in (None, GuardMode.ENFORCE)
    assert spec.name == name.removesuffix(".yaml")
    result = simulate_seawall(spec)  # raises SimulationError for anything it cannot replay
    assert result.model_requests >= 1


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            name,
            marks=[pytest.mark.xfail(strict=True, reason=LABELS[name]["known_gap"])]
            if LABELS[name].get("known_gap")
            else [],
        )
        for name in by_label("legit")
    ],
)
def test_seawall_halts_no_legit_scenario(name: str) -> None:
    result = simulate_seawall(scenario(name))
    assert not result.halted, f"{name}: {result.loop_type} at batch {result.last_batch}"


@pytest.mark.parametrize("name", by_label("loop"))
def test_seawall_stops_every_loop_its_design_covers(name: str) -> None:
    result = simulate_seawall(scenario(name))
    out_of_scope = LABELS[name].get("out_of_scope")
    if out_of_scope:
        assert not result.stopped_by_rule, f"{name} is labeled out of scope but is stopped"
    else:
        assert result.stopped_by_rule, f"{name}: ended {result.stop_reason} {result.loop_type}"


def test_report_is_deterministic_and_lists_every_miss() -> None:
    entries = loops.load_corpus([CORPUS])
    first, second = loops.evaluate(entries), loops.evaluate(entries)
    assert first == second
    assert first["errors"] == [] and first["unexpected"] == []
    missed = {m["scenario"] for m in first["seawall_misses"]}
    assert missed == {n for n in by_label("loop") if LABELS[n].get("out_of_scope")}
    assert all(m["out_of_scope"] for m in first["seawall_misses"])


# --- baseline semantics -------------------------------------------------------------------


def _call(name: str, n: int = 0) -> ToolCall:
    return ToolCall(call_id=f"c{n}", name=name, arguments={"n": n})


def _error(name: str, text: str) -> ToolOutcome:
    return ToolOutcome(
        call_id="x",
        tool_name=name,
        status="error",
        execution_status="error",
        content=text,
        error_message=text,
    )


def test_identical_calls_stops_before_the_fifth_repeat_runs() -> None:
    rule = IdenticalCalls()
    assert [rule.before_batch([_call("a")]) for _ in range(4)] == [None] * 4
    assert rule.before_batch([_call("a")]) == rule.name
    other = IdenticalCalls()
    assert other.before_batch([_call("a"), _call("a", 1)] * 3) is None


def test_same_error_needs_three_in_a_row() -> None:
    rule = SameError()
    ok = ToolOutcome(call_id="y", tool_name="a", status="success", execution_status="success")
    assert rule.after_batch([], [_error("a", "boom"), _error("a", "boom"), ok]) is None
    assert rule.after_batch([], [_error("a", "boom"), _error("a", "boom")]) is None
    assert rule.after_batch([], [_error("a", "boom")]) == rule.name


def test_tool_budget_allows_ten_failures_per_tool() -> None:
    rule = ToolBudget()
    assert rule.after_batch([], [_error("a", str(i)) for i in range(10)]) is None
    assert rule.after_batch([], [_error("b", "x")]) is None
    assert rule.after_batch([], [_error("a", "again")]) == rule.name


# --- fidelity against the real workflow ---------------------------------------------------

REAL_SAMPLE = [
    "loop-read-missing-file-thrash.yaml",  # the guard: reminder, then stop
    "loop-git-push-128.yaml",  # the failed-call refusal
    "legit-permission-rejections.yaml",  # permissions answered by the driver
]


@pytest.mark.parametrize("name", REAL_SAMPLE)
async def test_simulator_agrees_with_the_real_workflow(
    client: Client, task_queue: str, name: str
) -> None:
    spec = scenario(name)
    with tempfile.TemporaryDirectory(prefix="seawall-bench-") as tmp:
        result = await run_scenario(
            client,
            spec,
            task_queue=task_queue,
            workspace=Path(tmp),
            mode_override=GuardMode.ENFORCE,
        )
    simulated = simulate_seawall(spec, GuardMode.ENFORCE).verdict()
    assert verdict_differences(simulated, result_verdict(result)) == []
