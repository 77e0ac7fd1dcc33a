"""sdk-python#1890's shape through every durable agent: how far each gets, and what it leaves.

Why it exists: temporalio/sdk-python#1890 reports a chat agent on the OpenAI Agents SDK's
Temporal integration terminated with "Workflow history size exceeds limit" after 53 of 100
model calls: a ≈209k-token conversation, one tool call per model call (no parallel calls),
5 KB tool outputs, every model call recording the whole conversation again as its activity
input. ``bench/long_prompts.py --issue-1890`` runs that shape here (:data:`SHAPE_1890`) through
Seawall and each installed peer of ``bench/peers.py``, each in its own worker process, on one dev
server with its default history limits (50 MB), one prompt each, and reports how many model calls
each reached, how it ended (a terminated prompt shows where it stopped), its history bytes and
events, and what the payload store holds for it (only Seawall's worker stores payloads past
64 KiB; the peers keep theirs inline, as they ship).

The conversation before the prompt is ``context_chars`` characters of text in front of the user's
prompt (at ≈4 characters a token); Seawall's context budget is set to hold the whole conversation,
so every harness sends the model the same requests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from bench import history_bytes, peer_script, peers
from bench.overhead_harness import Workload, start_server_with_retries
from bench.peers_report import versions
from bench.report_runner import git_commit, machine
from bench.trusted import bench_client
from workflows.prompt.workflow import PromptWorkflow
from workflows.rules import LoopSettings
from workflows.seed import GuardMode


@dataclass(frozen=True)
class Shape:
    """A long prompt: ``context_chars`` of earlier conversation, ``batches`` model calls that
    each make one tool call returning ``result_chars``, then the answer."""

    context_chars: int
    batches: int
    result_chars: int

    @property
    def conversation_chars(self) -> int:
        """The conversation's size at the end, roughly (context, results, the calls)."""
        return self.context_chars + self.batches * (self.result_chars + 100)


# ≈209k tokens at ≈4 characters a token, 100 model calls of one call, 5 KB outputs.
SHAPE_1890 = Shape(context_chars=836_000, batches=100, result_chars=5_000)
# Each prompt's time limit here: a peer stuck on a failing workflow task must not hang the run.
PROMPT_TIMEOUT_SECONDS = 1_800


@dataclass
class Reached:
    """How far one harness got with the shape, and what it left."""

    peer: str
    model_calls: int  # model activities scheduled
    outcome: str  # the history's last event: COMPLETED, TERMINATED, FAILED, ...
    reason: str  # a termination's reason or a failure's message ("" when completed)
    history_bytes: int
    history_events: int
    stored_bytes: int
    stored_payloads: int
    seconds: float


async def start_prompt(
    peer: peers.Peer, client: Client, queue: str, workspace: str, shape: Shape
) -> tuple[str, asyncio.Task[Any]]:
    """Start ``shape``'s prompt on ``peer``; its workflow id and a task awaiting its end."""
    workflow_id = f"long-{peer.key}-{uuid.uuid4().hex[:10]}"
    if peer.module is None:
        prompt = Workload(
            batches=shape.batches,
            calls=1,
            result_chars=shape.result_chars,
            context_chars=shape.context_chars,
        ).seawall_input(GuardMode.ENFORCE, workspace)
        prompt = prompt.model_copy(
            update={
                "loop_settings": LoopSettings(),
                # The whole conversation in every request, as the peers send it.
                "context_budget_chars": max(2 * shape.conversation_chars, 400_000),
            }
        )
        handle = await client.start_workflow(
            PromptWorkflow.run, prompt, id=workflow_id, task_queue=queue
        )
        return workflow_id, asyncio.create_task(handle.result())
    text = peer_script.prompt_text(shape.batches, shape.context_chars)
    module = peers.peer_module(peer)
    if hasattr(module, "run_prompt"):  # a session per prompt
        return workflow_id, asyncio.create_task(module.run_prompt(client, workflow_id, queue, text))
    handle = await client.start_workflow(
        module.WORKFLOW_NAME, text, id=workflow_id, task_queue=queue
    )
    return workflow_id, asyncio.create_task(handle.result())


