"""Size a production deployment from the measured per-prompt costs.

    python bench/capacity.py [--prompts 1000,10000] [--batch-seconds S]
                             [--long-share F] [--markdown] [--results DIR]

docs/capacity.md explains the plan; this prints its tables, so the plan is regenerated
whenever the benchmarks are (after the perf work lands: ``make bench``, then this). Inputs:

- ``bench/results/overhead.json`` — per prompt of the benchmark workload with the guard
  ``enforce`` (variant b) at concurrency 100: dev-server CPU, state transitions and
  workflow writes (the dev server's metrics), history events by type and bytes, worker
  memory per cached prompt, the replay time of a 10,000-event history;
- ``bench/results/scaling.json`` — worker CPU per prompt measured in worker processes
  (without the benchmark driver) and where throughput stopped growing with workers;
- ``bench/results/long_prompts.json`` — the bytes a long prompt puts in the payload store
  (S3 in production);
- ``bench/results/peers.json`` — Seawall beside pydantic-ai's ``TemporalAgent``, the
  OpenAI Agents SDK on Temporal and the Temporal Agent Harness (``bench/peers.py``), shown
  as a table with ``--markdown``.

Everything else is an *assumption*, listed in :data:`ASSUMPTIONS` with why, printed
beside the figures and changeable by flag: how long a batch takes in production (model and
tool latency, which the benchmark's scripted model does not have), the share of long
prompts, the headroom, and the capacities of the parts the benchmark cannot measure on
one machine (a PostgreSQL primary's write rate, a history shard's serial write rate, a
task-queue partition's dispatch rate, an Elasticsearch node's indexing rate).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
VARIANT = "b"  # Seawall with the guard enforce: what ships
# The concurrency whose per-prompt figures are used: many prompts in flight, as in
# production, without the 100-prompt level's overload of a 2-core machine (timeouts and
# retries there add writes no sized cluster would make). ``--level`` changes it.
LEVEL = 10


@dataclass(frozen=True)
class Assumption:
    value: float
    unit: str
    why: str


ASSUMPTIONS: dict[str, Assumption] = {
    "batch_seconds": Assumption(
        10.0,
        "s",
        "one batch in production: a real model step (several seconds) plus its tools; the "
        "benchmark's scripted model answers at once, so its batches take ~0.1 s",
    ),
    "headroom": Assumption(
        0.5, "", "size every part to run at half its capacity (peaks, failover, replays)"
    ),
    "long_share": Assumption(
        0.1,
        "",
        "share of prompts that are long (past the 64 KiB storage threshold), each storing "
        "what the 100-page gateway prompt of bench/long_prompts.py stored",
    ),
    "db_write_ms": Assumption(
        5.0,
        "ms",
        "latency of one workflow write on PostgreSQL/Cassandra; a shard's writes are serial "
        "(history.shardIOConcurrency defaults to 1), so one shard manages 1000/ms writes/s",
    ),
    "shard_busy_share": Assumption(
        0.05,
        "",
        "keep each shard's serial write path ≤ 5 % busy so shard-lock waits stay negligible",
    ),
    "postgres_writes_per_s": Assumption(
        5000.0,
        "writes/s",
        "workflow writes one PostgreSQL primary (16 vCPU, NVMe) sustains; replace with your "
        "own measurement (persistence_requests{operation=UpdateWorkflowExecution})",
    ),
    "cassandra_writes_per_node_s": Assumption(
        2000.0,
        "writes/s",
        "Temporal workflow writes (lightweight transactions) one Cassandra node sustains, "
        "replication factor 3",
    ),
    "partition_tasks_per_s": Assumption(
        100.0,
        "tasks/s",
        "tasks one task-queue partition dispatches (one matching host owns a partition; "
        "partitions are not autoscaled); a forum user recalls Temporal advising about 15 "
        "partitions for 1,000 tasks/s, so ~70 - measure TasksDispatchRate and backlog",
    ),
    "es_docs_per_node_s": Assumption(
        2000.0, "updates/s", "visibility updates one Elasticsearch data node indexes"
    ),
    "worker_cores": Assumption(
        1.0,
        "core",
        "one Python worker process uses about one core (the GIL); run several per host",
    ),
    "worker_memory_mib": Assumption(
        2048.0, "MiB", "memory budget of one worker process (its container limit)"
    ),
    "max_cached_workflows": Assumption(
        1000.0, "prompts", "the worker's sticky cache (SEAWALL_MAX_CACHED_WORKFLOWS default)"
    ),
}


@dataclass
class Costs:
    """Per-prompt costs, measured, with where each came from."""

    batches: int
    server_cpu_ms: float
    worker_cpu_ms: float
    state_transitions: float
    workflow_writes: float
    persistence_requests: float
    history_events: float
    history_bytes: float
    workflow_tasks: float
    activity_tasks: float
    visibility_updates: float
    kib_per_cached_prompt: float
    worker_base_mib: float
    long_stored_bytes: float
    long_stored_payloads: float
    replay_10k_seconds: float | None
    sources: dict[str, str] = field(default_factory=dict)


def load(name: str, results: Path) -> dict[str, Any]:
    path = results / name
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def measured_costs(results: Path, level_wanted: int = LEVEL) -> Costs:
    overhead = load("overhead.json", results)
    scaling = load("scaling.json", results)
    long_prompts = load("long_prompts.json", results)
    if not overhead.get("levels"):
        raise SystemExit(f"{results / 'overhead.json'} has no levels: run bench/overhead.py")
    level = next(
        (lv for lv in overhead["levels"] if lv["concurrency"] == level_wanted),
        overhead["levels"][-1],
    )
    row = next(v for v in level["variants"] if v["variant"] == VARIANT)
    replay = overhead.get("replay", {}).get(VARIANT, {})
    kinds = replay.get("event_types_per_history", {})
    memory = overhead.get("memory", {}).get("seawall", {})
    worker_cpu = row["cpu_ms_per_prompt_worker"]
    worker_source = "overhead.json (worker + benchmark driver, one process)"
    scaling_rows = scaling.get("summary") or []
    if scaling_rows:
        worker_cpu = scaling_rows[0]["worker_cpu_ms_per_prompt"]
        worker_source = "scaling.json (worker processes alone, 1 worker)"
    gateway_long = [x for x in long_prompts.get("long", []) if x["leg"] == "gateway"]
    longest = max(gateway_long, key=lambda x: x["pages"]) if gateway_long else {}
    long_replay = overhead.get("long_replay", {}).get("variants", {}).get(VARIANT)
    return Costs(
        batches=overhead["workload"]["batches_per_prompt"],
        server_cpu_ms=row["cpu_ms_per_prompt_server"],
        worker_cpu_ms=worker_cpu,
        state_transitions=replay.get("state_transitions_per_prompt", 0.0),
        workflow_writes=row.get("workflow_writes_per_prompt", 0.0),
        persistence_requests=row.get("persistence_requests_per_prompt", 0.0),
        history_events=replay.get("events_per_history", 0.0),
        history_bytes=replay.get("history_bytes_per_history", 0.0),
        workflow_tasks=kinds.get("WORKFLOW_TASK_SCHEDULED", 0.0),
        activity_tasks=kinds.get("ACTIVITY_TASK_SCHEDULED", 0.0),
        # One visibility record written at start and at close, plus one per upsert.
        visibility_updates=2 + kinds.get("UPSERT_WORKFLOW_SEARCH_ATTRIBUTES", 0.0),
        kib_per_cached_prompt=memory.get("kib_per_prompt", 0.0),
        worker_base_mib=memory.get("rss_kib", [0])[0] / 1024,
        long_stored_bytes=longest.get("stored_bytes", 0),
        long_stored_payloads=longest.get("stored_payloads", 0),
        replay_10k_seconds=long_replay["replay_seconds_median"] if long_replay else None,
        sources={
            "overhead": f"commit {overhead.get('commit', 'unknown')}",
            "scaling": f"commit {scaling.get('commit', 'unknown')}" if scaling else "not run",
            "worker_cpu": worker_source,
            "long": f"{longest.get('pages', 0)}-page gateway prompt" if longest else "not run",
        },
    )


def figures_from(results: Path) -> str:
    """Which commit, machine and load the figures came from."""
    overhead = load("overhead.json", results)
    scaling = load("scaling.json", results)
    m = overhead.get("machine", {})
    parts = [
        f"bench/results/overhead.json: commit {overhead.get('commit', 'unknown')}, "
        f"{m.get('cpus')} vCPUs ({m.get('cpu_model')}), Python {m.get('python')}, temporalio "
        f"{m.get('temporalio')}, load average {overhead.get('load_average_before')} before, "
        f"{overhead.get('load_average_after')} after, {overhead.get('seconds')} s"
    ]
    for run in overhead.get("runs", []):  # figures merged from several partial runs
        parts.append(
            f"`{run['command']}` (commit {run['commit']}, load average "
            f"{run['load_average_before']} before, {run['load_average_after']} after, "
            f"{run['seconds']} s)"
        )
    if scaling:
        parts.append(
            f"bench/results/scaling.json: commit {scaling.get('commit', 'unknown')}, load "
            f"average {scaling.get('load_average_before')} before, "
            f"{scaling.get('load_average_after')} after"
        )
    return "; ".join(parts)


def cost_rows(results: Path, level_wanted: int = LEVEL) -> list[tuple[str, str, str, str]]:
    """Per-prompt costs, Seawall (guard enforce) beside the bare workflow, and the ratio."""
    overhead = load("overhead.json", results)
    rows: list[tuple[str, str, str, str]] = []

    def add(what: str, seawall: float | None, bare: float | None, fmt: str = "{:,.1f}") -> None:
        if seawall is None or bare is None:
            return
        ratio = f"{seawall / bare:.2f}" if bare else "-"
        rows.append((what, fmt.format(seawall), fmt.format(bare), ratio))

    for level in overhead.get("levels", []):
        by = {v["variant"]: v for v in level["variants"]}
        c = level["concurrency"]
        add(
            f"per-batch latency, median ms (concurrency {c})",
            by["b"]["batch_latency_ms_median"],
            by["d"]["batch_latency_ms_median"],
        )
    level = next(
        (lv for lv in overhead.get("levels", []) if lv["concurrency"] == level_wanted), None
    )
    if level:
        by = {v["variant"]: v for v in level["variants"]}
        for key, what in (
            ("cpu_ms_per_prompt_server", "server CPU ms"),
            ("cpu_ms_per_prompt_worker", "worker + driver CPU ms"),
            ("workflow_writes_per_prompt", "workflow writes"),
            ("persistence_requests_per_prompt", "persistence requests"),
        ):
            add(f"{what} (concurrency {level_wanted})", by["b"].get(key), by["d"].get(key))
    replay = overhead.get("replay", {})
    if "b" in replay and "d" in replay:
        for key, what, fmt in (
            ("state_transitions_per_prompt", "state transitions", "{:,.1f}"),
            ("events_per_history", "history events", "{:,.1f}"),
            ("history_bytes_per_history", "history bytes", "{:,.0f}"),
            ("ms_per_1000_events", "replay ms per 1,000 events", "{:,.0f}"),
        ):
            add(what, replay["b"].get(key), replay["d"].get(key), fmt)
    memory = overhead.get("memory", {})
    if memory:
        add(
            "worker memory per cached prompt, KiB",
            memory.get("seawall", {}).get("kib_per_prompt"),
            memory.get("bare", {}).get("kib_per_prompt"),
            "{:,.0f}",
        )
    long = overhead.get("long")
    if long:
        batches = long["workload"]["batches_per_prompt"]
        by = {v["variant"]: v for v in long["variants"]}
        add(
            f"{batches}-batch prompt: per-batch latency, median ms",
            by["b"]["batch_latency_ms_median"],
            by["d"]["batch_latency_ms_median"],
        )
        h = long["history"]
        for key, what, fmt in (
            ("events_per_prompt", "history events", "{:,.0f}"),
            ("state_transitions_per_prompt", "state transitions", "{:,.0f}"),
            ("history_bytes_per_prompt", "history bytes", "{:,.0f}"),
            ("stored_bytes_per_prompt", "stored bytes", "{:,.0f}"),
        ):
            add(f"{batches}-batch prompt: {what}", h["b"].get(key), h["d"].get(key), fmt)
    replay_long = overhead.get("long_replay", {}).get("variants", {})
    if "b" in replay_long and "d" in replay_long:
        b, d = replay_long["b"], replay_long["d"]
        rows.append(
            (
                "replay of one long history, s (target < 2 s at 10,000 events)",
                f"{b['replay_seconds_median']:.2f} ({b['events']:,} events)",
                f"{d['replay_seconds_median']:.2f} ({d['events']:,} events)",
                f"{b['replay_seconds_median'] / d['replay_seconds_median']:.2f}",
            )
        )
    return rows


# The peer benchmark's figures (bench/peers.py) shown beside each other, lower better except
# prompts per second.
PEER_FIGURES = (
    ("batch_latency_ms_median", "per-batch latency, median ms", "{:,.1f}"),
    ("batch_latency_ms_p95", "per-batch latency, p95 ms", "{:,.1f}"),
    ("prompts_per_second", "prompts per second", "{:,.2f}"),
    ("history_events_per_prompt", "history events", "{:,.1f}"),
    ("payload_bytes_per_prompt", "payload bytes", "{:,.0f}"),
    ("worker_cpu_ms_per_prompt", "worker CPU ms", "{:,.1f}"),
    ("worker_peak_rss_mib", "worker peak RSS, MiB", "{:,.1f}"),
    ("server_handoffs_per_prompt", "server hand-offs to matching", "{:,.1f}"),
    ("server_call_handoffs_per_prompt", "of them calls not started eagerly", "{:,.1f}"),
    ("server_handoff_wait_ms_mean", "their wait for the transfer-queue read, mean ms", "{:,.1f}"),
)
# bench/peers.py's three runs: the dev server as it ships; with its history service's
# transfer-queue reads unthrottled (--reader-polls-per-second), which leaves the harnesses'
# own time at one prompt in flight; and the peers' workers given Seawall's eager calls
# (--peers-eager-calls), which shows what of the difference is that setting
# (docs/capacity.md).
PEER_RESULTS = ("peers.json", "peers-unthrottled.json", "peers-eager.json")


def peer_table(results: Path, name: str = PEER_RESULTS[0]) -> list[str]:
    """Seawall beside the durable agents a Temporal user would pick instead, from one of
    ``bench/peers.py``'s results (:data:`PEER_RESULTS`), as markdown; nothing when not run."""
    report = load(name, results)
    if not report.get("levels"):
        return []
    keys = list(report["peers"])
    w = report["workload"]
    config = report.get("server_config") or {}
    server = (
        "dev server with " + ", ".join(f"`{k}={v}`" for k, v in config.items())
        if config
        else "dev server as it ships"
    )
    eager = report.get("eager_calls") or {}
    if eager:
        server += "; calls of a workflow task started eagerly: " + ", ".join(
            f"{k} {v}" for k, v in eager.items()
        )
    out = [
        f"`bench/peers.py` (commit {report.get('commit', 'unknown')}, load average "
        f"{report.get('load_average_before')} before, {report.get('load_average_after')} "
        f"after; {w['batches_per_prompt']} batches of {w['calls_per_batch']} calls, tool "
        f"latency {w['tool_latency_seconds']} s; {server}; "
        + ", ".join(f"{k} {v}" for k, v in report.get("versions", {}).items())
        + "):",
        "",
        "| per prompt | concurrency | " + " | ".join(report["peers"][k] for k in keys) + " |",
        "|---|---|" + "---|" * len(keys),
    ]
    for key, title, fmt in PEER_FIGURES:
        for concurrency in sorted({r["concurrency"] for r in report["levels"]}):
            rows = {r["peer"]: r for r in report["levels"] if r["concurrency"] == concurrency}
            values = [rows.get(k, {}).get(key) for k in keys]
            cells = ["-" if v is None else fmt.format(v) for v in values]
            out.append(f"| {title} | {concurrency} | " + " | ".join(cells) + " |")
    segments = [name for name in report["levels"][0].get("batch_segments_ms_median", {})]
    for name in segments:
        for concurrency in sorted({r["concurrency"] for r in report["levels"]}):
            rows = {r["peer"]: r for r in report["levels"] if r["concurrency"] == concurrency}
            values = [rows.get(k, {}).get("batch_segments_ms_median", {}).get(name) for k in keys]
            cells = ["-" if v is None else f"{v:,.1f}" for v in values]
            out.append(
                f'| a batch\'s step "{name}", median ms | {concurrency} | '
                + " | ".join(cells)
                + " |"
            )
    replays = {r["peer"]: r for r in report.get("replay", []) if "error" not in r}
    if replays:
        cells = [
            f"{replays[k]['seconds_median']:.2f} ({replays[k]['events']:,} events)"
            if k in replays
            else "-"
            for k in keys
        ]
        batches = next(iter(replays.values()))["batches"]
        out.append(f"| replay of a {batches}-batch history, s | - | " + " | ".join(cells) + " |")
    compared = report.get("against_best_peer") or []
    if compared:
        out += ["", "| Seawall over the best peer (target ≤ 1.00) | concurrency | ratio |"]
        out.append("|---|---|---|")
        for row in compared:
            out.append(
                f"| {row['title']} (best: {row['best_peer']}) | {row['concurrency']} | "
                f"{row['ratio']:.2f} |"
            )
    return out


