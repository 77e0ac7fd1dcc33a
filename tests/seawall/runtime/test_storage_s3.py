"""The s3 payload store against a real S3-compatible server (moto's, tests/s3_helpers.py) and
a real dev server: a long prompt's payloads round-trip through the SDK's S3 driver, ``seawall
storage gc`` removes only those of workflows Temporal deleted, and a reference naming
another bucket is refused (docs/durability.md, "Long prompts and stored payloads")."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.converter import (
    ExternalStorage,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
)
from temporalio.service import RPCError

from seawall.runtime.plugin import connect
from seawall.runtime.storage_gc_s3 import collect_s3, list_workflow_objects
from seawall.runtime.storage_s3 import (
    BucketClient,
    key_segment,
    namespace_prefix,
    parse_key,
    s3_client,
    s3_driver,
)
from seawall.scenario.driver import prompt_input, run_scenario, workflow_id_for
from seawall.worker.build import build_worker
from tests.long_prompt_helpers import long_prompt, with_storage
from tests.s3_helpers import REGION, new_bucket_name, use_s3
from tests.seawall.runtime.test_storage import workflow_task_failure
from tests.seawall.runtime.test_storage_gc import delete
from tests.telemetry_helpers import closed_port
from tests.trust_helpers import harness_trust
from workflows.contracts import Role
from workflows.contracts.prompt import PromptResult, StopReason
from workflows.prompt.workflow import PromptWorkflow


@pytest_asyncio.fixture
async def bucket(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    use_s3(monkeypatch)
    name = new_bucket_name()
    async with s3_client(s3_endpoint, REGION) as s3:
        await s3.create_bucket(Bucket=name)
    yield name


@pytest_asyncio.fixture
async def s3(s3_endpoint: str, bucket: str) -> AsyncIterator[Any]:
    async with s3_client(s3_endpoint, REGION) as opened:
        yield opened


def s3_storage(bucket: str, endpoint: str, threshold: int = 1024) -> ExternalStorage:
    return ExternalStorage(
        drivers=[s3_driver(bucket, endpoint, REGION)], payload_size_threshold=threshold
    )


@pytest.fixture
def stored(client: Client, s3_endpoint: str, bucket: str) -> Client:
    """``client`` storing payloads past 1 KiB in ``bucket``, as a worker configured for s3."""
    return with_storage(client, s3_storage(bucket, s3_endpoint))


async def run_prompts(stored: Client, *specs: Any) -> list[PromptResult]:
    queue = f"test-{uuid.uuid4().hex[:10]}"
    results = []
    with tempfile.TemporaryDirectory() as workspace:
        # No workflow kept in memory: every task replays, reading the stored payloads back.
        async with build_worker(stored, queue, max_cached_workflows=0, trust=harness_trust()):
            for spec in specs:
                results.append(
                    await run_scenario(stored, spec, task_queue=queue, workspace=Path(workspace))
                )
    return results


async def keys_by_workflow(s3: Any, bucket: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for stored in await list_workflow_objects(s3, bucket, "default"):
        found.setdefault(stored.workflow_id, set()).add(stored.key)
    return found


async def test_a_long_prompt_round_trips_its_payloads_through_the_s3_driver(
    stored: Client, bucket: str, s3: Any
) -> None:
    [result] = await run_prompts(stored, long_prompt(3, 100_000))

    assert result.stop_reason is StopReason.END_TURN
    assert [len(m.content) for m in result.messages if m.role is Role.TOOL] == [100_000] * 3
    history = await stored.get_workflow_handle(result.workflow_id).fetch_history()
    assert sum(event.ByteSize() for event in history.events) < 200_000  # references only
    held = await keys_by_workflow(s3, bucket)
    assert set(held) == {result.workflow_id}  # every object keyed under its workflow
    assert len(held[result.workflow_id]) >= 3
    # A client reading the result later gets it whole from the bucket.
    again = await stored.get_workflow_handle(result.workflow_id, result_type=PromptResult).result()
    assert again.messages == result.messages


async def test_gc_removes_only_the_objects_of_deleted_workflows(
    client: Client, stored: Client, bucket: str, s3: Any
) -> None:
    gone, kept = await run_prompts(stored, long_prompt(2, 5_000), long_prompt(3, 6_000))
    # An object the driver stored with no workflow in its context is never attributed.
    loose = f"v0/ns/default/d/sha256/{'0' * 64}"
    await s3.put_object(Bucket=bucket, Key=loose, Body=b"loose")
    held = await keys_by_workflow(s3, bucket)
    sizes = {o.key: o.size for o in await list_workflow_objects(s3, bucket, "default")}
    await delete(client, gone.workflow_id)

    dry = await collect_s3(stored, s3, bucket, grace=timedelta(0), dry_run=True)

    assert dry.workflows_deleted == [gone.workflow_id]
    assert dry.blobs_removed == len(held[gone.workflow_id])
    assert dry.bytes_removed == sum(sizes[k] for k in held[gone.workflow_id]) > 0
    assert await keys_by_workflow(s3, bucket) == held  # nothing removed yet

    report = await collect_s3(stored, s3, bucket, grace=timedelta(0))

    assert report.workflows_deleted == [gone.workflow_id]
    assert report.workflows_kept == 1
    assert (report.blobs_removed, report.bytes_removed) == (dry.blobs_removed, dry.bytes_removed)
    assert await keys_by_workflow(s3, bucket) == {kept.workflow_id: held[kept.workflow_id]}
    assert (await s3.head_object(Bucket=bucket, Key=loose))["ContentLength"] == 5
    # What stays still reads back.
    result = await stored.get_workflow_handle(kept.workflow_id, result_type=PromptResult).result()
    assert result.messages == kept.messages


async def test_gc_keeps_objects_written_within_the_grace_period(
    client: Client, stored: Client, bucket: str, s3: Any
) -> None:
    [result] = await run_prompts(stored, long_prompt(1, 5_000))
    held = await keys_by_workflow(s3, bucket)
    await delete(client, result.workflow_id)

    report = await collect_s3(stored, s3, bucket, grace=timedelta(hours=1))

    assert report.workflows_deleted == [result.workflow_id]
    assert report.blobs_removed == 0
    assert report.blobs_kept == len(held[result.workflow_id]) > 0
    assert await keys_by_workflow(s3, bucket) == held


async def test_gc_that_cannot_ask_temporal_removes_nothing(
    client: Client, stored: Client, bucket: str, s3: Any
) -> None:
    [result] = await run_prompts(stored, long_prompt(1, 5_000))
    held = await keys_by_workflow(s3, bucket)
    await delete(client, result.workflow_id)
    # A namespace Temporal does not know answers NOT_FOUND for every workflow: never "deleted".
    elsewhere = await connect(client.service_client.config.target_host, "no-such-namespace")
    key = f"{namespace_prefix('no-such-namespace')}T/wi/w/ri/r/d/sha256/{'1' * 64}"
    await s3.put_object(Bucket=bucket, Key=key, Body=b"x")

    with pytest.raises(RPCError):
        await collect_s3(elsewhere, s3, bucket, grace=timedelta(0))

    assert await keys_by_workflow(s3, bucket) == held
    assert (await s3.head_object(Bucket=bucket, Key=key))["ContentLength"] == 1


def test_keys_are_read_back_as_the_driver_writes_them() -> None:
    workflow_id = "prompt:ünïcode/with spaces%"
    key = (
        f"{namespace_prefix('default')}PromptWorkflow/wi/{key_segment(workflow_id)}"
        f"/ri/run/d/sha256/{'a' * 64}"
    )

    assert parse_key(key) == workflow_id
    assert parse_key(f"v0/ns/default/d/sha256/{'a' * 64}") is None  # the short form
    assert parse_key(f"v0/ns/default/at/A/ai/1/ri/r/d/sha256/{'a' * 64}") is None  # activity
    assert parse_key(f"{namespace_prefix('default')}T/wi/null/ri/r/d/sha256/x") is None


async def test_a_reference_naming_another_bucket_is_refused(
    s3_endpoint: str, bucket: str, s3: Any
) -> None:
    await s3.put_object(Bucket=bucket, Key="secret", Body=b"not a payload")
    other = s3_driver(new_bucket_name(), s3_endpoint, REGION)
    claim = StorageDriverClaim(
        claim_data={"bucket": bucket, "key": "secret", "hash_algorithm": "sha256"}
    )

    with pytest.raises(RuntimeError, match="retrieve failed") as caught:
        await other.retrieve(StorageDriverRetrieveContext(), [claim])

    assert "this process reads bucket" in str(caught.value.__cause__)


async def test_a_stored_object_found_again_is_rewritten_once_old(
    s3_endpoint: str, bucket: str, s3: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = BucketClient(bucket, s3_endpoint, REGION)
    await client.put_object(bucket=bucket, key="k", data=b"payload")

    assert await client.object_exists(bucket=bucket, key="k")
    assert not await client.object_exists(bucket=bucket, key="absent")
    monkeypatch.setattr("seawall.runtime.storage_s3.REFRESH_AFTER", timedelta(0))
    assert not await client.object_exists(bucket=bucket, key="k")  # the driver writes it again


async def test_an_unreachable_bucket_shows_the_bucket_on_the_prompts_failed_task(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    use_s3(monkeypatch)
    unreachable = f"http://127.0.0.1:{closed_port()}"
    # The client keeps the prompt's input inline; the worker stores what passes 4 KB (the
    # tool call carrying the scenario's 5,000-character page), in a bucket it cannot reach.
    starter = with_storage(client, s3_storage("seawall-payloads", unreachable, 10**6))
    worker_client = with_storage(client, s3_storage("seawall-payloads", unreachable, 4096))
    spec = long_prompt(1, 5_000)
    queue = f"test-{uuid.uuid4().hex[:10]}"
    with tempfile.TemporaryDirectory() as workspace:
        async with build_worker(worker_client, queue, trust=harness_trust()):
            handle = await starter.start_workflow(
                PromptWorkflow.run,
                prompt_input(spec, Path(workspace)),
                id=workflow_id_for(spec),
                task_queue=queue,
            )
            failure = await workflow_task_failure(handle)
            await handle.terminate("test over")

    # What the Temporal UI shows on the prompt: the store that failed, not a silent wait.
    assert "S3StorageDriver store failed [bucket=seawall-payloads" in failure
    assert "Nondeterminism" not in failure
