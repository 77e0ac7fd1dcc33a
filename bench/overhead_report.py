"""The overhead benchmark's tables: what ``bench/overhead.py`` prints from its report.

Why it exists: the report (``bench/results/overhead.json``) is the data; these functions
only render it, so a run's figures and a re-print of a saved report read the same.
"""

from __future__ import annotations

from typing import Any

from bench.overhead_harness import VARIANTS
from bench.overhead_replay import OTHER_RUNNERS, REPLAY_REPEATS, event_differences

FLOOR_RATIO_TARGET = 1.5  # per-batch latency at concurrency 1 vs the bare workflow's


def print_levels(levels: list[dict[str, Any]], label: str = "concurrency") -> None:
    """The per-variant rows and the ratio table of ``levels`` (each with its ``concurrency``,
    ``variants`` and ``ratios``)."""
    print()
    header = (
        f"{label:>11}  {'variant':<30} {'prompts':>7} {'wall s':>7} "
        f"{'prompts/s':>9} {'batch ms median':>15} {'p90':>7} {'CPU ms/prompt':>14}"
        f" {'(worker+driver | server)':>24}"
    )
    print(header)
    print("-" * len(header))
    for level in levels:
        for row in level["variants"]:
            print(
                f"{level['concurrency']:>11}  {row['title']:<30} {row['prompts']:>7} "
                f"{row['wall_seconds']:>7.2f} {row['prompts_per_second']:>9.2f} "
                f"{row['batch_latency_ms_median']:>15.2f} {row['batch_latency_ms_p90']:>7.2f} "
                f"{row['cpu_ms_per_prompt']:>14.1f} "
                f"{row['cpu_ms_per_prompt_worker']:>12.1f} | "
                f"{row['cpu_ms_per_prompt_server']:<9.1f}"
            )
    print()
    print(
        "Ratios: per-batch latency / inverse throughput / CPU per prompt [/ server CPU per "
        "prompt]; > 1 means costlier"
    )
    print(
        f"{label:>11}  {'b/a guard cost':>29} {'a/d vs bare workflow':>29} "
        f"{'a/c vs in-process':>24}"
    )
    for level in levels:
        r = level["ratios"]
        cells = [
            f"{r[k]['latency']:.2f} / {r[k]['throughput']:.2f} / {r[k]['cpu']:.2f}"
            + (f" / {r[k]['server_cpu']:.2f}" if "server_cpu" in r[k] else "")
            for k in ("b/a", "a/d", "a/c")
        ]
        print(f"{level['concurrency']:>11}  {cells[0]:>29} {cells[1]:>29} {cells[2]:>24}")
    spreads = [
        f"{level['concurrency']}: "
        + ", ".join(
            f"{pair} {min(by_round):.2f}-{max(by_round):.2f}"
            for pair in ("b/a", "a/d")
            if (by_round := level["ratios"][pair].get("throughput_by_round"))
        )
        for level in levels
        if any("throughput_by_round" in level["ratios"][pair] for pair in ("b/a", "a/d"))
    ]
    if spreads:
        print(
            "Inverse throughput by round (the range across one run's interleaved rounds, "
            "its noise): " + "; ".join(spreads)
        )


def print_server_costs(levels: list[dict[str, Any]]) -> None:
    """What each prompt costs the server, per variant and level: the capacity inputs."""
    print()
    print(
        "Server cost per prompt (dev server: CPU; its metrics: workflow writes = "
        "Create/UpdateWorkflowExecution, all persistence requests)"
    )
    print(
        f"{'concurrency':>11}  {'variant':<30} {'server CPU ms':>13} "
        f"{'writes':>7} {'persistence req':>15}"
    )
    for level in levels:
        for row in level["variants"]:
            if row["variant"] == "c":
                continue
            print(
                f"{level['concurrency']:>11}  {row['title']:<30} "
                f"{row['cpu_ms_per_prompt_server']:>13.1f} "
                f"{row['workflow_writes_per_prompt']:>7.1f} "
                f"{row['persistence_requests_per_prompt']:>15.1f}"
            )
    first = next((level for level in levels if level["concurrency"] == 1), None)
    if first:
        rows = {row["variant"]: row for row in first["variants"]}
        floor = rows["d"]["batch_latency_ms_median"]
        seawall = rows["a"]["batch_latency_ms_median"]
        print(
            f"Per-batch latency at concurrency 1: Seawall {seawall:.1f} ms, the bare "
            f"workflow's floor {floor:.1f} ms: {seawall / floor:.2f}x (target <= "
            f"{FLOOR_RATIO_TARGET}x)"
        )


