"""The cost of durability: Seawall against a bare workflow and a plain asyncio loop.

    python bench/overhead.py [--parts levels,long,replay,memory] [--scale S]
                             [--long-batches N] [--replay-batches N --replay-calls N]
                             [--profile auto|always|never] [--memory-prompts N] [--json PATH]

One scripted workload (``--batches`` batches of ``--calls`` fixture calls each, one of them
failing with varied arguments so the guard tracks a streak that never reaches the
reminder, then the model's answer) runs four ways on one embedded Temporal dev server
(payloads past 64 KiB in the filesystem store, the embedded default):

  (a) Seawall's ``PromptWorkflow`` with the guard ``off``,
  (b) the same with the guard ``enforce``,
  (c) a plain in-process asyncio loop of the same shape, no Temporal (``bench/bare.py``),
  (d) a bare Temporal workflow of the same shape with no Seawall logic (``bench/bare.py``).

Parts (``--parts``, all by default; each prints its figures beside its baseline):

- ``levels``: at concurrency 1, 10 and 100 prompts in flight, the variants of a level in
  interleaved rounds so a change in the machine's load hits them alike: median (and p90)
  per-batch latency — the time from one model step starting to the next, i.e. model step,
  the batch's tool steps, and all the orchestration in between — prompts per second, CPU
  per prompt of the worker (with the driver) and of the dev server, and the server's state
  transitions and workflow writes per prompt (``bench/server_metrics.py``); the ratios
  b/a, a/d and a/c, and the concurrency-1 latency against the bare workflow's floor
  (target ≤ 1.5×); replay time per 1,000 history events (``Replayer`` over histories of
  the concurrency-10 runs) and history bytes per prompt. When b/a or a/d is worse than
  1.10, a profiling pass (cProfile on the worker's event-loop thread and its
  workflow-task thread) says where the time goes.
- ``long``: a 100-batch prompt (``--long-batches``) through the same harness at
  concurrency 1, beside the bare workflow's 100-batch shape, with its history and stored
  bytes per prompt.
- ``replay``: the replay of one ≥10,000-event prompt history (``bench/replay_long.py``),
  against the 2 s target, beside the bare workflow's.
- ``memory``: worker memory per cached prompt (the RSS growth of a worker subprocess
  holding N prompts paused mid-prompt, divided by N), beside the bare workflow's.

Every count the script uses is printed; results go to ``bench/results/overhead.json``
(with the commit they came from), which ``bench/capacity.py`` sizes a deployment from.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import cProfile
import functools
import itertools
import os
import platform
import pstats
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import temporalio
from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.client import Interceptor as ClientInterceptor
from temporalio.converter import ExternalStorage
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
    Replayer,
    UnsandboxedWorkflowRunner,
    Worker,
    WorkflowRunner,
)
from temporalio.worker.workflow_sandbox import (
    SandboxedWorkflowRunner,
    SandboxRestrictions,
)

from activities.fixtures import fixture_tool_spec
from activities.tool_runner import builtin_tool_specs
from activities.tools import BUILTIN_TOOLS
from bench import replay_long
from bench.bare import (
    BARE_ACTIVITIES,
    BARE_MODEL,
    BareInput,
    BareLoopWorkflow,
    BareResult,
    run_inprocess,
)
from bench.replay_long import measure_long_replay
from bench.report_runner import run_and_report
from bench.server_metrics import (
    ServerCounters,
    free_port,
    read_counters,
    server_cpu_seconds,
    state_transitions,
)
from bench.trusted import bench_client, bench_trust, worker_process_environment
from seawall.runtime.plugin import SeawallPlugin, client_with_plugin, connect
from seawall.runtime.storage import DEFAULT_THRESHOLD_BYTES, FilesystemStorageDriver
from workflows.contracts.activity import CALL_MODEL, ToolSpec
from workflows.contracts.prompt import PromptInput, PromptResult, StopReason
from workflows.contracts.prompt_options import (
    DEFAULT_MAX_MODEL_REQUESTS,
    DEFAULT_MAX_TOOL_CALLS_PER_TURN,
)
from workflows.contracts.scenario import FixtureTool, ModelScript, ScenarioHooks
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_JSON = ROOT / "bench" / "results" / "overhead.json"
LEVELS = (1, 10, 100)
# Prompts per variant and level at --scale 1.
PROMPTS_PER_LEVEL = {1: 12, 10: 60, 100: 200}
# Interleaved rounds per level; a round at concurrency 100 needs 100 prompts in flight.
ROUNDS = {1: 4, 10: 4, 100: 2}
WARMUP_PROMPTS = 10
REPLAY_HISTORIES = 30
REPLAY_REPEATS = 3
MEMORY_PROMPTS = 100  # per step; two steps
PROFILE_PROMPTS = 40
RATIO_LIMIT = 1.10
FAILING_BATCHES = 5  # batches whose flaky_api call fails
LONG_BATCHES = 100
FLOOR_RATIO_TARGET = 1.5  # per-batch latency at concurrency 1 vs the bare workflow's
LONG_PROMPTS = 3  # per variant, one per interleaved round

VARIANTS = {
    "a": "(a) Seawall, guard off",
    "b": "(b) Seawall, guard enforce",
    "c": "(c) in-process asyncio loop",
    "d": "(d) bare Temporal workflow",
}

# --- the workload -------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    batches: int = 5
    calls: int = 4

    def script(self) -> ModelScript:
        turns: list[dict[str, Any]] = []
        for b in range(self.batches):
            calls: list[dict[str, Any]] = [
                {"name": f"fetch_{k}", "arguments": {"path": f"data/{b}/{k}.json"}}
                for k in range(self.calls - 1)
            ]
            # Each batch asks the endpoint about its own batch's data (a new question each
            # time: the same call with only a counter changed and the same answer would be a
            # near repeat, docs/architecture.md "R9").
            calls.append({"name": "flaky_api", "arguments": {"path": f"status/{b}"}})
            turns.append({"text": "", "tool_calls": calls})
        turns.append({"text": "All data fetched; one endpoint kept failing."})
        return ModelScript.model_validate({"turns": turns})

    def fixtures(self) -> dict[str, FixtureTool]:
        ok = {
            "status": "success",
            "execution_status": "success",
            "content": '{"items": [' + ", ".join(str(i) for i in range(40)) + "]}",
        }
        fail = {
            "status": "error",
            "execution_status": "error",
            "error_type": "execution_failed",
            "message": "HTTP 500 Internal Server Error",
        }
        tools = {f"fetch_{k}": {"outcomes": [ok]} for k in range(self.calls - 1)}
        # Past the default's five batches the endpoint recovers: a tool failing in every
        # one of 100 batches is a loop, which the guard rightly stops.
        flaky = [fail] if self.batches <= FAILING_BATCHES else [fail] * FAILING_BATCHES + [ok]
        tools["flaky_api"] = {"outcomes": flaky}
        return {name: FixtureTool.model_validate(spec) for name, spec in tools.items()}

    def limits(self) -> dict[str, int]:
        """A long workload runs to its answer: room for every model step, and the tool-call
        cap (100 per prompt by default) off, as an operator running such prompts would set
        it. The default workload stays under both and keeps the defaults."""
        options: dict[str, int] = {}
        if self.batches + 1 > DEFAULT_MAX_MODEL_REQUESTS:
            options["max_model_requests"] = self.batches + 1
        if self.batches * self.calls > DEFAULT_MAX_TOOL_CALLS_PER_TURN:
            options["max_tool_calls_per_turn"] = 0
        return options

    def tool_specs(self) -> list[ToolSpec]:
        """What the model is offered: Seawall lists the built-ins plus the fixtures."""
        specs = builtin_tool_specs(BUILTIN_TOOLS)
        for name, fixture in self.fixtures().items():
            specs[name] = fixture_tool_spec(name, fixture)
        return sorted(specs.values(), key=lambda s: s.name)

    @functools.cache  # noqa: B019 - a handful of long-lived workloads
    def seawall_input(self, mode: GuardMode, workspace: str, pause: bool = False) -> PromptInput:
        """Built once per variant: the driver's cost stays out of the measurement."""
        return PromptInput(
            prompt="Fetch the data files.",
            workspace_root=workspace,
            guard_mode=mode,
            **self.limits(),
            scenario=ScenarioHooks(
                model_script=self.script(),
                fixture_tools=self.fixtures(),
                pause_at_batches=[1] if pause else [],
            ),
        )

    @functools.cache  # noqa: B019
    def bare_input(self, workspace: str, pause: bool = False) -> BareInput:
        """Built once; the tool specs are computed here, once, as an agent would."""
        return BareInput(
            prompt="Fetch the data files.",
            workspace_root=workspace,
            model_script=self.script(),
            tools=self.tool_specs(),
            fixture_tools=self.fixtures(),
            pause_after_batch=1 if pause else None,
        )


