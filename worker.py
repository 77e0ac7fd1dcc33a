"""``python worker.py``: a Seawall worker for prompt workflows and their activities.

Every flag can also come from the environment (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
SEAWALL_TASK_QUEUE). The pydantic data converter is used here, by the CLI and by the replay
tests alike, so payloads decode the same everywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from collections.abc import Sequence
from datetime import timedelta

import structlog
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities import ALL_ACTIVITIES
from seawall.logs import configure_logging
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


async def connect(address: str, namespace: str) -> Client:
    return await Client.connect(
        address, namespace=namespace, data_converter=pydantic_data_converter
    )


def build_worker(client: Client, task_queue: str) -> Worker:
    return Worker(
        client,
        task_queue=task_queue,
        workflows=WORKFLOWS,
        activities=ALL_ACTIVITIES,
        workflow_runner=workflow_runner(),
        # Heartbeats carry cancellation to running tools: send them at least every second
        # so a cancelled prompt stops its shell promptly.
        max_heartbeat_throttle_interval=timedelta(seconds=1),
        # Lets a running tool finish or heartbeat its cancellation on SIGTERM.
        graceful_shutdown_timeout=timedelta(seconds=10),
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    env = os.environ
    parser = argparse.ArgumentParser(description="Run a Seawall worker.")
    parser.add_argument("--address", default=env.get("TEMPORAL_ADDRESS", DEFAULT_ADDRESS))
    parser.add_argument("--namespace", default=env.get("TEMPORAL_NAMESPACE", DEFAULT_NAMESPACE))
    parser.add_argument("--task-queue", default=env.get("SEAWALL_TASK_QUEUE", DEFAULT_TASK_QUEUE))
    parser.add_argument(
        "--log-format",
        choices=["json", "console"],
        default=env.get("SEAWALL_LOG_FORMAT", "json"),
    )
    return parser.parse_args(argv)


async def run_worker(args: argparse.Namespace) -> None:
    log = structlog.get_logger("seawall.worker")
    client = await connect(args.address, args.namespace)
    worker = build_worker(client, args.task_queue)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    log.info(
        "worker_started", address=args.address, namespace=args.namespace, task_queue=args.task_queue
    )
    async with worker:
        await stop.wait()
        log.info("worker_stopping")
    log.info("worker_stopped")


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    configure_logging(args.log_format)
    asyncio.run(run_worker(args))


if __name__ == "__main__":
    main()