async def reached(
    peer: peers.Peer, client: Client, workflow_id: str, store: Path, seconds: float
) -> Reached:
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    last = history.events[-1]
    outcome = EventType.Name(last.event_type).removeprefix("EVENT_TYPE_WORKFLOW_EXECUTION_")
    reason = ""
    if last.HasField("workflow_execution_terminated_event_attributes"):
        reason = last.workflow_execution_terminated_event_attributes.reason
    elif last.HasField("workflow_execution_failed_event_attributes"):
        reason = last.workflow_execution_failed_event_attributes.failure.message
    stored, payloads = history_bytes.stored_bytes(store, client.namespace, workflow_id)
    return Reached(
        peer=peer.key,
        model_calls=sum(
            1
            for e in history.events
            if e.HasField("activity_task_scheduled_event_attributes")
            and peer.model_mark in e.activity_task_scheduled_event_attributes.activity_type.name
        ),
        outcome=outcome,
        reason=reason[:200],
        history_bytes=history_bytes.history_bytes(history),
        history_events=len(history.events),
        stored_bytes=stored,
        stored_payloads=payloads,
        seconds=round(seconds, 1),
    )


# The dev server's dynamic config key of the history size past which it terminates a workflow
# (its default: 50 MB), and of the size past which it warns.
HISTORY_LIMIT_KEY = "limit.historySize.error"
HISTORY_WARN_KEY = "limit.historySize.warn"


async def run(shape: Shape, keys: list[str], history_limit: int | None = None) -> dict[str, Any]:
    """The shape through Seawall and each installed peer of ``keys``, one after another, on a
    dev server whose history size limit is ``history_limit`` bytes (None: its default)."""
    wanted = [peers.PEERS[k] for k in keys]
    skipped = {p.key: r for p in wanted if (r := peers.missing(p)) is not None}
    work = Path(tempfile.mkdtemp(prefix="seawall-bench-long-peers-"))
    store = work / "payloads"
    args = argparse.Namespace(
        calls=1,
        tool_latency=0.0,
        result_chars=shape.result_chars,
        peers_eager_calls=None,
        seawall_eager_calls=None,
        payload_store=store,
    )
    peers.set_shape(1, 0.0, shape.result_chars)
    report: dict[str, Any] = {
        "machine": machine(),
        "commit": git_commit(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "versions": versions(),
        "shape": asdict(shape),
        "history_limit_bytes": history_limit,
        "skipped": skipped,
        "rows": [],
    }
    limits = (
        {HISTORY_LIMIT_KEY: history_limit, HISTORY_WARN_KEY: history_limit // 2}
        if history_limit
        else {}
    )
    env = await start_server_with_retries(
        storage=history_bytes.filesystem_store(store),
        extra_args=[
            arg
            for key, value in limits.items()
            for arg in ("--dynamic-config-value", f"{key}={value}")
        ],
    )
    try:
        address = env.client.service_client.config.target_host
        namespace = env.client.namespace
        for peer in (p for p in wanted if p.key not in skipped):
            worker = await peers.WorkerProcess.start(peer, address, namespace, args)
            try:
                client = (
                    bench_client(env.client)
                    if peer.module is None
                    else await peers.peer_client(address, namespace, peer)
                )
                started = time.perf_counter()
                workflow_id, ending = await start_prompt(
                    peer, client, worker.queue, str(work), shape
                )
                # However it ends (a terminated prompt raises), its history says how, below.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(ending, PROMPT_TIMEOUT_SECONDS)
                row = await reached(peer, client, workflow_id, store, time.perf_counter() - started)
                report["rows"].append(asdict(row))
                print(line(row, shape), flush=True)
            finally:
                await worker.stop()
    finally:
        await env.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return report


def line(row: Reached, shape: Shape) -> str:
    stopped = f" ({row.reason})" if row.reason else ""
    return (
        f"{row.peer:<24} {row.model_calls:>4} of {shape.batches + 1} model calls  "
        f"{row.outcome}{stopped}  history {row.history_bytes / 1e6:7.2f} MB "
        f"({row.history_events} events)  stored {row.stored_bytes / 1e6:6.2f} MB "
        f"({row.stored_payloads} payloads)  {row.seconds} s"
    )
