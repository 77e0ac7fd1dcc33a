"""Retention of stored payloads: remove those of workflows Temporal has deleted.

docs/durability.md, "Long prompts and stored payloads". Temporal deletes a closed workflow's history
when the namespace's retention period has passed; the payloads External Storage kept for it are then
garbage. The filesystem driver (``seawall.runtime.storage``) indexes every stored payload under the
workflow the SDK's store context names, so :func:`collect`:

1. lists the stored blobs (a snapshot, with their times);
2. for each workflow of the namespace in the index, asks Temporal whether it still exists
   (any run, open or closed and retained); one Temporal no longer knows (``NOT_FOUND``, in a
   namespace it knows) loses its index entry. Any other answer (an unreachable server, a
   permission error) stops the collection before anything is removed: it never guesses;
3. removes each blob of the snapshot that no remaining index entry (of any namespace) holds
   and that nobody stored or reused within ``grace`` (a store writes its index entry before
   its blob and touches a blob it reuses, so a payload being stored right now is kept);
4. removes each chunk (``seawall.runtime.storage_chunks``) that no remaining payload is made
   of, with the same grace (a store writes or touches a payload's chunks before its manifest).

A live workflow, or a closed one still in retention, therefore always keeps its payloads.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from seawall.runtime.storage import FilesystemStorageDriver

DEFAULT_GRACE = timedelta(hours=1)


@dataclass
class GcReport:
    """What one collection found and did (counts and sizes only)."""

    namespace: str
    dry_run: bool
    workflows_kept: int = 0
    workflows_deleted: list[str] = field(default_factory=list)
    blobs_removed: int = 0
    bytes_removed: int = 0
    blobs_kept: int = 0
    chunks_removed: int = 0

    def as_json(self) -> dict[str, object]:
        return {
            "namespace": self.namespace,
            "dry_run": self.dry_run,
            "workflows_kept": self.workflows_kept,
            "workflows_deleted": len(self.workflows_deleted),
            "blobs_removed": self.blobs_removed,
            "bytes_removed": self.bytes_removed,
            "blobs_kept": self.blobs_kept,
            "chunks_removed": self.chunks_removed,
        }


async def ensure_namespace(client: Client) -> None:
    """Raise unless Temporal knows ``client``'s namespace: a workflow of a namespace it does
    not know is ``NOT_FOUND`` too, which must never read as "deleted"."""
    await client.workflow_service.describe_namespace(
        DescribeNamespaceRequest(namespace=client.namespace)
    )


async def workflow_exists(client: Client, workflow_id: str) -> bool:
    """Whether Temporal still has any run of ``workflow_id`` (raises on any other error)."""
    try:
        await client.get_workflow_handle(workflow_id).describe()
    except RPCError as err:
        if err.status is RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True


async def collect(
    client: Client,
    driver: FilesystemStorageDriver,
    *,
    grace: timedelta = DEFAULT_GRACE,
    dry_run: bool = False,
) -> GcReport:
    """Remove the stored payloads of the workflows of ``client``'s namespace that Temporal
    has deleted (module docstring); ``dry_run`` only reports what would go."""
    await ensure_namespace(client)
    started = time.time()
    report = GcReport(namespace=client.namespace, dry_run=dry_run)
    snapshot = driver.blobs()
    chunk_snapshot = driver.chunks()
    deleted = []
    for refs in driver.workflow_refs(client.namespace):
        if await workflow_exists(client, refs.workflow_id):
            report.workflows_kept += 1
        else:
            deleted.append(refs)
    report.workflows_deleted = [refs.workflow_id for refs in deleted]
    if not dry_run:
        for refs in deleted:
            shutil.rmtree(refs.path, ignore_errors=True)
    # Read after the removals: an entry a store wrote meanwhile counts.
    referenced = driver.referenced_digests(excluding={refs.path for refs in deleted})
    newest_removable = started - grace.total_seconds()
    removed, report.blobs_kept, freed = _sweep(snapshot, referenced, newest_removable, dry_run)
    report.blobs_removed, report.bytes_removed = len(removed), freed
    # 4. the chunks no payload left is made of (read after the removals; same grace).
    used = {c for blob in driver.blobs() if blob.name not in removed for c in _chunks(driver, blob)}
    chunks, _, freed = _sweep(chunk_snapshot, used, newest_removable, dry_run)
    report.chunks_removed, report.bytes_removed = len(chunks), report.bytes_removed + freed
    return report


def _sweep(
    files: list[Path], used: set[str], newest_removable: float, dry_run: bool
) -> tuple[set[str], int, int]:
    """Remove each of ``files`` that no one uses and nobody wrote or touched since
    ``newest_removable``: the names removed, how many were kept, the bytes freed."""
    removed: set[str] = set()
    kept = freed = 0
    for path in files:
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue
        if path.name in used or stat.st_mtime > newest_removable:
            kept += 1
            continue
        if not dry_run:
            path.unlink(missing_ok=True)
        removed.add(path.name)
        freed += stat.st_size
    return removed, kept, freed


def _chunks(driver: FilesystemStorageDriver, blob: Path) -> list[str]:
    try:
        return driver.manifest_chunks(blob)
    except FileNotFoundError:  # removed meanwhile (another collection)
        return []
