"""Seawall beside the durable agents a Temporal user would pick instead (issue 27).

    python bench/peers.py [--batches B] [--calls M] [--tool-latency S]
                          [--concurrency 1,10,100] [--prompts N] [--rounds R]
                          [--long-batches L] [--reader-polls-per-second N]
                          [--peers-eager-calls N] [--seawall-eager-calls N]
                          [--bytes-batches 5,20,100]
                          [--peers seawall,bare,pydantic-ai,pydantic-ai-durability,
                                   openai-agents,agent-harness]
                          [--json PATH]

(The loop benchmark's peers, the loop detectors of other agents, are ``bench/loop_peers/``;
these are the durable agents.) One embedded dev server; one conversation — B batches of M
tool calls (``bench/peer_script.py``: ``fetch_k`` calls and a ``flaky_api`` that fails five
times), each tool taking S seconds, then a final text — through each peer of :data:`PEERS`,
set up as its module says: Seawall's worker as it ships, guard enforce and the default loop
profile's rules on (``bench/peer_seawall.py``); the bare loop a Temporal user writes by hand,
no guard (``bench/peer_bare.py``: the floor, not a target; Seawall over it is its overhead);
pydantic-ai's ``TemporalAgent`` and ``TemporalDurability`` (``bench/peer_pydantic_ai*.py``),
the OpenAI Agents SDK on Temporal (``bench/peer_openai_agents.py``) and Temporal's own
Temporal Agent Harness (``bench/peer_agent_harness.py``).

Each runs in a worker process of its own (so its CPU time and peak RSS are its own),
started by this script with ``--serve-worker``. The peers need the ``peers`` extra; a peer
whose packages are missing is reported as such and skipped. Each peer runs two warm-up
prompts; then at each concurrency the peers run in interleaved rounds, the order rotated
each round (40 prompts in 8 rounds at 1, 60 in 4 at 10, 200 in 2 at 100, unless
``--prompts`` and ``--rounds`` say).

Reported per peer and concurrency: per-batch latency (median, p95: the gaps between
consecutive model-activity schedules in the prompts' histories, server time), prompts per
second (and per round), history events (and their types), history bytes and payload bytes
per prompt (fetched histories), worker CPU seconds per prompt (``/proc`` user + system of
the worker process), the worker's peak RSS (``VmHWM``) and its RSS growth per in-flight
prompt (sampled every 0.2 s), the dev server's CPU and workflow writes per prompt
(``bench/server_metrics.py``); once per peer the replay time of one L-batch history on the
peer's own replayer (its plugins, the SDK's sandbox as the plugins set it); Seawall over
the best durable agent on each figure issue 27 sets a target on; and Seawall over the bare
loop on every figure.

The dev server runs as it ships unless ``--reader-polls-per-second`` lifts its
transfer-queue reads, whose wait sets most of a batch's latency at one prompt in flight
(docs/capacity.md, "Against the durable agents on Temporal"). The peers' workers start the
SDK's 3 calls of a workflow task eagerly, Seawall's its own setting (16), unless
``--peers-eager-calls`` or ``--seawall-eager-calls`` say otherwise (docs/capacity.md, "Eager
calls" and "Eager calls and heavy tools on a fleet").
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib
import importlib.util
import shutil
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer, Worker

from bench import peer_history, peer_script
from bench.peer_history import SEGMENTS, batch_gaps, batch_segments, payload_bytes
from bench.peer_seawall import ToolLatency, Workload, seawall_worker
from bench.peers_report import against_best_peer, over_bare, print_tables, versions
from bench.report_runner import percentile, run_and_report
from bench.server_metrics import (
    ServerCounters,
    SettledReadings,
    free_port,
    process_cpu_seconds,
    server_cpu_seconds,
)
from bench.tables import tables
from bench.trusted import bench_client, worker_process_environment
from seawall.runtime.plugin import SeawallPlugin
from seawall.runtime.settings import default_of
from workflows.contracts.activity import CALL_MODEL
from workflows.contracts.prompt import PromptResult, StopReason
from workflows.prompt.workflow import PromptWorkflow

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_JSON = ROOT / "bench" / "results" / "peers.json"
WARMUP_PROMPTS = 2
_T = tables(__file__)  # peers.yaml
PROMPTS: dict[int, int] = _T["PROMPTS"]  # prompts per peer at each concurrency
ROUNDS: dict[int, int] = _T["ROUNDS"]  # interleaved rounds at each concurrency
REPLAY_REPEATS = 3
RSS_SAMPLE_SECONDS = 0.2


@dataclass(frozen=True)
class Peer:
    key: str
    title: str
    module: str | None  # the peer's workflow module; None for Seawall
    needs: tuple[str, ...]  # import names the peer needs (the ``peers`` extra)
    model_mark: str  # a substring of its model activities' type names
    aside_mark: str | None = None  # of its activities neither model requests nor tool calls
    baseline: bool = False  # a floor to measure Seawall's overhead by, not a target peer


PEERS: dict[str, Peer] = {
    p.key: p
    for p in (
        Peer("seawall", "Seawall (guard + rules, enforce)", None, (), CALL_MODEL),
        *(
            Peer(key, **{**fields, "needs": tuple(fields["needs"])})
            for key, fields in _T["PEERS"].items()
        ),
    )
}


def missing(peer: Peer) -> str | None:
    """Why ``peer`` cannot run here (a package it needs is not installed), or None."""
    for name in peer.needs:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            return f"{name} is not installed (pip install -e '.[peers]')"
    return None


def available(keys: Sequence[str]) -> tuple[list[Peer], dict[str, str]]:
    """The peers of ``keys`` that can run here, and why each of the others cannot."""
    wanted = [PEERS[k] for k in keys]
    skipped = {p.key: reason for p in wanted if (reason := missing(p)) is not None}
    return [p for p in wanted if p.key not in skipped], skipped


def peer_keys(text: str) -> list[str]:
    """``--peers``: comma-separated keys of :data:`PEERS`."""
    keys = [k for k in text.split(",") if k]
    if unknown := [k for k in keys if k not in PEERS]:
        raise argparse.ArgumentTypeError(
            f"unknown {', '.join(unknown)} (known: {', '.join(PEERS)})"
        )
    return keys


def set_shape(calls: int, tool_latency: float, result_chars: int = 0) -> peer_script.Shape:
    """Before a peer module is imported: its module-level agent is built from this. Returns
    the shape it replaced, for a driver that sets it for a while to put back."""
    replaced = dataclasses.replace(peer_script.SHAPE)
    peer_script.SHAPE.calls = calls
    peer_script.SHAPE.tool_latency_seconds = tool_latency
    peer_script.SHAPE.result_chars = result_chars
    return replaced


def peer_module(peer: Peer) -> ModuleType:
    assert peer.module is not None
    return importlib.import_module(peer.module)


# --- the worker processes -----------------------------------------------------------------


async def peer_client(address: str, namespace: str, peer: Peer) -> Client:
    module = peer_module(peer)
    return await Client.connect(address, namespace=namespace, plugins=module.client_plugins())


async def driver_client(env: WorkflowEnvironment, peer: Peer) -> Client:
    """The client that starts ``peer``'s prompts on ``env``'s server: Seawall's as the
    benchmarks trust it, a peer's with its plugins."""
    if peer.module is None:
        return bench_client(env.client)
    address = env.client.service_client.config.target_host
    return await peer_client(address, env.client.namespace, peer)