# --- timing -------------------------------------------------------------------------------

MODEL_ACTIVITIES = frozenset({CALL_MODEL, BARE_MODEL})
MODEL_STARTS: dict[str, list[float]] = {}


class _TimingInbound(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        if info.activity_type in MODEL_ACTIVITIES:
            MODEL_STARTS.setdefault(info.workflow_id or "", []).append(time.perf_counter())
        return await super().execute_activity(input)


class TimingInterceptor(ClientInterceptor, Interceptor):
    """Stamps the start of every model step, the boundary between two batches."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _TimingInbound(next)


def intervals(starts: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(starts)]


class SdkSandbox(SandboxedWorkflowRunner):
    """The SDK's workflow sandbox as it ships. A subclass only so that the plugin keeps it:
    the plugin gives the SDK's own sandbox Seawall's runner (``seawall.runtime.
    sandbox_runner``), and a bare Temporal workflow, the baseline, runs without it."""


def bare_runner() -> SandboxedWorkflowRunner:
    """The SDK's sandbox (the plugin adds its passthrough modules) with ``bench`` passed
    through as Seawall passes ``workflows`` through, so neither re-imports its workflow
    module per run."""
    return SdkSandbox(restrictions=SandboxRestrictions.default.with_passthrough_modules("bench"))


def bare_plugin() -> SeawallPlugin:
    """Seawall's converter and sandbox, with the baseline's workflow and activities."""
    return SeawallPlugin(BARE_ACTIVITIES, workflows=[BareLoopWorkflow])


def seawall_worker(
    client: Client,
    queue: str,
    executor: concurrent.futures.ThreadPoolExecutor | None = None,
) -> Worker:
    from seawall.worker.build import build_worker

    # With an executor, the workflow-task thread is handed in for profiling.
    return build_worker(client, queue, workflow_task_executor=executor, trust=bench_trust())


def bare_worker(
    client: Client,
    queue: str,
    executor: concurrent.futures.ThreadPoolExecutor | None = None,
) -> Worker:
    return Worker(
        client_with_plugin(client, bare_plugin()),
        task_queue=queue,
        workflow_runner=bare_runner(),
        max_cached_workflows=1000,
        max_heartbeat_throttle_interval=timedelta(seconds=1),
        graceful_shutdown_timeout=timedelta(seconds=10),
        workflow_task_executor=executor,
    )


@dataclass
class Bench:
    client: Client
    workload: Workload
    workspace: str
    queues: dict[str, str] = field(default_factory=dict)
    # The dev server's Prometheus port: state transitions and writes per prompt.
    metrics_port: int | None = None

    def prompt_id(self, variant: str) -> str:
        return f"bench-{variant}-{uuid.uuid4().hex[:12]}"

    async def one(self, variant: str) -> tuple[str, list[float]]:
        """Run one prompt of ``variant``; its id and its per-batch intervals."""
        expected = self.workload.batches + 1
        if variant == "c":
            starts: list[float] = []
            result = await run_inprocess(
                self.workload.bare_input(self.workspace), on_model_start=starts.append
            )
            assert result.model_requests == expected, result
            return "", intervals(starts)
        workflow_id = self.prompt_id(variant)
        if variant == "d":
            bare: BareResult = await self.client.execute_workflow(
                BareLoopWorkflow.run,
                self.workload.bare_input(self.workspace),
                id=workflow_id,
                task_queue=self.queues["d"],
            )
            assert bare.model_requests == expected, bare
        else:
            mode = GuardMode.OFF if variant == "a" else GuardMode.ENFORCE
            seawall: PromptResult = await self.client.execute_workflow(
                PromptWorkflow.run,
                self.workload.seawall_input(mode, self.workspace),
                id=workflow_id,
                task_queue=self.queues["seawall"],
            )
            assert seawall.stop_reason is StopReason.END_TURN, seawall.stop_reason
            assert seawall.model_requests == expected, seawall.model_requests
        return workflow_id, intervals(MODEL_STARTS.pop(workflow_id, []))

    async def many(self, variant: str, prompts: int, concurrency: int) -> Run:
        limit = asyncio.Semaphore(concurrency)
        run = Run(variant=variant, concurrency=concurrency)

        async def guarded() -> None:
            async with limit:
                workflow_id, batch_times = await self.one(variant)
                run.ids.append(workflow_id)
                run.batch_seconds.extend(batch_times)

        cpu_before, server_before = time.process_time(), server_cpu_seconds()
        counters_before = read_counters(self.metrics_port if variant != "c" else None)
        started = time.perf_counter()
        await asyncio.gather(*(guarded() for _ in range(prompts)))
        run.wall_seconds = time.perf_counter() - started
        run.cpu_seconds = time.process_time() - cpu_before
        run.server_cpu_seconds = server_cpu_seconds() - server_before
        run.server = read_counters(self.metrics_port if variant != "c" else None) - counters_before
        run.prompts = prompts
        return run


@dataclass
class Run:
    variant: str
    concurrency: int
    prompts: int = 0
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process: the worker(s) and the driver
    server_cpu_seconds: float = 0.0
    server: ServerCounters = field(default_factory=ServerCounters)
    batch_seconds: list[float] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    # The interleaved rounds merged into this run, each a Run of its own: how much a ratio
    # moves between rounds of one run is the noise it must beat.
    rounds: list[Run] = field(default_factory=list)

    def merge(self, other: Run) -> None:
        self.rounds.append(other)
        self.prompts += other.prompts
        self.wall_seconds += other.wall_seconds
        self.cpu_seconds += other.cpu_seconds
        self.server_cpu_seconds += other.server_cpu_seconds
        self.server = self.server + other.server
        self.batch_seconds.extend(other.batch_seconds)
        self.ids.extend(other.ids)

    def prompts_per_second(self) -> float:
        return self.prompts / self.wall_seconds if self.wall_seconds else 0.0

    def summary(self) -> dict[str, Any]:
        ordered = sorted(self.batch_seconds)
        p90 = ordered[max(0, int(0.9 * len(ordered) + 0.999999) - 1)] if ordered else 0.0
        return {
            "variant": self.variant,
            "title": VARIANTS[self.variant],
            "concurrency": self.concurrency,
            "prompts": self.prompts,
            "wall_seconds": round(self.wall_seconds, 3),
            # Four places: a 100-batch prompt on a loaded machine can take minutes.
            "prompts_per_second": round(self.prompts / self.wall_seconds, 4),
            "batch_latency_ms_median": round(statistics.median(ordered) * 1000, 3),
            "batch_latency_ms_p90": round(p90 * 1000, 3),
            "batches_measured": len(ordered),
            "cpu_ms_per_prompt_worker": round(self.cpu_seconds / self.prompts * 1000, 2),
            "cpu_ms_per_prompt_server": round(self.server_cpu_seconds / self.prompts * 1000, 2),
            "cpu_ms_per_prompt": round(
                (self.cpu_seconds + self.server_cpu_seconds) / self.prompts * 1000, 2
            ),
            # From the dev server's metrics (0 for the in-process loop, or without them):
            # its writes of workflow state (each a store transaction) and every request.
            "workflow_writes_per_prompt": round(self.server.workflow_writes / self.prompts, 1),
            "persistence_requests_per_prompt": round(
                self.server.persistence_requests / self.prompts, 1
            ),
        }


# --- latency and throughput ---------------------------------------------------------------


async def measure_levels(
    bench: Bench,
    levels: dict[int, int],
    log: Callable[[str], None],
    warmup: int = WARMUP_PROMPTS,
    rounds_per_level: dict[int, int] = ROUNDS,
) -> dict[int, dict[str, Run]]:
    order = ["a", "b", "d", "c"]
    for variant in order:  # warm the sandbox, the caches and the server's task queues
        if warmup:
            await bench.many(variant, warmup, min(5, warmup))
    results: dict[int, dict[str, Run]] = {}
    for concurrency, prompts in levels.items():
        rounds = rounds_per_level.get(concurrency, 2)
        per_round = max(1, prompts // rounds)
        merged = {v: Run(variant=v, concurrency=concurrency) for v in order}
        for r in range(rounds):
            rotated = order[r % len(order) :] + order[: r % len(order)]
            for variant in rotated:
                merged[variant].merge(await bench.many(variant, per_round, concurrency))
        results[concurrency] = merged
        line = ", ".join(
            f"{v}: {merged[v].summary()['batch_latency_ms_median']:.1f} ms" for v in order
        )
        log(f"  concurrency {concurrency}: {per_round * rounds} prompts per variant ({line})")
    return results


def ratios(level: dict[str, Run]) -> dict[str, dict[str, Any]]:
    s = {v: run.summary() for v, run in level.items()}

    def lat(x: str, y: str) -> float:
        return round(float(s[x]["batch_latency_ms_median"] / s[y]["batch_latency_ms_median"]), 3)

    def thr(x: str, y: str) -> float:  # > 1 when x is slower (fewer prompts per second)
        return round(float(s[y]["prompts_per_second"] / max(s[x]["prompts_per_second"], 1e-9)), 3)

    def per_prompt(key: str, x: str, y: str) -> float:
        return round(float(s[x][key] / max(s[y][key], 1e-9)), 3)

    out: dict[str, dict[str, Any]] = {
        pair: {
            "latency": lat(*pair.split("/")),
            "throughput": thr(*pair.split("/")),
            "cpu": per_prompt("cpu_ms_per_prompt", *pair.split("/")),
        }
        for pair in ("b/a", "a/d", "a/c")
    }
    for pair in ("b/a", "a/d"):  # the server's share; the in-process loop has none
        out[pair]["server_cpu"] = per_prompt("cpu_ms_per_prompt_server", *pair.split("/"))
        x, y = (level[v] for v in pair.split("/"))
        if len(x.rounds) > 1 and len(x.rounds) == len(y.rounds):
            # The inverse-throughput ratio of each round: its range is the run's own noise.
            out[pair]["throughput_by_round"] = [
                round(b.prompts_per_second() / max(a.prompts_per_second(), 1e-9), 3)
                for a, b in zip(x.rounds, y.rounds, strict=True)
            ]
    return out


# --- replay -------------------------------------------------------------------------------


async def _iterate(histories: list[WorkflowHistory]) -> AsyncIterator[WorkflowHistory]:
    for history in histories:
        yield history


# The long replay once more on each other workflow runner: what the sandbox costs.
OTHER_RUNNERS: dict[str, str] = {
    "sdk-sandbox": "the SDK's sandbox",
    "seawall-sandbox": "Seawall's sandbox runner",
    "no-sandbox": "no sandbox (UnsandboxedWorkflowRunner)",
}


def replayer_for(
    variant: str, storage: ExternalStorage | None = None, runner: str | None = None
) -> Replayer:
    """A replayer as the variant's worker runs it: the one converter (with the payload
    storage the prompts were stored with), Seawall's workflows or the bare one, on the
    variant's own workflow runner or on ``runner`` (a key of :data:`OTHER_RUNNERS`)."""
    sdk = bare_runner()
    runners: dict[str, WorkflowRunner] = {
        "sdk-sandbox": sdk,
        # The plugin turns the SDK's own sandbox (not the subclass) into Seawall's runner.
        "seawall-sandbox": SandboxedWorkflowRunner(restrictions=sdk.restrictions),
        "no-sandbox": UnsandboxedWorkflowRunner(),
    }
    if variant == "d":
        return Replayer(
            workflows=[],
            workflow_runner=runners[runner or "sdk-sandbox"],
            plugins=[SeawallPlugin(workflows=[BareLoopWorkflow], storage=storage)],
        )
    return Replayer(
        workflows=[],
        workflow_runner=runners[runner or "seawall-sandbox"],
        plugins=[SeawallPlugin(storage=storage)],
    )


