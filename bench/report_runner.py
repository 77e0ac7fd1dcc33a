"""The one way a benchmark runs from the command line: quiet logs, run, print, save.

Every ``bench/*.py`` that measures against a Temporal server ends the same way — SDK and
Seawall logs only at ERROR (they would interleave with the tables), the measurement run to
completion, its tables printed, and the report written as JSON beside the others in
``bench/results/`` — so that ending lives here once, with the facts every report carries
(the :func:`machine`, the :func:`git_commit`, the load average before and after, the
seconds it took) and the one percentile the reports quote (:func:`percentile`).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import platform
import subprocess
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import temporalio

ROOT = Path(__file__).resolve().parent.parent

Report = dict[str, Any]


def run_and_report(
    measure: Coroutine[Any, Any, Report], render: Callable[[Report], None], json_path: Path | None
) -> int:
    """Run ``measure``, stamp its report with the facts every report carries, print it with
    ``render`` and write it to ``json_path`` (none: print only)."""
    from seawall.runtime.logs import configure_logging

    configure_logging("json", "ERROR")
    started = time.perf_counter()
    before = load_average()
    report: Report = {"machine": machine(), "commit": git_commit(), "load_average_before": before}
    report |= asyncio.run(measure)
    report["load_average_after"] = load_average()
    report["seconds"] = round(time.perf_counter() - started, 1)
    render(report)
    print(f"\n{report['seconds']} s in all")
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"Wrote {json_path}")
    return 0


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0.9: the p90): the smallest value with at least
    ``q`` of ``values`` at or below it, always one of them; 0 for none."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else 0


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        first = Path("/proc/meminfo").read_text().splitlines()[0]
        memory = f"{int(first.split()[1]) // 1024} MiB"
    except (OSError, IndexError, ValueError):
        pass
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "memory": memory,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "temporalio": temporalio.__version__,
    }


def git_commit() -> str:
    """The commit the figures came from (``+dirty`` with uncommitted changes)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")
