"""Guard telemetry as an operator sees it: the worker's Prometheus endpoint and the
Temporal UI's search attributes, after scripted runs on a real worker process."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from bench.server_metrics import free_port
from seawall.scenario.driver import run_scenario
from tests.scenario_helpers import scenario_file
from tests.trust_helpers import harness_environment, signed
from workflows.contracts.prompt import EventsQuery, PromptResult
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = re.compile(r"^(seawall_[a-z_]+)\{(.*)\} ([0-9.e+]+)$")


@contextmanager
def metrics_worker(address: str, queue: str, port: int) -> Iterator[None]:
    process = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "worker.py"),
            "--address",
            address,
            "--task-queue",
            queue,
            "--metrics-port",
            str(port),
            # Every workflow task replays from history: counters must still count once.
            "--max-cached-workflows",
            "0",
        ],
        cwd=ROOT,
        env={
            **os.environ,
            **harness_environment(),
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=ci,service.version=9.9.9",
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


def scrape(port: int) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if match:
            labels = frozenset(re.findall(r'([a-zA-Z_]+)="([^"]*)"', match.group(2)))
            samples[(match.group(1), labels)] = float(match.group(3))
    return samples


def total(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **want: str
) -> float:
    return sum(
        value
        for (metric, labels), value in samples.items()
        if metric == name and set(want.items()) <= labels
    )


async def until_listed(client: Client, query: str, workflow_id: str) -> None:
    async def poll() -> None:
        while True:
            found = [w.id async for w in client.list_workflows(query)]
            if workflow_id in found:
                return
            await asyncio.sleep(0.2)

    await asyncio.wait_for(poll(), 30)


async def test_metrics_count_each_transition_once_and_search_attributes_find_stops(
    temporal_env: WorkflowEnvironment,
) -> None:
    client = signed(temporal_env.client)
    address = client.service_client.config.target_host
    queue = f"metrics-{uuid.uuid4().hex[:8]}"
    port = free_port()
    runs: dict[str, PromptResult] = {}
    with metrics_worker(address, queue, port):
        for name, scenario, mode in [
            ("enforce", "read-missing-file-loop", None),
            ("shadow", "read-missing-file-loop", GuardMode.SHADOW),
            ("refusal", "repeated-failed-call", None),
        ]:
            with tempfile.TemporaryDirectory() as workspace:
                runs[name] = await run_scenario(
                    client,
                    scenario_file(scenario),
                    task_queue=queue,
                    workspace=Path(workspace),
                    mode_override=mode,
                )
        first = scrape(port)
        # Queries on closed prompts replay their whole history on this cache-less worker.
        for result in runs.values():
            await client.get_workflow_handle(result.workflow_id).query(
                PromptWorkflow.events, EventsQuery()
            )
        second = scrape(port)

    transitions = "seawall_guard_transitions"
    assert total(first, transitions, mode="enforce", decision="tracked") == 2  # loop + refusal
    assert total(first, transitions, mode="enforce", decision="warn") == 1
    assert total(first, transitions, mode="enforce", decision="stop") == 1
    assert total(first, transitions, mode="shadow", decision="would_warn") == 1
    assert total(first, transitions, mode="shadow", decision="would_stop") == 1
    # The refusal prompt: tracked, then four batches of refused calls that leave the
    # tracking streak as it is (tracking → tracking, decision none; still a transition).
    assert total(first, transitions, mode="enforce", decision="none") == 4
    assert total(first, transitions) == 11
    assert (
        total(
            first,
            transitions,
            decision="warn",
            phase_before="tracking",
            phase_after="warned",
            failure_count_bucket="8+",
            batch_count_bucket="2",
            tool_type="native",
            execution_status="error",
            route="interactive",
        )
        == 1
    )
    assert total(first, "seawall_failed_call_refusals", outcome="repeat") == 4
    assert total(first, "seawall_loop_stops", loop_type="repeated_tool_execution_failure") == 1
    assert total(first, "seawall_loop_stops", loop_type="repeated_failed_call") == 1
    assert total(first, transitions, deployment_environment="ci", service_version="9.9.9") == 11
    seawall_only = {k: v for k, v in second.items() if k[0].startswith("seawall_")}
    assert seawall_only == {k: v for k, v in first.items() if k[0].startswith("seawall_")}

    await until_listed(
        client,
        "SeawallLoopType = 'repeated_tool_execution_failure'",
        runs["enforce"].workflow_id,
    )
    await until_listed(client, "SeawallLastDecision = 'would_stop'", runs["shadow"].workflow_id)
    await until_listed(
        client,
        "SeawallStopReason = 'loop_detected' AND SeawallGuardPhase = 'latched'",
        runs["enforce"].workflow_id,
    )
