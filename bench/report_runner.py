"""The one way a benchmark runs from the command line: quiet logs, run, print, save.

Every ``bench/*.py`` that measures against a Temporal server ends the same way — SDK and
Seawall logs only at ERROR (they would interleave with the tables), the measurement run to
completion, its tables printed, and the report written as JSON beside the others in
``bench/results/`` — so that ending lives here once, with the facts every report carries
(:func:`machine`, :func:`git_commit`).
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import subprocess
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import temporalio

ROOT = Path(__file__).resolve().parent.parent

Report = dict[str, Any]


def run_and_report(
    measure: Coroutine[Any, Any, Report], render: Callable[[Report], None], json_path: Path
) -> int:
    """Run ``measure``, print it with ``render`` and write it to ``json_path``."""
    from seawall.runtime.logs import configure_logging

    configure_logging("json", "ERROR")
    report = asyncio.run(measure)
    render(report)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"Wrote {json_path}")
    return 0


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
