"""The benchmark corpus and its simulator (``bench/``): labels, acceptance, fidelity.

The corpus is data (``bench/corpus/``: scenario files and ``labels.yaml``, written by hand).
Fast tests need no server: every corpus file loads and is labeled, the simulator replays it,
and Seawall's simulated verdicts meet the acceptance in both loop profiles (no legit scenario
halted, every loop the profile's design covers stopped; the exceptions are named in
``labels.yaml``: ``known_gap``/``out_of_scope`` for the recommended profile,
``seed_known_gap``/``seed_out_of_scope`` for the seed profile). The seed profile's verdicts
equal, bit for bit, those of the simulator before loop profiles existed. A few small
scenarios run through the real workflow, and the simulator must agree.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.client import Client

from bench import loops
from bench.baselines import IdenticalCalls, SameError, ToolBudget
from bench.corpus_loader import DEFAULT_CORPUS, LabelError, load_corpus
from bench.simulate import result_verdict, simulate_seawall, verdict_differences
from seawall.scenario.driver import run_scenario
from seawall.scenario.format import Scenario, load_scenario
from workflows.contracts import ToolCall, ToolOutcome
from workflows.rules import SEED_SETTINGS, LoopSettings
from workflows.seed import GuardMode

CORPUS = DEFAULT_CORPUS
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


# The loop families of issue 35 (docs/benchmarks.md, "Loop profiles, measured"): loops nobody's
# rules were written for, and legitimate work that looks like them.
FAMILIES = ("near_repeat", "long_cycle", "reasked_question", "reworded_rewrite", "self_wait")


def test_every_family_has_its_loops_and_its_look_alikes() -> None:
    assert len(FILES) >= 200
    assert len([n for n in FILES if LABELS[n].get("url")]) >= 120
    for family in FAMILIES:
        members = [n for n in FILES if LABELS[n].get("family") == family]
        assert len([n for n in members if LABELS[n]["label"] == "loop"]) >= 15, family
    look_alikes = [n for n in by_label("legit") if LABELS[n].get("family") in FAMILIES]
    assert len(look_alikes) >= 30
    assert {LABELS[n].get("family") for n in FILES} <= {None, *FAMILIES}


def test_seed_verdict_labels_say_so() -> None:
    """Labels that record what the seed profile misses or halts on a real incident start with
    "seed:", so they are never mistaken for the recommended profile's."""
    for name in FILES:
        if not LABELS[name].get("url"):
            continue
        for key in ("seed_out_of_scope", "seed_known_gap"):
            if LABELS[name].get(key):
                assert LABELS[name][key].startswith("seed:"), (name, key)


def test_every_label_is_valid() -> None:
    """The loader accepts every label of the corpus (known keys only)."""
    entries = load_corpus([CORPUS])
    assert [e.key for e in entries] == FILES and all(e.label for e in entries)


@pytest.mark.parametrize(
    ("label", "error"),
    [
        ("{label: loop}", "x.yaml: a loop needs loop_starts_at_batch >= 1"),
        ("{label: legit, out_of_scop: typo}", "x.yaml: out_of_scop: Extra inputs"),
        ("{label: loop, loop_starts_at_batch: 0}", "x.yaml: loop_starts_at_batch: Input should be"),
        ("{label: stuck}", "x.yaml: label must be loop or legit"),
    ],
)
def test_a_bad_label_is_one_clear_error(tmp_path: Path, label: str, error: str) -> None:
    (tmp_path / "x.yaml").write_text((CORPUS / FILES[0]).read_text(encoding="utf-8"))
    (tmp_path / "labels.yaml").write_text(f"x.yaml: {label}\n")
    with pytest.raises(LabelError) as err:
        load_corpus([tmp_path])
    assert error in str(err.value) and "\n" not in str(err.value)


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
    """The recommended profile (the operator default)."""
    result = simulate_seawall(scenario(name))
    assert result.loop_profile == "recommended"
    assert not result.halted, f"{name}: {result.loop_type} at batch {result.last_batch}"


@pytest.mark.parametrize("name", by_label("loop"))
def test_seawall_stops_every_loop_its_design_covers(name: str) -> None:
    result = simulate_seawall(scenario(name))
    out_of_scope = LABELS[name].get("out_of_scope")
    if out_of_scope:
        assert not result.stopped_by_rule, f"{name} is labeled out of scope but is stopped"
    else:
        assert result.stopped_by_rule, f"{name}: ended {result.stop_reason} {result.loop_type}"


@pytest.mark.parametrize("name", FILES)
def test_the_seed_profile_meets_its_own_labels(name: str) -> None:
    result = simulate_seawall(scenario(name), loop=SEED_SETTINGS)
    label = LABELS[name]
    if label["label"] == "legit":
        assert result.halted == bool(label.get("seed_known_gap")), name
    else:
        assert result.stopped_by_rule != bool(label.get("seed_out_of_scope")), name


