"""``seawall storage gc``: remove the stored payloads of workflows Temporal has deleted.

The payloads External Storage keeps outside Temporal's history (docs/durability.md, "Long prompts
and stored payloads") outlive their workflows unless someone removes them; this is that someone, run
on a schedule (docs/durability.md, "Long prompts and stored payloads"). It works on the store the
settings choose (``payload_storage``: the filesystem store, ``seawall.runtime.storage_gc``, or the
s3 bucket, ``seawall.runtime.storage_gc_s3``) for the Temporal namespace they name, asks that server
which workflows still exist, and never removes a payload of one that does. Exit code 0; 2 for a bad
setting or a store it cannot clean; 1 when Temporal or the bucket could not be asked (nothing was
removed then) or the store failed part-way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import timedelta
from typing import Any

from seawall.runtime.process_exit import exit_without_finalizing
from seawall.runtime.settings import SeawallSettings
from seawall.runtime.storage import FilesystemStorageDriver, storage_dir
from seawall.runtime.storage_gc import DEFAULT_GRACE, GcReport, collect
from seawall.runtime.storage_s3 import MIN_GC_GRACE
from seawall.runtime.temporal_connect import TemporalClientConfig

EXIT_OK = 0
EXIT_TEMPORAL = 1
EXIT_USAGE = 2


def add_storage_parser(commands: argparse._SubParsersAction[Any]) -> None:
    """The ``storage`` command and its ``gc`` subcommand."""
    storage = commands.add_parser(
        "storage",
        help="manage the payloads stored outside Temporal's history",
        description="Stored payloads (docs/settings.md, 'Payload storage').",
    )
    actions = storage.add_subparsers(dest="storage_command", required=True, metavar="ACTION")
    gc = actions.add_parser(
        "gc",
        help="remove the stored payloads of workflows Temporal has deleted",
        description="Remove the stored payloads of the workflows of the configured namespace "
        "that Temporal no longer has (deleted after their retention period). Payloads of "
        "live workflows, of closed ones still retained, and any stored or reused within the "
        "grace period are kept. Run it on a schedule, e.g. daily.",
    )
    gc.add_argument(
        "--grace-hours",
        type=float,
        default=DEFAULT_GRACE.total_seconds() / 3600,
        help="keep payloads stored or reused within this many hours (default: 1; "
        f"with s3 at least {MIN_GC_GRACE.total_seconds() / 3600:g})",
    )
    gc.add_argument("--dry-run", action="store_true", help="report what would go; remove nothing")
    gc.add_argument("--json", action="store_true", help="print the report as one JSON object")


def render(report: GcReport) -> str:
    verb = "would remove" if report.dry_run else "removed"
    return (
        f"namespace {report.namespace}: {report.workflows_kept} workflows kept, "
        f"{len(report.workflows_deleted)} deleted by Temporal; {verb} "
        f"{report.blobs_removed} payloads and {report.chunks_removed} chunks "
        f"({report.bytes_removed} bytes), kept {report.blobs_kept} payloads"
    )


async def _gc(
    args: argparse.Namespace, settings: SeawallSettings, temporal: TemporalClientConfig
) -> GcReport:
    from seawall.runtime.plugin import connect

    client = await connect(temporal)
    grace = timedelta(hours=args.grace_hours)
    if settings.payload_storage == "s3":
        from seawall.runtime.storage_gc_s3 import collect_s3
        from seawall.runtime.storage_s3 import s3_client

        assert settings.payload_storage_bucket is not None  # the settings model checks it
        async with s3_client(
            settings.payload_storage_s3_endpoint, settings.payload_storage_s3_region
        ) as s3:
            return await collect_s3(
                client, s3, settings.payload_storage_bucket, grace=grace, dry_run=args.dry_run
            )
    driver = FilesystemStorageDriver(storage_dir(settings))
    return await collect(client, driver, grace=grace, dry_run=args.dry_run)


def main_storage(
    args: argparse.Namespace, settings: SeawallSettings, temporal: TemporalClientConfig
) -> int:
    if settings.payload_storage == "off":
        print(
            "seawall: error: payload_storage is off: there is no payload store to clean",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.grace_hours < 0:
        print("seawall: error: --grace-hours must not be negative", file=sys.stderr)
        return EXIT_USAGE
    if settings.payload_storage == "s3" and timedelta(hours=args.grace_hours) < MIN_GC_GRACE:
        # The driver rewrites a reused object only once it is this old (storage_s3).
        print(
            f"seawall: error: --grace-hours must be at least "
            f"{MIN_GC_GRACE.total_seconds() / 3600:g} with payload_storage=s3",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        report = asyncio.run(_gc(args, settings, temporal))
    except OSError as err:  # the store, part-way (collect touches it after Temporal answered)
        print(f"seawall: error: storage gc stopped: {err}", file=sys.stderr)
        exit_without_finalizing(EXIT_TEMPORAL)
    except Exception as err:  # Temporal or the bucket could not be asked: nothing was removed
        print(f"seawall: error: storage gc stopped, nothing removed: {err}", file=sys.stderr)
        exit_without_finalizing(EXIT_TEMPORAL)
    print(json.dumps(report.as_json()) if args.json else render(report))
    # The program's last act, after talking to Temporal: leave without finalizing the
    # interpreter, which races the SDK's threads (seawall.runtime.process_exit).
    exit_without_finalizing(EXIT_OK)