async def measure_replay(
    bench: Bench, ids: dict[str, list[str]], storage: ExternalStorage | None = None
) -> dict[str, Any]:
    """Replay time per 1,000 events for histories of (a), (b) and (d), and their sizes."""
    out: dict[str, Any] = {}
    for variant in ("a", "b", "d"):
        replayer = replayer_for(variant, storage)
        histories: list[WorkflowHistory] = [
            await bench.client.get_workflow_handle(wid).fetch_history()
            for wid in ids[variant][:REPLAY_HISTORIES]
        ]
        events = sum(len(h.events) for h in histories)
        transitions = await state_transitions(bench.client, ids[variant][:REPLAY_HISTORIES])
        history_bytes = sum(e.ByteSize() for h in histories for e in h.events)
        kinds: dict[str, int] = {}
        for history in histories:
            for event in history.events:
                name = EventType.Name(event.event_type).removeprefix("EVENT_TYPE_")
                kinds[name] = kinds.get(name, 0) + 1
        timings = []
        for _ in range(REPLAY_REPEATS):
            started = time.perf_counter()
            results = await replayer.replay_workflows(
                _iterate(histories), raise_on_replay_failure=True
            )
            timings.append(time.perf_counter() - started)
            assert results.replay_failures == {}
        seconds = statistics.median(timings)
        out[variant] = {
            "title": VARIANTS[variant],
            "histories": len(histories),
            "events": events,
            "events_per_history": round(events / max(1, len(histories)), 1),
            "history_bytes_per_history": round(history_bytes / max(1, len(histories))),
            "state_transitions_per_prompt": round(transitions, 1),
            "seconds_median": round(seconds, 4),
            "ms_per_1000_events": round(seconds / events * 1_000_000, 2),
            "event_types_per_history": {
                k: round(v / max(1, len(histories)), 2) for k, v in sorted(kinds.items())
            },
        }
    return out


