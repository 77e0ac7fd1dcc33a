"""The cost of durability: Seawall against a bare workflow and a plain asyncio loop.

    python bench/overhead.py [--parts levels,long,replay,memory] [--scale S]
                             [--long-batches N] [--replay-batches N --replay-calls N]
                             [--profile auto|always|never] [--memory-prompts N] [--json PATH]

One scripted workload (``--batches`` batches of ``--calls`` fixture calls each, one of them
failing with varied arguments so the guard tracks a streak that never reaches the
reminder, then the model's answer) runs four ways on one embedded Temporal dev server
(payloads past 64 KiB in the filesystem store, the embedded default):

  (a) Seawall's ``PromptWorkflow`` with the guard ``off``,
  (b) the same with the guard ``enforce``,
  (c) a plain in-process asyncio loop of the same shape, no Temporal (``bench/bare.py``),
  (d) a bare Temporal workflow of the same shape with no Seawall logic (``bench/bare.py``).

Parts (``--parts``, all by default; each prints its figures beside its baseline):

- ``levels``: at concurrency 1, 10 and 100 prompts in flight, the variants of a level in
  interleaved rounds so a change in the machine's load hits them alike: median (and p90)
  per-batch latency — the time from one model step starting to the next, i.e. model step,
  the batch's tool steps, and all the orchestration in between — prompts per second, CPU
  per prompt of the worker (with the driver) and of the dev server, and the server's state
  transitions and workflow writes per prompt (``bench/server_metrics.py``); the ratios
  b/a, a/d and a/c, and the concurrency-1 latency against the bare workflow's floor
  (target ≤ 1.5×); replay time per 1,000 history events (``Replayer`` over histories of
  the concurrency-10 runs) and history bytes per prompt. When b/a or a/d is worse than
  1.10, a profiling pass (cProfile on the worker's event-loop thread and its
  workflow-task thread) says where the time goes.
- ``long``: a 100-batch prompt (``--long-batches``) through the same harness at
  concurrency 1, beside the bare workflow's 100-batch shape, with its history and stored
  bytes per prompt.
- ``replay``: the replay of one ≥10,000-event prompt history, against the 2 s target,
  beside the bare workflow's.
- ``memory``: worker memory per cached prompt (the RSS growth of a worker subprocess
  holding N prompts paused mid-prompt, divided by N), beside the bare workflow's.

This module runs the parts; the workload, the workers and a timed run are
``bench/overhead_harness.py``, the replays ``bench/overhead_replay.py``, memory and the
profile ``bench/overhead_worker.py``, the tables ``bench/overhead_report.py``. Every count
the script uses is printed; results go to ``bench/results/overhead.json``
(with the commit they came from), which ``bench/capacity.py`` sizes a deployment from.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.converter import ExternalStorage

from bench import overhead_replay
from bench.overhead_harness import (
    FAILING_BATCHES,
    WARMUP_PROMPTS,
    Bench,
    Run,
    TimingInterceptor,
    Workload,
    bare_worker,
    seawall_worker,
    start_server_with_retries,
)
from bench.overhead_replay import (
    OTHER_RUNNERS,
    REPLAY_HISTORIES,
    REPLAY_REPEATS,
    measure_long_replay,
    measure_replay,
    replayer_for,
)
from bench.overhead_report import print_tables
from bench.overhead_worker import measure_memory, profile_notes, profile_variant, serve_worker
from bench.report_runner import git_commit, machine, run_and_report
from bench.server_metrics import free_port, state_transitions
from bench.trusted import bench_client
from seawall.runtime.storage import DEFAULT_THRESHOLD_BYTES, FilesystemStorageDriver

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_JSON = ROOT / "bench" / "results" / "overhead.json"
LEVELS = (1, 10, 100)
# Prompts per variant and level at --scale 1.
PROMPTS_PER_LEVEL = {1: 12, 10: 60, 100: 200}
# Interleaved rounds per level; a round at concurrency 100 needs 100 prompts in flight.
ROUNDS = {1: 4, 10: 4, 100: 2}
MEMORY_PROMPTS = 100  # per step; two steps
PROFILE_PROMPTS = 40
RATIO_LIMIT = 1.10
LONG_BATCHES = 100
LONG_PROMPTS = 3  # per variant, one per interleaved round

# --- latency and throughput ---------------------------------------------------------------


async def measure_levels(
    bench: Bench,
    levels: dict[int, int],
    log: Callable[[str], None],
    warmup: int = WARMUP_PROMPTS,
    rounds_per_level: dict[int, int] = ROUNDS,
) -> dict[int, dict[str, Run]]:
    order = ["a", "b", "d", "c"]
    for variant in order:  # warm the sandbox, the caches and the server's task queues
        if warmup:
            await bench.many(variant, warmup, min(5, warmup))
    results: dict[int, dict[str, Run]] = {}
    for concurrency, prompts in levels.items():
        rounds = rounds_per_level.get(concurrency, 2)
        per_round = max(1, prompts // rounds)
        merged = {v: Run(variant=v, concurrency=concurrency) for v in order}
        for r in range(rounds):
            rotated = order[r % len(order) :] + order[: r % len(order)]
            for variant in rotated:
                merged[variant].merge(await bench.many(variant, per_round, concurrency))
        results[concurrency] = merged
        line = ", ".join(
            f"{v}: {merged[v].summary()['batch_latency_ms_median']:.1f} ms" for v in order
        )
        log(f"  concurrency {concurrency}: {per_round * rounds} prompts per variant ({line})")
    return results


def ratios(level: dict[str, Run]) -> dict[str, dict[str, Any]]:
    s = {v: run.summary() for v, run in level.items()}

    def lat(x: str, y: str) -> float:
        return round(float(s[x]["batch_latency_ms_median"] / s[y]["batch_latency_ms_median"]), 3)

    def thr(x: str, y: str) -> float:  # > 1 when x is slower (fewer prompts per second)
        return round(float(s[y]["prompts_per_second"] / max(s[x]["prompts_per_second"], 1e-9)), 3)

    def per_prompt(key: str, x: str, y: str) -> float:
        return round(float(s[x][key] / max(s[y][key], 1e-9)), 3)

    out: dict[str, dict[str, Any]] = {
        pair: {
            "latency": lat(*pair.split("/")),
            "throughput": thr(*pair.split("/")),
            "cpu": per_prompt("cpu_ms_per_prompt", *pair.split("/")),
        }
        for pair in ("b/a", "a/d", "a/c")
    }
    for pair in ("b/a", "a/d"):  # the server's share; the in-process loop has none
        out[pair]["server_cpu"] = per_prompt("cpu_ms_per_prompt_server", *pair.split("/"))
        x, y = (level[v] for v in pair.split("/"))
        if len(x.rounds) > 1 and len(x.rounds) == len(y.rounds):
            # The inverse-throughput ratio of each round: its range is the run's own noise.
            out[pair]["throughput_by_round"] = [
                round(b.prompts_per_second() / max(a.prompts_per_second(), 1e-9), 3)
                for a, b in zip(x.rounds, y.rounds, strict=True)
            ]
    return out


PARTS = ("levels", "long", "replay", "memory")


def stored_payloads(
    driver: FilesystemStorageDriver, namespace: str, ids: list[str]
) -> dict[str, Any]:
    """Bytes and payloads the store holds for these prompts, per prompt (content-addressed:
    a payload two prompts share counts for each)."""
    wanted = set(ids)
    total_bytes = total_payloads = 0
    for refs in driver.workflow_refs(namespace):
        if refs.workflow_id in wanted:
            digests = refs.digests()
            total_payloads += len(digests)
            total_bytes += sum(
                path.stat().st_size
                for path in (driver.blob_path(d) for d in digests)
                if path.exists()
            )
    prompts = max(1, len(ids))
    return {
        "stored_bytes_per_prompt": round(total_bytes / prompts),
        "stored_payloads_per_prompt": round(total_payloads / prompts, 1),
    }


async def measure_long(
    bench: Bench,
    driver: FilesystemStorageDriver,
    prompts: int,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """The long prompt (``--long-batches``, 100 by default) through the same harness at
    concurrency 1, each variant beside the bare workflow of the same shape."""
    results = (
        await measure_levels(bench, {1: prompts}, log, warmup=0, rounds_per_level={1: prompts})
    )[1]
    histories = {
        v: [await bench.client.get_workflow_handle(wid).fetch_history() for wid in results[v].ids]
        for v in ("a", "b", "d")
    }
    return {
        "workload": {
            "batches_per_prompt": bench.workload.batches,
            "calls_per_batch": bench.workload.calls,
        },
        "variants": [results[v].summary() for v in ("a", "b", "c", "d")],
        "ratios": ratios(results),
        "history": {
            v: {
                "events_per_prompt": round(statistics.mean(len(h.events) for h in hs), 1),
                "state_transitions_per_prompt": round(
                    await state_transitions(bench.client, results[v].ids), 1
                ),
                "history_bytes_per_prompt": round(
                    statistics.mean(sum(e.ByteSize() for e in h.events) for h in hs)
                ),
                **stored_payloads(driver, bench.client.namespace, results[v].ids),
            }
            for v, hs in histories.items()
        },
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:

    log = print
    parts = set(args.parts)
    levels = {c: max(c, round(PROMPTS_PER_LEVEL.get(c, c) * args.scale)) for c in args.levels}
    workload = Workload(batches=args.batches, calls=args.calls)
    report: dict[str, Any] = {
        "machine": machine(),
        "commit": git_commit(),
        "parts": [p for p in PARTS if p in parts],
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "workload": {
            "batches_per_prompt": workload.batches,
            "calls_per_batch": workload.calls,
            "model_steps_per_prompt": workload.batches + 1,
            "failing_calls_per_prompt": min(workload.batches, FAILING_BATCHES),
        },
        "iterations": {
            "prompts_per_level_per_variant": {str(c): n for c, n in levels.items()},
            "rounds_per_level": {str(c): r for c, r in ROUNDS.items()},
            "warmup_prompts_per_variant": WARMUP_PROMPTS,
            "replay_histories": REPLAY_HISTORIES,
            "memory_paused_prompts": 2 * args.memory_prompts,
            "profile_prompts_per_variant": args.profile_prompts,
            "long_prompts_per_variant": args.long_prompts,
        },
    }
    log(
        f"Machine: {report['machine']['cpus']} CPUs ({report['machine']['cpu_model']}), "
        f"load average {report['load_average_before']}; parts: {', '.join(report['parts'])}"
    )
    log(
        f"Workload: {workload.batches} batches x {workload.calls} calls per prompt; prompts per "
        "variant at each concurrency: "
        + ", ".join(f"{c}: {n} in {ROUNDS.get(c, 2)} rounds" for c, n in levels.items())
        + f", interleaved, after {WARMUP_PROMPTS} warm-up prompts each"
    )
    started = time.perf_counter()
    # The embedded default: payloads past 64 KiB in the filesystem store (a long prompt's
    # conversation would otherwise pass Temporal's payload limits), for every variant.
    store = Path(tempfile.mkdtemp(prefix="seawall-bench-payloads-"))
    driver = FilesystemStorageDriver(store)
    storage = ExternalStorage(drivers=[driver], payload_size_threshold=DEFAULT_THRESHOLD_BYTES)
    metrics_port = free_port()
    env = await start_server_with_retries(
        storage=storage, extra_args=["--metrics-port", str(metrics_port)]
    )
    workspace = tempfile.mkdtemp(prefix="seawall-bench-overhead-")
    try:
        # The benchmark's starts are signed (bench/trusted.py), then timed.
        signed = bench_client(env.client).config()
        timing_client = Client(
            **{**signed, "interceptors": [*signed["interceptors"], TimingInterceptor()]}  # type: ignore[arg-type]
        )
        bench = Bench(timing_client, workload, workspace, metrics_port=metrics_port)
        bench.queues = {
            "seawall": f"bench-seawall-{uuid.uuid4().hex[:8]}",
            "d": f"bench-bare-{uuid.uuid4().hex[:8]}",
        }
        async with (
            seawall_worker(timing_client, bench.queues["seawall"]),
            bare_worker(timing_client, bench.queues["d"]),
        ):
            if "levels" in parts:
                log("Latency and throughput:")
                results = await measure_levels(bench, levels, log)
                report["levels"] = [
                    {
                        "concurrency": c,
                        "variants": [results[c][v].summary() for v in ("a", "b", "c", "d")],
                        "ratios": ratios(results[c]),
                    }
                    for c in levels
                ]
                log("Replay:")
                report["replay"] = await measure_replay(
                    bench,
                    {v: results[10 if 10 in results else max(results)][v].ids for v in "abd"},
                    storage,
                )
                worst = max(
                    max(level["ratios"]["b/a"]["latency"], level["ratios"]["a/d"]["latency"])
                    for level in report["levels"]
                )
                if args.profile == "always" or (args.profile == "auto" and worst > RATIO_LIMIT):
                    log(f"Profiling (a worst b/a or a/d ratio of {worst:.2f} > {RATIO_LIMIT}):")
                    report["profile"] = {
                        v: await profile_variant(bench, v, args.profile_prompts)
                        for v in ("a", "b", "d")
                    }
                    report["profile_notes"] = profile_notes(report["profile"])
            if "long" in parts and args.long_prompts > 0:
                log(f"Long prompt ({args.long_batches} batches x {args.calls} calls):")
                long_bench = Bench(
                    timing_client,
                    Workload(batches=args.long_batches, calls=args.calls),
                    workspace,
                    bench.queues,
                    metrics_port,
                )
                report["long"] = await measure_long(long_bench, driver, args.long_prompts, log)
            if "replay" in parts:
                log(
                    f"Replay of a long history ({args.replay_batches} batches x "
                    f"{args.replay_calls} calls):"
                )
                replay_bench = Bench(
                    timing_client,
                    Workload(batches=args.replay_batches, calls=args.replay_calls),
                    workspace,
                    bench.queues,
                    metrics_port,
                )
                report["long_replay"] = await measure_long_replay(
                    replay_bench,
                    lambda v: replayer_for(v, storage),
                    repeats=REPLAY_REPEATS,
                    other_runners={
                        runner: functools.partial(replayer_for, storage=storage, runner=runner)
                        for runner in OTHER_RUNNERS
                    },
                )
        if "memory" in parts and args.memory_prompts > 0:
            log("Worker memory:")
            target = env.client.service_client.config.target_host
            report["memory"] = await measure_memory(
                bench, target, env.client.namespace, args.memory_prompts
            )
    finally:
        await env.shutdown()
        # The stored payloads of a long replay are tens of MB: nothing outlives the run.
        shutil.rmtree(store, ignore_errors=True)
        shutil.rmtree(workspace, ignore_errors=True)
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--parts",
        type=lambda text: [p.strip() for p in text.split(",") if p.strip()],
        default=list(PARTS),
        help=(
            "comma-separated parts to run: levels (latency, throughput, CPU, state "
            "transitions at concurrency 1/10/100, replay per 1,000 events, profile), long "
            "(the 100-batch prompt), replay (a 10,000-event history), memory (per cached "
            "prompt)"
        ),
    )
    parser.add_argument(
        "--levels",
        type=lambda text: [int(x) for x in text.split(",")],
        default=list(LEVELS),
        help="concurrency levels of the levels part, comma-separated",
    )
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the prompt counts")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--calls", type=int, default=4)
    parser.add_argument(
        "--profile",
        choices=["auto", "always", "never"],
        default="auto",
        help="profile when a b/a or a/d ratio is worse than 1.10 (auto)",
    )
    parser.add_argument("--profile-prompts", type=int, default=PROFILE_PROMPTS)
    parser.add_argument(
        "--memory-prompts",
        type=int,
        default=MEMORY_PROMPTS,
        help="paused prompts per step of the memory measurement (0: skip)",
    )
    parser.add_argument("--long-batches", type=int, default=LONG_BATCHES)
    parser.add_argument(
        "--long-prompts", type=int, default=LONG_PROMPTS, help="long prompts per variant"
    )
    parser.add_argument("--replay-batches", type=int, default=overhead_replay.DEFAULT_BATCHES)
    parser.add_argument("--replay-calls", type=int, default=overhead_replay.DEFAULT_CALLS)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--serve-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--namespace", default="default", help=argparse.SUPPRESS)
    parser.add_argument("--task-queue", help=argparse.SUPPRESS)
    parser.add_argument("--kind", choices=["seawall", "bare"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_worker:
        asyncio.run(serve_worker(args.address, args.namespace, args.task_queue, args.kind))
        return 0
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        parser.error(f"--parts: unknown {', '.join(sorted(unknown))}; choose from {PARTS}")

    def render(report: dict[str, Any]) -> None:
        print_tables(report)
        print()
        print(
            f"Load average before {report['load_average_before']}, after "
            f"{report['load_average_after']}; {report['seconds']} s in all"
        )

    return run_and_report(run(args), render, args.json)


if __name__ == "__main__":
    from seawall.runtime.process_exit import run_then_exit

    run_then_exit(main)
