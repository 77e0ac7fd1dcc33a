"""``seawall storage gc`` as an operator runs it: its refusals, and a report against a real
dev server (the collection itself: tests/seawall/runtime/test_storage_gc.py)."""

from __future__ import annotations

import json
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.seawall.cli.test_main import seawall


def test_gc_refuses_a_store_it_cannot_clean() -> None:
    done = seawall(
        "storage",
        "gc",
        env={"SEAWALL_PAYLOAD_STORAGE": "s3", "SEAWALL_PAYLOAD_STORAGE_BUCKET": "b"},
    )

    assert done.returncode == 2
    assert "filesystem store" in done.stderr


def test_gc_that_cannot_ask_temporal_removes_nothing_and_says_so(tmp_path: Path) -> None:
    done = seawall(
        "storage",
        "gc",
        env={"TEMPORAL_ADDRESS": "127.0.0.1:1", "SEAWALL_PAYLOAD_STORAGE_DIR": str(tmp_path)},
    )

    assert done.returncode == 1
    assert "nothing removed" in done.stderr


def test_gc_reports_as_json(temporal_env: WorkflowEnvironment, tmp_path: Path) -> None:
    address = temporal_env.client.service_client.config.target_host
    done = seawall(
        "storage",
        "gc",
        "--json",
        env={"TEMPORAL_ADDRESS": address, "SEAWALL_PAYLOAD_STORAGE_DIR": str(tmp_path)},
    )

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["blobs_removed"] == 0
    assert report["namespace"] == "default"
