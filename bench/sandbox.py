"""The per-call cost of the sandbox: ``run_shell_command`` confined beside the bare command.

Each mode runs the same command N times through the real tool (the supervisor, and for the
sandboxed modes bubblewrap, the pids cgroup and, with the network on, slirp4netns), in one
run, interleaved so that a busy machine weighs on every mode alike:

- ``none``: ``sandbox: none``, the bare command (still under the supervisor, as before);
- ``bwrap``: the default sandbox, network off;
- ``bwrap+network``: ``sandbox_network: on`` (needs slirp4netns).

Prints the median and p90 of each mode and the median overhead over bare; ``--json PATH``
writes them (bench/results/sandbox.json). docs/security-sandbox.md, "Cost", quotes them.

    python bench/sandbox.py [--calls 40] [--command true] [--json bench/results/sandbox.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from activities.sandbox import (
    NetworkPolicy,
    Sandbox,
    SandboxMode,
    load_policy,
    probe,
)
from activities.tools.base import ToolContext
from activities.tools.shell import RunShellCommandArgs, RunShellCommandTool
from bench.report_runner import percentile, run_and_report

DEFAULT_CALLS = 40


def _modes() -> dict[str, Sandbox]:
    policy = load_policy()
    modes = {
        "none": probe(policy.model_copy(update={"mode": SandboxMode.NONE})),
        "bwrap": probe(
            policy.model_copy(update={"mode": SandboxMode.BWRAP, "network": NetworkPolicy.OFF})
        ),
        "bwrap+network": probe(
            policy.model_copy(update={"mode": SandboxMode.BWRAP, "network": NetworkPolicy.ON})
        ),
    }
    for name, sandbox in list(modes.items()):
        if not sandbox.usable:
            print(f"skipping {name}: {sandbox.problem}", file=sys.stderr)
            del modes[name]
    return modes


async def measure(calls: int, command: str) -> dict[str, Any]:
    modes = _modes()
    tool = RunShellCommandTool()
    args = RunShellCommandArgs(command=command)
    samples: dict[str, list[float]] = {name: [] for name in modes}
    with tempfile.TemporaryDirectory(prefix="seawall-bench-sandbox-") as scratch:
        workspace = Path(scratch).resolve()
        contexts = {
            name: ToolContext(workspace_root=workspace, sandbox=sandbox)
            for name, sandbox in modes.items()
        }
        for name in modes:  # warm-up: page cache, imports
            await tool.run(args, contexts[name])
        for _ in range(calls):
            for name, ctx in contexts.items():
                started = time.perf_counter()
                await tool.run(args, ctx)
                samples[name].append((time.perf_counter() - started) * 1000)
    results = {
        name: {
            "median_ms": round(statistics.median(values), 2),
            "p90_ms": round(percentile(values, 0.9), 2),
            "calls": len(values),
        }
        for name, values in samples.items()
    }
    bare = results.get("none", {}).get("median_ms")
    for name, figures in results.items():
        if bare is not None and name != "none":
            figures["overhead_median_ms"] = round(figures["median_ms"] - bare, 2)
    return {
        "command": command,
        "calls_per_mode": calls,
        "process_limit": modes["bwrap"].process_limit if "bwrap" in modes else None,
        "modes": results,
    }


def render(report: dict[str, Any]) -> str:
    lines = [
        f"run_shell_command {report['command']!r}, {report['calls_per_mode']} calls per mode",
        f"{'mode':<15} {'median ms':>10} {'p90 ms':>10} {'overhead ms':>12}",
    ]
    for name, figures in report["modes"].items():
        overhead = figures.get("overhead_median_ms")
        shown = f"{overhead:+.2f}" if overhead is not None else "-"
        lines.append(
            f"{name:<15} {figures['median_ms']:>10.2f} {figures['p90_ms']:>10.2f} {shown:>12}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--calls", type=int, default=DEFAULT_CALLS, help="calls per mode")
    parser.add_argument("--command", default="true", help="the shell command to time")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    return run_and_report(measure(args.calls, args.command), lambda r: print(render(r)), args.json)


if __name__ == "__main__":
    sys.exit(main())
