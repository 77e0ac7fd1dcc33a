"""bench/fair_share.py times owner B's calls alone and beside owner A's hogs through the real
sandboxed tool and reports figures of the documented shape (no timing is asserted: the
machine may be loaded)."""

from __future__ import annotations

import json
from pathlib import Path

from bench import fair_share


def test_the_report_has_b_alone_beside_the_hogs_and_the_ratio(tmp_path: Path) -> None:
    out = tmp_path / "fair_share.json"
    assert fair_share.main(["--calls", "2", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert set(report["b"]) == {"alone", "beside_hogs"}
    for figures in report["b"].values():
        assert figures["calls"] == 2
        assert figures["p95_ms"] >= figures["p50_ms"] > 0
    assert set(report["hogs"]) == {"memory", "disk", "cpu"}
    assert all(counts["runs"] >= 1 for counts in report["hogs"].values())
    assert report["p95_ratio"] > 0 and report["target_ratio"] == 1.5
