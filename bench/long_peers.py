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

import asyncio
import contextlib
import shutil
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from bench import history_bytes, peers
from bench.peers_report import versions


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


async def reached(
    peer: peers.Peer, client: Client, workflow_id: str, store: Path, seconds: float
) -> dict[str, Any]:
    """How far one harness got with the shape (its model calls, how its history ended: a
    termination's reason or a failure's message), and what it left (its bytes)."""
    history, figures = await history_bytes.prompt_bytes(client, workflow_id, store)
    last = history.events[-1]
    reason = ""
    if last.HasField("workflow_execution_terminated_event_attributes"):
        reason = last.workflow_execution_terminated_event_attributes.reason
    elif last.HasField("workflow_execution_failed_event_attributes"):
        reason = last.workflow_execution_failed_event_attributes.failure.message
    return {
        "peer": peer.key,
        "model_calls": sum(
            1
            for e in history.events
            if e.HasField("activity_task_scheduled_event_attributes")
            and peer.model_mark in e.activity_task_scheduled_event_attributes.activity_type.name
        ),
        # COMPLETED, TERMINATED, FAILED, ...
        "outcome": EventType.Name(last.event_type).removeprefix("EVENT_TYPE_WORKFLOW_EXECUTION_"),
        "reason": reason[:200],
        **figures,
        "seconds": round(seconds, 1),
    }


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
    report: dict[str, Any] = {
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
    env = await peers.start_server_with_retries(
        storage=history_bytes.filesystem_store(store),
        extra_args=[
            arg
            for key, value in limits.items()
            for arg in ("--dynamic-config-value", f"{key}={value}")
        ],
    )
    # Seawall's fixtures are built here from the shape: set for this run, then put back.
    replaced = peers.set_shape(1, 0.0, shape.result_chars)
    try:
        address = env.client.service_client.config.target_host
        namespace = env.client.namespace
        for peer in (p for p in wanted if p.key not in skipped):
            config = peers.WorkerConfig(
                peer=peer.key,
                address=address,
                namespace=namespace,
                task_queue=f"bench-long-{peer.key}-{uuid.uuid4().hex[:12]}",
                calls=1,
                tool_latency=0.0,
                result_chars=shape.result_chars,
                payload_store=store,
            )
            worker = await peers.WorkerProcess.start(config)
            try:
                driver = peers.Driver(
                    peer,
                    await peers.driver_client(env, peer),
                    worker.queue,
                    str(work),
                    context_chars=shape.context_chars,
                    result_chars=shape.result_chars,
                    # The whole conversation in every request, as the peers send it.
                    context_budget_chars=max(2 * shape.conversation_chars, 400_000),
                )
                started = time.perf_counter()
                workflow_id, ending = await driver.start(shape.batches, 1)
                # However it ends (a terminated prompt raises), its history says how, below.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(ending, PROMPT_TIMEOUT_SECONDS)
                seconds = time.perf_counter() - started
                row = await reached(peer, driver.client, workflow_id, store, seconds)
                report["rows"].append(row)
                print(line(row, shape), flush=True)
            finally:
                await worker.stop()
    finally:
        peers.set_shape(replaced.calls, replaced.tool_latency_seconds, replaced.result_chars)
        await env.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    return report


def line(row: dict[str, Any], shape: Shape) -> str:
    stopped = f" ({row['reason']})" if row["reason"] else ""
    return (
        f"{row['peer']:<24} {row['model_calls']:>4} of {shape.batches + 1} model calls  "
        f"{row['outcome']}{stopped}  history {row['history_bytes'] / 1e6:7.2f} MB "
        f"({row['history_events']} events)  stored {row['stored_bytes'] / 1e6:6.2f} MB "
        f"({row['stored_payloads']} payloads)  {row['seconds']} s"
    )
