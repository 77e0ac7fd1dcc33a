"""``bench/guard_step.py`` runs both variants over the same batches and reports each (the
figures themselves are a benchmark's, never asserted here)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bench import guard_step


def test_it_measures_both_variants_on_the_same_batches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "guard_step.json"
    assert guard_step.main(["--calls", "3", "--kb", "1", "--batches", "2", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert {"normalized", "before v4"} <= set(figures)
    assert figures["calls"] == 3 and figures["kb"] == 1
    printed = capsys.readouterr().out
    assert "normalized / before v4 (median)" in printed


def test_every_batch_runs_past_the_default_cap() -> None:
    # 30 batches of 50 calls is past the 1,000-call backstop: the benchmark lifts the cap so
    # each batch is screened, settled and reviewed rather than skipped.
    assert len(guard_step.measure(True, 50, 0, 30)) == 30


def test_it_measures_the_step_of_another_revision_beside_this_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = Path(guard_step.__file__).resolve().parent.parent
    found = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True)
    if found.returncode:
        pytest.skip("not a git checkout")
    out = tmp_path / "guard_step.json"
    argv = ["--calls", "3", "--kb", "1", "--batches", "2", "--against", "HEAD"]
    assert guard_step.main([*argv, "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert {"normalized", "before v4", "normalized @HEAD"} <= set(figures)
    assert "normalized / normalized @HEAD (median)" in capsys.readouterr().out
