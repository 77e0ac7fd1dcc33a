"""Live streaming: how fast model text reaches a client, and what it costs in history.

    python bench/streaming.py [--prompts N] [--concurrency C] [--requests R] [--pieces P]
                              [--piece-ms MS] [--long-requests L] [--json PATH]

One workload runs every way on one embedded Temporal dev server: prompts of ``--requests``
model requests (each but the last also asks for one ``list_directory`` call), every reply
generated as ``--pieces`` pieces ``--piece-ms`` apart by a paced model that notes when it
produced each piece. ``--prompts`` prompts run, ``--concurrency`` at a time, each followed
by one client:

  (a) today before streaming: the model activity does not publish text, the client polls the
      ``events`` query five times a second (the follower as it was), so text arrives whole;
  (b) deltas published, the same 5 Hz query polling;
  (c) deltas published, a ``temporalio.contrib.workflow_streams`` subscription (the prompt
      workflow with a ``WorkflowStream``, ``bench/stream_baseline.py``; long-poll Updates,
      100 ms cooldown);
  (d) deltas published, Seawall's follower (``seawall.client.events``: a history long-poll,
      then the ``events`` query after each completed workflow task) — what ships;
  (e) deltas published, nobody watching (the history a prompt costs by itself).

Reported side by side: the time from the model producing a piece of text to the client
holding it (p50, p95; it includes the publisher's batching), events per second delivered to
the clients over the run, and history events per prompt (and how many the variant adds to
(a)). Then one long prompt (``--long-requests`` model requests, one tool call each) per
history-relevant variant, for the bound that matters: a prompt never continues-as-new, so
its history must stay far below Temporal's 51,200-event limit. Results go to
``bench/results/streaming.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import re
import statistics
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.contrib.workflow_streams import WorkflowStreamClient
from temporalio.worker import Worker

from activities.model import ModelActivities
from activities.model_stream import MAX_SIGNALS, TextSink
from bench.report_runner import percentile, run_and_report
from bench.stream_baseline import EVENTS_TOPIC, StreamedPromptWorkflow
from bench.trusted import bench_client, bench_trust
from seawall.client.events import Idle, follow_prompt_events
from seawall.runtime.devserver import start_dev_server
from seawall.runtime.plugin import WORKFLOWS, SeawallPlugin, client_with_plugin
from seawall.worker.build import build_activities
from workflows.contracts import ToolCall
from workflows.contracts.activity import CallModelInput, ModelReply, ModelSpec
from workflows.contracts.grant import GRANT_SIGNAL
from workflows.contracts.prompt import AgentEvent, EventKind, EventsQuery, PromptInput
from workflows.prompt.workflow import PromptWorkflow

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_JSON = ROOT / "bench" / "results" / "streaming.json"
# The follower as it was before streaming: the events query five times a second.
POLL_SECONDS = 0.2
PIECE = re.compile(r"r(\d+)p(\d+) ")
# Temporal's hard limit on one workflow run's history.
HISTORY_LIMIT = 51_200

Produced = dict[tuple[str, int, int], float]
Follower = Callable[[Client, str], AsyncIterator[AgentEvent]]


class PacedModel:
    """Answers request ``k`` with pieces ``r{k}p{i} ``, ``piece_seconds`` apart, noting the
    moment each is produced; every request but the ``requests``-th lists the workspace."""

    def __init__(self, produced: Produced, requests: int, pieces: int, piece_seconds: float):
        self._produced = produced
        self._requests = requests
        self._pieces = pieces
        self._piece_seconds = piece_seconds

    async def complete(
        self, request: CallModelInput, on_text: TextSink | None = None
    ) -> ModelReply:
        workflow_id = activity.info().workflow_id or ""
        number = request.request_number
        pieces = [f"r{number}p{i} " for i in range(self._pieces)]
        for index, piece in enumerate(pieces):
            if index:
                await asyncio.sleep(self._piece_seconds)
            self._produced[(workflow_id, number, index)] = time.monotonic()
            if on_text is not None:
                on_text(piece)
        calls = (
            [ToolCall(call_id=f"c{number}", name="list_directory", arguments={})]
            if number < self._requests
            else []
        )
        return ModelReply(text="".join(pieces), tool_calls=calls)


# --- the followers ------------------------------------------------------------------------


async def poll_query(client: Client, prompt_id: str) -> AsyncIterator[AgentEvent]:
    """The follower before streaming: the ``events`` query every 200 ms."""
    handle = client.get_workflow_handle(prompt_id)
    cursor = 0
    while True:
        for event in await handle.query(PromptWorkflow.events, EventsQuery(after=cursor)):
            yield event
            cursor = event.seq
            if event.kind is EventKind.PROMPT_FINISHED:
                return
        await asyncio.sleep(POLL_SECONDS)


async def follow_history(client: Client, prompt_id: str) -> AsyncIterator[AgentEvent]:
    """Seawall's follower (``seawall.client.events.follow_prompt_events``)."""
    async for item in follow_prompt_events(client, prompt_id, 0):
        if not isinstance(item, Idle):
            yield item


