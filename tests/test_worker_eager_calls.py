"""The worker starts a batch's calls itself: ``eager_calls_per_workflow_task``.

A call the worker does not start eagerly is handed to matching by the server's transfer
queue: it starts one hand-off later, and a batch whose last call starts late wakes the
workflow once more (docs/capacity.md, "Eager calls"). The server counts those hand-offs
(``task_latency_queue`` of ``TransferActiveTaskActivity``, read through its metrics port), so
these tests count them for one prompt of one batch of six calls on a real dev server: none
with the shipped setting, three with the SDK's default of 3, every call with 0.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from bench.server_metrics import free_port, read_counters
from seawall.runtime.devserver import start_dev_server
from seawall.runtime.settings import default_of
from seawall.scenario.driver import run_scenario
from seawall.scenario.format import Scenario
from seawall.worker.build import build_worker
from tests.scenario_helpers import scenario
from tests.trust_helpers import harness_trust, signed
from workflows.seed import GuardMode

CALLS = 6  # more than the SDK's 3, fewer than the shipped 16


@pytest_asyncio.fixture(scope="module")
async def metered() -> AsyncIterator[tuple[WorkflowEnvironment, int]]:
    """A dev server of the module's own with its Prometheus endpoint, and that port."""
    port = free_port()
    env = await start_dev_server(extra_args=["--metrics-port", str(port)])
    try:
        yield env, port
    finally:
        await env.shutdown()


def one_batch() -> Scenario:
    return scenario(
        tools={
            "fetch": {
                "outcomes": [{"status": "success", "execution_status": "success", "content": "ok"}]
            }
        },
        model={
            "turns": [
                {"tool_calls": [{"name": "fetch", "arguments": {"n": n}} for n in range(CALLS)]},
                {"text": "done"},
            ]
        },
    )


async def handed_off_calls(client: Client, port: int, eager: int) -> tuple[int, int]:
    """One prompt of one batch of :data:`CALLS` calls on a worker with ``eager``: the calls
    the server handed to matching, and the calls the prompt made (model and tool)."""
    queue = f"eager-{uuid.uuid4().hex[:10]}"
    workflow_id = f"eager-{uuid.uuid4().hex[:10]}"
    before = read_counters(port)
    async with build_worker(
        client, queue, trust=harness_trust(), eager_calls_per_workflow_task=eager
    ):
        result = await run_scenario(
            client,
            one_batch(),
            task_queue=queue,
            workspace=Path(tempfile.mkdtemp(prefix="seawall-eager-")),
            mode_override=GuardMode.ENFORCE,
            workflow_id=workflow_id,
        )
    assert result.messages[-1].content == "done"
    handed = read_counters(port) - before
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    calls = sum(
        1 for e in history.events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    )
    return round(handed.activity_handoffs), calls


async def test_the_shipped_worker_starts_every_call_of_a_batch_itself(
    metered: tuple[WorkflowEnvironment, int],
) -> None:
    env, port = metered
    assert default_of("eager_calls_per_workflow_task") > CALLS
    handed, calls = await handed_off_calls(
        signed(env.client), port, default_of("eager_calls_per_workflow_task")
    )
    assert calls == CALLS + 2  # the tool calls and the two model requests
    assert handed == 0


async def test_the_sdk_default_hands_every_call_past_the_third_to_matching(
    metered: tuple[WorkflowEnvironment, int],
) -> None:
    env, port = metered
    handed, calls = await handed_off_calls(signed(env.client), port, 3)
    assert calls == CALLS + 2
    assert handed == CALLS - 3


async def test_zero_sends_every_call_through_the_task_queue(
    metered: tuple[WorkflowEnvironment, int],
) -> None:
    env, port = metered
    handed, calls = await handed_off_calls(signed(env.client), port, 0)
    assert handed == calls == CALLS + 2