# The SDK's eager starts per workflow task, which the peers keep unless told otherwise.
SDK_EAGER_CALLS = 3


class WorkerConfig(BaseModel):
    """What a worker process serves (``--serve-worker``, its one argument, as JSON)."""

    peer: str
    address: str
    namespace: str
    task_queue: str
    calls: int
    tool_latency: float
    result_chars: int = 0  # peer_script.Shape.result_chars
    peers_eager_calls: int | None = None
    seawall_eager_calls: int | None = None
    payload_store: Path | None = None  # Seawall's filesystem store (none: payloads inline)

    def eager_calls(self) -> int:
        """The calls of one workflow task the worker starts itself (docs/capacity.md, "Eager
        calls"): Seawall's setting, or the SDK's default, unless the flags say otherwise."""
        if PEERS[self.peer].module is None:
            seawall = self.seawall_eager_calls
            return default_of("eager_calls_per_workflow_task") if seawall is None else seawall
        return self.peers_eager_calls or SDK_EAGER_CALLS


async def build_peer_worker(config: WorkerConfig) -> Worker:
    peer, queue = PEERS[config.peer], config.task_queue
    set_shape(config.calls, config.tool_latency, config.result_chars)
    if peer.module is None:
        from seawall.runtime.plugin import connect

        store = config.payload_store
        client = await connect(
            config.address,
            config.namespace,
            interceptors=[ToolLatency(config.tool_latency)],
            storage=peer_history.filesystem_store(store) if store else None,
        )
        return seawall_worker(client, queue, eager_calls=config.eager_calls())
    module = peer_module(peer)
    client = await peer_client(config.address, config.namespace, peer)
    # The SDK's defaults (sandboxed runner, cache size, pollers), with the peer's plugins;
    # its eager starts only with --peers-eager-calls.
    return Worker(
        client,
        task_queue=queue,
        workflows=module.WORKFLOWS,
        activities=module.ACTIVITIES,
        plugins=module.worker_plugins(),
        graceful_shutdown_timeout=timedelta(seconds=5),
        max_eager_activity_reservations_per_workflow_task=config.eager_calls(),
    )