async def subscribe_stream(client: Client, prompt_id: str) -> AsyncIterator[AgentEvent]:
    """A ``workflow_streams`` subscription to the baseline workflow's ``events`` topic."""
    stream = WorkflowStreamClient.create(client, prompt_id)
    async for item in stream.subscribe([EVENTS_TOPIC], result_type=AgentEvent):
        yield item.data
        if item.data.kind is EventKind.PROMPT_FINISHED:
            return


@dataclasses.dataclass(frozen=True)
class Variant:
    key: str
    label: str
    publish_text: bool
    follower: Follower | None
    workflow: str = "PromptWorkflow"


VARIANTS = [
    Variant("a", "today: whole messages, 5 Hz query polling", False, poll_query),
    Variant("b", "deltas, 5 Hz query polling", True, poll_query),
    Variant(
        "c",
        "deltas, workflow_streams subscription",
        True,
        subscribe_stream,
        workflow="StreamedPromptWorkflow",
    ),
    Variant("d", "deltas, history long-poll + query (ships)", True, follow_history),
    Variant("e", "deltas, nobody watching", True, None),
]


# --- one run --------------------------------------------------------------------------------


@dataclasses.dataclass
class Watched:
    latencies: list[float] = dataclasses.field(default_factory=list)
    events: int = 0


async def watch(client: Client, follower: Follower, prompt_id: str, produced: Produced) -> Watched:
    """Follow one prompt to its end, timing each piece of text from its production."""
    watched = Watched()
    seen: set[tuple[int, int]] = set()
    async for event in follower(client, prompt_id):
        now = time.monotonic()
        watched.events += 1
        for request, index in PIECE.findall(event.text or ""):
            key = (int(request), int(index))
            if key not in seen:  # a delta's piece comes again in the whole message
                seen.add(key)
                watched.latencies.append(now - produced[(prompt_id, *key)])
    return watched


def bench_worker(client: Client, queue: str, model: PacedModel, publish_text: bool) -> Worker:
    activities = dataclasses.replace(
        build_activities(trust=bench_trust()),
        model=ModelActivities({"demo": model}, publish_text=publish_text, trust=bench_trust()),
    )
    plugin = SeawallPlugin(
        activities.definitions(),
        run_context=activities.serving,
        workflows=[*WORKFLOWS, StreamedPromptWorkflow],
    )
    return Worker(
        client_with_plugin(client, plugin),
        task_queue=queue,
        max_cached_workflows=1000,
        max_heartbeat_throttle_interval=timedelta(seconds=1),
    )


def history_shape(events: Sequence[Any]) -> dict[str, int]:
    """What a prompt's history holds, by kind. ``signals`` counts the ones that carry its
    stream (not the ``grant`` signal that follows a signed start, docs/security-trust.md)."""
    counts = Counter(EventType.Name(event.event_type) for event in events)
    grants = sum(
        1
        for event in events
        if event.HasField("workflow_execution_signaled_event_attributes")
        and event.workflow_execution_signaled_event_attributes.signal_name == GRANT_SIGNAL
    )
    return {
        "events": len(events),
        "signals": counts["EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED"] - grants,
        "updates": counts["EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED"],
        "workflow_tasks": counts["EVENT_TYPE_WORKFLOW_TASK_COMPLETED"],
    }


async def run_variant(
    client: Client,
    variant: Variant,
    *,
    prompts: int,
    concurrency: int,
    requests: int,
    pieces: int,
    piece_seconds: float,
    workspace: str,
) -> dict[str, Any]:
    client = bench_client(client)  # signed for the benchmark's worker (bench/trusted.py)
    produced: Produced = {}
    model = PacedModel(produced, requests, pieces, piece_seconds)
    queue = f"bench-stream-{uuid.uuid4().hex[:8]}"
    gate = asyncio.Semaphore(concurrency)
    watched: list[Watched] = []
    ids: list[str] = []

    async def one(index: int) -> None:
        async with gate:
            prompt_id = f"bench-stream-{variant.key}-{index}-{uuid.uuid4().hex[:6]}"
            ids.append(prompt_id)
            handle = await client.start_workflow(
                variant.workflow,
                PromptInput.model_validate(
                    {
                        "prompt": "stream",
                        "workspace_root": workspace,
                        "model": ModelSpec.model_validate({"provider": "demo"}),
                        "approval_mode": "yolo",
                        "max_model_requests": requests + 1,
                    }
                ),
                id=prompt_id,
                task_queue=queue,
            )
            if variant.follower is not None:
                watched.append(await watch(client, variant.follower, prompt_id, produced))
            await handle.result()

    async with bench_worker(client, queue, model, variant.publish_text):
        started = time.monotonic()
        await asyncio.gather(*(one(i) for i in range(prompts)))
        wall = time.monotonic() - started
    shapes = [
        history_shape((await client.get_workflow_handle(i).fetch_history()).events) for i in ids
    ]
    latencies = sorted(x for w in watched for x in w.latencies)
    delivered = sum(w.events for w in watched)
    return {
        "label": variant.label,
        "prompts": prompts,
        "wall_seconds": round(wall, 3),
        "pieces_timed": len(latencies),
        "latency_ms_p50": round(1000 * statistics.median(latencies), 1) if latencies else None,
        "latency_ms_p95": round(1000 * percentile(latencies, 0.95), 1) if latencies else None,
        "events_delivered": delivered,
        "events_per_second": round(delivered / wall, 1) if watched else None,
        "history": {
            key: round(statistics.mean(shape[key] for shape in shapes), 1) for key in shapes[0]
        },
    }


