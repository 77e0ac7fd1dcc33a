"""Loop-stopping quality: Seawall's loop profiles against peer rules on a labeled corpus.

    python bench/loops.py [CORPUS_DIR_OR_FILE ...] [--sample N | --all-real | --no-real]
                          [--real-profile recommended|seed|both] [--sensitivity]
                          [--judge [warn|enforce|shadow]] [--json PATH]

Every scenario runs, in the pure simulator (``bench/simulate.py``), through Seawall's
protections in guard mode ``enforce`` under both loop profiles (docs/protections.md, "Loop
profiles"): ``seawall`` is the recommended profile, ``seawall-seed`` the seeds' rules verbatim;
through each baseline of ``bench/baselines.py``; and through each faithful peer of
``bench/loop_peers/`` and their union (``any_peer``). For each policy it reports, over the scenarios
labeled ``loop``: how many it stopped (by a rule, not by the tool-call cap), how many only the cap
ended, and the tool calls and model requests spent from the batch where the loop started until the
policy stopped it (median and p90); over the scenarios labeled ``legit``: how many it halted (false
halts), how many of their calls it refused, and how many got a warning (a Seawall reminder, a peer's
injected warning: false warnings), beside how many loops were warned. Every figure is given for the
whole corpus and for the scenarios modelled on a real public incident (a ``url`` in their label).
Every loop a profile does not stop is listed with the reason it is out of scope, and every legit
scenario it halts with its known gap (from ``labels.yaml``); a verdict the labels do not predict is
flagged. The ablation table gives the recommended profile's figures with each of its rules off in
turn (and the seed protections it builds on: the repeated-failure guard, the failed-call refusal),
so every rule's share of the result is visible. ``--sensitivity`` adds the recommended profile's
figures with each rule's threshold varied, and with failed shell commands refused like any other
call. ``--judge`` adds a policy, ``seawall-judge``: the recommended profile with the progress judge
(docs/protections.md, "The progress judge") in ``warn`` (or the mode given), its verdicts the
scenarios' scripted ``model.judge`` (``unknown`` where a scenario scripts none); the real-workflow
check then runs it too.

Then a sample (``--sample``, default 8; ``--all-real`` for all) runs through the real
``PromptWorkflow`` on an embedded Temporal dev server, and the simulator's verdict (stop
reason, loop type, model requests, call counts, guard and rule decisions, the whole final
conversation) must equal the workflow's, for the recommended profile (``--real-profile``
picks). Any disagreement is printed and the exit code is 1.

Labels come from ``labels.yaml`` beside the scenarios (file name → ``label``,
``loop_starts_at_batch``, ``shape``, ``note``, ``url``; ``out_of_scope`` and ``known_gap``
for the recommended profile, ``seed_out_of_scope`` and ``seed_known_gap`` for the seed
profile); scenarios without one are reported as unlabeled, with the verdicts only. Results
go to ``bench/results/loops.json`` (``--json PATH``); every count is deterministic.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.baselines import fresh_baselines
from bench.corpus_loader import DEFAULT_CORPUS, Entry, LabelError, load_corpus
from bench.loop_peers import fresh_peers
from bench.report_runner import percentile
from bench.simulate import (
    SEAWALL,
    SEAWALL_SEED,
    SimResult,
    SimulationError,
    result_verdict,
    simulate_baseline,
    simulate_seawall,
    verdict_differences,
)
from bench.tables import tables
from seawall.scenario.format import ScenarioError
from workflows.rules import RULES, SEED_SETTINGS, LoopProfile, LoopRule, LoopSettings, rule_spec
from workflows.rules.judge import JUDGE_RULE
from workflows.seed import GuardMode, RefusalMode

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_JSON = ROOT / "bench" / "results" / "loops.json"
DEFAULT_SAMPLE = 8
REAL_CONCURRENCY = 8
REAL_TIMEOUT_SECONDS = 300.0

_T = tables(__file__)  # loops.yaml
RULE_CODES: dict[str, str] = _T["RULE_CODES"]
PROFILE_SETTINGS: dict[str, LoopSettings] = {
    SEAWALL: LoopSettings(profile=LoopProfile.RECOMMENDED),
    SEAWALL_SEED: SEED_SETTINGS,
}
# ``--judge``: the recommended profile with the progress judge, answered by the scripts.
SEAWALL_JUDGE = "seawall-judge"
POLICY_TITLES: dict[str, str] = _T["POLICY_TITLES"] | {
    b.name: b.title for b in [*fresh_baselines(), *fresh_peers()]
}


def judge_settings(mode: GuardMode) -> LoopSettings:
    """The ``--judge`` policy's loop settings: the recommended profile, the judge in ``mode``."""
    return PROFILE_SETTINGS[SEAWALL].model_copy(update={"progress_judge_mode": mode})