def power_of_two(n: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(n, 1))))


@dataclass
class Line:
    what: str
    arithmetic: str
    value: str


def size(concurrent: int, c: Costs, a: dict[str, float]) -> tuple[list[Line], str]:
    """The sizing of one deployment for ``concurrent`` prompts in flight, and the part that
    saturates first as load grows."""
    head = a["headroom"]
    prompt_seconds = c.batches * a["batch_seconds"]
    rate = concurrent / prompt_seconds
    lines = [
        Line(
            "prompts completed per second",
            f"{concurrent:,} in flight / ({c.batches} batches x {a['batch_seconds']:g} s)",
            f"{rate:,.1f}/s",
        )
    ]
    transitions = rate * c.state_transitions
    writes = rate * c.workflow_writes
    lines += [
        Line(
            "state transitions",
            f"{rate:,.1f}/s x {c.state_transitions:g} per prompt",
            f"{transitions:,.0f}/s",
        ),
        Line(
            "persistence writes (workflow updates)",
            f"{rate:,.1f}/s x {c.workflow_writes:g} per prompt",
            f"{writes:,.0f}/s",
        ),
        Line(
            "persistence requests (all)",
            f"{rate:,.1f}/s x {c.persistence_requests:g} per prompt",
            f"{rate * c.persistence_requests:,.0f}/s",
        ),
    ]
    per_shard = 1000 / a["db_write_ms"] * a["shard_busy_share"]
    shards_needed = writes / per_shard
    shards = max(512, power_of_two(shards_needed * 4))  # fixed for life: room for 4x growth
    lines.append(
        Line(
            "history shards",
            f"{writes:,.0f} writes/s / ({1000 / a['db_write_ms']:g}/s per shard x "
            f"{a['shard_busy_share']:g}) = {shards_needed:,.1f}; x4 growth, power of two, "
            "at least 512",
            f"{shards:,}",
        )
    )
    pg_share = writes / a["postgres_writes_per_s"]
    cassandra_nodes = max(3, math.ceil(writes / (a["cassandra_writes_per_node_s"] * head)))
    lines += [
        Line(
            "PostgreSQL primary load",
            f"{writes:,.0f} / {a['postgres_writes_per_s']:,.0f} writes/s",
            f"{pg_share:.0%}" + (" (over the headroom: use Cassandra)" if pg_share > head else ""),
        ),
        Line(
            "or Cassandra nodes (RF 3)",
            f"{writes:,.0f} / ({a['cassandra_writes_per_node_s']:,.0f} x {head:g}), at least 3",
            f"{cassandra_nodes}",
        ),
    ]
    history_mb_s = rate * c.history_bytes / 1e6
    lines.append(
        Line(
            "history written",
            f"{rate:,.1f}/s x {c.history_bytes / 1e3:,.1f} kB",
            f"{history_mb_s:,.2f} MB/s ({history_mb_s * 86400 / 1e3:,.1f} GB/day before retention)",
        )
    )
    visibility = rate * c.visibility_updates
    es_nodes = max(3, math.ceil(visibility / (a["es_docs_per_node_s"] * head)))
    lines.append(
        Line(
            "Elasticsearch visibility updates",
            f"{rate:,.1f}/s x {c.visibility_updates:g} (start, close, search-attribute upserts)",
            f"{visibility:,.0f}/s -> {es_nodes} data nodes (at least 3)",
        )
    )
    # After its first workflow task a prompt's workflow tasks go to its worker's sticky
    # queue (one per worker); its activity tasks all go through the shared, partitioned one.
    tasks = rate * (1 + c.activity_tasks)
    partitions = max(4, math.ceil(tasks / (a["partition_tasks_per_s"] * head)))
    lines.append(
        Line(
            "task-queue partitions",
            f"{rate:,.1f}/s x (1 workflow + {c.activity_tasks:g} activity tasks) = "
            f"{tasks:,.0f} tasks/s / ({a['partition_tasks_per_s']:,.0f} x {head:g}); "
            "default 4",
            f"{partitions}",
        )
    )
    server_cores = rate * c.server_cpu_ms / 1000 / head
    lines.append(
        Line(
            "Temporal server CPU (dev-server measure)",
            f"{rate:,.1f}/s x {c.server_cpu_ms:g} ms / {head:g}",
            f"{server_cores:,.1f} cores",
        )
    )
    worker_cores = rate * c.worker_cpu_ms / 1000 / head
    by_cpu = math.ceil(worker_cores / a["worker_cores"])
    memory_mib = concurrent * c.kib_per_cached_prompt / 1024
    per_worker_prompts = min(
        a["max_cached_workflows"],
        (a["worker_memory_mib"] * head - c.worker_base_mib)
        * 1024
        / max(c.kib_per_cached_prompt, 1),
    )
    by_memory = math.ceil(concurrent / per_worker_prompts)
    workers = max(2, by_cpu, by_memory)
    lines += [
        Line(
            "worker CPU",
            f"{rate:,.1f}/s x {c.worker_cpu_ms:g} ms / {head:g}",
            f"{worker_cores:,.1f} cores -> {by_cpu} processes",
        ),
        Line(
            "worker memory (every prompt cached)",
            f"{concurrent:,} x {c.kib_per_cached_prompt:g} KiB; a worker holds "
            f"min({a['max_cached_workflows']:g}, ({a['worker_memory_mib']:g} MiB x {head:g} - "
            f"{c.worker_base_mib:.0f} MiB base) / {c.kib_per_cached_prompt:g} KiB)",
            f"{memory_mib:,.0f} MiB -> {by_memory} processes",
        ),
        Line("worker processes", f"max(2, {by_cpu}, {by_memory})", f"{workers}"),
    ]
    long_rate = rate * a["long_share"]
    lines.append(
        Line(
            "S3 payload writes",
            f"{rate:,.1f}/s x {a['long_share']:g} long x {c.long_stored_bytes / 1e6:,.1f} MB "
            f"in {c.long_stored_payloads:g} objects",
            f"{long_rate * c.long_stored_bytes / 1e6:,.1f} MB/s, "
            f"{long_rate * c.long_stored_payloads:,.0f} PUT/s",
        )
    )
    # The first bottleneck: the part whose load reaches its capacity at the lowest
    # multiple of this load (a fixed shard count is only fixed in count, not in load).
    limits = {
        "PostgreSQL writes on one primary": a["postgres_writes_per_s"] / max(writes, 1e-9),
        "one task-queue partition set (default 4)": 4
        * a["partition_tasks_per_s"]
        / max(tasks, 1e-9),
        f"{shards:,} history shards' serial writes": shards
        * 1000
        / a["db_write_ms"]
        / max(writes, 1e-9),
        "Elasticsearch (3 data nodes)": 3 * a["es_docs_per_node_s"] / max(visibility, 1e-9),
    }
    ranked = sorted(limits.items(), key=lambda kv: kv[1])
    first, at = ranked[0]
    then = ", ".join(f"{k} at {v:,.1f}x" for k, v in ranked[1:])
    verdict = (
        f"first bottleneck: {first}, saturated at {at:,.2f}x this load (then {then}); "
        "workers, history/matching hosts, Cassandra and Elasticsearch nodes scale out"
    )
    return lines, verdict


