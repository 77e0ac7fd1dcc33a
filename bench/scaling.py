"""Throughput against worker count: where adding workers stops helping.

    python bench/scaling.py [--workers 1,2,3,4] [--prompts N] [--concurrency C]
                            [--rounds R] [--json PATH]

docs/capacity.md sizes a production deployment from per-prompt costs; this shows the shape
the sizing assumes, on this machine. One embedded dev server; for each worker count K, K
worker processes (``bench/peers.py --serve-worker``, Seawall's worker as it ships) share one
task queue, and a fixed offered load — ``--prompts`` prompts of the peer benchmark's Seawall
prompt (5 batches of 4 calls, guard enforce, ``bench/peer_seawall.py``), ``--concurrency``
in flight — runs through them. Worker counts
alternate over ``--rounds`` rounds (1,2,3,4 then 4,3,2,1) so a change in the machine's
load hits them alike.

Reported per worker count: prompts per second, and the CPU each party used (the dev
server, the workers together, the driver) as cores busy during the run, beside the
machine's idle share (``/proc/stat``: other jobs on a shared machine show up there). On a
2-core machine the dev server and the workers compete for the same cores, so throughput
plateaus once the cores are busy; the report says which party holds them. Results go to
``bench/results/scaling.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.peer_seawall import Workload
from bench.peers import PEERS, Driver, WorkerConfig, WorkerProcess
from bench.report_runner import load_average, run_and_report
from bench.server_metrics import free_port, server_cpu_seconds, settled_counters
from bench.trusted import bench_client

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_JSON = ROOT / "bench" / "results" / "scaling.json"
PLATEAU = 1.10  # a worker more that adds less than 10 % throughput: the plateau


def machine_idle_jiffies() -> tuple[int, int]:
    """(idle, total) jiffies of the whole machine so far, from ``/proc/stat``."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return idle, sum(fields)


