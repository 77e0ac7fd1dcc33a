"""External Storage of payloads on a real dev server (docs/durability.md, "Long prompts and stored
payloads"): a prompt far past Temporal's payload limits runs to its end, its history holds
references, its payloads are stored once by content, and a missing or corrupt payload is a clear
error."""

from __future__ import annotations

import asyncio
import json
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import Client, WorkflowHandle
from temporalio.contrib.aws.s3driver import S3StorageDriver
from temporalio.converter import (
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
)
from temporalio.exceptions import ApplicationError

from seawall.runtime.settings import SeawallSettings, SettingsError, load_settings
from seawall.runtime.storage import (
    STORED_PAYLOAD_CORRUPT,
    STORED_PAYLOAD_MISSING,
    WORKFLOW_CLAIM,
    FilesystemStorageDriver,
    describe,
    payload_storage,
)
from seawall.scenario.driver import prompt_input, run_scenario, workflow_id_for
from seawall.worker.build import build_worker
from tests.long_prompt_helpers import filesystem_storage, long_prompt, with_storage
from tests.model_request_helpers import model_requests
from tests.trust_helpers import harness_trust
from workflows.contracts.conversation import (
    DEFAULT_CONTEXT_BUDGET_CHARS,
    ELIDED_PREFIX,
    MAX_CONVERSATION_CHARS,
    Role,
)
from workflows.contracts.prompt import StopReason
from workflows.prompt.scenario_hooks import BatchRelease, DriverWait
from workflows.prompt.workflow import PromptWorkflow

WORKFLOW = StorageDriverStoreContext(
    target=StorageDriverWorkflowInfo(namespace="default", id="prompt-1", type="PromptWorkflow")
)


def payload(text: str) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(text).encode())


async def test_identical_payloads_are_stored_once_and_indexed_per_workflow(tmp_path: Path) -> None:
    driver = FilesystemStorageDriver(tmp_path)
    other = StorageDriverStoreContext(
        target=StorageDriverWorkflowInfo(namespace="default", id="prompt-2")
    )

    first = await driver.store(WORKFLOW, [payload("a" * 1000), payload("b" * 1000)])
    again = await driver.store(other, [payload("a" * 1000)])

    # One blob per content; each claim names the workflow it was stored for, which the index
    # records (what the gateway's codec checks: gateway/codec_scope.py).
    assert first[0].claim_data["digest"] == again[0].claim_data["digest"]
    assert first[0].claim_data[WORKFLOW_CLAIM] == "prompt-1"
    assert again[0].claim_data[WORKFLOW_CLAIM] == "prompt-2"
    assert len(driver.blobs()) == 2
    digest_b = first[1].claim_data["digest"]
    assert driver.holds("default", "prompt-1", digest_b)
    assert not driver.holds("default", "prompt-2", digest_b)
    assert not driver.holds("default", "prompt-1", "../" + digest_b)
    refs = {r.workflow_id: r.digests() for r in driver.workflow_refs("default")}
    assert refs == {
        "prompt-1": {first[0].claim_data["digest"], first[1].claim_data["digest"]},
        "prompt-2": {first[0].claim_data["digest"]},
    }
    retrieved = await driver.retrieve(StorageDriverRetrieveContext(), first)
    assert retrieved == [payload("a" * 1000), payload("b" * 1000)]


async def test_a_missing_or_corrupt_payload_is_an_error_naming_it(
    tmp_path: Path,
) -> None:
    driver = FilesystemStorageDriver(tmp_path)
    [missing, corrupt] = await driver.store(WORKFLOW, [payload("gone"), payload("broken")])
    driver.blob_path(missing.claim_data["digest"]).unlink()
    driver.blob_path(corrupt.claim_data["digest"]).write_bytes(b"tampered")

    for claim, kind, says in (
        (missing, STORED_PAYLOAD_MISSING, "is missing"),
        (corrupt, STORED_PAYLOAD_CORRUPT, "is corrupt"),
    ):
        with pytest.raises(ApplicationError) as caught:
            await driver.retrieve(StorageDriverRetrieveContext(), [claim])
        assert caught.value.type == kind
        assert says in caught.value.message
        assert claim.claim_data["digest"] in caught.value.message


