"""``seawall rollout report``: the rollout evidence for one environment and window.

Connects to the Temporal service of the ``temporal_address`` setting (the embedded server of
``seawall up`` or the compose stack's), reads the window's prompts from visibility and their
histories (:mod:`seawall.rollout.records`), and prints the report; ``--json`` prints it as
one JSON object, ``--html PATH`` also writes the page. ``--db FILE`` reads a dev server's
database file instead (the one ``scripts/simulate_rollout.py`` keeps): the report starts an
embedded dev server on it, reads, and stops it. Exit code 0 with a report (an empty window
says so), 2 for bad arguments or settings, 1 when Temporal cannot be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from temporalio.service import RPCError

from seawall.rollout.records import PromptRecord, read_records
from seawall.rollout.render import render_html, render_json, render_text
from seawall.rollout.report import Report, build_report
from seawall.runtime.temporal_connect import TemporalClientConfig

EXIT_UNREACHABLE = 1


def _moment(text: str) -> datetime:
    """An ISO 8601 time (UTC when it has no offset), or ``now``, or ``-7d`` / ``-12h``."""
    value = text.strip()
    now = datetime.now(UTC)
    if value == "now":
        return now
    if value.startswith("-") and value[-1:] in ("d", "h", "m") and value[1:-1].isdigit():
        unit = {"d": "days", "h": "hours", "m": "minutes"}[value[-1]]
        return now - timedelta(**{unit: int(value[1:-1])})
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a time: {text!r} (ISO 8601, 'now', or -7d / -12h / -30m)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def add_rollout_command(commands: Any) -> None:
    """Register ``seawall rollout report`` on the CLI's subcommands."""
    rollout = commands.add_parser(
        "rollout",
        help="rollout evidence: the seed's invariants and promotion gates",
        description="Rollout evidence for the repeated tool failure guard, computed from "
        'Temporal\'s own records (docs/rollout.md, "The rollout report").',
    )
    actions = rollout.add_subparsers(dest="rollout_command", required=True, metavar="ACTION")
    report = actions.add_parser(
        "report",
        help="invariants, decision volumes and gates for one environment and window",
        description="Read the prompts of one deployment environment started in "
        "[--since, --until) and report the seed's Phase 1 invariants, would_warn/would_stop "
        "volumes, a manual review sample, and the Phase 2/3 gates (treatment vs control, "
        "owner-level bootstrap intervals) with a verdict: promote, hold, or return to shadow.",
    )
    report.add_argument(
        "--since",
        type=_moment,
        default="-7d",
        help="window start: ISO 8601 (UTC unless it has an offset), now, or relative as "
        "--since=-7d / -12h / -30m (default -7d)",
    )
    report.add_argument("--until", type=_moment, default="now", help="window end (default now)")
    report.add_argument(
        "--environment", required=True, help="deployment environment (SeawallEnvironment)"
    )
    report.add_argument("--json", action="store_true", help="print the report as JSON")
    report.add_argument("--html", type=Path, metavar="PATH", help="also write the HTML page")
    report.add_argument(
        "--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)"
    )
    report.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    report.add_argument(
        "--review-sample", type=int, default=20, help="would-stop prompts to list (default 20)"
    )
    report.add_argument(
        "--min-days",
        type=float,
        default=7.0,
        help="days a phase must run before promotion (the seed's seven; default 7)",
    )
    source = report.add_mutually_exclusive_group()
    source.add_argument("--address", help="Temporal address (default: temporal_address)")
    source.add_argument(
        "--db",
        type=Path,
        metavar="FILE",
        help="read a dev server's database file (e.g. the simulated rollout's) on an "
        "embedded server instead of connecting to one",
    )


async def collect(args: argparse.Namespace, temporal: TemporalClientConfig) -> Report:
    if args.db is not None:
        from seawall.runtime.devserver import start_dev_server

        with _stdout_to_stderr():  # the server's banner is not the report
            server = await start_dev_server(database_file=str(args.db))
        async with server as env:
            return _report(args, await read_records(env.client, *_window(args)))
    from seawall.runtime.plugin import connect

    client = await connect(temporal.with_target(args.address))
    return _report(args, await read_records(client, *_window(args)))


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 is stderr meanwhile: what a child started now prints goes there."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _window(args: argparse.Namespace) -> tuple[str, datetime, datetime]:
    return args.environment, args.since, args.until


def _report(args: argparse.Namespace, records: list[PromptRecord]) -> Report:
    return build_report(
        records,
        environment=args.environment,
        since=args.since,
        until=args.until,
        resamples=args.resamples,
        seed=args.seed,
        review_size=args.review_sample,
        min_days=args.min_days,
    )


def write_outputs(report: Report, args: argparse.Namespace) -> None:
    if args.html is not None:
        args.html.write_text(render_html(report), encoding="utf-8")
    print(render_json(report) if args.json else render_text(report))


def main_rollout(args: argparse.Namespace, temporal: TemporalClientConfig) -> int:
    if args.since >= args.until:
        print("seawall: error: --since must be before --until", file=sys.stderr)
        return 2
    if args.resamples < 1:
        print("seawall: error: --resamples must be at least 1", file=sys.stderr)
        return 2
    if args.db is not None and not args.db.is_file():
        print(f"seawall: error: --db {args.db}: no such database file", file=sys.stderr)
        return 2
    try:
        report = asyncio.run(collect(args, temporal))
    except (RuntimeError, RPCError) as err:
        print(f"seawall: error: cannot read Temporal: {err}", file=sys.stderr)
        return EXIT_UNREACHABLE
    write_outputs(report, args)
    return 0