def event_differences(replay: dict[str, Any], x: str, y: str) -> str:
    """History event types per prompt that ``x`` has more (or fewer) of than ``y``."""
    ex = replay[x]["event_types_per_history"]
    ey = replay[y]["event_types_per_history"]
    parts = [
        f"{k.lower()} {ex.get(k, 0) - ey.get(k, 0):+g}"
        for k in sorted(set(ex) | set(ey))
        if abs(ex.get(k, 0) - ey.get(k, 0)) > 1e-9
    ]
    return ", ".join(parts) or "none"


# --- memory -------------------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def serve_worker(address: str, namespace: str, queue: str, kind: str) -> None:
    """``--serve-worker``: a worker process for the memory measurement."""
    from seawall.runtime.logs import configure_logging

    configure_logging("json", "ERROR")
    client = await connect(address, namespace)
    worker = seawall_worker(client, queue) if kind == "seawall" else bare_worker(client, queue)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with worker:
        print("ready", flush=True)
        await stop.wait()


async def measure_memory(
    bench: Bench, address: str, namespace: str, prompts: int
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("seawall", "bare"):
        queue = f"bench-mem-{kind}-{uuid.uuid4().hex[:8]}"
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(Path(__file__).resolve()),
            "--serve-worker",
            "--address",
            address,
            "--namespace",
            namespace,
            "--task-queue",
            queue,
            "--kind",
            kind,
            env=worker_process_environment(),
            stdout=asyncio.subprocess.PIPE,
        )
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 120)
        assert line.strip() == b"ready", line
        handles: list[Any] = []
        try:
            # Warm up: complete prompts load every module and fill the sandbox caches.
            warm_queue = {"seawall": queue, "d": queue}
            warm = Bench(bench.client, bench.workload, bench.workspace, warm_queue)
            await warm.many("b" if kind == "seawall" else "d", WARMUP_PROMPTS, 5)
            await asyncio.sleep(1.0)
            samples = [rss_kib(proc.pid)]
            for _ in range(2):
                handles.extend(await start_paused(bench, kind, queue, prompts))
                await wait_paused(handles, kind)
                await asyncio.sleep(1.0)
                samples.append(rss_kib(proc.pid))
            total = len(handles)
            out[kind] = {
                "paused_prompts": total,
                "rss_kib": samples,
                "kib_per_prompt": round((samples[-1] - samples[0]) / total, 1),
                "kib_per_prompt_second_half": round((samples[2] - samples[1]) / prompts, 1),
            }
        finally:
            await asyncio.gather(*(h.terminate() for h in handles), return_exceptions=True)
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
    return out


async def start_paused(bench: Bench, kind: str, queue: str, prompts: int) -> list[Any]:
    async def start(i: int) -> Any:
        wid = f"bench-mem-{kind}-{uuid.uuid4().hex[:12]}"
        if kind == "seawall":
            return await bench.client.start_workflow(
                PromptWorkflow.run,
                bench.workload.seawall_input(GuardMode.ENFORCE, bench.workspace, pause=True),
                id=wid,
                task_queue=queue,
            )
        return await bench.client.start_workflow(
            BareLoopWorkflow.run,
            bench.workload.bare_input(bench.workspace, pause=True),
            id=wid,
            task_queue=queue,
        )

    return list(await asyncio.gather(*(start(i) for i in range(prompts))))


async def wait_paused(handles: list[Any], kind: str, timeout: float = 600.0) -> None:
    limit = asyncio.Semaphore(20)

    async def paused(handle: Any) -> bool:
        try:
            if kind == "seawall":
                status = await handle.query(PromptWorkflow.status)
                return bool(status.paused_batch == 1)
            return bool(await handle.query(BareLoopWorkflow.paused))
        except RPCError as err:  # a starved worker answers late: ask again
            if "Timeout" not in str(err) and err.status is not RPCStatusCode.DEADLINE_EXCEEDED:
                raise
            return False

    async def one(handle: Any) -> None:
        async with limit:
            while not await paused(handle):
                await asyncio.sleep(0.2)

    await asyncio.wait_for(asyncio.gather(*(one(h) for h in handles)), timeout)