async def measure(
    driver: Driver,
    address: str,
    namespace: str,
    workers: int,
    prompts: int,
    concurrency: int,
    metrics_port: int,
) -> dict[str, Any]:
    """One worker count under the fixed offered load."""
    queue = f"bench-scale-{workers}-{uuid.uuid4().hex[:8]}"
    workload = Workload()
    # Seawall's worker as it ships, its tools without latency: the workload's own.
    config = WorkerConfig(
        peer="seawall",
        address=address,
        namespace=namespace,
        task_queue=queue,
        calls=workload.calls,
        tool_latency=0.0,
    )
    driver.queue = queue
    pool: list[WorkerProcess] = []
    try:
        for _ in range(workers):  # started one by one: a failed start stops the others
            pool.append(await WorkerProcess.start(config))
        # Every worker loads and warms.
        await driver.many(workload.batches, workload.calls, 4 * workers, 2 * workers)
        counters0 = await settled_counters(metrics_port)  # first: it waits
        server0, driver0 = server_cpu_seconds(), time.process_time()
        workers0 = sum(w.cpu_seconds() for w in pool)
        idle0, total0 = machine_idle_jiffies()
        started = time.perf_counter()
        await driver.many(workload.batches, workload.calls, prompts, concurrency)
        wall = time.perf_counter() - started
        idle1, total1 = machine_idle_jiffies()
        server = server_cpu_seconds() - server0
        worker_cpu = sum(w.cpu_seconds() for w in pool) - workers0
        driver_cpu = time.process_time() - driver0
        counters = await settled_counters(metrics_port) - counters0  # after: it waits
    finally:
        for worker in pool:
            await worker.stop()
    cpus = os.cpu_count() or 1
    return {
        "workers": workers,
        "prompts": prompts,
        "wall_seconds": round(wall, 2),
        "prompts_per_second": round(prompts / wall, 2),
        "cores_busy": {
            "server": round(server / wall, 2),
            "workers": round(worker_cpu / wall, 2),
            "driver": round(driver_cpu / wall, 2),
        },
        "machine_idle_share": round((idle1 - idle0) / max(1, total1 - total0), 3),
        "cores": cpus,
        "server_cpu_ms_per_prompt": round(server / prompts * 1000, 1),
        "worker_cpu_ms_per_prompt": round(worker_cpu / prompts * 1000, 1),
        "workflow_writes_per_prompt": round(counters.workflow_writes / prompts, 1),
    }


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Median figures per worker count over the rounds, with the gain over one worker less."""
    by_count: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_count.setdefault(row["workers"], []).append(row)
    out = []
    previous = None
    for count in sorted(by_count):
        runs = by_count[count]

        def median(key: str, sub: str | None = None, runs: list[dict[str, Any]] = runs) -> float:
            return round(float(statistics.median(r[key][sub] if sub else r[key] for r in runs)), 2)

        throughput = median("prompts_per_second")
        out.append(
            {
                "workers": count,
                "rounds": len(runs),
                "prompts_per_second": throughput,
                "gain_over_one_fewer": round(throughput / previous, 2) if previous else None,
                "cores_busy_server": median("cores_busy", "server"),
                "cores_busy_workers": median("cores_busy", "workers"),
                "cores_busy_driver": median("cores_busy", "driver"),
                "machine_idle_share": median("machine_idle_share"),
                "server_cpu_ms_per_prompt": median("server_cpu_ms_per_prompt"),
                "worker_cpu_ms_per_prompt": median("worker_cpu_ms_per_prompt"),
            }
        )
        previous = throughput
    return out


def verdict(summary: list[dict[str, Any]], cores: int) -> str:
    """Where throughput stopped growing, and which party held the cores then."""
    plateau = next(
        (row for row in summary[1:] if (row["gain_over_one_fewer"] or 0) < PLATEAU), None
    )
    if plateau is None:
        last = summary[-1]
        return (
            f"throughput still grew at {last['workers']} workers "
            f"({last['gain_over_one_fewer']}x over one fewer)"
        )
    busy = (
        plateau["cores_busy_server"] + plateau["cores_busy_workers"] + plateau["cores_busy_driver"]
    )
    holder = (
        "the dev server"
        if plateau["cores_busy_server"] >= plateau["cores_busy_workers"]
        else "the workers"
    )
    return (
        f"plateau from {plateau['workers'] - 1} to {plateau['workers']} workers "
        f"({plateau['gain_over_one_fewer']}x): this run used {busy:.2f} of {cores} cores "
        f"(machine idle {plateau['machine_idle_share']:.0%}, the rest other jobs), the largest "
        f"share {holder} ({plateau['cores_busy_server']:.2f} cores server, "
        f"{plateau['cores_busy_workers']:.2f} workers)"
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from seawall.runtime.devserver import start_dev_server

    counts = args.workers
    order: list[int] = []
    for r in range(args.rounds):
        order.extend(counts if r % 2 == 0 else list(reversed(counts)))
    report: dict[str, Any] = {
        "offered_load": {
            "prompts": args.prompts,
            "concurrency": args.concurrency,
            "batches_per_prompt": Workload().batches,
            "calls_per_batch": Workload().calls,
            "guard": "enforce",
        },
        "order": order,
    }
    print(
        f"Offered load: {args.prompts} prompts, {args.concurrency} in flight; worker counts in "
        f"order {order}; load average {load_average()}",
        flush=True,
    )
    port = free_port()
    rows = []
    with tempfile.TemporaryDirectory(prefix="seawall-bench-scaling-") as workspace:
        async with await start_dev_server(extra_args=["--metrics-port", str(port)]) as env:
            address = env.client.service_client.config.target_host
            driver = Driver(PEERS["seawall"], bench_client(env.client), "", workspace)
            for count in order:
                row = await measure(
                    driver,
                    address,
                    env.client.namespace,
                    count,
                    args.prompts,
                    args.concurrency,
                    port,
                )
                rows.append(row)
                busy = row["cores_busy"]
                print(
                    f"  {count} worker(s): {row['prompts_per_second']:.2f} prompts/s; cores busy: "
                    f"server {busy['server']:.2f}, workers {busy['workers']:.2f}, driver "
                    f"{busy['driver']:.2f}; machine idle {row['machine_idle_share']:.0%}",
                    flush=True,
                )
    report["runs"] = rows
    report["summary"] = summarise(rows)
    report["verdict"] = verdict(report["summary"], os.cpu_count() or 1)
    return report


def print_summary(report: dict[str, Any]) -> None:
    print()
    print(
        f"{'workers':>7} {'prompts/s':>9} {'gain':>5}  {'cores busy: server':>18} "
        f"{'workers':>7} {'driver':>6}  {'machine idle':>12}  {'server ms/prompt':>16} "
        f"{'worker ms/prompt':>16}"
    )
    for row in report["summary"]:
        gain = f"{row['gain_over_one_fewer']:.2f}" if row["gain_over_one_fewer"] else "-"
        print(
            f"{row['workers']:>7} {row['prompts_per_second']:>9.2f} {gain:>5}  "
            f"{row['cores_busy_server']:>18.2f} {row['cores_busy_workers']:>7.2f} "
            f"{row['cores_busy_driver']:>6.2f}  {row['machine_idle_share']:>12.0%}  "
            f"{row['server_cpu_ms_per_prompt']:>16.1f} {row['worker_cpu_ms_per_prompt']:>16.1f}"
        )
    print(f"\n{report['verdict']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--workers",
        type=lambda text: [int(x) for x in text.split(",")],
        default=[1, 2, 3, 4],
        help="worker counts, comma-separated",
    )
    parser.add_argument("--prompts", type=int, default=120, help="prompts per worker count")
    parser.add_argument("--concurrency", type=int, default=60, help="prompts in flight")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)

    return run_and_report(run(args), print_summary, args.json)


if __name__ == "__main__":
    from seawall.runtime.process_exit import run_then_exit

    run_then_exit(main)
