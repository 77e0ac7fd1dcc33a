"""``python worker.py``: the worker program, from its flags to its graceful shutdown.

Every flag defaults to its setting (environment, then the operator's user config file, then
the default; docs/settings.md), read through the one settings model
(``seawall.runtime.settings``; ``seawall config`` shows the effective values). A bad setting
stops the worker before it connects, with one line naming it and exit code 2. Then the
program sets up metrics and tracing, waits for the Temporal server, registers the search
attributes, probes the sandbox, runs the worker :mod:`seawall.worker.build` builds and stops
it gracefully on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Sequence

import structlog

from activities.sandbox import load_policy, log_sandbox_status, probe
from seawall.runtime.logs import configure_logging
from seawall.runtime.metrics import build_runtime, global_attributes
from seawall.runtime.plugin import connect
from seawall.runtime.server_wait import ServerUnreachable, wait_for_server
from seawall.runtime.settings import (
    LOG_FORMATS,
    LOG_LEVELS,
    WORKER,
    SeawallSettings,
    flag_type,
    log_startup_diagnostics,
    protections,
    settings_or_exit,
)
from seawall.runtime.storage import describe as describe_storage
from seawall.runtime.storage import payload_storage
from seawall.runtime.temporal_connect import (
    TemporalAccessRefused,
    TemporalClientConfig,
    temporal_or_exit,
)
from seawall.runtime.temporal_setup import ensure_search_attributes
from seawall.worker.build import build_activities, build_worker


def parse_args(
    argv: Sequence[str] | None = None,
    settings: SeawallSettings | None = None,
    temporal: TemporalClientConfig | None = None,
) -> argparse.Namespace:
    """The worker's flags, each defaulting to its setting (``settings`` and the Temporal
    connection ``temporal``, else loaded now); ``args.temporal`` is the connection with
    ``--address``/``--namespace`` applied."""
    if settings is None or temporal is None:
        effective = settings_or_exit("worker", reader=WORKER)
        settings = settings or effective.settings
        temporal = temporal or temporal_or_exit("worker", effective)
    parser = argparse.ArgumentParser(
        prog="python worker.py",
        description="Run a Seawall worker: it polls a Temporal task queue and runs the prompt "
        "and session workflows, their model requests and their tool calls.",
        epilog="Each flag's default comes from the environment or the user config file; "
        "`seawall config` shows the effective values and docs/settings.md lists them all.",
    )
    parser.add_argument(
        "--address",
        help="Temporal frontend host:port (default: the temporal_address setting or profile)",
    )
    parser.add_argument("--namespace", help="default: the temporal_namespace setting or profile")
    parser.add_argument("--task-queue", default=settings.task_queue)
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=settings.metrics_port,
        help="serve Prometheus metrics on this port (default: no metrics endpoint)",
    )
    parser.add_argument("--metrics-host", default=settings.metrics_host)
    parser.add_argument(
        "--otlp-endpoint",
        default=settings.otlp_endpoint,
        help="export metrics (and, with --otel-tracing, spans) over OTLP to this collector",
    )
    parser.add_argument(
        "--otel-tracing",
        action=argparse.BooleanOptionalAction,
        default=settings.otel_tracing,
        help="add Temporal's OpenTelemetry tracing interceptor (needs the otel extra)",
    )
    parser.add_argument(
        "--max-cached-workflows",
        type=int,
        default=settings.max_cached_workflows,
        help="workflows kept in memory; 0 replays every workflow task from history",
    )
    parser.add_argument(
        "--eager-calls-per-workflow-task",
        type=flag_type("eager_calls_per_workflow_task"),
        default=settings.eager_calls_per_workflow_task,
        help="model and tool calls of one workflow task this worker starts itself, without a "
        "trip through the task queue; 0: every call goes through the task queue",
    )
    parser.add_argument("--log-format", choices=list(LOG_FORMATS), default=settings.log_format)
    parser.add_argument(
        "--log-level", type=str.upper, choices=list(LOG_LEVELS), default=settings.log_level
    )
    # The settings themselves, for the resource attributes of metrics and spans.
    parser.set_defaults(settings=settings, tracing=None)
    args = parser.parse_args(argv)
    args.temporal = temporal.with_target(args.address, args.namespace)
    args.address, args.namespace = args.temporal.target_host, args.temporal.namespace
    return args


async def run_worker(args: argparse.Namespace) -> None:
    log = structlog.get_logger("seawall.worker")
    metrics_bind = f"{args.metrics_host}:{args.metrics_port}" if args.metrics_port else None
    runtime = build_runtime(
        metrics_bind=metrics_bind,
        otlp_endpoint=args.otlp_endpoint,
        attributes=global_attributes(args.settings),
    )
    # An interceptor on the client applies to the worker built from it.
    interceptors = [args.tracing.interceptor] if args.tracing is not None else []
    storage = payload_storage(args.settings)
    try:
        client = await wait_for_server(
            lambda: connect(
                args.temporal,
                runtime=runtime,
                interceptors=interceptors,
                storage=storage,
            ),
            address=args.address,
            timeout_seconds=args.settings.connect_timeout_seconds,
            process="worker",
        )
    except ServerUnreachable as err:
        log.error("worker_gave_up_waiting", address=args.address)
        print(f"worker: error: {err}", file=sys.stderr)
        sys.exit(1)
    except TemporalAccessRefused as err:
        log.error("worker_refused_by_temporal", **args.temporal.describe())
        print(f"worker: error: {err}", file=sys.stderr)
        sys.exit(1)
    await ensure_search_attributes(client, args.namespace)
    # Probed once (docs/security-sandbox.md, "Fail closed"): one line says how shell
    # commands and stdio MCP servers are confined, or that they are refused.
    sandbox = await asyncio.to_thread(probe, load_policy())
    log_sandbox_status(sandbox, log)
    worker = build_worker(
        client,
        args.task_queue,
        build_activities(sandbox=sandbox),
        max_cached_workflows=args.max_cached_workflows,
        eager_calls_per_workflow_task=args.eager_calls_per_workflow_task,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # The guard mode, its source and the loop profile the settings select (each session
    # resolves them again), and the seed profile's notice for an invalid guard mode.
    started = log.warning if "guard_mode_problem" in args.protections else log.info
    started(
        "worker_started",
        **args.temporal.describe(),
        task_queue=args.task_queue,
        metrics=metrics_bind or ("otlp" if args.otlp_endpoint else None),
        **describe_storage(storage),
        **args.protections,
    )
    async with worker:
        await stop.wait()
        log.info("worker_stopping")
    log.info("worker_stopped")


def main(argv: Sequence[str] | None = None) -> None:
    effective = settings_or_exit("worker", reader=WORKER)
    args = parse_args(argv, effective.settings, temporal_or_exit("worker", effective))
    args.protections = protections(effective)
    configure_logging(args.log_format, args.log_level)
    log_startup_diagnostics(effective, structlog.get_logger("seawall.worker"))
    if args.otel_tracing:
        from seawall.runtime.metrics import resource_attributes
        from seawall.runtime.tracing import TracingUnavailable, build_tracing

        try:
            args.tracing = build_tracing(
                otlp_endpoint=args.otlp_endpoint,
                resource_attributes=resource_attributes(args.settings),
            )
        except TracingUnavailable as err:
            print(f"worker: error: {err}", file=sys.stderr)
            sys.exit(2)
    try:
        asyncio.run(run_worker(args))
    finally:
        if args.tracing is not None:
            args.tracing.shutdown()