LABEL_KEYS: dict[str, tuple[str, str]] = {k: tuple(v) for k, v in _T["LABEL_KEYS"].items()}
SUBSETS = ("all", "real")
# Thresholds tried by --sensitivity, per rule (the default is marked in the report).
SENSITIVITY: dict[LoopRule, tuple[int, ...]] = {
    LoopRule(rule): tuple(values) for rule, values in _T["SENSITIVITY"].items()
}
DEFAULT_THRESHOLDS: dict[LoopRule, int] = {rule: rule_spec(rule).threshold for rule in LoopRule}


# --- metrics ------------------------------------------------------------------------------


def wasted(result: SimResult, start: int) -> tuple[int, int]:
    """Tool calls run and model requests made from batch ``start`` on (request k made batch
    k: every earlier reply had tool calls, or the prompt would have ended)."""
    calls = sum(trace.executed for trace in result.batches if trace.batch >= start)
    requests = max(0, result.model_requests - (start - 1))
    return calls, requests


def median(values: list[int]) -> float:
    return float(statistics.median(values)) if values else 0.0


def describe(result: SimResult) -> str:
    """A short account of how a run ended, for the per-scenario table."""
    if result.stop_reason.value == "loop_detected":
        return f"stop@{result.last_batch} {result.loop_type}"
    return f"{result.stop_reason.value}@{result.last_batch}"


def guard_story(result: SimResult) -> str:
    """The guard's and the rules' decisions of a run, condensed: what kept it from
    stopping."""
    counts: dict[str, int] = {}
    for entry in result.guard:
        key = entry.decision + (f"({entry.reason})" if entry.reason else "")
        counts[key] = counts.get(key, 0) + 1
    story = "guard: " + (", ".join(f"{k}×{v}" for k, v in counts.items()) or "no settled batch")
    rules = [f"{RULE_CODES.get(r.rule, r.rule)} {r.decision}@{r.batch}" for r in result.rules]
    return story + (f"; rules: {', '.join(rules)}" if rules else "")


def simulate_policies(
    entry: Entry,
    thresholds: dict[LoopRule, int] | None = None,
    judge: GuardMode | None = None,
) -> dict[str, SimResult]:
    """The scenario under both loop profiles (and, with ``judge``, the recommended one with
    the progress judge in that mode) and every baseline."""
    settings_by_policy = dict(PROFILE_SETTINGS)
    if judge is not None:
        settings_by_policy[SEAWALL_JUDGE] = judge_settings(judge)
    results = {
        policy: simulate_seawall(
            entry.scenario, GuardMode.ENFORCE, loop=settings, thresholds=thresholds
        )
        for policy, settings in settings_by_policy.items()
    }
    for baseline in [*fresh_baselines(), *fresh_peers()]:
        results[baseline.name] = simulate_baseline(entry.scenario, baseline)
    return results


def _cell(result: SimResult, entry: Entry) -> dict[str, Any]:
    cell: dict[str, Any] = {
        "stop_reason": result.stop_reason.value,
        "rule": result.loop_type,
        "last_batch": result.last_batch,
        "model_requests": result.model_requests,
        "tool_calls": result.tool_calls.model_dump(),
        "warnings": result.warnings,
        # Requests to the progress judge (the --judge policy's cost).
        "judge_requests": sum(1 for r in result.rules if r.rule == JUDGE_RULE),
    }
    if entry.kind == "loop":
        cell["wasted_calls"], cell["wasted_requests"] = wasted(result, entry.loop_start)
    return cell


