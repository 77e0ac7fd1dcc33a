"""``python worker.py``: a Seawall worker for prompt workflows and their activities.

Every flag can also come from the environment (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
SEAWALL_TASK_QUEUE, …) or the operator's user config file, through the one settings model
(``seawall.runtime.settings``; ``seawall config`` shows the effective values). The pydantic data
converter is used here, by the CLI and by the replay tests alike, so payloads decode the
same everywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import os
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
from seawall.runtime.logs import LOG_FORMATS, configure_logging
from seawall.runtime.metrics import build_runtime, telemetry_environ
from seawall.runtime.settings import LOG_LEVELS, SettingsError, load_settings
from seawall.runtime.temporal_setup import ensure_search_attributes
from workflows.prompt import PromptWorkflow
from workflows.session import SessionWorkflow

DEFAULT_ADDRESS = "localhost:7233"
DEFAULT_NAMESPACE = "default"
DEFAULT_TASK_QUEUE = "seawall"
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


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    env = os.environ
    parser = argparse.ArgumentParser(
        prog="python worker.py",
        description="Run a Seawall worker: it polls a Temporal task queue and runs the prompt "
        "and session workflows, their model requests and their tool calls.",
        epilog="Each flag's default comes from the environment or the user config file; "
        "`seawall config` shows the effective values and docs/settings.md lists them all.",
    )
    try:
        settings = load_settings().settings
    except SettingsError as err:
        parser.error(str(err))
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
        default=int(env.get("SEAWALL_MAX_CACHED_WORKFLOWS", "1000")),
        help="workflows kept in memory; 0 replays every workflow task from history",
    )
    parser.add_argument("--log-format", choices=list(LOG_FORMATS), default=settings.log_format)
    parser.add_argument(
        "--log-level", type=str.upper, choices=list(LOG_LEVELS), default=settings.log_level
    )
    # Resource attributes for metrics and spans, from the environment or the user config.
    parser.set_defaults(telemetry_environ=telemetry_environ(settings), tracing=None)
    return parser.parse_args(argv)


async def run_worker(args: argparse.Namespace) -> None:
    log = structlog.get_logger("seawall.worker")
    metrics_bind = f"{args.metrics_host}:{args.metrics_port}" if args.metrics_port else None
    runtime = build_runtime(
        metrics_bind=metrics_bind, otlp_endpoint=args.otlp_endpoint, environ=args.telemetry_environ
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
    args = parse_args(argv)
    configure_logging(args.log_format, args.log_level)
    if args.otel_tracing:
        from seawall.runtime.metrics import global_attributes
        from seawall.runtime.tracing import (
            TracingUnavailable,
            build_tracing,
            parse_resource_attributes,
        )

        environ = args.telemetry_environ
        try:
            args.tracing = build_tracing(
                otlp_endpoint=args.otlp_endpoint,
                resource_attributes={
                    **parse_resource_attributes(environ.get("OTEL_RESOURCE_ATTRIBUTES")),
                    **global_attributes(environ),
                },
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
