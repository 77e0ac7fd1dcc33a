"""``seawall storage gc`` on a real dev server: the payloads of a workflow Temporal deleted go,
those of a live workflow (or one still retained) and those a kept workflow shares stay."""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from datetime import timedelta
from pathlib import Path

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
from temporalio.client import Client

from seawall.runtime.storage import FilesystemStorageDriver
from seawall.runtime.storage_gc import collect, workflow_exists
from seawall.scenario.driver import run_scenario
from seawall.worker.build import build_worker
from tests.long_prompt_helpers import filesystem_storage, long_prompt, with_storage
from tests.trust_helpers import harness_trust
from workflows.contracts.prompt import PromptResult


async def delete(client: Client, workflow_id: str) -> None:
    """Delete a closed workflow as retention would, and wait until Temporal forgot it."""
    await client.workflow_service.delete_workflow_execution(
        DeleteWorkflowExecutionRequest(
            namespace=client.namespace,
            workflow_execution=WorkflowExecution(workflow_id=workflow_id),
        )
    )
    deadline = asyncio.get_running_loop().time() + 60
    while await workflow_exists(client, workflow_id):
        assert asyncio.get_running_loop().time() < deadline, "the deletion never completed"
        await asyncio.sleep(0.2)


async def test_gc_removes_only_the_payloads_of_deleted_workflows(
    client: Client, tmp_path: Path
) -> None:
    stored = with_storage(client, filesystem_storage(tmp_path, threshold=1024))
    driver = FilesystemStorageDriver(tmp_path)
    queue = f"test-{uuid.uuid4().hex[:10]}"
    results = []
    with tempfile.TemporaryDirectory() as workspace:
        async with build_worker(stored, queue, trust=harness_trust()):
            # Two prompts reading the same pages share those payloads; the third is alone.
            for spec in (long_prompt(2, 5_000), long_prompt(2, 5_000), long_prompt(3, 6_000)):
                results.append(
                    await run_scenario(stored, spec, task_queue=queue, workspace=Path(workspace))
                )
    gone, sharing, alone = (r.workflow_id for r in results)
    held = {r.workflow_id: r.digests() for r in driver.workflow_refs(client.namespace)}
    shared = held[gone] & held[sharing]
    assert shared and held[gone] - held[sharing]  # some payloads shared, some its own
    await delete(client, gone)

    dry = await collect(stored, driver, grace=timedelta(0), dry_run=True)
    assert dry.workflows_deleted == [gone]
    assert {p.name for p in driver.blobs()} >= held[gone]  # nothing removed yet

    report = await collect(stored, driver, grace=timedelta(0))

    remaining = {p.name for p in driver.blobs()}
    assert report.workflows_deleted == [gone]
    assert report.workflows_kept == 2
    assert report.blobs_removed == dry.blobs_removed == len(held[gone] - held[sharing])
    assert held[sharing] | held[alone] <= remaining  # shared payloads stay
    assert not (held[gone] - held[sharing]) & remaining
    assert {r.workflow_id for r in driver.workflow_refs(client.namespace)} == {sharing, alone}
    # The chunks left are exactly those the payloads left are made of.
    used = {c for blob in driver.blobs() for c in driver.manifest_chunks(blob)}
    assert used and {c.name for c in driver.chunks()} == used
    assert report.chunks_removed == dry.chunks_removed > 0
    # What stays still reads back.
    kept = await stored.get_workflow_handle(sharing, result_type=PromptResult).result()
    assert kept.messages


async def test_gc_keeps_payloads_within_the_grace_period(client: Client, tmp_path: Path) -> None:
    stored = with_storage(client, filesystem_storage(tmp_path, threshold=1024))
    driver = FilesystemStorageDriver(tmp_path)
    queue = f"test-{uuid.uuid4().hex[:10]}"
    with tempfile.TemporaryDirectory() as workspace:
        async with build_worker(stored, queue, trust=harness_trust()):
            result = await run_scenario(
                stored, long_prompt(1, 5_000), task_queue=queue, workspace=Path(workspace)
            )
    await delete(client, result.workflow_id)

    report = await collect(stored, driver, grace=timedelta(hours=1))

    assert report.workflows_deleted == [result.workflow_id]
    assert report.blobs_removed == 0
    assert report.blobs_kept == len(driver.blobs()) > 0
