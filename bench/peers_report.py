"""What ``bench/peers.py`` makes of its measurements: Seawall over the best durable agent on
each target figure, Seawall over the bare loop on every figure (its overhead), the versions
measured, and the tables it prints. Kept apart from the driver so that the run (workers, load,
replay) reads as one job and the report as another."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from bench.peer_history import SEGMENTS
from bench.tables import tables

_T = tables(__file__)  # peers_report.yaml, with what each table is
# The figures issue 27 sets targets on, as (key, title); the table's columns, (key, title,
# format).
TARGETS: tuple[tuple[str, str], ...] = tuple(tuple(t) for t in _T["TARGETS"])


def against_best_peer(
    levels: list[dict[str, Any]], baselines: Collection[str] = ()
) -> list[dict[str, Any]]:
    """Per concurrency and target figure: Seawall's value, the best other peer's (and
    which), and their ratio; ``baselines`` (the bare loop) are floors, not peers to beat."""
    out = []
    for concurrency in sorted({row["concurrency"] for row in levels}):
        rows = {r["peer"]: r for r in levels if r["concurrency"] == concurrency}
        if "seawall" not in rows or len(rows) < 2:
            continue
        for row in rows.values():
            row["seconds_per_prompt"] = round(1 / row["prompts_per_second"], 4)
        for key, title in TARGETS:
            others = {
                k: r[key]
                for k, r in rows.items()
                if k != "seawall" and k not in baselines and r[key]
            }
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


def over_bare(levels: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per concurrency (as text, a JSON key), Seawall's figure over the bare loop's for
    every table figure both have: what Seawall costs over the loop a user writes by hand
    (prompts per second enters as its inverse, so > 1 is costlier throughout)."""
    out: dict[str, dict[str, float]] = {}
    for concurrency in sorted({row["concurrency"] for row in levels}):
        rows = {r["peer"]: r for r in levels if r["concurrency"] == concurrency}
        if "seawall" not in rows or "bare" not in rows:
            continue
        ratios = {}
        for key, _title, _fmt in COLUMNS:
            seawall, bare = rows["seawall"].get(key), rows["bare"].get(key)
            if seawall and bare:
                inverse = key == "prompts_per_second"
                ratios[key] = round(bare / seawall if inverse else seawall / bare, 3)
        out[str(concurrency)] = ratios
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


COLUMNS: tuple[tuple[str, str, str], ...] = tuple(tuple(c) for c in _T["COLUMNS"])


def markdown(report: dict[str, Any]) -> list[str]:
    """The report as markdown: what was run, every peer's figures per concurrency (with
    Seawall over the bare loop as a last column when both ran), where a batch's time goes,
    the replays, and Seawall over the best durable agent. ``bench/peers.py`` prints it and
    ``bench/capacity.py --markdown`` puts it in docs/capacity.md."""
    keys = list(report["peers"])
    overhead = report.get("over_bare") or {}
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
        "| per prompt | concurrency | "
        + " | ".join(report["peers"][k] for k in keys)
        + " |"
        + (" Seawall over bare |" if overhead else ""),
        "|---|---|" + "---|" * (len(keys) + bool(overhead)),
    ]
    concurrencies = sorted({r["concurrency"] for r in report["levels"]})
    by_level = {
        c: {r["peer"]: r for r in report["levels"] if r["concurrency"] == c} for c in concurrencies
    }
    for key, title, fmt in COLUMNS:
        for c in concurrencies:
            values = [by_level[c].get(k, {}).get(key) for k in keys]
            if all(v is None for v in values):  # a figure this run did not record
                continue
            cells = ["-" if v is None else fmt.format(v) for v in values]
            if overhead:
                ratio = overhead.get(str(c), {}).get(key)
                cells.append("-" if ratio is None else f"{ratio:.2f}×")
            out.append(f"| {title} | {c} | " + " | ".join(cells) + " |")
    for name in SEGMENTS:
        for c in concurrencies:
            values = [
                by_level[c].get(k, {}).get("batch_segments_ms_median", {}).get(name) for k in keys
            ]
            cells = ["-" if v is None else f"{v:,.1f}" for v in values] + ["-"] * bool(overhead)
            out.append(f'| a batch\'s step "{name}", median ms | {c} | ' + " | ".join(cells) + " |")
    replays = {r["peer"]: r for r in report.get("replay", [])}
    if replays:
        cells = [
            "-"
            if k not in replays
            else "failed"
            if "error" in replays[k]
            else f"{replays[k]['seconds_median']:.2f} ({replays[k]['events']:,} events)"
            for k in keys
        ] + ["-"] * bool(overhead)
        batches = next(iter(replays.values())).get("batches", "long")
        out.append(f"| replay of a {batches}-batch history, s | - | " + " | ".join(cells) + " |")
    compared = report.get("against_best_peer") or []
    if compared:
        out += ["", "| Seawall over the best durable agent (target ≤ 1.00) | concurrency | ratio |"]
        out.append("|---|---|---|")
        for row in compared:
            out.append(
                f"| {row['title']} (best: {row['best_peer']}) | {row['concurrency']} | "
                f"{row['ratio']:.2f} |"
            )
    return out


def print_tables(report: dict[str, Any]) -> None:
    print()
    print("\n".join(markdown(report)))
    for r in report.get("replay", []):
        if "error" in r:
            print(f"  replay failed: {r['peer']}: {r['error']}")
    for key, reason in report["skipped"].items():
        print(f"  not run: {key}: {reason}")