def render(
    concurrencies: list[int],
    c: Costs,
    a: dict[str, float],
    markdown: bool,
    rows: list[tuple[str, str, str, str]] | None = None,
    source: str = "",
    level: int = LEVEL,
    results: Path | None = None,
) -> str:
    out: list[str] = []
    put = out.append
    if source:
        put(f"Figures from {source}.")
        put("")
    if rows:
        if markdown:
            put("| per prompt | Seawall (guard enforce) | bare workflow | ratio |")
            put("|---|---|---|---|")
            for row in rows:
                put("| " + " | ".join(row) + " |")
        else:
            width = max(len(r[0]) for r in rows)
            put(f"  {'per prompt':<{width}}  {'Seawall (enforce)':>22} {'bare workflow':>22} ratio")
            for what, seawall, bare, ratio in rows:
                put(f"  {what:<{width}}  {seawall:>22} {bare:>22} {ratio:>5}")
        put("")
    put(
        "Measured per prompt (guard enforce, concurrency "
        f"{level}; {c.batches} batches): server CPU {c.server_cpu_ms:g} ms, worker CPU "
        f"{c.worker_cpu_ms:g} ms, {c.state_transitions:g} state transitions, "
        f"{c.workflow_writes:g} workflow writes, {c.history_events:g} history events "
        f"({c.history_bytes / 1e3:,.1f} kB), {c.kib_per_cached_prompt:g} KiB per cached "
        f"prompt; a long prompt stores {c.long_stored_bytes / 1e6:,.1f} MB"
        + (
            f"; a 10,000-event history replays in {c.replay_10k_seconds:g} s"
            if c.replay_10k_seconds is not None
            else ""
        )
    )
    put("Sources: " + "; ".join(f"{k}: {v}" for k, v in c.sources.items()))
    put("")
    for concurrent in concurrencies:
        lines, verdict = size(concurrent, c, a)
        if markdown:
            put(f"#### {concurrent:,} concurrent prompts")
            put("")
            put("| quantity | arithmetic | result |")
            put("|---|---|---|")
            for line in lines:
                put(f"| {line.what} | {line.arithmetic} | {line.value} |")
            put("")
            put(f"**{verdict[0].upper() + verdict[1:]}**")
        else:
            put(f"== {concurrent:,} concurrent prompts ==")
            width = max(len(line.what) for line in lines)
            for line in lines:
                put(f"  {line.what:<{width}}  {line.value:<36}  = {line.arithmetic}")
            put(f"  {verdict}")
        put("")
    peers = [peer_table(results, name) for name in PEER_RESULTS] if results is not None else []
    if any(peers) and markdown:
        put("#### Against the durable agents on Temporal")
        put("")
        for table in (t for t in peers if t):
            out.extend(table)
            put("")
    put("Assumptions (flags change them):")
    for name, assumption in ASSUMPTIONS.items():
        put(
            f"{'- ' if markdown else '  '}`{name}` = {a[name]:g} {assumption.unit}: "
            f"{assumption.why}"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--prompts",
        type=lambda text: [int(x) for x in text.split(",")],
        default=[1000, 10000],
        help="concurrent prompts to size for, comma-separated",
    )
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument(
        "--level", type=int, default=LEVEL, help="the concurrency whose per-prompt costs to use"
    )
    parser.add_argument("--markdown", action="store_true", help="tables for docs/capacity.md")
    for name, assumption in ASSUMPTIONS.items():
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            type=float,
            default=assumption.value,
            help=f"{assumption.unit}: {assumption.why}".replace("%", "%%"),
        )
    args = parser.parse_args(argv)
    assumed = {name: getattr(args, name) for name in ASSUMPTIONS}
    print(
        render(
            args.prompts,
            measured_costs(args.results, args.level),
            assumed,
            args.markdown,
            cost_rows(args.results, args.level),
            figures_from(args.results),
            args.level,
            args.results,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
