"""What ``bench/peers.py`` makes of its measurements: Seawall over the best peer on each
target figure, the versions measured, and the tables it prints. Kept apart from the driver so
that the run (workers, load, replay) reads as one job and the report as another."""

from __future__ import annotations

from typing import Any

from bench.peer_history import SEGMENTS

# The figures issue 27 sets targets on: Seawall's over the best peer's, ≤ 1.0 each. Lower
# is better for all of them (prompts per second enters as its inverse).
TARGETS = (
    ("batch_latency_ms_median", "batch latency p50"),
    ("batch_latency_ms_p95", "batch latency p95"),
    ("seconds_per_prompt", "inverse throughput"),
    ("history_events_per_prompt", "history events per prompt"),
)


def against_best_peer(levels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per concurrency and target figure: Seawall's value, the best other peer's (and
    which), and their ratio."""
    out = []
    for concurrency in sorted({row["concurrency"] for row in levels}):
        rows = {r["peer"]: r for r in levels if r["concurrency"] == concurrency}
        if "seawall" not in rows or len(rows) < 2:
            continue
        for row in rows.values():
            row["seconds_per_prompt"] = round(1 / row["prompts_per_second"], 4)
        for key, title in TARGETS:
            others = {k: r[key] for k, r in rows.items() if k != "seawall" and r[key]}
            if not others or not rows["seawall"][key]:
                continue
            best = min(others, key=lambda k: others[k])
            out.append(
                {
                    "concurrency": concurrency,
                    "figure": key,
                    "title": title,
                    "seawall": rows["seawall"][key],
                    "best_peer": best,
                    "best_peer_value": others[best],
                    "ratio": round(rows["seawall"][key] / others[best], 3),
                }
            )
    return out


def versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for dist in (
        "temporalio",
        "pydantic-ai-slim",
        "openai-agents",
        "temporalio-openai-agents",
        "openai",
        "temporal-agent-harness",
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


COLUMNS = (
    ("batch_latency_ms_median", "batch ms p50"),
    ("batch_latency_ms_p95", "batch ms p95"),
    ("prompts_per_second", "prompts/s"),
    ("history_events_per_prompt", "events/prompt"),
    ("history_bytes_per_prompt", "hist B/prompt"),
    ("payload_bytes_per_prompt", "payload B/prompt"),
    ("worker_cpu_ms_per_prompt", "worker CPU ms/prompt"),
    ("server_cpu_ms_per_prompt", "server CPU ms/prompt"),
    ("worker_peak_rss_mib", "worker peak RSS MiB"),
    ("worker_rss_growth_kib_per_inflight_prompt", "RSS KiB/in-flight"),
    ("server_handoffs_per_prompt", "hand-offs/prompt"),
    ("server_call_handoffs_per_prompt", "of them calls/prompt"),
    ("server_handoff_wait_ms_mean", "hand-off wait ms mean"),
)


def print_tables(report: dict[str, Any]) -> None:
    w = report["workload"]
    print(
        f"\n{w['batches_per_prompt']} batches x {w['calls_per_batch']} calls per prompt, "
        f"tool latency {w['tool_latency_seconds']} s; dev server "
        + (
            ", ".join(f"{k}={v}" for k, v in report["server_config"].items())
            if report.get("server_config")
            else "as it ships"
        )
        + "; eager calls per workflow task: "
        + ", ".join(f"{k} {v}" for k, v in report.get("eager_calls", {}).items())
        + "; versions: "
        + ", ".join(f"{k} {v}" for k, v in report["versions"].items())
    )
    keys = list(report["peers"])
    width = max([16, *(len(k) + 2 for k in keys)])
    for concurrency in sorted({row["concurrency"] for row in report["levels"]}):
        rows = {r["peer"]: r for r in report["levels"] if r["concurrency"] == concurrency}
        print(f"\nconcurrency {concurrency} ({rows[keys[0]]['prompts']} prompts per peer)")
        print(f"  {'':22}" + "".join(f"{k:>{width}}" for k in keys))
        for key, label in COLUMNS:
            print(f"  {label:22}" + "".join(f"{rows[k][key]!s:>{width}}" for k in keys))
        for name in SEGMENTS:
            cells = "".join(f"{rows[k]['batch_segments_ms_median'][name]!s:>{width}}" for k in keys)
            print(f"  {'  ' + name + ' ms':22}" + cells)
    if report.get("against_best_peer"):
        print("\nSeawall over the best peer on each figure (target ≤ 1.00×)")
        for row in report["against_best_peer"]:
            mark = "" if row["ratio"] <= 1.0 else "  over target"
            print(
                f"  c={row['concurrency']:<4} {row['title']:<28} {row['seawall']!s:>10} vs "
                f"{row['best_peer_value']!s:>10} ({row['best_peer']}): {row['ratio']:.2f}×{mark}"
            )
    if report.get("replay"):
        print("\nreplay of one long history")
        for r in report["replay"]:
            if "error" in r:
                print(f"  {r['peer']:{width}} failed: {r['error']}")
                continue
            print(
                f"  {r['peer']:{width}} {r['batches']} batches, {r['events']} events: "
                f"{r['seconds_median']:.3f} s ({r['ms_per_1000_events']} ms per 1,000 events)"
            )
    for key, reason in report["skipped"].items():
        print(f"  not run: {key}: {reason}")