async def serve_worker(config: WorkerConfig) -> None:
    """``--serve-worker``: one peer's worker until SIGTERM."""
    from seawall.runtime.logs import configure_logging

    configure_logging("json", "ERROR")
    worker = await build_peer_worker(config)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with worker:
        print("ready", flush=True)
        await stop.wait()


@dataclass
class WorkerProcess:
    config: WorkerConfig
    process: asyncio.subprocess.Process

    @property
    def queue(self) -> str:
        return self.config.task_queue

    @classmethod
    async def start(cls, config: WorkerConfig) -> WorkerProcess:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(Path(__file__).resolve()),
            "--serve-worker",
            config.model_dump_json(),
            env=worker_process_environment(),
            stdout=asyncio.subprocess.PIPE,
        )
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 180)
        if line.strip() != b"ready":
            proc.kill()
            await proc.wait()
            raise RuntimeError(f"the {config.peer} worker did not start: {line!r}")
        return cls(config, proc)

    def cpu_seconds(self) -> float:
        return process_cpu_seconds(self.process.pid)

    def status_kib(self, key: str) -> int:
        """A size the process's ``/proc`` status gives in KiB (``VmRSS``, ``VmHWM``)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
        return 0

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), 30)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


async def start_peer(
    env: WorkflowEnvironment, peer: Peer, workspace: str, **config: Any
) -> tuple[WorkerProcess, Driver]:
    """``peer``'s worker process on ``env``'s server (``config``: the rest of its
    :class:`WorkerConfig`) and the driver of its prompts."""
    worker = await WorkerProcess.start(
        WorkerConfig(
            peer=peer.key,
            address=env.client.service_client.config.target_host,
            namespace=env.client.namespace,
            task_queue=f"bench-peer-{peer.key}-{uuid.uuid4().hex[:12]}",
            **config,
        )
    )
    try:
        return worker, Driver(peer, await driver_client(env, peer), worker.queue, workspace)
    except BaseException:
        await worker.stop()
        raise


# --- the driver ---------------------------------------------------------------------------


@dataclass
class Driver:
    """Starts one peer's prompts and checks each ended with the script's answer. A long
    shape (``bench/long_prompts.py --issue-1890``) puts ``context_chars`` of earlier
    conversation before the prompt and gives Seawall ``context_budget_chars``; its tools'
    result size is the worker's (:class:`WorkerConfig`), Seawall's fixtures' is
    ``result_chars``."""

    peer: Peer
    client: Client
    queue: str
    workspace: str
    context_chars: int = 0
    result_chars: int = 0
    context_budget_chars: int | None = None

    async def start(self, batches: int, calls: int) -> tuple[str, Awaitable[Any]]:
        """Start a prompt of ``batches`` batches: its workflow id and its result to await."""
        workflow_id = f"bench-peer-{self.peer.key}-{uuid.uuid4().hex[:12]}"
        if self.peer.module is None:
            workload = Workload(
                batches, calls, result_chars=self.result_chars, context_chars=self.context_chars
            )
            prompt = workload.prompt_input(self.workspace)
            if self.context_budget_chars is not None:
                prompt = prompt.model_copy(
                    update={"context_budget_chars": self.context_budget_chars}
                )
            handle = await self.client.start_workflow(
                PromptWorkflow.run, prompt, id=workflow_id, task_queue=self.queue
            )
            return workflow_id, handle.result()
        text = peer_script.prompt_text(batches, self.context_chars)
        if hasattr(module := peer_module(self.peer), "run_prompt"):  # a session per prompt
            return workflow_id, module.run_prompt(self.client, workflow_id, self.queue, text)
        handle = await self.client.start_workflow(
            module.WORKFLOW_NAME, text, id=workflow_id, task_queue=self.queue, result_type=str
        )
        return workflow_id, handle.result()

    async def one(self, batches: int, calls: int) -> str:
        workflow_id, ending = await self.start(batches, calls)
        result = await ending
        if isinstance(result, PromptResult):
            assert result.stop_reason is StopReason.END_TURN, result.stop_reason
            assert result.model_requests == batches + 1, result.model_requests
        else:
            assert result == peer_script.FINAL_TEXT, result
        return workflow_id

    async def many(self, batches: int, calls: int, prompts: int, concurrency: int) -> list[str]:
        limit = asyncio.Semaphore(concurrency)

        async def guarded() -> str:
            async with limit:
                return await self.one(batches, calls)

        return list(await asyncio.gather(*(guarded() for _ in range(prompts))))


@dataclass
class Level:
    """One peer at one concurrency: its interleaved rounds added up (:func:`measure_level`)."""

    peer: str
    concurrency: int
    prompts: int = 0
    wall_seconds: float = 0.0
    worker_cpu_seconds: float = 0.0
    gaps: list[float] = field(default_factory=list)
    segments: dict[str, list[float]] = field(default_factory=lambda: {n: [] for n in SEGMENTS})
    events: int = 0
    event_types: dict[str, int] = field(default_factory=dict)
    history_bytes: int = 0
    payload_bytes: int = 0
    rss_before_kib: int = 0  # before its first round
    peak_rss_kib: int = 0  # VmHWM: the process's peak so far
    level_peak_rss_kib: int = 0  # the highest RSS sampled during this level
    # The dev server's hand-offs to matching in this level, and their wait for the history
    # service's transfer-queue reads (bench/server_metrics.py).
    server: ServerCounters = field(default_factory=ServerCounters)
    server_cpu_seconds: float = 0.0  # the dev server process's, while this peer ran

    round_rates: list[float] = field(default_factory=list)  # prompts/s of each round

    def summary(self) -> dict[str, Any]:
        n = max(1, self.prompts)
        return {
            "peer": self.peer,
            "concurrency": self.concurrency,
            "prompts": self.prompts,
            "batches_measured": len(self.gaps),
            "batch_latency_ms_median": round(statistics.median(self.gaps) * 1000, 2)
            if self.gaps
            else None,
            "batch_latency_ms_p95": round(percentile(self.gaps, 0.95) * 1000, 2)
            if self.gaps
            else None,
            "batch_segments_ms_median": {
                name: round(statistics.median(values) * 1000, 2) if values else None
                for name, values in self.segments.items()
            },
            "prompts_per_second": round(self.prompts / self.wall_seconds, 3),
            "prompts_per_second_by_round": [round(r, 3) for r in self.round_rates],
            "history_events_per_prompt": round(self.events / n, 1),
            "history_event_types_per_prompt": {
                k: round(v / n, 2) for k, v in sorted(self.event_types.items())
            },
            "history_bytes_per_prompt": round(self.history_bytes / n),
            "payload_bytes_per_prompt": round(self.payload_bytes / n),
            "worker_cpu_ms_per_prompt": round(self.worker_cpu_seconds / n * 1000, 1),
            "server_cpu_ms_per_prompt": round(self.server_cpu_seconds / n * 1000, 1),
            # Each a store transaction in production (docs/capacity.md).
            "server_workflow_writes_per_prompt": round(self.server.workflow_writes / n, 1),
            "server_handoffs_per_prompt": round(self.server.handoffs / n, 1),
            # Of those, the calls the worker did not start eagerly (docs/capacity.md, "Eager
            # calls").
            "server_call_handoffs_per_prompt": round(self.server.activity_handoffs / n, 1),
            "server_handoff_wait_ms_mean": round(
                self.server.handoff_wait_seconds / self.server.handoffs * 1000, 2
            )
            if self.server.handoffs
            else None,
            "worker_rss_mib_before": round(self.rss_before_kib / 1024, 1),
            "worker_peak_rss_mib": round(self.peak_rss_kib / 1024, 1),
            # What holding one more prompt in flight costs the worker, at this concurrency.
            "worker_rss_growth_kib_per_inflight_prompt": round(
                (self.level_peak_rss_kib - self.rss_before_kib) / self.concurrency, 1
            ),
        }


async def sample_rss(worker: WorkerProcess, samples: list[int]) -> None:
    """The worker's RSS every 0.2 s until cancelled: its peak within one level."""
    while True:
        samples.append(worker.status_kib("VmRSS"))
        await asyncio.sleep(RSS_SAMPLE_SECONDS)


