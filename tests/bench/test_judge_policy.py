"""``bench/loops.py --judge``: the recommended profile with the progress judge, its verdicts
scripted by each scenario's ``model.judge`` (docs/protections.md, "The progress judge").

The self-wait scenario (scenarios/self-wait-judged.yaml) is a loop that no cheap rule stops:
the judge policy reminds it (``warn``) or stops it (``enforce``); a scenario that scripts no
judge is answered ``unknown`` and ends exactly as the recommended profile ends it.
"""

from __future__ import annotations

from pathlib import Path

from bench.corpus_loader import Entry, Label
from bench.loops import SEAWALL_JUDGE, evaluate, judge_settings, simulate_policies
from bench.simulate import SEAWALL
from seawall.scenario.format import load_scenario
from workflows.seed import GuardMode

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def entry(name: str) -> Entry:
    path = SCENARIOS / f"{name}.yaml"
    return Entry(path, load_scenario(path), Label(label="loop", loop_starts_at_batch=3))


def test_the_judge_policy_runs_beside_the_profiles_under_its_title() -> None:
    report = evaluate([entry("self-wait-judged")], GuardMode.ENFORCE)
    assert report["policies"][:3] == [SEAWALL, "seawall-seed", SEAWALL_JUDGE]
    summary = report["summary"]
    assert summary[SEAWALL_JUDGE]["title"] == "Seawall recommended + progress judge (scripted)"
    assert summary[SEAWALL_JUDGE]["loops_stopped"] == 1
    assert summary[SEAWALL]["loops_stopped"] == 0
    assert evaluate([entry("self-wait-judged")])["policies"][2] != SEAWALL_JUDGE


def test_in_warn_the_judge_reminds_and_stops_nothing() -> None:
    results = simulate_policies(entry("self-wait-judged"), judge=GuardMode.WARN)
    judged, plain = results[SEAWALL_JUDGE], results[SEAWALL]
    assert not judged.halted and judged.warnings == 1 and plain.warnings == 0
    assert [(e.batch, e.decision) for e in judged.rules] == [(8, "warn"), (14, "would_stop")]


def test_a_scenario_without_a_judge_script_is_answered_unknown() -> None:
    results = simulate_policies(entry("poll-waiting-job"), judge=GuardMode.ENFORCE)
    judged, plain = results[SEAWALL_JUDGE], results[SEAWALL]
    assert judged.verdict()["messages"] == plain.verdict()["messages"]
    assert {e.decision for e in judged.rules} == {"unknown"}
    assert judge_settings(GuardMode.WARN).progress_judge_mode is GuardMode.WARN
