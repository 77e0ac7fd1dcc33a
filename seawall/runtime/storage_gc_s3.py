"""Retention of stored payloads in an S3 bucket: remove those of workflows Temporal deleted.

The same rule as the filesystem store's collection (``seawall.runtime.storage_gc``), on the
SDK driver's key layout, which names the workflow of every object
(``seawall.runtime.storage_s3``), so no index of ours is needed. :func:`collect_s3`:

1. lists the namespace's workflow-scoped objects (a snapshot, with their sizes and times);
   objects under any other key (an activity's, one stored without a context, the driver's
   short form for keys past 1,024 bytes) are never touched;
2. asks Temporal, for each workflow id found, whether it still exists (any run, open or
   closed and retained). Only ``NOT_FOUND`` (in a namespace Temporal knows) makes a workflow
   deleted; any other answer (an unreachable server, a permission error) stops the
   collection before anything is removed: it never guesses;
3. removes each object of a deleted workflow that was last written before the grace period,
   reading its time again just before (the driver rewrites an object it reuses once that
   object is older than ``REFRESH_AFTER``, so a workflow id started again meanwhile keeps
   what it stores: the grace period must be at least that long, ``MIN_GC_GRACE``).

A live workflow, or a closed one still in retention, therefore always keeps its payloads.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio.client import Client

from seawall.runtime.storage_gc import DEFAULT_GRACE, GcReport, ensure_namespace, workflow_exists
from seawall.runtime.storage_s3 import WorkflowObject, namespace_prefix, parse_key


async def list_workflow_objects(s3: Any, bucket: str, namespace: str) -> list[WorkflowObject]:
    """Every object of ``bucket`` the driver stored for a workflow of ``namespace``."""
    found = []
    paginator = s3.get_paginator("list_objects_v2")
    async for page in paginator.paginate(Bucket=bucket, Prefix=namespace_prefix(namespace)):
        for entry in page.get("Contents", []):
            workflow_id = parse_key(entry["Key"])
            if workflow_id is None:
                continue
            found.append(
                WorkflowObject(entry["Key"], workflow_id, entry["Size"], entry["LastModified"])
            )
    return found


async def collect_s3(
    client: Client,
    s3: Any,
    bucket: str,
    *,
    grace: timedelta = DEFAULT_GRACE,
    dry_run: bool = False,
) -> GcReport:
    """Remove from ``bucket`` the stored payloads of the workflows of ``client``'s namespace
    that Temporal has deleted (module docstring); ``dry_run`` only reports what would go.
    ``s3`` is an aioboto3 S3 client (``seawall.runtime.storage_s3.s3_client``)."""
    await ensure_namespace(client)
    newest_removable = datetime.now(UTC) - grace
    report = GcReport(namespace=client.namespace, dry_run=dry_run)
    by_workflow: dict[str, list[WorkflowObject]] = defaultdict(list)
    for stored in await list_workflow_objects(s3, bucket, client.namespace):
        by_workflow[stored.workflow_id].append(stored)
    deleted = []
    for workflow_id in sorted(by_workflow):
        if await workflow_exists(client, workflow_id):
            report.workflows_kept += 1
            report.blobs_kept += len(by_workflow[workflow_id])
        else:
            deleted.append(workflow_id)
    # Only now that Temporal answered for every workflow is anything removed.
    report.workflows_deleted = deleted
    try:
        for workflow_id in deleted:
            for stored in by_workflow[workflow_id]:
                if not await _removable(s3, bucket, stored, newest_removable):
                    report.blobs_kept += 1
                    continue
                if not dry_run:
                    await s3.delete_object(Bucket=bucket, Key=stored.key)
                report.blobs_removed += 1
                report.bytes_removed += stored.size
    except Exception as err:  # the bucket, part-way: what went before is gone (an OSError)
        raise OSError(
            f"the bucket failed after {report.blobs_removed} payloads were removed: {err}"
        ) from err
    return report


async def _removable(s3: Any, bucket: str, stored: WorkflowObject, newest: datetime) -> bool:
    """Whether ``stored`` was last written before ``newest``, read again now (the listing's
    time may be older than a rewrite since)."""
    if stored.last_modified > newest:
        return False
    try:
        head = await s3.head_object(Bucket=bucket, Key=stored.key)
    except Exception as err:
        code = getattr(err, "response", {}).get("Error", {}).get("Code", "")
        if code in {"404", "NoSuchKey", "NotFound"}:
            return False  # already gone
        raise
    modified = head.get("LastModified")
    return isinstance(modified, datetime) and modified <= newest