def print_long(long: dict[str, Any]) -> None:
    w = long["workload"]
    print()
    print(
        f"Long prompt: {w['batches_per_prompt']} batches x {w['calls_per_batch']} calls, "
        "concurrency 1, beside the bare workflow of the same shape"
    )
    print_levels([{"concurrency": 1, **long}], label="long")
    for variant, h in long["history"].items():
        print(
            f"  {VARIANTS[variant]}: {h['events_per_prompt']:.0f} history events, "
            f"{h['state_transitions_per_prompt']:.0f} state transitions, "
            f"{h['history_bytes_per_prompt'] / 1e3:.0f} kB history, "
            f"{h['stored_bytes_per_prompt'] / 1e3:.0f} kB stored in "
            f"{h['stored_payloads_per_prompt']:.0f} payloads per prompt"
        )


def print_long_replay(replay: dict[str, Any]) -> None:
    print()
    print(
        f"Replay of one long history ({replay['batches']} batches x "
        f"{replay['calls_per_batch']} calls; median of {replay['repeats']}; target < "
        f"{replay['target_seconds']:.0f} s for {replay['target_events']:,} events):"
    )
    for variant, r in replay["variants"].items():
        print(
            f"  {VARIANTS[variant]:<30} {r['events']:>6,} events "
            f"({r['history_bytes'] / 1e6:.1f} MB): {r['replay_seconds_median']:.2f} s "
            f"({r['ms_per_1000_events']:.0f} ms per 1,000 events)"
            + ("" if r["reached_target_events"] else "  [fewer events than the target]")
        )
        for runner, seconds in r.get("runners", {}).items():
            print(f"      the same history on {OTHER_RUNNERS[runner]}: {seconds:.2f} s")
    ratios = replay.get("seawall_over_bare") or {}
    if ratios:
        b, d = replay["variants"]["b"]["runners"], replay["variants"]["d"]["runners"]
        print(
            f"  Seawall over the bare floor, the same history shape on the same runner "
            f"(target ≤ {replay['floor_target']}×):"
        )
        print(f"    {'runner':<42}{'Seawall s':>10}{'bare s':>10}{'ratio':>8}")
        for runner, ratio in ratios.items():
            mark = "" if ratio <= replay["floor_target"] else "  over target"
            print(
                f"    {OTHER_RUNNERS[runner]:<42}{b[runner]:>10.2f}{d[runner]:>10.2f}"
                f"{ratio:>7.2f}×{mark}"
            )


def print_tables(report: dict[str, Any]) -> None:
    if report.get("levels"):
        print_levels(report["levels"])
        print_server_costs(report["levels"])
    replay = report.get("replay")
    if replay:
        print()
        for r in replay.values():
            print(
                f"Replay, {r['title']}: {r['ms_per_1000_events']:.1f} ms per 1,000 history "
                f"events ({r['histories']} histories of {r['events_per_history']:.0f} events, "
                f"{r['history_bytes_per_history'] / 1e3:.1f} kB and "
                f"{r['state_transitions_per_prompt']:.0f} state transitions each, median of "
                f"{REPLAY_REPEATS} replays)"
            )
    if replay:
        print(f"History events per prompt, b - a: {event_differences(replay, 'b', 'a')}")
        print(f"History events per prompt, a - d: {event_differences(replay, 'a', 'd')}")
    memory = report.get("memory")
    if memory:
        for name, m in memory.items():
            print(
                f"Worker memory ({name}): {m['kib_per_prompt']:.0f} KiB per cached prompt "
                f"({m['paused_prompts']} prompts paused mid-prompt; RSS {m['rss_kib'][0]} → "
                f"{m['rss_kib'][-1]} KiB; second half {m['kib_per_prompt_second_half']:.0f} KiB)"
            )
    if report.get("long"):
        print_long(report["long"])
    if report.get("long_replay"):
        print_long_replay(report["long_replay"])
    profile = report.get("profile")
    if profile:
        print()
        print(
            "Profile (cProfile, worker event-loop thread + workflow-task thread; CPU ms per "
            "prompt, inflated by the profiler):"
        )
        for variant, p in profile.items():
            cats = ", ".join(
                f"{k} {v:.1f}" for k, v in list(p["by_category_ms_per_prompt"].items())[:7]
            )
            print(f"  {VARIANTS[variant]}: {p['cpu_ms_per_prompt']:.1f} ms — {cats}")
        for pair, note in report.get("profile_notes", {}).items():
            print(f"  {pair}: {note}")
        for variant, p in profile.items():
            print(f"  top frames by own CPU, {VARIANTS[variant]}:")
            for frame in p["top_frames"][:6]:
                print(
                    f"    {frame['tottime_ms_per_prompt']:7.2f} ms own, "
                    f"{frame['cumtime_ms_per_prompt']:7.2f} cum  {frame['frame']}"
                )
            print(f"  the loop's own code by cumulative CPU, {VARIANTS[variant]}:")
            for frame in p["loop_code_frames"][:8]:
                print(
                    f"    {frame['cumtime_ms_per_prompt']:7.2f} ms cum, "
                    f"{frame['tottime_ms_per_prompt']:7.2f} own  {frame['frame']}"
                )