# --- profile ------------------------------------------------------------------------------

_thread_profiler: list[cProfile.Profile] = []


def _start_thread_profiler() -> None:
    profiler = cProfile.Profile(time.thread_time)
    _thread_profiler.append(profiler)
    profiler.enable()


def _stop_thread_profiler() -> None:
    for profiler in _thread_profiler:
        profiler.disable()


CATEGORIES = (
    ("temporalio/worker/workflow_sandbox", "Temporal workflow sandbox"),
    ("temporalio/worker/_workflow_instance", "Temporal workflow instance"),
    ("temporalio/converter", "Temporal data conversion"),
    ("temporalio/contrib/pydantic", "Temporal data conversion"),
    ("temporalio/", "Temporal SDK (other)"),
    ("google/protobuf", "protobuf"),
    ("pydantic", "pydantic"),
    ("/workflows/", "Seawall workflow code"),
    ("/activities/", "activity code"),
    ("/bench/", "bench driver"),
    ("/asyncio/", "asyncio"),
    ("structlog", "logging"),
    ("/logging/", "logging"),
    ("opentelemetry", "telemetry"),
)


def category(filename: str) -> str:
    if filename == "~" or filename.startswith("<"):
        return "builtins and C"
    for needle, name in CATEGORIES:
        if needle in filename:
            return name
    return "other Python"


def summarise_profile(stats: pstats.Stats, prompts: int, top: int = 12) -> dict[str, Any]:
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in raw.values())
    by_category: dict[str, float] = {}
    rows = []
    for (filename, line, name), (_cc, _nc, tottime, cumtime, _callers) in raw.items():
        by_category[category(filename)] = by_category.get(category(filename), 0.0) + tottime
        short = filename
        for marker in ("site-packages/", str(ROOT) + "/"):
            if marker in short:
                short = short.split(marker, 1)[1]
        rows.append((tottime, cumtime, f"{short}:{line}({name})"))
    rows.sort(reverse=True)
    # The loop's own code (Seawall's workflow and activities, or the bare loop), by
    # cumulative time: where a variant's extra work starts.
    own = sorted(
        (
            (cumtime, tottime, f"{frame}")
            for tottime, cumtime, frame in rows
            if frame.startswith(("workflows/", "activities/", "bench/bare.py"))
        ),
        reverse=True,
    )
    return {
        "prompts": prompts,
        "cpu_ms_per_prompt": round(total / prompts * 1000, 2),
        "by_category_ms_per_prompt": {
            k: round(v / prompts * 1000, 3)
            for k, v in sorted(by_category.items(), key=lambda kv: -kv[1])
        },
        "top_frames": [
            {
                "frame": frame,
                "tottime_ms_per_prompt": round(t / prompts * 1000, 3),
                "cumtime_ms_per_prompt": round(c / prompts * 1000, 3),
            }
            for t, c, frame in rows[:top]
        ],
        "loop_code_cum_ms_per_prompt": {
            frame: round(c / prompts * 1000, 3) for c, _t, frame in own
        },
        "loop_code_frames": [
            {
                "frame": frame,
                "cumtime_ms_per_prompt": round(c / prompts * 1000, 3),
                "tottime_ms_per_prompt": round(t / prompts * 1000, 3),
            }
            for c, t, frame in own[:top]
        ],
    }


async def profile_variant(bench: Bench, variant: str, prompts: int) -> dict[str, Any]:
    """CPU profile of the worker (event-loop thread + its one workflow-task thread)."""
    _thread_profiler.clear()
    executor = concurrent.futures.ThreadPoolExecutor(
        max_workers=1, initializer=_start_thread_profiler
    )
    queue = f"bench-prof-{variant}-{uuid.uuid4().hex[:8]}"
    make = bare_worker if variant == "d" else seawall_worker
    worker = make(bench.client, queue, executor)
    profiled = Bench(bench.client, bench.workload, bench.workspace, {"seawall": queue, "d": queue})
    main = cProfile.Profile(time.thread_time)
    async with worker:
        await profiled.many(variant, 5, 5)  # warm-up, not profiled
        main.enable()
        await profiled.many(variant, prompts, 10)
        main.disable()
    executor.submit(_stop_thread_profiler).result()
    executor.shutdown()
    stats = pstats.Stats(main)
    for profiler in _thread_profiler:
        stats.add(profiler)
    return summarise_profile(stats, prompts)


# --- report -------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        first = Path("/proc/meminfo").read_text().splitlines()[0]
        memory = f"{int(first.split()[1]) // 1024} MiB"
    except (OSError, IndexError, ValueError):
        pass
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "memory": memory,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "temporalio": temporalio.__version__,
    }


def print_levels(levels: list[dict[str, Any]], label: str = "concurrency") -> None:
    """The per-variant rows and the ratio table of ``levels`` (each with its ``concurrency``,
    ``variants`` and ``ratios``)."""
    print()
    header = (
        f"{label:>11}  {'variant':<30} {'prompts':>7} {'wall s':>7} "
        f"{'prompts/s':>9} {'batch ms median':>15} {'p90':>7} {'CPU ms/prompt':>14}"
        f" {'(worker+driver | server)':>24}"
    )
    print(header)
    print("-" * len(header))
    for level in levels:
        for row in level["variants"]:
            print(
                f"{level['concurrency']:>11}  {row['title']:<30} {row['prompts']:>7} "
                f"{row['wall_seconds']:>7.2f} {row['prompts_per_second']:>9.2f} "
                f"{row['batch_latency_ms_median']:>15.2f} {row['batch_latency_ms_p90']:>7.2f} "
                f"{row['cpu_ms_per_prompt']:>14.1f} "
                f"{row['cpu_ms_per_prompt_worker']:>12.1f} | "
                f"{row['cpu_ms_per_prompt_server']:<9.1f}"
            )
    print()
    print(
        "Ratios: per-batch latency / inverse throughput / CPU per prompt [/ server CPU per "
        "prompt]; > 1 means costlier"
    )
    print(
        f"{label:>11}  {'b/a guard cost':>29} {'a/d vs bare workflow':>29} "
        f"{'a/c vs in-process':>24}"
    )
    for level in levels:
        r = level["ratios"]
        cells = [
            f"{r[k]['latency']:.2f} / {r[k]['throughput']:.2f} / {r[k]['cpu']:.2f}"
            + (f" / {r[k]['server_cpu']:.2f}" if "server_cpu" in r[k] else "")
            for k in ("b/a", "a/d", "a/c")
        ]
        print(f"{level['concurrency']:>11}  {cells[0]:>29} {cells[1]:>29} {cells[2]:>24}")
    spreads = [
        f"{level['concurrency']}: "
        + ", ".join(
            f"{pair} {min(by_round):.2f}-{max(by_round):.2f}"
            for pair in ("b/a", "a/d")
            if (by_round := level["ratios"][pair].get("throughput_by_round"))
        )
        for level in levels
        if any("throughput_by_round" in level["ratios"][pair] for pair in ("b/a", "a/d"))
    ]
    if spreads:
        print(
            "Inverse throughput by round (the range across one run's interleaved rounds, "
            "its noise): " + "; ".join(spreads)
        )


