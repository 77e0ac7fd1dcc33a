"""Loop-stopping quality: Seawall against peer rules on a labeled scenario corpus.

    python bench/loops.py [CORPUS_DIR_OR_FILE ...] [--sample N | --all-real | --no-real]

Every scenario runs through Seawall's protections (guard mode ``enforce``) and through each
baseline of ``bench/baselines.py``, in the pure simulator (``bench/simulate.py``). For each
policy it reports, over the scenarios labeled ``loop``: how many it stopped (by a rule, not
by the tool-call cap), how many only the cap ended, and the tool calls and model requests
spent from the batch where the loop started until the policy stopped it (median and p90);
over the scenarios labeled ``legit``: how many it halted (false halts). Every loop Seawall
does not stop is listed with the reason it is out of scope (from ``labels.yaml``).

Then a sample (``--sample``, default 8; ``--all-real`` for all) runs through the real
``PromptWorkflow`` on an embedded Temporal dev server, and the simulator's Seawall verdict
(stop reason, loop type, model requests, call counts, guard decisions, the whole final
conversation) must equal the workflow's. Any disagreement is printed and the exit code is 1.

Labels come from ``labels.yaml`` beside the scenarios (file name → ``label``,
``loop_starts_at_batch``, ``shape``, ``out_of_scope``, ``known_gap``, ``note``); scenarios
without one are reported as unlabeled, with Seawall's verdict only. Results go to
``bench/results/loops.json`` (``--json PATH``); every count is deterministic.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from bench.baselines import fresh_baselines  # noqa: E402
from bench.simulate import (  # noqa: E402
    SEAWALL,
    SimResult,
    SimulationError,
    result_verdict,
    simulate_baseline,
    simulate_seawall,
    verdict_differences,
)
from seawall.scenario.format import Scenario, ScenarioError, load_scenario  # noqa: E402
from workflows.guard import GuardMode  # noqa: E402

DEFAULT_CORPUS = ROOT / "bench" / "corpus"
DEFAULT_JSON = ROOT / "bench" / "results" / "loops.json"
LABELS_FILE = "labels.yaml"
DEFAULT_SAMPLE = 8
REAL_CONCURRENCY = 8
REAL_TIMEOUT_SECONDS = 300.0

RULE_CODES = {
    "repeated_tool_execution_failure": "guard",
    "repeated_failed_call": "refusal",
    "invalid_tool_params_stagnation": "invalid",
    "global_tool_call_duplicate": "dup",
    "turn_tool_call_cap": "cap",
}
POLICY_TITLES = {SEAWALL: "Seawall (enforce)"} | {b.name: b.title for b in fresh_baselines()}


class LabelError(Exception):
    pass


@dataclass
class Entry:
    path: Path
    scenario: Scenario
    label: dict[str, Any] | None

    @property
    def key(self) -> str:
        return self.path.name

    @property
    def kind(self) -> str:
        return str(self.label["label"]) if self.label else "unlabeled"

    @property
    def loop_start(self) -> int:
        return int(self.label.get("loop_starts_at_batch", 1)) if self.label else 1


# --- loading ------------------------------------------------------------------------------


def _load_labels(folder: Path) -> dict[str, dict[str, Any]]:
    path = folder / LABELS_FILE
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise LabelError(f"{path}: must map file names to labels")
    for name, label in data.items():
        if not isinstance(label, dict) or label.get("label") not in ("loop", "legit"):
            raise LabelError(f"{path}: {name}: label must be loop or legit")
        if label["label"] == "loop":
            start = label.get("loop_starts_at_batch")
            if not isinstance(start, int) or start < 1:
                raise LabelError(f"{path}: {name}: a loop needs loop_starts_at_batch >= 1")
        if not (folder / name).is_file():
            raise LabelError(f"{path}: {name}: no such scenario file")
    return data


def load_corpus(sources: list[Path]) -> list[Entry]:
    """Scenarios from folders (every ``*.yaml``/``*.yml`` but the labels) or single files."""
    entries: list[Entry] = []
    for source in sources:
        if source.is_dir():
            labels = _load_labels(source)
            files = sorted(
                p
                for p in source.iterdir()
                if p.suffix in (".yaml", ".yml") and p.name != LABELS_FILE
            )
        elif source.is_file():
            labels = _load_labels(source.parent)
            files = [source]
        else:
            raise ScenarioError(f"{source}: no such file or folder")
        for path in files:
            entries.append(Entry(path, load_scenario(path), labels.get(path.name)))
    return entries


# --- metrics ------------------------------------------------------------------------------


def wasted(result: SimResult, start: int) -> tuple[int, int]:
    """Tool calls run and model requests made from batch ``start`` on (request k made batch
    k: every earlier reply had tool calls, or the prompt would have ended)."""
    calls = sum(trace.executed for trace in result.batches if trace.batch >= start)
    requests = max(0, result.model_requests - (start - 1))
    return calls, requests


def p90(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)] if ordered else 0


def median(values: list[int]) -> float:
    return float(statistics.median(values)) if values else 0.0


def describe(result: SimResult) -> str:
    """A short account of how a run ended, for the per-scenario table."""
    if result.stop_reason.value == "loop_detected":
        return f"stop@{result.last_batch} {result.loop_type}"
    return f"{result.stop_reason.value}@{result.last_batch}"


def guard_story(result: SimResult) -> str:
    """The guard decisions of a run, condensed: what kept it from stopping."""
    counts: dict[str, int] = {}
    for entry in result.guard:
        key = entry.decision + (f"({entry.reason})" if entry.reason else "")
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k}×{v}" for k, v in counts.items()) or "no settled batch"


def evaluate(entries: list[Entry]) -> dict[str, Any]:
    policies = [SEAWALL, *(b.name for b in fresh_baselines())]
    rows: list[dict[str, Any]] = []
    errors: list[dict[str, str]] = []
    per_policy: dict[str, dict[str, Any]] = {
        p: {
            "loop_wasted_calls": [],
            "loop_wasted_requests": [],
            "stopped": [],
            "cap": [],
            "not_stopped": [],
            "false_halts": [],
            "legit_refused_calls": 0,
        }
        for p in policies
    }
    misses: list[dict[str, Any]] = []
    unexpected: list[str] = []
    known_gaps: list[dict[str, Any]] = []
    for entry in entries:
        try:
            results = {SEAWALL: simulate_seawall(entry.scenario, GuardMode.ENFORCE)}
            for baseline in fresh_baselines():
                results[baseline.name] = simulate_baseline(entry.scenario, baseline)
        except SimulationError as err:
            errors.append({"scenario": entry.key, "error": str(err)})
            continue
        row: dict[str, Any] = {
            "scenario": entry.key,
            "label": entry.kind,
            "loop_starts_at_batch": entry.loop_start if entry.kind == "loop" else None,
            "shape": (entry.label or {}).get("shape"),
            "policies": {},
        }
        for policy, result in results.items():
            calls, requests = wasted(result, entry.loop_start)
            cell = {
                "stop_reason": result.stop_reason.value,
                "rule": result.loop_type,
                "last_batch": result.last_batch,
                "model_requests": result.model_requests,
                "tool_calls": result.tool_calls.model_dump(),
            }
            stats = per_policy[policy]
            if entry.kind == "loop":
                cell["wasted_calls"], cell["wasted_requests"] = calls, requests
                stats["loop_wasted_calls"].append(calls)
                stats["loop_wasted_requests"].append(requests)
                bucket = (
                    "stopped"
                    if result.stopped_by_rule
                    else "cap"
                    if result.halted
                    else "not_stopped"
                )
                stats[bucket].append(entry.key)
            elif entry.kind == "legit":
                if result.halted:
                    stats["false_halts"].append(entry.key)
                stats["legit_refused_calls"] += result.tool_calls.refused
            row["policies"][policy] = cell
        rows.append(row)

        seawall = results[SEAWALL]
        label = entry.label or {}
        if entry.kind == "loop" and not seawall.stopped_by_rule:
            reason = label.get("out_of_scope")
            misses.append(
                {
                    "scenario": entry.key,
                    "ended": describe(seawall),
                    "guard": guard_story(seawall),
                    "out_of_scope": reason,
                }
            )
            if not reason:
                unexpected.append(
                    f"{entry.key}: a loop Seawall does not stop, with no "
                    "out_of_scope reason in labels.yaml"
                )
        if entry.kind == "loop" and seawall.stopped_by_rule and label.get("out_of_scope"):
            unexpected.append(
                f"{entry.key}: labeled out of scope, but Seawall stops it ({seawall.loop_type})"
            )
        if entry.kind == "legit" and seawall.halted:
            known_gaps.append(
                {
                    "scenario": entry.key,
                    "ended": describe(seawall),
                    "known_gap": label.get("known_gap"),
                }
            )
            if not label.get("known_gap"):
                unexpected.append(
                    f"{entry.key}: Seawall halts a legit scenario ({seawall.loop_type})"
                )
        if entry.kind == "legit" and not seawall.halted and label.get("known_gap"):
            unexpected.append(f"{entry.key}: labeled known_gap, but Seawall no longer halts it")

    loops_total = sum(1 for r in rows if r["label"] == "loop")
    legit_total = sum(1 for r in rows if r["label"] == "legit")
    summary = {}
    for policy, stats in per_policy.items():
        summary[policy] = {
            "title": POLICY_TITLES[policy],
            "loops": loops_total,
            "loops_stopped": len(stats["stopped"]),
            "loops_ended_by_cap": len(stats["cap"]),
            "loops_not_stopped": len(stats["not_stopped"]),
            "wasted_calls_median": median(stats["loop_wasted_calls"]),
            "wasted_calls_p90": p90(stats["loop_wasted_calls"]),
            "wasted_requests_median": median(stats["loop_wasted_requests"]),
            "wasted_requests_p90": p90(stats["loop_wasted_requests"]),
            "legit": legit_total,
            "false_halts": len(stats["false_halts"]),
            "false_halt_scenarios": stats["false_halts"],
            "legit_calls_refused": stats["legit_refused_calls"],
            "loops_missed": stats["cap"] + stats["not_stopped"],
        }
    return {
        "policies": policies,
        "summary": summary,
        "scenarios": rows,
        "seawall_misses": misses,
        "seawall_legit_halts": known_gaps,
        "unexpected": unexpected,
        "errors": errors,
    }


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


async def check_real(entries: list[Entry]) -> list[dict[str, Any]]:
    """Run ``entries`` through the real workflow and compare with the simulator."""
    from seawall.runtime.devserver import start_dev_server
    from seawall.scenario.driver import run_scenario
    from worker import build_worker

    env = await start_dev_server()
    checks: list[dict[str, Any]] = []
    try:
        queue = f"bench-loops-{uuid.uuid4().hex[:8]}"
        limit = asyncio.Semaphore(REAL_CONCURRENCY)
        async with build_worker(env.client, queue):

            async def one(entry: Entry) -> dict[str, Any]:
                async with limit:
                    simulated = simulate_seawall(entry.scenario, GuardMode.ENFORCE).verdict()
                    with tempfile.TemporaryDirectory(prefix="seawall-bench-") as tmp:
                        try:
                            result = await asyncio.wait_for(
                                run_scenario(
                                    env.client,
                                    entry.scenario,
                                    task_queue=queue,
                                    workspace=Path(tmp),
                                    mode_override=GuardMode.ENFORCE,
                                ),
                                REAL_TIMEOUT_SECONDS,
                            )
                        except Exception as err:  # reported as a disagreement
                            return {
                                "scenario": entry.key,
                                "agree": False,
                                "differences": [f"the real run failed: {err!r}"],
                            }
                    differences = verdict_differences(simulated, result_verdict(result))
                    return {
                        "scenario": entry.key,
                        "agree": not differences,
                        "stop_reason": result.stop_reason.value,
                        "loop_type": result.loop_type.value if result.loop_type else None,
                        "differences": differences,
                    }

            checks = list(await asyncio.gather(*(one(e) for e in entries)))
    finally:
        await env.shutdown()
    return checks


# --- output -------------------------------------------------------------------------------


def _fmt(value: float) -> str:
    return f"{value:g}"


def print_report(corpus: list[str], report: dict[str, Any]) -> None:
    summary = report["summary"]
    first = summary[SEAWALL]
    print(
        f"Loop corpus: {', '.join(corpus)} — {first['loops']} loop and {first['legit']} "
        f"legit scenarios"
    )
    print()
    header = (
        f"{'policy':<34} {'loops stopped':>13} {'ended by cap':>12} {'not stopped':>11} "
        f"{'wasted calls':>13} {'wasted requests':>16} {'false halts':>12}"
    )
    print(header)
    print(
        f"{'':<34} {'':>13} {'':>12} {'':>11} {'median / p90':>13} {'median / p90':>16} "
        f"{'(legit)':>12}"
    )
    print("-" * len(header))
    for policy in report["policies"]:
        s = summary[policy]
        print(
            f"{s['title']:<34} {str(s['loops_stopped']) + '/' + str(s['loops']):>13} "
            f"{s['loops_ended_by_cap']:>12} {s['loops_not_stopped']:>11} "
            f"{_fmt(s['wasted_calls_median']) + ' / ' + str(s['wasted_calls_p90']):>13} "
            f"{_fmt(s['wasted_requests_median']) + ' / ' + str(s['wasted_requests_p90']):>16} "
            f"{str(s['false_halts']) + '/' + str(s['legit']):>12}"
        )
    print()
    print(
        "Wasted = tool calls run and model requests made from the batch where the loop "
        "started until the policy stopped it (or the cap, or the script, ended it)."
    )
    print(
        f"Seawall refused {first['legit_calls_refused']} unchanged repeats of failed calls "
        "in legit scenarios (refused calls do not run; the prompt goes on)."
    )

    print()
    print(
        "Per scenario: how each policy ended it (stop@batch by which rule, or end_turn / "
        "cancelled), and for loops the wasted calls/requests."
    )
    names = report["policies"]
    print(f"  {'scenario':<40} {'label':<9} " + " ".join(f"{n:<22}" for n in names))
    for row in report["scenarios"]:
        cells = []
        for name in names:
            cell = row["policies"][name]
            if cell["stop_reason"] == "loop_detected":
                text = f"stop@{cell['last_batch']} {RULE_CODES.get(cell['rule'], 'rule')}"
            else:
                text = f"{cell['stop_reason']}@{cell['last_batch']}"
            if row["label"] == "loop":
                text += f" {cell['wasted_calls']}/{cell['wasted_requests']}"
            cells.append(f"{text:<22}")
        print(f"  {row['scenario'].removesuffix('.yaml'):<40} {row['label']:<9} " + " ".join(cells))
    print(
        "  (guard: repeated_tool_execution_failure, refusal: repeated_failed_call, invalid: "
        "invalid_tool_params_stagnation, dup: global_tool_call_duplicate, cap: "
        "turn_tool_call_cap, rule: the baseline's own rule)"
    )

    print()
    print(f"Loops Seawall does not stop ({len(report['seawall_misses'])}), each out of scope:")
    for miss in report["seawall_misses"]:
        reason = miss["out_of_scope"] or "!! NO REASON GIVEN (unexpected miss)"
        print(f"  - {miss['scenario']}: {miss['ended']}; guard: {miss['guard']}")
        print(f"      why: {reason}")
    halts = report["seawall_legit_halts"]
    print()
    print(f"Legit scenarios Seawall halts ({len(halts)}):")
    for halt in halts:
        print(f"  - {halt['scenario']}: {halt['ended']}")
        print(f"      known gap: {halt['known_gap'] or '!! NOT LABELED (unexpected)'}")
    for policy in names[1:]:
        s = summary[policy]
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


def print_real(checks: list[dict[str, Any]], seconds: float) -> None:
    agree = sum(1 for c in checks if c["agree"])
    print()
    print(
        f"Real workflow check: {agree}/{len(checks)} scenarios agree with the simulator "
        f"({seconds:.1f} s on an embedded dev server)"
    )
    for check in checks:
        mark = "ok " if check["agree"] else "!! DISAGREES"
        print(
            f"  {mark} {check['scenario']}"
            + (
                f" ({check['stop_reason']}, {check['loop_type']})"
                if check.get("stop_reason")
                else ""
            )
        )
        for difference in check["differences"][:6]:
            print(f"      {difference}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
    report = evaluate(entries)
    print_report(corpus, report)

    checks: list[dict[str, Any]] = []
    simulable = {e["scenario"] for e in report["errors"]}
    candidates = [e for e in entries if e.key not in simulable]
    if not args.no_real and candidates:
        sample = candidates if args.all_real else pick_sample(candidates, args.sample)
        started = time.monotonic()
        checks = asyncio.run(check_real(sample))
        print_real(checks, time.monotonic() - started)

    output = {
        "corpus": corpus,
        "guard_mode": GuardMode.ENFORCE.value,
        **report,
        "real_workflow_check": {
            "checked": [c["scenario"] for c in checks],
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
    from seawall.runtime.process_exit import exit_without_finalizing

    exit_without_finalizing(main())