def _seed_digest(verdict: dict[str, Any]) -> str:
    """A verdict without what loop profiles added (the profile's name, the rules' entries,
    the denied-repeat count), digested."""
    verdict = dict(verdict)
    verdict.pop("loop_profile", None)
    verdict.pop("rules", None)
    verdict["tool_calls"] = {
        k: v for k, v in verdict["tool_calls"].items() if k != "denied_repeats"
    }
    return hashlib.sha256(json.dumps(verdict, sort_keys=True).encode()).hexdigest()[:16]


# Digests of every verdict (stop reason, loop type, requests, call counts, guard decisions,
# the whole conversation) of the corpus and the example scenarios in three guard modes, as
# the simulator computed them before loop profiles existed (main at d755993).
SEED_VERDICTS: dict[str, str] = json.loads(
    (Path(__file__).parent / "seed_verdicts.json").read_text(encoding="utf-8")
)


def test_the_seed_profile_decides_exactly_as_before_loop_profiles() -> None:
    root = CORPUS.parent.parent
    changed = []
    for key, expected in SEED_VERDICTS.items():
        path, mode = key.rsplit(":", 1)
        spec = load_scenario(root / path)
        verdict = simulate_seawall(spec, GuardMode(mode), loop=SEED_SETTINGS).verdict()
        assert verdict["rules"] == [] and verdict["tool_calls"]["denied_repeats"] == 0
        if _seed_digest(verdict) != expected:
            changed.append(key)
    assert len(SEED_VERDICTS) > 300
    assert changed == []


def test_report_is_deterministic_and_lists_every_miss() -> None:
    entries = load_corpus([CORPUS])
    first, second = loops.evaluate(entries), loops.evaluate(entries)
    assert first == second
    assert first["errors"] == [] and first["unexpected"] == []
    missed = {m["scenario"] for m in first["seawall_misses"]}
    assert missed == {n for n in by_label("loop") if LABELS[n].get("out_of_scope")}
    assert all(m["out_of_scope"] for m in first["seawall_misses"])
    seed_missed = {m["scenario"] for m in first["seed_misses"]}
    assert seed_missed == {n for n in by_label("loop") if LABELS[n].get("seed_out_of_scope")}
    # Both subsets, every policy, today's field names.
    for summary in (first["summary"], first["summary_real"]):
        assert list(summary) == first["policies"]
        assert first["policies"][:2] == ["seawall", "seawall-seed"]
        for figures in summary.values():
            assert {
                "loops",
                "loops_stopped",
                "loops_ended_by_cap",
                "legit",
                "false_halts",
                "legit_calls_refused",
                "wasted_calls_median",
                "wasted_calls_p90",
                "wasted_requests_median",
                "wasted_requests_p90",
            } <= set(figures)
    real = [n for n in FILES if LABELS[n].get("url")]
    assert first["summary_real"]["seawall"]["loops"] + first["summary_real"]["seawall"][
        "legit"
    ] == len(real)


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
    # the guard: reminder, then stop
    ("loop-read-missing-file-thrash.yaml", SEED_SETTINGS),
    # the failed-call refusal
    ("loop-git-push-128.yaml", SEED_SETTINGS),
    # permissions answered by the driver; the denied-call rule's reminder
    ("legit-permission-rejections.yaml", LoopSettings()),
    # the failure-cycle rule across identical successful cleanups: reminder, then stop
    ("real-loop-gke-generate-cleanup-cycle.yaml", LoopSettings()),
    # the identical-result rule: reminder, then stop
    ("real-loop-pi-echo-noop.yaml", LoopSettings()),
    # a denied call asked again is answered without asking; denial rounds stop
    ("real-loop-goose-asks-again-after-no.yaml", LoopSettings()),
]


@pytest.mark.parametrize(
    ("name", "loop"), REAL_SAMPLE, ids=[f"{n}-{s.profile.value}" for n, s in REAL_SAMPLE]
)
async def test_simulator_agrees_with_the_real_workflow(
    client: Client, task_queue: str, name: str, loop: LoopSettings
) -> None:
    spec = scenario(name)
    with tempfile.TemporaryDirectory(prefix="seawall-bench-") as tmp:
        result = await run_scenario(
            client,
            spec,
            task_queue=task_queue,
            workspace=Path(tmp),
            mode_override=GuardMode.ENFORCE,
            loop_override=loop,
        )
    simulated = simulate_seawall(spec, GuardMode.ENFORCE, loop=loop).verdict()
    assert verdict_differences(simulated, result_verdict(result)) == []