def print_server_costs(levels: list[dict[str, Any]]) -> None:
    """What each prompt costs the server, per variant and level: the capacity inputs."""
    print()
    print(
        "Server cost per prompt (dev server: CPU; its metrics: workflow writes = "
        "Create/UpdateWorkflowExecution, all persistence requests)"
    )
    print(
        f"{'concurrency':>11}  {'variant':<30} {'server CPU ms':>13} "
        f"{'writes':>7} {'persistence req':>15}"
    )
    for level in levels:
        for row in level["variants"]:
            if row["variant"] == "c":
                continue
            print(
                f"{level['concurrency']:>11}  {row['title']:<30} "
                f"{row['cpu_ms_per_prompt_server']:>13.1f} "
                f"{row['workflow_writes_per_prompt']:>7.1f} "
                f"{row['persistence_requests_per_prompt']:>15.1f}"
            )
    first = next((level for level in levels if level["concurrency"] == 1), None)
    if first:
        rows = {row["variant"]: row for row in first["variants"]}
        floor = rows["d"]["batch_latency_ms_median"]
        seawall = rows["a"]["batch_latency_ms_median"]
        print(
            f"Per-batch latency at concurrency 1: Seawall {seawall:.1f} ms, the bare "
            f"workflow's floor {floor:.1f} ms: {seawall / floor:.2f}x (target <= "
            f"{FLOOR_RATIO_TARGET}x)"
        )


def print_long(long: dict[str, Any]) -> None:
    w = long["workload"]
    print()
    print(
        f"Long prompt: {w['batches_per_prompt']} batches x {w['calls_per_batch']} calls, "
        "concurrency 1, beside the bare workflow of the same shape"
    )
    print_levels([{"concurrency": 1, **long}], label="long")
    for variant, h in long["history"].items():
        print(
            f"  {VARIANTS[variant]}: {h['events_per_prompt']:.0f} history events, "
            f"{h['state_transitions_per_prompt']:.0f} state transitions, "
            f"{h['history_bytes_per_prompt'] / 1e3:.0f} kB history, "
            f"{h['stored_bytes_per_prompt'] / 1e3:.0f} kB stored in "
            f"{h['stored_payloads_per_prompt']:.0f} payloads per prompt"
        )


def print_long_replay(replay: dict[str, Any]) -> None:
    print()
    print(
        f"Replay of one long history ({replay['batches']} batches x "
        f"{replay['calls_per_batch']} calls; median of {replay['repeats']}; target < "
        f"{replay['target_seconds']:.0f} s for {replay['target_events']:,} events):"
    )
    for variant, r in replay["variants"].items():
        print(
            f"  {VARIANTS[variant]:<30} {r['events']:>6,} events "
            f"({r['history_bytes'] / 1e6:.1f} MB): {r['replay_seconds_median']:.2f} s "
            f"({r['ms_per_1000_events']:.0f} ms per 1,000 events)"
            + ("" if r["reached_target_events"] else "  [fewer events than the target]")
        )
        for runner, seconds in r.get("runners", {}).items():
            print(f"      the same history on {OTHER_RUNNERS[runner]}: {seconds:.2f} s")
    ratios = replay.get("seawall_over_bare") or {}
    if ratios:
        b, d = replay["variants"]["b"]["runners"], replay["variants"]["d"]["runners"]
        print(
            f"  Seawall over the bare floor, the same history shape on the same runner "
            f"(target ≤ {replay['floor_target']}×):"
        )
        print(f"    {'runner':<42}{'Seawall s':>10}{'bare s':>10}{'ratio':>8}")
        for runner, ratio in ratios.items():
            mark = "" if ratio <= replay["floor_target"] else "  over target"
            print(
                f"    {OTHER_RUNNERS[runner]:<42}{b[runner]:>10.2f}{d[runner]:>10.2f}"
                f"{ratio:>7.2f}×{mark}"
            )


def print_tables(report: dict[str, Any]) -> None:
    if report.get("levels"):
        print_levels(report["levels"])
        print_server_costs(report["levels"])
    replay = report.get("replay")
    if replay:
        print()
        for r in replay.values():
            print(
                f"Replay, {r['title']}: {r['ms_per_1000_events']:.1f} ms per 1,000 history "
                f"events ({r['histories']} histories of {r['events_per_history']:.0f} events, "
                f"{r['history_bytes_per_history'] / 1e3:.1f} kB and "
                f"{r['state_transitions_per_prompt']:.0f} state transitions each, median of "
                f"{REPLAY_REPEATS} replays)"
            )
    if replay:
        print(f"History events per prompt, b - a: {event_differences(replay, 'b', 'a')}")
        print(f"History events per prompt, a - d: {event_differences(replay, 'a', 'd')}")
    memory = report.get("memory")
    if memory:
        for name, m in memory.items():
            print(
                f"Worker memory ({name}): {m['kib_per_prompt']:.0f} KiB per cached prompt "
                f"({m['paused_prompts']} prompts paused mid-prompt; RSS {m['rss_kib'][0]} → "
                f"{m['rss_kib'][-1]} KiB; second half {m['kib_per_prompt_second_half']:.0f} KiB)"
            )
    if report.get("long"):
        print_long(report["long"])
    if report.get("long_replay"):
        print_long_replay(report["long_replay"])
    profile = report.get("profile")
    if profile:
        print()
        print(
            "Profile (cProfile, worker event-loop thread + workflow-task thread; CPU ms per "
            "prompt, inflated by the profiler):"
        )
        for variant, p in profile.items():
            cats = ", ".join(
                f"{k} {v:.1f}" for k, v in list(p["by_category_ms_per_prompt"].items())[:7]
            )
            print(f"  {VARIANTS[variant]}: {p['cpu_ms_per_prompt']:.1f} ms — {cats}")
        for pair, note in report.get("profile_notes", {}).items():
            print(f"  {pair}: {note}")
        for variant, p in profile.items():
            print(f"  top frames by own CPU, {VARIANTS[variant]}:")
            for frame in p["top_frames"][:6]:
                print(
                    f"    {frame['tottime_ms_per_prompt']:7.2f} ms own, "
                    f"{frame['cumtime_ms_per_prompt']:7.2f} cum  {frame['frame']}"
                )
            print(f"  the loop's own code by cumulative CPU, {VARIANTS[variant]}:")
            for frame in p["loop_code_frames"][:8]:
                print(
                    f"    {frame['cumtime_ms_per_prompt']:7.2f} ms cum, "
                    f"{frame['tottime_ms_per_prompt']:7.2f} own  {frame['frame']}"
                )


