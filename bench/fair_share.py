"""Fair share under a hostile tenant (issue 42): owner B's tool latency alone, then beside
owner A's memory, disk and CPU hogs, in one run, with the ratio (target: B's p95 at most
1.5x alone).

Both owners go through the real ``run_shell_command`` in sandboxes of their own (bubblewrap,
the supervisor, the per-sandbox cgroups inside each owner's group, and the watched disk
quotas, the workspace's and the owner's), with small limits so every hog is stopped
quickly: A loops a memory hog (past ``--memory-mb``), a disk hog (past ``--disk-mb``) and a
CPU hog (four spinning processes under ``--cpu-percent``), all three at once, each in a
workspace of its own, while B runs his ordinary command ``--calls`` times (alone and beside
alternate over ``--rounds``). All of A's sandboxes share her owner's group, capped at
``--owner-cpu-percent`` (0: no owner cap, each sandbox on its own). What is timed is B's
tool call, the part of his prompt that A's sandboxes compete with (the durable steps around
it are bench/peers.py's); how each of A's hog runs settled is counted by its outcome.
docs/benchmarks.md quotes it.

    python bench/fair_share.py [--calls 40] [--rounds 4] [--owner-cpu-percent 100] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from activities.sandbox import Sandbox, SandboxMode, load_policy, probe
from activities.sandbox.owners import owner_group
from activities.tools.base import ToolContext, ToolFailure
from activities.tools.shell import RunShellCommandArgs, RunShellCommandTool
from bench.report_runner import ROOT, percentile, run_and_report

TARGET_RATIO = 1.5
# B's ordinary command: a little work of its own, so CPU contention would show.
B_COMMAND = "python3 -c 'print(sum(range(200000)))'"
SPIN = (
    "python3 -c '\nimport os, time\nkids = [os.fork() for _ in range(3)]\n"
    "end = time.monotonic() + 1\nwhile time.monotonic() < end:\n    pass\n'"
)


def hogs(memory_mb: int, disk_mb: int) -> dict[str, str]:
    """A's commands: each goes past its limit (the CPU hog is only slowed by its cap)."""
    allocate = (
        "python3 -c '\nheld = []\n"
        f"for _ in range({2 * memory_mb // 8}):\n    held.append(bytearray(8 << 20))\n"
        '    held[-1][::4096] = b"x" * len(held[-1][::4096])\n\''
    )
    disk = f"for i in $(seq 1 {disk_mb // 2}); do head -c 4m /dev/zero > part$i; done; rm -f part*"
    return {"memory": allocate, "disk": disk, "cpu": SPIN}


def _sandbox(
    memory_mb: int, disk_mb: int, cpu_percent: int, owner_cpu_percent: int, index: Path
) -> Sandbox:
    # The owners' disk index in the scratch directory (a worker's is in its data directory):
    # A's three workspaces are watched against her owner's disk quota too.
    policy = load_policy().model_copy(update={"owner_disk_index": str(index)})
    limits = policy.limits.model_copy(
        update={
            "memory_max_mb": memory_mb,
            "workspace_disk_mb": disk_mb,
            "cpu_max_percent": cpu_percent,
            "owner_cpu_max_percent": owner_cpu_percent,
        }
    )
    sandbox = probe(policy.model_copy(update={"mode": SandboxMode.BWRAP, "limits": limits}))
    if not sandbox.usable:
        sys.exit(f"fair_share needs the sandbox: {sandbox.problem}")
    return sandbox


def _figures(samples: list[float]) -> dict[str, Any]:
    return {
        "calls": len(samples),
        "p50_ms": round(statistics.median(samples), 2),
        "p95_ms": round(percentile(samples, 0.95), 2),
    }


async def _b_calls(tool: RunShellCommandTool, ctx: ToolContext, calls: int) -> list[float]:
    args = RunShellCommandArgs(command=B_COMMAND)
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await tool.run(args, ctx)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def _hog_loop(
    tool: RunShellCommandTool, ctx: ToolContext, command: str, stop: asyncio.Event
) -> dict[str, int]:
    """Run ``command`` until ``stop``: how many runs, and how many settled with each outcome
    (``success`` or the failure's error type)."""
    counts = {"runs": 0}
    while not stop.is_set():
        try:
            await tool.run(RunShellCommandArgs(command=command), ctx)
            outcome = "success"
        except ToolFailure as failure:
            outcome = failure.error_type.value
        counts[outcome] = counts.get(outcome, 0) + 1
        counts["runs"] += 1
    return counts