async def measure_level(
    level: Level,
    driver: Driver,
    worker: WorkerProcess,
    args: argparse.Namespace,
    prompts: int,
    server: SettledReadings,
) -> None:
    """One round of ``prompts`` at the level's concurrency, added to ``level``; ``server``
    read last when the round before ended."""
    server_cpu_before = server_cpu_seconds()
    rss_before = worker.status_kib("VmRSS")
    cpu_before = worker.cpu_seconds()
    samples: list[int] = []
    sampler = asyncio.create_task(sample_rss(worker, samples))
    started = time.perf_counter()
    try:
        ids = await driver.many(args.batches, args.calls, prompts, level.concurrency)
    finally:
        sampler.cancel()
    wall = time.perf_counter() - started
    if not level.prompts:
        level.rss_before_kib = rss_before
    level.prompts += prompts
    level.wall_seconds += wall
    level.round_rates.append(prompts / wall)
    level.worker_cpu_seconds += worker.cpu_seconds() - cpu_before
    level.peak_rss_kib = worker.status_kib("VmHWM")  # the process's peak: it never falls
    level.level_peak_rss_kib = max(level.level_peak_rss_kib, rss_before, *samples)
    level.server_cpu_seconds += server_cpu_seconds() - server_cpu_before
    level.server += await server.since_last()
    for workflow_id in ids:
        history = await driver.client.get_workflow_handle(workflow_id).fetch_history()
        level.gaps.extend(batch_gaps(history, driver.peer.model_mark))
        segments = batch_segments(history, driver.peer.model_mark, driver.peer.aside_mark)
        for name, values in segments.items():
            level.segments[name].extend(values)
        level.events += len(history.events)
        for event in history.events:
            kind = EventType.Name(event.event_type).removeprefix("EVENT_TYPE_")
            level.event_types[kind] = level.event_types.get(kind, 0) + 1
        level.history_bytes += sum(e.ByteSize() for e in history.events)
        level.payload_bytes += sum(payload_bytes(e) for e in history.events)


