"""``python worker.py``: a Seawall worker for prompt workflows and their activities.

This is the composition root: it builds the activity instances with their dependencies
(:func:`build_activities`), hands them to the Seawall Temporal plugin
(:mod:`seawall.runtime.plugin`, which also carries the data converter, the workflows and the
sandbox settings every client and replayer share) and runs the Worker.

Every flag defaults to its setting (environment, then the operator's user config file, then
the default; docs/settings.md), read through the one settings model
(``seawall.runtime.settings``; ``seawall config`` shows the effective values). A bad setting
stops the worker before it connects, with one line naming it and exit code 2.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import dataclasses
import functools
import os
import signal
import sys
import tempfile
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path

import structlog
from temporalio.client import Client
from temporalio.worker import Worker

from activities import WorkerActivities
from activities.demo_model import DemoProvider
from activities.mcp import current_settings
from activities.mcp.pool import McpPool
from activities.model import (
    LazyOpenAIProvider,
    ModelActivities,
    ModelProvider,
    OperatorProvider,
)
from activities.model_selection import endpoint_configured
from activities.operator_settings import OperatorSettingsActivities
from activities.sandbox import Sandbox, load_policy, log_sandbox_status, probe
from activities.tool_runner import ToolActivities
from activities.tools import BUILTIN_TOOLS
from activities.trust import StartCheckActivities

# Re-exported for the CLIs' in-process workers (they import worker.py, never activities).
from activities.trust import WorkerTrust as WorkerTrust
from seawall.runtime.grants import GrantSigner, new_signing_key, signing_client
from seawall.runtime.logs import configure_logging
from seawall.runtime.metrics import build_runtime, global_attributes
from seawall.runtime.owners import ANY_OWNER
from seawall.runtime.plugin import SeawallPlugin, client_with_plugin, connect
from seawall.runtime.process_exit import run_then_exit
from seawall.runtime.server_wait import ServerUnreachable, wait_for_server
from seawall.runtime.settings import (
    LOG_FORMATS,
    LOG_LEVELS,
    SeawallSettings,
    default_of,
    flag_type,
    log_startup_diagnostics,
    resolve_activity_summaries,
    resolve_context_budget,
    resolve_guard_mode,
    resolve_loop_settings,
    resolve_model_retry_window,
    resolve_rollout_settings,
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


def model_providers(environ: Mapping[str, str]) -> dict[str, ModelProvider]:
    """Every ``ModelSpec.provider``: ``operator`` resolves to the endpoint the operator
    configured in ``environ`` (or its user config file), else to the offline demo model."""
    endpoint = LazyOpenAIProvider(environ)
    demo = DemoProvider()
    return {
        "operator": OperatorProvider(
            endpoint, demo, functools.partial(endpoint_configured, environ)
        ),
        "openai": endpoint,
        "demo": demo,
    }


def build_activities(
    environ: Mapping[str, str] = os.environ,
    sandbox: Sandbox | None = None,
    *,
    trust: WorkerTrust | None = None,
) -> WorkerActivities:
    """The worker's activities, reading operator settings from ``environ`` (and the user
    config file it locates) whenever they need them, so a changed setting applies to the
    next prompt. ``sandbox`` is the probed sandbox of shell commands and stdio MCP servers
    (default: probed now from ``environ``'s settings); it is fixed for the worker's life.
    ``trust`` is what the worker accepts of a workflow's input (scripted models, workspace
    roots, session grants; docs/security-trust.md): by default read once from the same
    settings, here."""
    if sandbox is None:
        # Its processes' allowlisted variables come from the same environment.
        sandbox = dataclasses.replace(probe(load_policy(environ)), environ=environ)
    if trust is None:
        trust = WorkerTrust.from_environment(environ)
    return WorkerActivities(
        model=ModelActivities(model_providers(environ), trust=trust),
        tools=ToolActivities(
            BUILTIN_TOOLS,
            McpPool(),
            functools.partial(current_settings, environ),
            sandbox,
            trust=trust,
        ),
        operator_settings=OperatorSettingsActivities(
            functools.partial(resolve_guard_mode, environ),
            functools.partial(resolve_loop_settings, environ),
            functools.partial(resolve_rollout_settings, environ),
            functools.partial(resolve_context_budget, environ),
            functools.partial(resolve_activity_summaries, environ),
            functools.partial(resolve_model_retry_window, environ),
            trust=trust,
        ),
        start_check=StartCheckActivities(trust),
    )


def trusted_local_run(client: Client, roots: Sequence[Path] = ()) -> tuple[Client, WorkerTrust]:
    """For the operator's own scenario runs in one process (scripts, benchmarks): ``client``
    signing what it starts with a key made for the run, and the trust of the in-process
    worker that verifies it, allows scripted models, and workspaces under ``roots`` (default:
    the temporary directory) — docs/security-trust.md."""
    key = new_signing_key()
    trust = WorkerTrust(
        allow_scripted_models=True,
        workspace_roots=tuple(roots) or (Path(tempfile.gettempdir()),),
        keys=(key,),
        channel_owners=(ANY_OWNER,),
    )
    return signing_client(client, GrantSigner(key)), trust


def build_worker(
    client: Client,
    task_queue: str,
    activities: WorkerActivities | None = None,
    *,
    max_cached_workflows: int = 1000,
    eager_calls_per_workflow_task: int = default_of("eager_calls_per_workflow_task"),
    workflow_task_executor: concurrent.futures.ThreadPoolExecutor | None = None,
    trust: WorkerTrust | None = None,
) -> Worker:
    """A worker of ``task_queue`` serving Seawall's workflows and ``activities`` (by default
    :func:`build_activities`, with ``trust`` when given); its MCP servers stop when it shuts
    down. ``workflow_task_executor`` is for profiling (``bench/overhead.py``).

    ``eager_calls_per_workflow_task``: how many of the model and tool calls one workflow
    task schedules this worker starts itself, in the reply to that task, instead of sending
    them through the task queue (0: none). The SDK's default of 3 sends the 4th call of a
    batch of 4 through the task queue: it starts one hand-off later, finishes later and wakes
    the workflow once more (three more history events and one more hand-off each batch;
    docs/architecture.md, "Eager calls")."""
    activities = build_activities(trust=trust) if activities is None else activities
    plugin = SeawallPlugin(activities.definitions(), run_context=activities.serving)
    return Worker(
        client_with_plugin(client, plugin),
        task_queue=task_queue,
        max_cached_workflows=max_cached_workflows,
        # Heartbeats carry cancellation to running tools: send them at least every second
        # so a cancelled prompt stops its shell promptly.
        max_heartbeat_throttle_interval=timedelta(seconds=1),
        # Lets a running tool finish or heartbeat its cancellation on SIGTERM.
        graceful_shutdown_timeout=timedelta(seconds=10),
        workflow_task_executor=workflow_task_executor,
        # The SDK wants a positive number even when eager execution is off.
        max_eager_activity_reservations_per_workflow_task=max(1, eager_calls_per_workflow_task),
        disable_eager_activity_execution=eager_calls_per_workflow_task == 0,
    )


def parse_args(
    argv: Sequence[str] | None = None,
    settings: SeawallSettings | None = None,
    temporal: TemporalClientConfig | None = None,
) -> argparse.Namespace:
    """The worker's flags, each defaulting to its setting (``settings`` and the Temporal
    connection ``temporal``, else loaded now); ``args.temporal`` is the connection with
    ``--address``/``--namespace`` applied."""
    if settings is None or temporal is None:
        effective = settings_or_exit("worker")
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
    log.info(
        "worker_started",
        **args.temporal.describe(),
        task_queue=args.task_queue,
        metrics=metrics_bind or ("otlp" if args.otlp_endpoint else None),
        **describe_storage(storage),
    )
    async with worker:
        await stop.wait()
        log.info("worker_stopping")
    log.info("worker_stopped")


def main(argv: Sequence[str] | None = None) -> None:
    effective = settings_or_exit("worker")
    args = parse_args(argv, effective.settings, temporal_or_exit("worker", effective))
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
    # The SDK's core threads outlive the event loop (seawall/runtime/process_exit.py): every
    # way out, a refused connection's exit 1 included, skips the interpreter's finalization.
    run_then_exit(main)
