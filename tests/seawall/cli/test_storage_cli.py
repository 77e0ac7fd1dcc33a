"""``seawall storage gc`` as an operator runs it: its refusals, and a report against a real
dev server (the collection itself: tests/seawall/runtime/test_storage_gc.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.s3_helpers import REGION, new_bucket_name, use_s3
from tests.seawall.cli.test_main import seawall
from tests.telemetry_helpers import closed_port


def test_gc_refuses_a_store_it_cannot_clean() -> None:
    done = seawall("storage", "gc", env={"SEAWALL_PAYLOAD_STORAGE": "off"})

    assert done.returncode == 2
    assert "no payload store" in done.stderr


def test_gc_on_s3_refuses_a_grace_shorter_than_the_drivers_refresh() -> None:
    s3 = {"SEAWALL_PAYLOAD_STORAGE": "s3", "SEAWALL_PAYLOAD_STORAGE_BUCKET": "b"}
    done = seawall("storage", "gc", "--grace-hours", "0", env=s3)

    assert done.returncode == 2
    assert "--grace-hours must be at least 0.25" in done.stderr


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


def test_gc_on_s3_reports_as_json(
    temporal_env: WorkflowEnvironment, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from seawall.runtime.storage_s3 import s3_client

    use_s3(monkeypatch)
    bucket = new_bucket_name()

    async def create() -> None:
        async with s3_client(s3_endpoint, REGION) as s3:
            await s3.create_bucket(Bucket=bucket)

    asyncio.run(create())
    address = temporal_env.client.service_client.config.target_host
    done = seawall(
        "storage",
        "gc",
        "--dry-run",
        "--json",
        env={
            "TEMPORAL_ADDRESS": address,
            "SEAWALL_PAYLOAD_STORAGE": "s3",
            "SEAWALL_PAYLOAD_STORAGE_BUCKET": bucket,
            "SEAWALL_PAYLOAD_STORAGE_S3_ENDPOINT": s3_endpoint,
            "SEAWALL_PAYLOAD_STORAGE_S3_REGION": REGION,
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
        },
    )

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["dry_run"] is True
    assert report["blobs_removed"] == 0


def test_gc_on_s3_that_cannot_reach_the_bucket_removes_nothing_and_says_so(
    temporal_env: WorkflowEnvironment,
) -> None:
    address = temporal_env.client.service_client.config.target_host
    done = seawall(
        "storage",
        "gc",
        env={
            "TEMPORAL_ADDRESS": address,
            "SEAWALL_PAYLOAD_STORAGE": "s3",
            "SEAWALL_PAYLOAD_STORAGE_BUCKET": "b",
            "SEAWALL_PAYLOAD_STORAGE_S3_ENDPOINT": f"http://127.0.0.1:{closed_port()}",
            "SEAWALL_PAYLOAD_STORAGE_S3_REGION": REGION,
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_MAX_ATTEMPTS": "1",
        },
    )

    assert done.returncode == 1
    assert "nothing removed" in done.stderr