def replayer(peer: Peer) -> Replayer:
    """The peer's replayer as its worker would run the workflow."""
    if peer.module is None:
        return Replayer(workflows=[], plugins=[SeawallPlugin()])  # its converter and sandbox
    module = peer_module(peer)
    return Replayer(
        workflows=module.WORKFLOWS, plugins=[*module.client_plugins(), *module.worker_plugins()]
    )


async def measure_replay(driver: Driver, args: argparse.Namespace) -> dict[str, Any]:
    workflow_id = await driver.one(args.long_batches, args.calls)
    history = await driver.client.get_workflow_handle(workflow_id).fetch_history()
    runner = replayer(driver.peer)
    timings = []
    for _ in range(REPLAY_REPEATS):
        started = time.perf_counter()
        await runner.replay_workflow(history)  # a replay failure raises
        timings.append(time.perf_counter() - started)
    return {
        "peer": driver.peer.key,
        "batches": args.long_batches,
        "events": len(history.events),
        "seconds_median": round(statistics.median(timings), 4),
        "ms_per_1000_events": round(statistics.median(timings) / len(history.events) * 1e6, 2),
    }


async def start_server(
    store: Path, config: Mapping[str, int], *extra_args: str, attempts: int = 3
) -> WorkflowEnvironment:
    """The embedded dev server with Seawall's payload store under ``store`` (as it ships
    embedded) and the dynamic-config values ``config``. On a loaded machine it can miss the
    SDK's 5 s start deadline, so a failed start is tried again."""
    from seawall.runtime.devserver import start_dev_server

    for key, value in config.items():
        extra_args += ("--dynamic-config-value", f"{key}={value}")
    for attempt in range(1, attempts + 1):
        try:
            storage = peer_history.filesystem_store(store)
            return await start_dev_server(storage=storage, extra_args=list(extra_args))
        except RuntimeError as err:
            if attempt == attempts or "did not start" not in str(err):
                raise
            print(f"the dev server did not start in time (attempt {attempt}); trying again")
    raise AssertionError("unreachable")