def profile_notes(profile: dict[str, Any]) -> dict[str, str]:
    """Where the extra CPU per prompt goes, category by category."""

    def diff(x: str, y: str) -> str:
        px, py = profile[x], profile[y]
        delta = px["cpu_ms_per_prompt"] - py["cpu_ms_per_prompt"]
        cats = set(px["by_category_ms_per_prompt"]) | set(py["by_category_ms_per_prompt"])
        parts = sorted(
            (
                (
                    px["by_category_ms_per_prompt"].get(c, 0.0)
                    - py["by_category_ms_per_prompt"].get(c, 0.0),
                    c,
                )
                for c in cats
            ),
            reverse=True,
        )
        top = ", ".join(f"{c} {d:+.1f}" for d, c in parts[:5])
        cx, cy = px["loop_code_cum_ms_per_prompt"], py["loop_code_cum_ms_per_prompt"]
        code = sorted(
            ((cx.get(f, 0.0) - cy.get(f, 0.0), f) for f in set(cx) | set(cy)), reverse=True
        )
        grown = ", ".join(f"{f} {d:+.1f}" for d, f in code[:6] if d > 0)
        return (
            f"{delta:+.1f} ms CPU per prompt; by category: {top}; the loop's own code, "
            f"cumulative (nested): {grown or 'none'}"
        )

    notes = {}
    if "a" in profile and "d" in profile:
        notes["a vs d"] = diff("a", "d")
    if "b" in profile and "a" in profile:
        notes["b vs a"] = diff("b", "a")
    return notes


PARTS = ("levels", "long", "replay", "memory")


def stored_payloads(
    driver: FilesystemStorageDriver, namespace: str, ids: list[str]
) -> dict[str, Any]:
    """Bytes and payloads the store holds for these prompts, per prompt (content-addressed:
    a payload two prompts share counts for each)."""
    wanted = set(ids)
    total_bytes = total_payloads = 0
    for refs in driver.workflow_refs(namespace):
        if refs.workflow_id in wanted:
            digests = refs.digests()
            total_payloads += len(digests)
            total_bytes += sum(
                path.stat().st_size
                for path in (driver.blob_path(d) for d in digests)
                if path.exists()
            )
    prompts = max(1, len(ids))
    return {
        "stored_bytes_per_prompt": round(total_bytes / prompts),
        "stored_payloads_per_prompt": round(total_payloads / prompts, 1),
    }