def _row(entry: Entry, results: dict[str, SimResult]) -> dict[str, Any]:
    """One scenario's row of the report: its label and each policy's cell."""
    return {
        "scenario": entry.key,
        "label": entry.kind,
        "real": entry.real,
        "loop_starts_at_batch": entry.loop_start if entry.kind == "loop" else None,
        "shape": entry.label.shape if entry.label else None,
        "policies": {policy: _cell(result, entry) for policy, result in results.items()},
    }


def summarize(rows: list[dict[str, Any]], policies: list[str]) -> dict[str, dict[str, Any]]:
    """Per policy, today's summary fields over ``rows`` (one subset of the corpus)."""
    loops = [r for r in rows if r["label"] == "loop"]
    legit = [r for r in rows if r["label"] == "legit"]
    summary: dict[str, dict[str, Any]] = {}
    for policy in policies:
        cells = {r["scenario"]: r["policies"][policy] for r in rows}
        stopped, cap, not_stopped = [], [], []
        for row in loops:
            cell = cells[row["scenario"]]
            if cell["stop_reason"] != "loop_detected":
                not_stopped.append(row["scenario"])
            elif cell["rule"] == "turn_tool_call_cap":
                cap.append(row["scenario"])
            else:
                stopped.append(row["scenario"])
        calls = [cells[r["scenario"]]["wasted_calls"] for r in loops]
        requests = [cells[r["scenario"]]["wasted_requests"] for r in loops]
        halts = [
            r["scenario"] for r in legit if cells[r["scenario"]]["stop_reason"] == "loop_detected"
        ]
        refused = sum(
            cells[r["scenario"]]["tool_calls"]["refused"]
            + cells[r["scenario"]]["tool_calls"].get("denied_repeats", 0)
            for r in legit
        )
        warned_legit = [r["scenario"] for r in legit if cells[r["scenario"]]["warnings"]]
        warned_loops = [r["scenario"] for r in loops if cells[r["scenario"]]["warnings"]]
        summary[policy] = {
            "title": POLICY_TITLES[policy],
            "loops": len(loops),
            "loops_stopped": len(stopped),
            "loops_stopped_share": round(len(stopped) / len(loops), 3) if loops else 0.0,
            "loops_ended_by_cap": len(cap),
            "loops_not_stopped": len(not_stopped),
            "wasted_calls_median": median(calls),
            "wasted_calls_p90": int(percentile(calls, 0.9)),
            "wasted_requests_median": median(requests),
            "wasted_requests_p90": int(percentile(requests, 0.9)),
            "legit": len(legit),
            "false_halts": len(halts),
            "false_halt_scenarios": halts,
            "legit_calls_refused": refused,
            "false_warnings": len(warned_legit),
            "false_warning_scenarios": warned_legit,
            "loops_warned": len(warned_loops),
            "loops_missed": cap + not_stopped,
            "judge_requests": sum(cells[r["scenario"]].get("judge_requests", 0) for r in rows),
            "judged_loops": sum(1 for r in loops if cells[r["scenario"]].get("judge_requests")),
            "judged_legit": sum(1 for r in legit if cells[r["scenario"]].get("judge_requests")),
        }
    return summary


def _label_check(
    entry: Entry, policy: str, result: SimResult
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, list[str]]:
    """A profile's miss and false halt on ``entry`` with the label that explains it, and
    every disagreement between the verdict and the labels."""
    out_key, gap_key = LABEL_KEYS[policy]
    name = f"{entry.key} ({policy})"
    miss = halt = None
    unexpected: list[str] = []
    if entry.kind == "loop" and not result.stopped_by_rule:
        reason = entry.reason(out_key)
        miss = {
            "scenario": entry.key,
            "ended": describe(result),
            "guard": guard_story(result),
            "out_of_scope": reason,
        }
        if not reason:
            unexpected.append(f"{name}: a loop it does not stop, with no {out_key} in labels")
    if entry.kind == "loop" and result.stopped_by_rule and entry.reason(out_key):
        unexpected.append(f"{name}: labeled {out_key}, but it stops it ({result.loop_type})")
    if entry.kind == "legit" and result.halted:
        gap = entry.reason(gap_key)
        halt = {"scenario": entry.key, "ended": describe(result), "known_gap": gap}
        if not gap:
            unexpected.append(f"{name}: halts a legit scenario ({result.loop_type})")
    if entry.kind == "legit" and not result.halted and entry.reason(gap_key):
        unexpected.append(f"{name}: labeled {gap_key}, but it no longer halts it")
    return miss, halt, unexpected


