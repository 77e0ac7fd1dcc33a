"""What one batch costs the workflow task: the protections' screening, settlement and review.

    python bench/guard_step.py [--calls 50] [--kb 10] [--batches 40] [--rounds 3]
                               [--against REV] [--json PATH]

A batch of ``--calls`` tool calls, each returning ``--kb`` KB of text (log-like lines with
timestamps, ids and counters that drift from batch to batch), runs through
``BatchProtections`` with the recommended profile's rules, the way the workflow runs it after
every batch, ``--batches`` times. Two variants side by side, in one run on one machine:

- ``normalized``: calls and results read through the normalizer
  (``workflows.rules.normalize``, ``seawall-loop-quality-v4``), with the rules it brings, as
  the tool activities return them: each long text read already, where it ran
  (``normalize.with_readings``), outside the step measured;
- ``read in the workflow``: the same, with every text read by the step itself (outcomes no
  tool activity read: an ACP editor's, or a worker's from before ``with_readings``);
- ``before v4`` (the baseline): the fingerprint and rules of a prompt started before it.

It prints the median and p90 milliseconds per batch of each, their ratios, and what the
reading costs each tool activity instead (median microseconds a call). The issue's
target is a median under 2 ms at 50 calls of 10 KB (workflows/rules/normalize.py); this is a
benchmark, never a timed test.

``--against REV`` adds a third variant, ``normalized @REV``: the same step with the code of git
revision ``REV`` (``git archive`` into a temporary directory), so a change to the step is
measured beside the code it replaces, on one machine in one run (a loaded machine moves both
alike). With it both ``normalized`` variants run in a fresh process per round, in turn; a
burst of another process's work can then cover a whole round, so on a shared machine give it
more ``--rounds`` (9 or more).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report_runner import percentile
from bench.tables import tables
from workflows.contracts import ToolCall, ToolOutcome
from workflows.contracts.activity import ToolSpec
from workflows.contracts.prompt_options import PromptOptions
from workflows.rules import LoopRules, LoopSettings
from workflows.rules.normalize import with_readings
from workflows.seed import GuardMode
from workflows.seed.protections import BatchProtections

WORDS: list[str] = tables(__file__)["WORDS"]  # guard_step.yaml


def _log_text(size: int, rng: random.Random) -> str:
    lines: list[str] = []
    total = 0
    while total < size:
        line = (
            f"2026-12-06T08:{rng.randrange(60):02d}:{rng.randrange(60):02d}"
            f".{rng.randrange(999):03d}Z "
            f"req_{rng.getrandbits(48):012x} {' '.join(rng.choices(WORDS, k=8))} "
            f"took {rng.randrange(900)}ms size {rng.randrange(90)}.{rng.randrange(9)} KB "
            f"revision {rng.randrange(100)}"
        )
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


def _batch(index: int, calls: int) -> list[ToolCall]:
    return [
        ToolCall(
            call_id=f"b{index}-c{n}",
            name="query_logs",
            arguments={"service": f"svc-{n}", "since": f"2026-12-06T08:{index % 60:02d}:00Z"},
        )
        for n in range(calls)
    ]


def measure(
    normalized: bool,
    calls: int,
    size: int,
    batches: int,
    *,
    read_where_run: bool = True,
    activity_ms: list[float] | None = None,
) -> list[float]:
    """Milliseconds per batch of screening, settlement and review. ``read_where_run``: the
    outcomes carry the tool activity's readings (``normalize.with_readings``), whose
    milliseconds per call go to ``activity_ms``."""
    rng = random.Random(7)
    options = PromptOptions(max_tool_calls_per_turn=0)  # no cap: every batch runs
    protections = BatchProtections(options, "/workspace")
    protections.use_loop_rules(
        LoopRules(
            LoopSettings(),
            GuardMode.ENFORCE,
            route_forced_off=False,
            normalized=normalized,
        )
    )
    tools = {"query_logs": ToolSpec(name="query_logs", description="", parameters={})}
    texts = [_log_text(size, rng) for _ in range(calls * 2)]
    timings: list[float] = []
    for index in range(batches):
        batch = _batch(index, calls)
        outcomes = {
            n: ToolOutcome(
                call_id=call.call_id,
                tool_name=call.name,
                policy_tool_name=call.name,
                status="success",
                execution_status="success",
                content=texts[(index + n) % len(texts)],
            )
            for n, call in enumerate(batch)
        }
        if normalized and read_where_run:
            for n, call in enumerate(batch):
                read = time.perf_counter()
                outcomes[n] = with_readings(
                    call.name, call.arguments, outcomes[n], labelled_ids=True, world_ids=True
                )
                if activity_ms is not None:
                    activity_ms.append((time.perf_counter() - read) * 1000)
        started = time.perf_counter()
        screening = protections.screen(batch, tools)
        protections.settle(screening, outcomes)
        protections.review(input_arrived=False, enforcement_disabled=False, now=float(index))
        timings.append((time.perf_counter() - started) * 1000)
    return timings


_MEASURE_IN_TREE = (
    "import json, sys; from bench.guard_step import measure; "
    "print(json.dumps(measure(True, int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))))"
)


def _measure_in(tree: Path, calls: int, size: int, batches: int) -> list[float]:
    """:func:`measure` of the normalized step with the code of ``tree``, in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE_IN_TREE, str(calls), str(size), str(batches)],
        cwd=tree,
        env={"PATH": "", "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=True,
    )
    timings: list[float] = json.loads(done.stdout)
    return timings


