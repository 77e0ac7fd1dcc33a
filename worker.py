"""``python worker.py``: a Seawall worker for prompt workflows and their activities.

Every flag defaults to its setting (environment, then the operator's user config file, then
the default; docs/settings.md), read through the one settings model
(``seawall.runtime.settings``; ``seawall config`` shows the effective values). A bad setting
stops the worker before it connects, with one line naming it and exit code 2. The pydantic data
converter is used here, by the CLI and by the replay tests alike, so payloads decode the
same everywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Sequence
from datetime import timedelta

import structlog
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import Runtime
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities import ALL_ACTIVITIES
from activities.mcp.pool import close_pool
from seawall.runtime.logs import configure_logging
from seawall.runtime.metrics import build_runtime, global_attributes
from seawall.runtime.settings import (
    LOG_FORMATS,
    LOG_LEVELS,
    SeawallSettings,
    log_startup_diagnostics,
    settings_or_exit,
)
from seawall.runtime.temporal_setup import ensure_search_attributes
from workflows.prompt import PromptWorkflow
from workflows.session import SessionWorkflow

WORKFLOWS = [PromptWorkflow, SessionWorkflow]
# Deterministic modules the sandbox may share instead of re-importing on every run.
PASSTHROUGH_MODULES = ("pydantic", "pydantic_core", "annotated_types", "workflows")


def workflow_runner() -> SandboxedWorkflowRunner:
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH_MODULES)
    )


async def connect(address: str, namespace: str, runtime: Runtime | None = None) -> Client:
    return await Client.connect(
        address, namespace=namespace, data_converter=pydantic_data_converter, runtime=runtime
    )


def build_worker(client: Client, task_queue: str, *, max_cached_workflows: int = 1000) -> Worker:
    return Worker(
        client,
        task_queue=task_queue,
        workflows=WORKFLOWS,
        activities=ALL_ACTIVITIES,
        workflow_runner=workflow_runner(),
        max_cached_workflows=max_cached_workflows,
        # Heartbeats carry cancellation to running tools: send them at least every second
        # so a cancelled prompt stops its shell promptly.
        max_heartbeat_throttle_interval=timedelta(seconds=1),
        # Lets a running tool finish or heartbeat its cancellation on SIGTERM.
        graceful_shutdown_timeout=timedelta(seconds=10),
    )


def parse_args(
    argv: Sequence[str] | None = None, settings: SeawallSettings | None = None
) -> argparse.Namespace:
    """The worker's flags, each defaulting to its setting (``settings``, else loaded now)."""
    if settings is None:
        settings = settings_or_exit("worker").settings
    parser = argparse.ArgumentParser(description="Run a Seawall worker.")
    parser.add_argument("--address", default=settings.temporal_address)
    parser.add_argument("--namespace", default=settings.temporal_namespace)
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
    parser.add_argument("--log-format", choices=list(LOG_FORMATS), default=settings.log_format)
    parser.add_argument(
        "--log-level", type=str.upper, choices=list(LOG_LEVELS), default=settings.log_level
    )
    # The settings themselves, for the resource attributes of metrics and spans.
    parser.set_defaults(settings=settings, tracing=None)
    return parser.parse_args(argv)


async def run_worker(args: argparse.Namespace) -> None:
    log = structlog.get_logger("seawall.worker")
    metrics_bind = f"{args.metrics_host}:{args.metrics_port}" if args.metrics_port else None
    runtime = build_runtime(
        metrics_bind=metrics_bind,
        otlp_endpoint=args.otlp_endpoint,
        attributes=global_attributes(args.settings),
    )
    client = await connect(args.address, args.namespace, runtime)
    if args.tracing is not None:
        # The interceptor on the client applies to the worker built from it.
        config = client.config()
        config["interceptors"] = [args.tracing.interceptor]
        client = Client(**config)
    await ensure_search_attributes(client, args.namespace)
    worker = build_worker(client, args.task_queue, max_cached_workflows=args.max_cached_workflows)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    log.info(
        "worker_started",
        address=args.address,
        namespace=args.namespace,
        task_queue=args.task_queue,
        metrics=metrics_bind or ("otlp" if args.otlp_endpoint else None),
    )
    try:
        async with worker:
            await stop.wait()
            log.info("worker_stopping")
    finally:
        await close_pool()  # stop MCP servers cleanly
    log.info("worker_stopped")


def main(argv: Sequence[str] | None = None) -> None:
    effective = settings_or_exit("worker")
    args = parse_args(argv, effective.settings)
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


if __name__ == "__main__":
    main()