async def measure(
    calls: int,
    memory_mb: int,
    disk_mb: int,
    cpu_percent: int,
    owner_cpu_percent: int,
    rounds: int = 1,
) -> dict[str, Any]:
    tool = RunShellCommandTool()
    alone: list[float] = []
    beside: list[float] = []
    hog_counts: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="seawall-bench-fair-") as scratch:
        index = Path(scratch, "owners")
        sandbox = _sandbox(memory_mb, disk_mb, cpu_percent, owner_cpu_percent, index)
        # Two owners, each with the group of the pseudonym a worker without a key would use.
        # Each of A's hogs has a workspace of its own (three sessions of hers): in one
        # workspace the disk hog's writes would stop the other two at its disk quota.
        a, b = owner_group("A", None), owner_group("B", None)
        contexts = {}
        for name in ("b", *hogs(memory_mb, disk_mb)):
            workspace = Path(scratch, name).resolve()
            workspace.mkdir()
            contexts[name] = ToolContext(
                workspace_root=workspace, sandbox=sandbox, owner=b if name == "b" else a
            )
        await _b_calls(tool, contexts["b"], 2)  # warm-up: page cache, imports
        # Alone and beside alternate, so a change in the machine's load hits both alike.
        for round_calls in _split(calls, rounds):
            alone += await _b_calls(tool, contexts["b"], round_calls)
            stop = asyncio.Event()
            loops = {
                name: asyncio.create_task(_hog_loop(tool, contexts[name], command, stop))
                for name, command in hogs(memory_mb, disk_mb).items()
            }
            beside += await _b_calls(tool, contexts["b"], round_calls)
            stop.set()
            for name, task in loops.items():
                for outcome, count in (await task).items():
                    seen = hog_counts.setdefault(name, {})
                    seen[outcome] = seen.get(outcome, 0) + count
    figures = {"alone": _figures(alone), "beside_hogs": _figures(beside)}
    ratio = round(figures["beside_hogs"]["p95_ms"] / figures["alone"]["p95_ms"], 2)
    return {
        "b_command": B_COMMAND,
        "limits": {
            "memory_mb": memory_mb,
            "disk_mb": disk_mb,
            "cpu_max_percent": cpu_percent,
            "owner_cpu_max_percent": owner_cpu_percent,
            "owner_disk_mb": sandbox.policy.limits.owner_disk_mb,
        },
        "cgroups": sorted(sandbox.cgroups),
        "rounds": rounds,
        "b": figures,
        "hogs": hog_counts,
        "p95_ratio": ratio,
        "target_ratio": TARGET_RATIO,
    }


def _split(calls: int, rounds: int) -> list[int]:
    """``calls`` in ``rounds`` parts, as equal as they come (none empty)."""
    rounds = max(1, min(rounds, calls))
    return [calls // rounds + (1 if i < calls % rounds else 0) for i in range(rounds)]


def render(report: dict[str, Any]) -> None:
    limits = report["limits"]
    print(
        f"B: {report['b_command']} beside A's hogs (memory {limits['memory_mb']} MB, "
        f"disk {limits['disk_mb']} MB, cpu cap {limits['cpu_max_percent']}% a sandbox, "
        f"{limits['owner_cpu_max_percent']}% an owner; "
        f"cgroups: {', '.join(report['cgroups']) or 'none'})"
    )
    print(f"{'B':<14} {'calls':>6} {'p50 ms':>9} {'p95 ms':>9}")
    for name, figures in report["b"].items():
        print(
            f"{name:<14} {figures['calls']:>6} {figures['p50_ms']:>9.2f} {figures['p95_ms']:>9.2f}"
        )
    hogs_seen = "; ".join(
        f"{name} {counts['runs']} runs ("
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k != "runs")
        + ")"
        for name, counts in report["hogs"].items()
    )
    print(f"A's hogs: {hogs_seen}")
    verdict = "met" if report["p95_ratio"] <= report["target_ratio"] else "MISSED"
    print(
        f"p95 beside / alone: {report['p95_ratio']:.2f} "
        f"(target <= {report['target_ratio']}: {verdict})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40, help="B's calls, alone and beside")
    parser.add_argument("--memory-mb", type=int, default=64)
    parser.add_argument("--disk-mb", type=int, default=16)
    parser.add_argument("--cpu-percent", type=int, default=100)
    parser.add_argument("--owner-cpu-percent", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=4, help="alone, then beside, R times")
    parser.add_argument("--json", type=Path, default=ROOT / "bench/results/fair_share.json")
    args = parser.parse_args(argv)
    report = measure(
        args.calls,
        args.memory_mb,
        args.disk_mb,
        args.cpu_percent,
        args.owner_cpu_percent,
        args.rounds,
    )
    return run_and_report(report, render, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