def evaluate(entries: list[Entry], judge: GuardMode | None = None) -> dict[str, Any]:
    judged = [SEAWALL_JUDGE] if judge is not None else []
    policies = [
        SEAWALL,
        SEAWALL_SEED,
        *judged,
        *(b.name for b in [*fresh_baselines(), *fresh_peers()]),
    ]
    rows: list[dict[str, Any]] = []
    errors: list[dict[str, str]] = []
    misses: dict[str, list[dict[str, Any]]] = {p: [] for p in PROFILE_SETTINGS}
    halts: dict[str, list[dict[str, Any]]] = {p: [] for p in PROFILE_SETTINGS}
    unexpected: list[str] = []
    for entry in entries:
        try:
            results = simulate_policies(entry, judge=judge)
        except SimulationError as err:
            errors.append({"scenario": entry.key, "error": str(err)})
            continue
        rows.append(_row(entry, results))
        for policy in PROFILE_SETTINGS:
            miss, halt, wrong = _label_check(entry, policy, results[policy])
            if miss:
                misses[policy].append(miss)
            if halt:
                halts[policy].append(halt)
            unexpected.extend(wrong)

    return {
        "policies": policies,
        "summary": summarize(rows, policies),
        "summary_real": summarize([r for r in rows if r["real"]], policies),
        "scenarios": rows,
        "seawall_misses": misses[SEAWALL],
        "seawall_legit_halts": halts[SEAWALL],
        "seed_misses": misses[SEAWALL_SEED],
        "seed_legit_halts": halts[SEAWALL_SEED],
        "unexpected": unexpected,
        "errors": errors,
    }


def sensitivity(entries: list[Entry]) -> list[dict[str, Any]]:
    """The recommended profile with one rule's threshold varied at a time, and with failed
    shell commands refused like any other call (whole corpus and real half)."""
    variants: list[tuple[str, dict[LoopRule, int], LoopSettings]] = []
    recommended = PROFILE_SETTINGS[SEAWALL]
    for rule, values in SENSITIVITY.items():
        for value in values:
            thresholds = {**DEFAULT_THRESHOLDS, rule: value}
            marker = " (default)" if value == DEFAULT_THRESHOLDS[rule] else ""
            variants.append((f"{rule.value} = {value}{marker}", thresholds, recommended))
    variants.append(
        (
            "failed shell commands refused like any call",
            DEFAULT_THRESHOLDS,
            recommended.model_copy(update={"shell_repeats_admitted": False}),
        )
    )
    return [
        {"variant": name, **_figures(_recommended_rows(entries, settings, thresholds=thresholds))}
        for name, thresholds, settings in variants
    ]


def _recommended_rows(
    entries: list[Entry],
    settings: LoopSettings,
    *,
    mode: GuardMode = GuardMode.ENFORCE,
    thresholds: dict[LoopRule, int] | None = None,
    refusal: RefusalMode | None = None,
) -> list[dict[str, Any]]:
    """Every simulable scenario's cell under one variant of the recommended profile."""
    rows = []
    for entry in entries:
        scenario = entry.scenario
        if refusal is not None:
            scenario = scenario.model_copy(update={"refusal": refusal})
        try:
            result = simulate_seawall(scenario, mode, loop=settings, thresholds=thresholds)
        except SimulationError:
            continue
        rows.append(_row(entry, {SEAWALL: result}))
    return rows