async def run(args: argparse.Namespace, log: Callable[[str], None] = print) -> dict[str, Any]:
    set_shape(args.calls, args.tool_latency)
    workspace = tempfile.mkdtemp(prefix="seawall-bench-peers-")
    args.payload_store = Path(workspace) / "payloads"  # Seawall's, as it ships embedded
    peers, skipped = available(args.peers)
    for key, reason in skipped.items():
        log(f"skipping {key}: {reason}")
    report: dict[str, Any] = {
        "workload": {
            "batches_per_prompt": args.batches,
            "calls_per_batch": args.calls,
            "tool_latency_seconds": args.tool_latency,
            "long_batches": args.long_batches,
        },
        "peers": {p.key: p.title for p in peers},
        "skipped": skipped,
        "versions": versions(),
    }
    report["server_config"] = server_config(args)
    report["eager_calls"] = {}  # each peer's worker's (WorkerConfig.eager_calls)
    metrics_port = free_port()
    env = await start_server(
        args.payload_store, report["server_config"], "--metrics-port", str(metrics_port)
    )
    processes: dict[str, WorkerProcess] = {}
    try:
        drivers: dict[str, Driver] = {}
        for peer in peers:
            processes[peer.key], drivers[peer.key] = await start_peer(
                env,
                peer,
                workspace,
                calls=args.calls,
                tool_latency=args.tool_latency,
                peers_eager_calls=args.peers_eager_calls,
                seawall_eager_calls=args.seawall_eager_calls,
                payload_store=args.payload_store,
            )
            report["eager_calls"][peer.key] = processes[peer.key].config.eager_calls()
            await drivers[peer.key].many(args.batches, args.calls, WARMUP_PROMPTS, WARMUP_PROMPTS)
        levels: list[dict[str, Any]] = []
        server = await SettledReadings.start(metrics_port)
        for concurrency in args.concurrency:
            default = PROMPTS.get(concurrency, 2 * concurrency)
            rounds = ROUNDS.get(concurrency, 2) if args.rounds is None else args.rounds
            per_round = max(concurrency, (args.prompts or default) // max(1, rounds))
            merged = {peer.key: Level(peer.key, concurrency) for peer in peers}
            # Interleaved rounds, the order rotated each round: a change in the machine's
            # load (2 cores here) hits every peer alike instead of whichever ran then.
            for r in range(max(1, rounds)):
                order = peers[r % len(peers) :] + peers[: r % len(peers)] if peers else []
                for peer in order:
                    await measure_level(
                        merged[peer.key],
                        drivers[peer.key],
                        processes[peer.key],
                        args,
                        per_round,
                        server,
                    )
            for peer in peers:
                levels.append(merged[peer.key].summary())
                log(
                    f"  {peer.key} at concurrency {concurrency}: {levels[-1]['prompts']} "
                    f"prompts in {rounds} rounds, median batch "
                    f"{levels[-1]['batch_latency_ms_median']} ms"
                )
        report["levels"] = levels
        baselines = {p.key for p in peers if p.baseline}
        report["against_best_peer"] = against_best_peer(levels, baselines)
        report["over_bare"] = over_bare(levels)
        if args.bytes_batches:
            report["bytes"] = await peer_history.sweep(
                drivers, args.bytes_batches, args.calls, args.payload_store, log, baselines
            )
        report["replay"] = []
        if args.long_batches > 0:
            for peer in peers:
                try:
                    report["replay"].append(await measure_replay(drivers[peer.key], args))
                except Exception as err:  # one peer's failure must not lose the others' figures
                    log(f"  {peer.key}: the long prompt or its replay failed: {err!r}")
                    report["replay"].append({"peer": peer.key, "error": repr(err)})
    finally:
        for worker in processes.values():
            await worker.stop()
        await env.shutdown()
        shutil.rmtree(workspace, ignore_errors=True)
    return report


# The dev server's history service reads its transfer queue at most this often a second
# unless told otherwise (the server's default of history.transferProcessorMaxPollRPS).
SERVER_DEFAULT_READER_POLLS = 20
READER_POLLS_KEY = "history.transferProcessorMaxPollRPS"


def server_config(args: argparse.Namespace) -> dict[str, int]:
    """The dynamic-config values the dev server runs with (none: as it ships)."""
    if args.reader_polls_per_second in (None, SERVER_DEFAULT_READER_POLLS):
        return {}
    return {READER_POLLS_KEY: args.reader_polls_per_second}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--calls", type=int, default=4)
    parser.add_argument("--tool-latency", type=float, default=0.0, help="seconds per tool call")
    parser.add_argument(
        "--concurrency",
        type=lambda s: [int(x) for x in s.split(",") if x],
        default=None,
        help="prompts in flight per level (default: 1,10,100; none with --bytes-batches)",
    )
    parser.add_argument(
        "--prompts",
        type=int,
        default=0,
        help="per peer per level, at least the concurrency (default: 40, 60, 200 at 1, 10, 100)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="interleaved rounds per level (default: 8, 4, 2 at 1, 10, 100)",
    )
    parser.add_argument(
        "--long-batches", type=int, default=50, help="batches of the replayed history (0: none)"
    )
    parser.add_argument(
        "--reader-polls-per-second",
        type=int,
        default=None,
        help="the dev server's transfer-queue reads per second "
        f"({READER_POLLS_KEY}; default: the server's {SERVER_DEFAULT_READER_POLLS})",
    )
    parser.add_argument(
        "--peers-eager-calls",
        type=int,
        default=None,
        help="calls of one workflow task the peers' workers start eagerly "
        f"(default: the SDK's {SDK_EAGER_CALLS}; Seawall's worker keeps its own setting)",
    )
    parser.add_argument(
        "--seawall-eager-calls",
        type=int,
        default=None,
        help="calls of one workflow task Seawall's worker starts eagerly (default: its "
        "eager_calls_per_workflow_task setting's default; 0: every call through the queue)",
    )
    parser.add_argument(
        "--peers", type=peer_keys, default=list(PEERS), help="comma-separated: " + ",".join(PEERS)
    )
    parser.add_argument(
        "--bytes-batches",
        type=lambda s: [int(x) for x in s.split(",") if x],
        default=[],
        help="one prompt per peer at each of these batch counts: history and stored bytes "
        "and their growth exponent (e.g. 5,20,100)",
    )
    parser.add_argument(
        "--json", type=Path, default=None, help=f"write the report (e.g. {DEFAULT_JSON})"
    )
    parser.add_argument("--serve-worker", metavar="JSON", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_worker:
        asyncio.run(serve_worker(WorkerConfig.model_validate_json(args.serve_worker)))
        return 0
    if args.concurrency is None:
        args.concurrency = [] if args.bytes_batches else [1, 10, 100]
    if any(b < 1 for b in args.bytes_batches):
        parser.error("--bytes-batches must be ≥ 1 each")
    if args.reader_polls_per_second is not None and args.reader_polls_per_second < 1:
        parser.error("--reader-polls-per-second must be ≥ 1")
    if args.peers_eager_calls is not None and args.peers_eager_calls < 1:
        parser.error("--peers-eager-calls must be ≥ 1")
    if args.seawall_eager_calls is not None and not 0 <= args.seawall_eager_calls <= 1000:
        parser.error("--seawall-eager-calls must be 0 to 1000")
    if args.batches < 1 or args.calls < 2:
        parser.error("--batches must be ≥ 1 and --calls ≥ 2 (the fetch calls and flaky_api)")
    return run_and_report(run(args), print_report, args.json)


def print_report(report: dict[str, Any]) -> None:
    """The levels' tables, then the bytes sweep's (``--bytes-batches``)."""
    print_tables(report)
    if report.get("bytes"):
        print("\n" + "\n".join(peer_history.bytes_table(report["bytes"])))


if __name__ == "__main__":
    sys.exit(main())