# --- report ---------------------------------------------------------------------------------


def print_tables(report: dict[str, Any]) -> None:
    runs = report["variants"]
    today = runs["a"]["history"]["events"]
    print()
    print(
        f"{report['prompts']} prompts, {report['concurrency']} at a time; "
        f"{report['requests']} model requests each, {report['pieces']} pieces "
        f"{report['piece_ms']} ms apart per reply"
    )
    header = (
        f"{'':2}{'variant':<44} {'p50 ms':>7} {'p95 ms':>7} {'events/s':>9} "
        f"{'history/prompt':>15} {'vs (a)':>7} {'signals':>8} {'updates':>8}"
    )
    print(header)
    print("-" * len(header))
    for key, run in runs.items():
        history = run["history"]

        def show(value: Any) -> str:
            return "-" if value is None else str(value)

        print(
            f"{key:2}{run['label']:<44} {show(run['latency_ms_p50']):>7} "
            f"{show(run['latency_ms_p95']):>7} {show(run['events_per_second']):>9} "
            f"{history['events']:>15} {history['events'] - today:>+7.1f} "
            f"{history['signals']:>8} {history['updates']:>8}"
        )
    long = report["long_prompt"]
    print()
    print(
        f"One long prompt: {long['requests']} model requests, {long['requests'] - 1} tool calls, "
        f"{long['pieces']} pieces {long['piece_ms']} ms apart per reply "
        f"(limit {HISTORY_LIMIT:,} history events)"
    )
    for key, run in long["variants"].items():
        history = run["history"]
        print(
            f"{key:2}{run['label']:<44} {history['events']:>8} history events "
            f"({history['signals']} signals, {history['updates']} updates)"
        )
    print(
        f"Bound with deltas: at most {MAX_SIGNALS} delta signals per model request, so "
        f"{long['requests']} requests add at most {long['delta_event_bound']:,} history "
        "events, whatever the reply length and however many clients watch (d)."
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {
        "prompts": args.prompts,
        "concurrency": args.concurrency,
        "requests": args.requests,
        "pieces": args.pieces,
        "piece_ms": args.piece_ms,
        "variants": {},
    }
    with tempfile.TemporaryDirectory(prefix="seawall-bench-") as workspace:
        async with await start_dev_server() as env:
            for variant in VARIANTS:
                report["variants"][variant.key] = await run_variant(
                    env.client,
                    variant,
                    prompts=args.prompts,
                    concurrency=args.concurrency,
                    requests=args.requests,
                    pieces=args.pieces,
                    piece_seconds=args.piece_ms / 1000,
                    workspace=workspace,
                )
            long: dict[str, Any] = {
                "requests": args.long_requests,
                "pieces": args.long_pieces,
                "piece_ms": args.long_piece_ms,
                # A signal is one event plus, at most, the workflow task it wakes (3 events).
                "delta_event_bound": args.long_requests * MAX_SIGNALS * 4,
                "variants": {},
            }
            for variant in VARIANTS:
                if variant.key not in ("a", "c", "d"):
                    continue
                long["variants"][variant.key] = await run_variant(
                    env.client,
                    variant,
                    prompts=1,
                    concurrency=1,
                    requests=args.long_requests,
                    pieces=args.long_pieces,
                    piece_seconds=args.long_piece_ms / 1000,
                    workspace=workspace,
                )
            report["long_prompt"] = long
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--requests", type=int, default=3)
    parser.add_argument("--pieces", type=int, default=40)
    parser.add_argument("--piece-ms", type=float, default=25.0)
    parser.add_argument("--long-requests", type=int, default=100)
    parser.add_argument("--long-pieces", type=int, default=10)
    parser.add_argument("--long-piece-ms", type=float, default=20.0)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)

    return run_and_report(run(args), print_tables, args.json)


if __name__ == "__main__":
    from seawall.runtime.process_exit import run_then_exit

    run_then_exit(main)