def _figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        subset: summarize([r for r in rows if subset == "all" or r["real"]], [SEAWALL])[SEAWALL]
        for subset in SUBSETS
    }


def ablation(entries: list[Entry]) -> list[dict[str, Any]]:
    """The recommended profile with one part off at a time: each rule of the rule table
    (its mode ``off``), the repeated-failure guard (guard mode ``off``, every rule still
    ``enforce``), and the failed-call refusal (refusal mode ``off``); whole corpus and real
    half. The first row is the profile whole."""
    recommended = PROFILE_SETTINGS[SEAWALL]
    every_rule_on = {spec.mode_field: GuardMode.ENFORCE for spec in RULES}
    out = [
        {
            "variant": "recommended profile, every part on",
            **_figures(_recommended_rows(entries, recommended)),
        }
    ]
    for spec in RULES:
        off = recommended.model_copy(update={spec.mode_field: GuardMode.OFF})
        rows = _recommended_rows(entries, off)
        out.append(
            {"variant": f"without {spec.docs_id} {spec.title} ({spec.setting})", **_figures(rows)}
        )
    without_guard = recommended.model_copy(update=every_rule_on)
    out.append(
        {
            "variant": "without the repeated-failure guard",
            **_figures(_recommended_rows(entries, without_guard, mode=GuardMode.OFF)),
        }
    )
    out.append(
        {
            "variant": "without the failed-call refusal",
            **_figures(_recommended_rows(entries, recommended, refusal=RefusalMode.OFF)),
        }
    )
    return out


# --- the real workflow --------------------------------------------------------------------


def pick_sample(entries: list[Entry], size: int) -> list[Entry]:
    """``size`` scenarios spread evenly over the sorted corpus (deterministic)."""
    ordered = sorted(entries, key=lambda e: e.key)
    if size >= len(ordered):
        return ordered
    if size <= 1:
        return ordered[:size]
    picks = sorted({round(i * (len(ordered) - 1) / (size - 1)) for i in range(size)})
    return [ordered[i] for i in picks]


async def check_real(
    entries: list[Entry], policies: list[str], judge: GuardMode | None = None
) -> list[dict[str, Any]]:
    """Run ``entries`` through the real workflow under each of ``policies`` (loop profiles;
    ``seawall-judge`` with the judge in ``judge``) and compare with the simulator."""
    from bench.trusted import bench_client, bench_trust
    from seawall.runtime.devserver import start_dev_server
    from seawall.scenario.driver import run_scenario
    from seawall.worker.build import build_worker

    env = await start_dev_server()
    checks: list[dict[str, Any]] = []
    try:
        queue = f"bench-loops-{uuid.uuid4().hex[:8]}"
        limit = asyncio.Semaphore(REAL_CONCURRENCY)
        client = bench_client(env.client)  # the benchmark's starts, signed
        async with build_worker(client, queue, trust=bench_trust()):

            async def one(entry: Entry, policy: str) -> dict[str, Any]:
                settings = (
                    judge_settings(judge or GuardMode.WARN)
                    if policy == SEAWALL_JUDGE
                    else PROFILE_SETTINGS[policy]
                )
                async with limit:
                    simulated = simulate_seawall(
                        entry.scenario, GuardMode.ENFORCE, loop=settings
                    ).verdict()
                    with tempfile.TemporaryDirectory(prefix="seawall-bench-") as tmp:
                        try:
                            result = await asyncio.wait_for(
                                run_scenario(
                                    client,
                                    entry.scenario,
                                    task_queue=queue,
                                    workspace=Path(tmp),
                                    mode_override=GuardMode.ENFORCE,
                                    loop_override=settings,
                                ),
                                REAL_TIMEOUT_SECONDS,
                            )
                        except Exception as err:  # reported as a disagreement
                            return {
                                "scenario": entry.key,
                                "policy": policy,
                                "agree": False,
                                "differences": [f"the real run failed: {err!r}"],
                            }
                    differences = verdict_differences(simulated, result_verdict(result))
                    return {
                        "scenario": entry.key,
                        "policy": policy,
                        "agree": not differences,
                        "stop_reason": result.stop_reason.value,
                        "loop_type": result.loop_type.value if result.loop_type else None,
                        "differences": differences,
                    }

            checks = list(await asyncio.gather(*(one(e, p) for p in policies for e in entries)))
    finally:
        await env.shutdown()
    return checks


