"""bench/sandbox.py measures every mode through the real tool and reports figures of the
documented shape (no timing is asserted: the machine may be loaded)."""

from __future__ import annotations

import json
from pathlib import Path

from bench import sandbox as bench_sandbox


def test_the_report_has_every_mode_beside_the_bare_command(tmp_path: Path) -> None:
    out = tmp_path / "sandbox.json"
    assert bench_sandbox.main(["--calls", "2", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["calls_per_mode"] == 2
    assert set(report["modes"]) == {"none", "bwrap", "bwrap+network"}
    for name, figures in report["modes"].items():
        assert figures["calls"] == 2
        assert figures["p90_ms"] >= figures["median_ms"] > 0
        assert ("overhead_median_ms" in figures) == (name != "none")
    assert "median ms" in bench_sandbox.render(report)
