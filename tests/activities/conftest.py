"""Fixtures of the tool tests: a workspace, and a host folder beside it holding a secret,
the target of every escape the file tools and the sandbox are tried with."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.activities.escape_targets import SECRET


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text(SECRET + "\n")
    return out.resolve()