# --- output -------------------------------------------------------------------------------


def _fmt(value: float) -> str:
    return f"{value:g}"


def _print_summary(title: str, summary: dict[str, dict[str, Any]], policies: list[str]) -> None:
    first = summary[policies[0]]
    print(f"{title}: {first['loops']} loop and {first['legit']} legit scenarios")
    width = max(36, *(len(summary[p]["title"]) for p in policies))
    header = (
        f"{'policy':<{width}} {'loops stopped':>13} {'ended by cap':>12} {'not stopped':>11} "
        f"{'wasted calls':>13} {'wasted requests':>16} {'false halts':>12} {'refused':>8} "
        f"{'false warnings':>14} {'loops warned':>12}"
    )
    print(header)
    print(
        f"{'':<{width}} {'':>13} {'':>12} {'':>11} {'median / p90':>13} {'median / p90':>16} "
        f"{'(legit)':>12} {'(legit)':>8} {'(legit)':>14} {'':>12}"
    )
    print("-" * len(header))
    for policy in policies:
        s = summary[policy]
        share = f" {100 * s['loops_stopped_share']:.0f}%"
        print(
            f"{s['title']:<{width}} "
            f"{str(s['loops_stopped']) + '/' + str(s['loops']) + share:>13} "
            f"{s['loops_ended_by_cap']:>12} {s['loops_not_stopped']:>11} "
            f"{_fmt(s['wasted_calls_median']) + ' / ' + str(s['wasted_calls_p90']):>13} "
            f"{_fmt(s['wasted_requests_median']) + ' / ' + str(s['wasted_requests_p90']):>16} "
            f"{str(s['false_halts']) + '/' + str(s['legit']):>12} "
            f"{s['legit_calls_refused']:>8} "
            f"{str(s['false_warnings']) + '/' + str(s['legit']):>14} "
            f"{str(s['loops_warned']) + '/' + str(s['loops']):>12}"
        )
    print()