def _checkout(revision: str, into: Path) -> None:
    """The tree of git ``revision`` of this repository, written into ``into``."""
    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", revision], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50, help="calls per batch (default 50)")
    parser.add_argument("--kb", type=int, default=10, help="KB each call returns (default 10)")
    parser.add_argument("--batches", type=int, default=40, help="batches measured (default 40)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="interleaved rounds of each variant (default 3; more on a busy machine)",
    )
    parser.add_argument(
        "--against", metavar="REV", help="also measure the normalized step at git revision REV"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    size = args.kb * 1024
    figures: dict[str, dict[str, float]] = {}
    # Interleaved rounds, so a busy moment of the machine touches both variants.
    rounds: dict[str, list[float]] = {
        "normalized": [],
        "read in the workflow": [],
        "before v4": [],
    }
    activity_ms: list[float] = []
    with tempfile.TemporaryDirectory(prefix="guard-step-") as scratch:
        here = Path(__file__).resolve().parent.parent
        other = Path(scratch)
        if args.against:
            _checkout(args.against, other)
            rounds[f"normalized @{args.against}"] = []
        for index in range(args.rounds):
            rounds["before v4"] += measure(False, args.calls, size, args.batches)
            rounds["read in the workflow"] += measure(
                True, args.calls, size, args.batches, read_where_run=False
            )
            if not args.against:
                rounds["normalized"] += measure(
                    True, args.calls, size, args.batches, activity_ms=activity_ms
                )
                continue
            # In turn, so neither variant always runs first.
            pair = [("normalized", here), (f"normalized @{args.against}", other)]
            for name, tree in pair if index % 2 == 0 else reversed(pair):
                rounds[name] += _measure_in(tree, args.calls, size, args.batches)
    count = len(rounds["normalized"])
    print(f"one batch's guard step: {args.calls} calls of {args.kb} KB, {count} batches each")
    print(f"{'variant':<24} {'median ms':>10} {'p90 ms':>8}")
    for name, values in rounds.items():
        figures[name] = {"median_ms": statistics.median(values), "p90_ms": percentile(values, 0.9)}
        print(f"{name:<24} {figures[name]['median_ms']:>10.2f} {figures[name]['p90_ms']:>8.2f}")
    for baseline in list(rounds)[1:]:
        ratio = figures["normalized"]["median_ms"] / figures[baseline]["median_ms"]
        print(f"normalized / {baseline} (median): {ratio:.2f}x")
    extra: dict[str, object] = {"calls": args.calls, "kb": args.kb}
    if activity_ms:  # measured in this process (not with --against)
        reading = {"median_us_per_call": statistics.median(activity_ms) * 1000}
        print(f"read in the tool activity instead: {reading['median_us_per_call']:.0f} µs a call")
        extra["tool_activity_reading"] = reading
    if args.json:
        args.json.write_text(json.dumps(figures | extra, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
