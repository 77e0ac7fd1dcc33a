"""Size a production deployment from the measured per-prompt costs.

    python bench/capacity.py [--prompts 1000,10000] [--batch-seconds S]
                             [--long-share F] [--markdown] [--results DIR]

docs/capacity.md explains the plan; this prints its tables, so the plan is regenerated
whenever the benchmarks are (``make bench``, then this). Inputs, each Seawall's worker as it
ships with the guard ``enforce`` on the peer benchmark's prompt (5 batches of 4 calls):

- ``bench/results/scaling.json`` — with one worker process (``bench/scaling.py``): the dev
  server's CPU, its workflow writes (its metrics) and the worker's CPU, per prompt;
- ``bench/results/peers.json`` — Seawall's row at ``--level`` prompts in flight
  (``bench/peers.py``): history events by type and bytes; its row at the most prompts in
  flight: the worker's RSS before and its growth per in-flight prompt (every one is
  cached); the replay time of its long history. With ``--markdown`` its table too, Seawall
  beside the bare loop and the durable agents (and so do ``peers-unthrottled.json`` and
  ``peers-eager.json``);
- ``bench/results/long_prompts.json`` — the bytes a long prompt puts in the payload store
  (S3 in production).

Everything else is an *assumption*, in `capacity.yaml` (:data:`ASSUMPTIONS`) with why, printed
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

from bench import peers_report
from bench.tables import tables

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
# The concurrency whose history figures are used: many prompts in flight, as in production,
# without the 100-prompt level's overload of a 2-core machine (timeouts and retries there add
# workflow tasks no sized cluster would make). ``--level`` changes it.
LEVEL = 10


@dataclass(frozen=True)
class Assumption:
    value: float
    unit: str
    why: str


# The assumptions as data, each with why: capacity.yaml.
ASSUMPTIONS: dict[str, Assumption] = {
    name: Assumption(**fields) for name, fields in tables(__file__)["ASSUMPTIONS"].items()
}


@dataclass
class Costs:
    """Per-prompt costs, measured, with where each came from."""

    batches: int
    server_cpu_ms: float
    worker_cpu_ms: float
    workflow_writes: float
    history_events: float
    history_bytes: float
    workflow_tasks: float
    activity_tasks: float
    visibility_updates: float
    kib_per_cached_prompt: float  # the worker's RSS growth per prompt it holds in flight
    worker_base_mib: float
    long_stored_bytes: float
    long_history_bytes: float
    long_stored_payloads: float
    replay_seconds: float | None  # of one long history of ``replay_events`` events
    replay_events: int = 0
    sources: dict[str, str] = field(default_factory=dict)


def load(name: str, results: Path) -> dict[str, Any]:
    path = results / name
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def measured_costs(results: Path, level_wanted: int = LEVEL) -> Costs:
    scaling = load("scaling.json", results)
    peers = load("peers.json", results)
    long_prompts = load("long_prompts.json", results)
    rows = sorted(
        (r for r in peers.get("levels", []) if r["peer"] == "seawall"),
        key=lambda r: r["concurrency"],
    )
    if not scaling.get("summary") or not rows:
        raise SystemExit(
            f"{results} needs scaling.json and peers.json with Seawall's rows: run "
            "bench/scaling.py and bench/peers.py (make bench)"
        )
    one_worker = scaling["summary"][0]
    writes = [r["workflow_writes_per_prompt"] for r in scaling["runs"] if r["workers"] == 1]
    row = next((r for r in rows if r["concurrency"] == level_wanted), rows[-1])
    memory = rows[-1]
    kinds = row["history_event_types_per_prompt"]
    gateway_long = [x for x in long_prompts.get("long", []) if x["leg"] == "gateway"]
    longest = max(gateway_long, key=lambda x: x["pages"]) if gateway_long else {}
    replay = next(
        (r for r in peers.get("replay", []) if r["peer"] == "seawall" and "error" not in r), None
    )
    return Costs(
        batches=peers["workload"]["batches_per_prompt"],
        server_cpu_ms=one_worker["server_cpu_ms_per_prompt"],
        worker_cpu_ms=one_worker["worker_cpu_ms_per_prompt"],
        workflow_writes=round(sum(writes) / len(writes), 1),
        history_events=row["history_events_per_prompt"],
        history_bytes=row["history_bytes_per_prompt"],
        workflow_tasks=kinds.get("WORKFLOW_TASK_SCHEDULED", 0.0),
        activity_tasks=kinds.get("ACTIVITY_TASK_SCHEDULED", 0.0),
        # One visibility record written at start and at close, plus one per upsert.
        visibility_updates=2 + kinds.get("UPSERT_WORKFLOW_SEARCH_ATTRIBUTES", 0.0),
        kib_per_cached_prompt=memory["worker_rss_growth_kib_per_inflight_prompt"],
        worker_base_mib=memory["worker_rss_mib_before"],
        long_stored_bytes=longest.get("stored_bytes", 0),
        long_history_bytes=longest.get("history_bytes", 0),
        long_stored_payloads=longest.get("stored_payloads", 0),
        replay_seconds=replay["seconds_median"] if replay else None,
        replay_events=replay["events"] if replay else 0,
        sources={
            "server and worker CPU, workflow writes": "scaling.json, 1 worker process",
            "history": f"peers.json, {row['concurrency']} in flight",
            "worker memory": f"peers.json, {memory['concurrency']} in flight",
            "long": f"{longest.get('pages', 0)}-page gateway prompt" if longest else "not run",
        },
    )


def figures_from(results: Path) -> str:
    """Which commit, machine and load the figures came from."""
    parts = []
    for name in ("scaling.json", "peers.json"):
        report = load(name, results)
        m = report.get("machine", {})
        parts.append(
            f"bench/results/{name}: commit {report.get('commit', 'unknown')}, "
            f"{m.get('cpus')} vCPUs ({m.get('cpu_model')}), Python {m.get('python')}, "
            f"temporalio {m.get('temporalio')}, load average "
            f"{report.get('load_average_before')} before, "
            f"{report.get('load_average_after')} after, {report.get('seconds')} s"
        )
    return "; ".join(parts)


# bench/peers.py's three runs in `make bench` (the Makefile's comment says what each shows).
PEER_RESULTS = ("peers.json", "peers-unthrottled.json", "peers-eager.json")


def peer_table(results: Path, name: str = PEER_RESULTS[0]) -> list[str]:
    """One of ``bench/peers.py``'s results (:data:`PEER_RESULTS`) as its markdown table
    (``bench.peers_report.markdown``); nothing when not run."""
    report = load(name, results)
    return peers_report.markdown(report) if report.get("levels") else []


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
    writes = rate * c.workflow_writes
    lines.append(
        Line(
            "persistence writes (workflow updates)",
            f"{rate:,.1f}/s x {c.workflow_writes:g} per prompt",
            f"{writes:,.0f}/s",
        )
    )
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
    # A long prompt's history stands in for a short one's (its results are inline below the
    # storage threshold).
    share = a["long_share"]
    per_prompt = (1 - share) * c.history_bytes + share * c.long_history_bytes
    history_mb_s = rate * per_prompt / 1e6
    lines.append(
        Line(
            "history written",
            f"{rate:,.1f}/s x ({1 - share:g} x {c.history_bytes / 1e3:,.1f} kB + {share:g} long "
            f"x {c.long_history_bytes / 1e3:,.1f} kB)",
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
            "worker memory (every prompt in flight)",
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
    source: str = "",
    level: int = LEVEL,
    results: Path | None = None,
) -> str:
    out: list[str] = []
    put = out.append
    if source:
        put(f"Figures from {source}.")
        put("")
    put(
        f"Measured per prompt (guard enforce; {c.batches} batches): server CPU "
        f"{c.server_cpu_ms:g} ms, worker CPU {c.worker_cpu_ms:g} ms, {c.workflow_writes:g} "
        f"workflow writes, {c.history_events:g} history events "
        f"({c.history_bytes / 1e3:,.1f} kB, concurrency {level}), "
        f"{c.kib_per_cached_prompt:g} KiB per prompt in flight; a long prompt writes "
        f"{c.long_history_bytes / 1e6:,.1f} MB of history and stores "
        f"{c.long_stored_bytes / 1e6:,.1f} MB"
        + (
            f"; a {c.replay_events:,}-event history replays in {c.replay_seconds:g} s"
            if c.replay_seconds is not None
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
        "--level", type=int, default=LEVEL, help="the concurrency whose history figures to use"
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
            figures_from(args.results),
            args.level,
            args.results,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