def print_report(corpus: list[str], report: dict[str, Any]) -> None:
    policies = report["policies"]
    print(f"Loop corpus: {', '.join(corpus)}")
    print()
    _print_summary("Whole corpus", report["summary"], policies)
    if report["summary_real"][SEAWALL]["loops"] + report["summary_real"][SEAWALL]["legit"]:
        _print_summary(
            "Modelled on real public incidents (labels with a url)",
            report["summary_real"],
            policies,
        )
    print(
        "Wasted = tool calls run and model requests made from the batch where the loop "
        "started until the policy stopped it (or the cap, or the script, ended it). "
        "Refused = calls of legit scenarios not run (failed-call refusals, denied "
        "re-requests answered without asking, a peer's refused calls). False warnings = "
        "legit scenarios that got at least one reminder or peer warning; loops warned = "
        "loops that did."
    )
    if SEAWALL_JUDGE in policies:
        judged = report["summary"][SEAWALL_JUDGE]
        print(
            f"Progress judge: asked in {judged['judged_loops']}/{judged['loops']} loops and "
            f"{judged['judged_legit']}/{judged['legit']} legit scenarios, "
            f"{judged['judge_requests']} requests in all (at most 3 per prompt); a scenario "
            "without a model.judge script is answered unknown."
        )

    print()
    print(
        "Per scenario: how each policy ended it (stop@batch by which rule, or end_turn / "
        "cancelled), and for loops the wasted calls/requests."
    )
    print(f"  {'scenario':<42} {'label':<6} " + " ".join(f"{n:<20}" for n in policies))
    for row in report["scenarios"]:
        cells = []
        for name in policies:
            cell = row["policies"][name]
            if cell["stop_reason"] == "loop_detected":
                text = f"stop@{cell['last_batch']} {RULE_CODES.get(cell['rule'], 'rule')}"
            else:
                text = f"{cell['stop_reason']}@{cell['last_batch']}"
            if row["label"] == "loop":
                text += f" {cell['wasted_calls']}/{cell['wasted_requests']}"
            cells.append(f"{text:<20}")
        name = row["scenario"].removesuffix(".yaml")[:42]
        print(f"  {name:<42} {row['label']:<6} " + " ".join(cells))
    print(
        "  (guard: repeated_tool_execution_failure, refusal: repeated_failed_call, invalid: "
        "invalid_tool_params_stagnation, dup: global_tool_call_duplicate, denied: "
        "repeated_denied_call, cycle: repeated_failure_cycle, same: "
        "repeated_identical_result, cap: turn_tool_call_cap, rule: the baseline's own rule)"
    )

    for policy, misses_key, halts_key in (
        (SEAWALL, "seawall_misses", "seawall_legit_halts"),
        (SEAWALL_SEED, "seed_misses", "seed_legit_halts"),
    ):
        title = POLICY_TITLES[policy]
        print()
        print(f"Loops {title} does not stop ({len(report[misses_key])}), each out of scope:")
        for miss in report[misses_key]:
            reason = miss["out_of_scope"] or "!! NO REASON GIVEN (unexpected miss)"
            print(f"  - {miss['scenario']}: {miss['ended']}; {miss['guard']}")
            print(f"      why: {reason}")
        halts = report[halts_key]
        print(f"Legit scenarios {title} halts ({len(halts)}):")
        for halt in halts:
            print(f"  - {halt['scenario']}: {halt['ended']}")
            print(f"      known gap: {halt['known_gap'] or '!! NOT LABELED (unexpected)'}")
    print()
    for policy in policies[2:]:
        s = report["summary"][policy]
        if s["false_halt_scenarios"]:
            print(f"  {s['title']} halts: {', '.join(s['false_halt_scenarios'])}")
    if report["unexpected"]:
        print()
        print("!! Labels and verdicts disagree:")
        for line in report["unexpected"]:
            print(f"  !! {line}")
    if report["errors"]:
        print()
        print("!! Scenarios the simulator cannot replay (left out of the figures):")
        for error in report["errors"]:
            print(f"  !! {error['scenario']}: {error['error']}")


def _print_variants(title: str, rows: list[dict[str, Any]]) -> None:
    print()
    print(title)
    width = max(46, *(len(row["variant"]) for row in rows))
    print(
        f"  {'variant':<{width}} {'whole: stopped':>14} {'false':>6} {'warned':>6} "
        f"{'wasted med':>10}   {'real: stopped':>13} {'false':>6} {'warned':>6} "
        f"{'wasted med':>10}"
    )
    for row in rows:
        a, r = row["all"], row["real"]
        print(
            f"  {row['variant']:<{width}} {str(a['loops_stopped']) + '/' + str(a['loops']):>14} "
            f"{a['false_halts']:>6} {a['false_warnings']:>6} "
            f"{_fmt(a['wasted_calls_median']):>10}   "
            f"{str(r['loops_stopped']) + '/' + str(r['loops']):>13} {r['false_halts']:>6} "
            f"{r['false_warnings']:>6} {_fmt(r['wasted_calls_median']):>10}"
        )


def print_sensitivity(rows: list[dict[str, Any]]) -> None:
    _print_variants(
        "Sensitivity of the recommended profile (one rule's threshold varied at a time; "
        "thresholds count batches before the reminder, the next offence stops):",
        rows,
    )


def print_ablation(rows: list[dict[str, Any]]) -> None:
    _print_variants(
        "Ablation of the recommended profile (one part off at a time; false = false halts, "
        "warned = false warnings, of legit scenarios):",
        rows,
    )