async def test_a_store_that_cannot_write_says_so(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.write_text("a file where the directory should be")
    driver = FilesystemStorageDriver(root)

    with pytest.raises(ApplicationError) as caught:
        await driver.store(WORKFLOW, [payload("x")])

    assert caught.value.type == "PayloadStoreFailed"
    assert "could not store a payload" in caught.value.message


async def test_a_prompt_past_the_old_size_stop_runs_to_its_end_with_its_payloads_stored(
    client: Client, tmp_path: Path
) -> None:
    # Eight pages of 150,000 characters: 1.2 M characters, past the old 1 M stop.
    spec = long_prompt(8, 150_000)
    stored = with_storage(client, filesystem_storage(tmp_path))
    queue = f"test-{uuid.uuid4().hex[:10]}"
    with tempfile.TemporaryDirectory() as workspace:
        async with build_worker(stored, queue, trust=harness_trust()):
            result = await run_scenario(stored, spec, task_queue=queue, workspace=Path(workspace))

    assert result.stop_reason is StopReason.END_TURN
    assert result.error is None
    tools = [m for m in result.messages if m.role is Role.TOOL]
    assert [len(m.content) for m in tools] == [150_000] * 8  # the durable conversation is whole
    assert sum(len(m.content) for m in result.messages) > MAX_CONVERSATION_CHARS

    history = await stored.get_workflow_handle(result.workflow_id).fetch_history()
    history_bytes = sum(event.ByteSize() for event in history.events)
    assert history_bytes < 200_000  # references, not 8 x 150 KB results and their requests
    driver = FilesystemStorageDriver(tmp_path)
    [refs] = driver.workflow_refs("default")
    assert refs.workflow_id == result.workflow_id
    assert refs.digests() <= {p.name for p in driver.blobs()}
    # Each page is in its call's result, the next model request and the prompt's result, and
    # is stored once (seawall/runtime/storage_chunks.py): about the conversation's own size.
    conversation_chars = sum(len(m.content) for m in result.messages)
    assert driver.stored_size(refs.digests()) <= 1.2 * conversation_chars

    # The last model request carried the context policy's view: oldest pages elided.
    sent = (await model_requests(stored, history))[-1].messages
    # The scenario leaves the budget to the operator, whose default this test's worker keeps.
    assert spec.context_budget_chars is None
    assert sum(len(m.content) for m in sent) <= DEFAULT_CONTEXT_BUDGET_CHARS
    assert any(m.content.startswith(ELIDED_PREFIX) for m in sent)
    assert sent[-1].content == tools[-1].content  # the newest page is whole


async def test_a_prompt_whose_stored_payload_vanished_shows_the_reason_and_waits(
    client: Client, tmp_path: Path
) -> None:
    # A worker that keeps no workflow in memory replays from history on every task, so it
    # needs the stored tool result of batch 1 again after the pause.
    spec = long_prompt(2, 5_000, events=[{"batch": 1, "queued_prompt": True}])
    stored = with_storage(client, filesystem_storage(tmp_path, threshold=1024))
    queue = f"test-{uuid.uuid4().hex[:10]}"
    driver = FilesystemStorageDriver(tmp_path)
    with tempfile.TemporaryDirectory() as workspace:
        async with build_worker(stored, queue, max_cached_workflows=0, trust=harness_trust()):
            handle = await stored.start_workflow(
                PromptWorkflow.run,
                prompt_input(spec, Path(workspace)),
                id=workflow_id_for(spec),
                task_queue=queue,
            )
            pause = await handle.execute_update(PromptWorkflow.wait_for_driver, DriverWait())
            assert pause.paused_batch == 1
            for blob in driver.blobs():
                blob.unlink()
            await handle.signal(PromptWorkflow.release_batch, BatchRelease(batch=1))
            failure = await workflow_task_failure(handle)
            await handle.terminate("test over")

    # What the Temporal UI shows on the workflow: the reason, not a nondeterminism error.
    assert "is missing from the payload store" in failure
    assert "Nondeterminism" not in failure


async def workflow_task_failure(handle: WorkflowHandle[Any, Any]) -> str:
    """The message of the first failed workflow task in ``handle``'s history (waited for)."""
    deadline = asyncio.get_running_loop().time() + 60
    while asyncio.get_running_loop().time() < deadline:
        history = await handle.fetch_history()
        for event in history.events:
            if event.HasField("workflow_task_failed_event_attributes"):
                return str(event.workflow_task_failed_event_attributes.failure.message)
        await asyncio.sleep(0.2)
    raise AssertionError("no workflow task failed")


async def test_a_client_reading_a_result_whose_payload_vanished_gets_the_reason(
    client: Client, tmp_path: Path
) -> None:
    spec = long_prompt(1, 5_000)
    stored = with_storage(client, filesystem_storage(tmp_path, threshold=1024))
    queue = f"test-{uuid.uuid4().hex[:10]}"
    with tempfile.TemporaryDirectory() as workspace:
        async with build_worker(stored, queue, trust=harness_trust()):
            result = await run_scenario(stored, spec, task_queue=queue, workspace=Path(workspace))
    for blob in FilesystemStorageDriver(tmp_path).blobs():
        blob.unlink()

    with pytest.raises(ApplicationError) as caught:
        await stored.get_workflow_handle(result.workflow_id).result()

    assert caught.value.type == STORED_PAYLOAD_MISSING


async def test_a_worker_that_replays_every_task_reads_the_stored_payloads_back(
    client: Client, tmp_path: Path
) -> None:
    # What a worker crash mid-prompt amounts to: the next worker rebuilds the prompt from its
    # history, stored payloads included (here on every workflow task).
    spec = long_prompt(3, 100_000)
    stored = with_storage(client, filesystem_storage(tmp_path))
    queue = f"test-{uuid.uuid4().hex[:10]}"
    with tempfile.TemporaryDirectory() as workspace:
        async with build_worker(stored, queue, max_cached_workflows=0, trust=harness_trust()):
            result = await run_scenario(stored, spec, task_queue=queue, workspace=Path(workspace))

    assert result.stop_reason is StopReason.END_TURN
    assert [len(m.content) for m in result.messages if m.role is Role.TOOL] == [100_000] * 3


# --- the s3 store (no network here: its configuration, and a bucket that cannot be reached)


def s3_settings(**extra: str) -> SeawallSettings:
    environ = {
        "HOME": "/nonexistent",
        "SEAWALL_PAYLOAD_STORAGE": "s3",
        "SEAWALL_PAYLOAD_STORAGE_BUCKET": "seawall-payloads",
        "SEAWALL_PAYLOAD_STORAGE_S3_ENDPOINT": "http://127.0.0.1:9",
        "SEAWALL_PAYLOAD_STORAGE_S3_REGION": "us-east-1",
        **extra,
    }
    return load_settings(environ=environ).settings


def test_the_s3_setting_builds_the_sdks_s3_driver_with_the_threshold() -> None:
    storage = payload_storage(s3_settings(SEAWALL_PAYLOAD_STORAGE_THRESHOLD_BYTES="1000"))

    assert storage is not None
    [driver] = storage.drivers
    assert isinstance(driver, S3StorageDriver)
    assert storage.payload_size_threshold == 1000
    assert describe(storage) == {
        "payload_storage": "s3",
        "payload_storage_threshold_bytes": 1000,
    }


def test_s3_without_a_bucket_is_a_settings_error() -> None:
    with pytest.raises(SettingsError, match="payload_storage_bucket"):
        load_settings(environ={"HOME": "/nonexistent", "SEAWALL_PAYLOAD_STORAGE": "s3"})


async def test_an_unreachable_bucket_fails_the_start_with_the_bucket_named(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    stored = with_storage(client, payload_storage(s3_settings()))  # type: ignore[arg-type]
    spec = long_prompt(1, 100)
    big = prompt_input(spec, Path("/tmp")).model_copy(update={"prompt": "x" * 100_000})

    with pytest.raises(RuntimeError, match=r"S3StorageDriver store failed \[bucket=seawall"):
        await stored.start_workflow(
            PromptWorkflow.run, big, id=f"unreachable-{uuid.uuid4().hex[:8]}", task_queue="none"
        )