async def measure_long(
    bench: Bench,
    driver: FilesystemStorageDriver,
    prompts: int,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """The long prompt (``--long-batches``, 100 by default) through the same harness at
    concurrency 1, each variant beside the bare workflow of the same shape."""
    results = (
        await measure_levels(bench, {1: prompts}, log, warmup=0, rounds_per_level={1: prompts})
    )[1]
    histories = {
        v: [await bench.client.get_workflow_handle(wid).fetch_history() for wid in results[v].ids]
        for v in ("a", "b", "d")
    }
    return {
        "workload": {
            "batches_per_prompt": bench.workload.batches,
            "calls_per_batch": bench.workload.calls,
        },
        "variants": [results[v].summary() for v in ("a", "b", "c", "d")],
        "ratios": ratios(results),
        "history": {
            v: {
                "events_per_prompt": round(statistics.mean(len(h.events) for h in hs), 1),
                "state_transitions_per_prompt": round(
                    await state_transitions(bench.client, results[v].ids), 1
                ),
                "history_bytes_per_prompt": round(
                    statistics.mean(sum(e.ByteSize() for e in h.events) for h in hs)
                ),
                **stored_payloads(driver, bench.client.namespace, results[v].ids),
            }
            for v, hs in histories.items()
        },
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:

    log = print
    parts = set(args.parts)
    levels = {c: max(c, round(PROMPTS_PER_LEVEL.get(c, c) * args.scale)) for c in args.levels}
    workload = Workload(batches=args.batches, calls=args.calls)
    report: dict[str, Any] = {
        "machine": machine(),
        "commit": git_commit(),
        "parts": [p for p in PARTS if p in parts],
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "workload": {
            "batches_per_prompt": workload.batches,
            "calls_per_batch": workload.calls,
            "model_steps_per_prompt": workload.batches + 1,
            "failing_calls_per_prompt": min(workload.batches, FAILING_BATCHES),
        },
        "iterations": {
            "prompts_per_level_per_variant": {str(c): n for c, n in levels.items()},
            "rounds_per_level": {str(c): r for c, r in ROUNDS.items()},
            "warmup_prompts_per_variant": WARMUP_PROMPTS,
            "replay_histories": REPLAY_HISTORIES,
            "memory_paused_prompts": 2 * args.memory_prompts,
            "profile_prompts_per_variant": args.profile_prompts,
            "long_prompts_per_variant": args.long_prompts,
        },
    }
    log(
        f"Machine: {report['machine']['cpus']} CPUs ({report['machine']['cpu_model']}), "
        f"load average {report['load_average_before']}; parts: {', '.join(report['parts'])}"
    )
    log(
        f"Workload: {workload.batches} batches x {workload.calls} calls per prompt; prompts per "
        "variant at each concurrency: "
        + ", ".join(f"{c}: {n} in {ROUNDS.get(c, 2)} rounds" for c, n in levels.items())
        + f", interleaved, after {WARMUP_PROMPTS} warm-up prompts each"
    )
    started = time.perf_counter()
    # The embedded default: payloads past 64 KiB in the filesystem store (a long prompt's
    # conversation would otherwise pass Temporal's payload limits), for every variant.
    store = Path(tempfile.mkdtemp(prefix="seawall-bench-payloads-"))
    driver = FilesystemStorageDriver(store)
    storage = ExternalStorage(drivers=[driver], payload_size_threshold=DEFAULT_THRESHOLD_BYTES)
    metrics_port = free_port()
    env = await start_server_with_retries(
        storage=storage, extra_args=["--metrics-port", str(metrics_port)]
    )
    workspace = tempfile.mkdtemp(prefix="seawall-bench-overhead-")
    try:
        # The benchmark's starts are signed (bench/trusted.py), then timed.
        signed = bench_client(env.client).config()
        timing_client = Client(
            **{**signed, "interceptors": [*signed["interceptors"], TimingInterceptor()]}  # type: ignore[arg-type]
        )
        bench = Bench(timing_client, workload, workspace, metrics_port=metrics_port)
        bench.queues = {
            "seawall": f"bench-seawall-{uuid.uuid4().hex[:8]}",
            "d": f"bench-bare-{uuid.uuid4().hex[:8]}",
        }
        async with (
            seawall_worker(timing_client, bench.queues["seawall"]),
            bare_worker(timing_client, bench.queues["d"]),
        ):
            if "levels" in parts:
                log("Latency and throughput:")
                results = await measure_levels(bench, levels, log)
                report["levels"] = [
                    {
                        "concurrency": c,
                        "variants": [results[c][v].summary() for v in ("a", "b", "c", "d")],
                        "ratios": ratios(results[c]),
                    }
                    for c in levels
                ]
                log("Replay:")
                report["replay"] = await measure_replay(
                    bench,
                    {v: results[10 if 10 in results else max(results)][v].ids for v in "abd"},
                    storage,
                )
                worst = max(
                    max(level["ratios"]["b/a"]["latency"], level["ratios"]["a/d"]["latency"])
                    for level in report["levels"]
                )
                if args.profile == "always" or (args.profile == "auto" and worst > RATIO_LIMIT):
                    log(f"Profiling (a worst b/a or a/d ratio of {worst:.2f} > {RATIO_LIMIT}):")
                    report["profile"] = {
                        v: await profile_variant(bench, v, args.profile_prompts)
                        for v in ("a", "b", "d")
                    }
                    report["profile_notes"] = profile_notes(report["profile"])
            if "long" in parts and args.long_prompts > 0:
                log(f"Long prompt ({args.long_batches} batches x {args.calls} calls):")
                long_bench = Bench(
                    timing_client,
                    Workload(batches=args.long_batches, calls=args.calls),
                    workspace,
                    bench.queues,
                    metrics_port,
                )
                report["long"] = await measure_long(long_bench, driver, args.long_prompts, log)
            if "replay" in parts:
                log(
                    f"Replay of a long history ({args.replay_batches} batches x "
                    f"{args.replay_calls} calls):"
                )
                replay_bench = Bench(
                    timing_client,
                    Workload(batches=args.replay_batches, calls=args.replay_calls),
                    workspace,
                    bench.queues,
                    metrics_port,
                )
                report["long_replay"] = await measure_long_replay(
                    replay_bench,
                    lambda v: replayer_for(v, storage),
                    repeats=REPLAY_REPEATS,
                    other_runners={
                        runner: functools.partial(replayer_for, storage=storage, runner=runner)
                        for runner in OTHER_RUNNERS
                    },
                )
        if "memory" in parts and args.memory_prompts > 0:
            log("Worker memory:")
            target = env.client.service_client.config.target_host
            report["memory"] = await measure_memory(
                bench, target, env.client.namespace, args.memory_prompts
            )
    finally:
        await env.shutdown()
        # The stored payloads of a long replay are tens of MB: nothing outlives the run.
        shutil.rmtree(store, ignore_errors=True)
        shutil.rmtree(workspace, ignore_errors=True)
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


async def start_server_with_retries(attempts: int = 3, **kwargs: Any) -> WorkflowEnvironment:
    """The embedded dev server; on a loaded machine it can miss the SDK's 5 s start
    deadline, so a failed start is tried again."""
    from seawall.runtime.devserver import start_dev_server

    for attempt in range(1, attempts + 1):
        try:
            return await start_dev_server(**kwargs)
        except RuntimeError as err:
            if attempt == attempts or "did not start" not in str(err):
                raise
            print(f"the dev server did not start in time (attempt {attempt}); trying again")
    raise AssertionError("unreachable")


def git_commit() -> str:
    """The commit the figures came from (``+dirty`` with uncommitted changes)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--parts",
        type=lambda text: [p.strip() for p in text.split(",") if p.strip()],
        default=list(PARTS),
        help=(
            "comma-separated parts to run: levels (latency, throughput, CPU, state "
            "transitions at concurrency 1/10/100, replay per 1,000 events, profile), long "
            "(the 100-batch prompt), replay (a 10,000-event history), memory (per cached "
            "prompt)"
        ),
    )
    parser.add_argument(
        "--levels",
        type=lambda text: [int(x) for x in text.split(",")],
        default=list(LEVELS),
        help="concurrency levels of the levels part, comma-separated",
    )
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the prompt counts")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--calls", type=int, default=4)
    parser.add_argument(
        "--profile",
        choices=["auto", "always", "never"],
        default="auto",
        help="profile when a b/a or a/d ratio is worse than 1.10 (auto)",
    )
    parser.add_argument("--profile-prompts", type=int, default=PROFILE_PROMPTS)
    parser.add_argument(
        "--memory-prompts",
        type=int,
        default=MEMORY_PROMPTS,
        help="paused prompts per step of the memory measurement (0: skip)",
    )
    parser.add_argument("--long-batches", type=int, default=LONG_BATCHES)
    parser.add_argument(
        "--long-prompts", type=int, default=LONG_PROMPTS, help="long prompts per variant"
    )
    parser.add_argument("--replay-batches", type=int, default=replay_long.DEFAULT_BATCHES)
    parser.add_argument("--replay-calls", type=int, default=replay_long.DEFAULT_CALLS)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--serve-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--namespace", default="default", help=argparse.SUPPRESS)
    parser.add_argument("--task-queue", help=argparse.SUPPRESS)
    parser.add_argument("--kind", choices=["seawall", "bare"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_worker:
        asyncio.run(serve_worker(args.address, args.namespace, args.task_queue, args.kind))
        return 0
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        parser.error(f"--parts: unknown {', '.join(sorted(unknown))}; choose from {PARTS}")

    def render(report: dict[str, Any]) -> None:
        print_tables(report)
        print()
        print(
            f"Load average before {report['load_average_before']}, after "
            f"{report['load_average_after']}; {report['seconds']} s in all"
        )

    return run_and_report(run(args), render, args.json)


if __name__ == "__main__":
    from seawall.runtime.process_exit import run_then_exit

    run_then_exit(main)