def print_real(checks: list[dict[str, Any]], seconds: float) -> None:
    agree = sum(1 for c in checks if c["agree"])
    print()
    print(
        f"Real workflow check: {agree}/{len(checks)} runs agree with the simulator "
        f"({seconds:.1f} s on an embedded dev server)"
    )
    for check in checks:
        mark = "ok " if check["agree"] else "!! DISAGREES"
        print(
            f"  {mark} {check['scenario']} [{check['policy']}]"
            + (
                f" ({check['stop_reason']}, {check['loop_type']})"
                if check.get("stop_reason")
                else ""
            )
        )
        for difference in check["differences"][:6]:
            print(f"      {difference}")


REAL_PROFILES = {
    "recommended": [SEAWALL],
    "seed": [SEAWALL_SEED],
    "both": [SEAWALL, SEAWALL_SEED],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "corpus",
        nargs="*",
        type=Path,
        default=[DEFAULT_CORPUS],
        help="scenario folders or files (default: bench/corpus)",
    )
    parser.add_argument(
        "--sample",
        type=int,
        default=DEFAULT_SAMPLE,
        help="scenarios to check against the real workflow (default 8)",
    )
    parser.add_argument(
        "--all-real", action="store_true", help="check every scenario against the real workflow"
    )
    parser.add_argument("--no-real", action="store_true", help="skip the real-workflow check")
    parser.add_argument(
        "--real-profile",
        choices=sorted(REAL_PROFILES),
        default="recommended",
        help="loop profile(s) the real-workflow check runs (default: recommended)",
    )
    parser.add_argument(
        "--sensitivity",
        action="store_true",
        help="also report the recommended profile with each rule's threshold varied",
    )
    parser.add_argument(
        "--judge",
        nargs="?",
        const=GuardMode.WARN.value,
        choices=[GuardMode.SHADOW.value, GuardMode.WARN.value, GuardMode.ENFORCE.value],
        help="also run the recommended profile with the progress judge (default mode: warn), "
        "its verdicts scripted by each scenario's model.judge",
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write results")
    args = parser.parse_args(argv)

    from seawall.runtime.logs import configure_logging

    configure_logging("json", "ERROR")
    try:
        entries = load_corpus([p.resolve() for p in args.corpus])
    except (ScenarioError, LabelError) as err:
        print(f"loops: error: {err}", file=sys.stderr)
        return 2
    corpus = [str(p) for p in args.corpus]
    judge = GuardMode(args.judge) if args.judge else None
    report = evaluate(entries, judge)
    print_report(corpus, report)
    parts = ablation(entries)
    print_ablation(parts)
    rows = sensitivity(entries) if args.sensitivity else []
    if rows:
        print_sensitivity(rows)

    checks: list[dict[str, Any]] = []
    simulable = {e["scenario"] for e in report["errors"]}
    candidates = [e for e in entries if e.key not in simulable]
    if not args.no_real and candidates:
        sample = candidates if args.all_real else pick_sample(candidates, args.sample)
        started = time.monotonic()
        real_policies = REAL_PROFILES[args.real_profile] + ([SEAWALL_JUDGE] if judge else [])
        checks = asyncio.run(check_real(sample, real_policies, judge))
        print_real(checks, time.monotonic() - started)

    output = {
        "corpus": corpus,
        "guard_mode": GuardMode.ENFORCE.value,
        "profiles": {policy: PROFILE_SETTINGS[policy].profile.value for policy in PROFILE_SETTINGS},
        "thresholds": {rule.value: value for rule, value in DEFAULT_THRESHOLDS.items()},
        "progress_judge": judge.value if judge else None,
        **report,
        "ablation": parts,
        "sensitivity": rows,
        "real_workflow_check": {
            "checked": [f"{c['scenario']} [{c['policy']}]" for c in checks],
            "agree": all(c["agree"] for c in checks),
            "disagreements": [c for c in checks if not c["agree"]],
        },
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(output, indent=2) + "\n", encoding="utf-8")
    print()
    print(f"Wrote {args.json}")
    if any(not c["agree"] for c in checks):
        print("!! THE SIMULATOR AND THE REAL WORKFLOW DISAGREE (see above)", file=sys.stderr)
        return 1
    if report["errors"]:
        return 1
    return 0


if __name__ == "__main__":
    from seawall.runtime.process_exit import run_then_exit

    run_then_exit(main)
