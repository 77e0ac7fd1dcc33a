"""The one way a benchmark runs from the command line: quiet logs, run, print, save.

Every ``bench/*.py`` that measures against a Temporal server ends the same way — SDK and
Seawall logs only at ERROR (they would interleave with the tables), the measurement run to
completion, its tables printed, and the report written as JSON beside the others in
``bench/results/`` — so that ending lives here once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

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
