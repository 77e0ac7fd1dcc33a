"""The durability benchmark's harness: its workload, the four variants' workers, a timed run.

Why it exists: ``bench/overhead.py`` measures one scripted workload four ways, and
``bench/scaling.py`` and ``bench/peers.py`` reuse the same workload and workers so their
figures compare with its; this module is that shared part. :class:`Workload` is the
script (``--batches`` batches of ``--calls`` fixture calls, one ``flaky_api`` call failing
in the first five), :class:`Bench` runs prompts of a variant and stamps each model step's
start (the boundary between two batches), :class:`Run` sums what a run of prompts cost.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import itertools
import statistics
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.client import Interceptor as ClientInterceptor
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.fixtures import fixture_tool_spec
from activities.tool_runner import builtin_tool_specs
from activities.tools import BUILTIN_TOOLS
from bench.bare import (
    BARE_ACTIVITIES,
    BARE_MODEL,
    BareInput,
    BareLoopWorkflow,
    BareResult,
    run_inprocess,
)
from bench.peer_script import context, sized_result
from bench.server_metrics import ServerCounters, read_counters, server_cpu_seconds
from bench.trusted import bench_trust
from seawall.runtime.plugin import SeawallPlugin, client_with_plugin
from workflows.contracts.activity import CALL_MODEL, ToolSpec
from workflows.contracts.prompt import PromptInput, PromptResult, StopReason
from workflows.contracts.prompt_options import (
    DEFAULT_MAX_MODEL_REQUESTS,
    DEFAULT_MAX_TOOL_CALLS_PER_TURN,
)
from workflows.contracts.scenario import FixtureTool, ModelScript, ScenarioHooks
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode

VARIANTS = {
    "a": "(a) Seawall, guard off",
    "b": "(b) Seawall, guard enforce",
    "c": "(c) in-process asyncio loop",
    "d": "(d) bare Temporal workflow",
}
WARMUP_PROMPTS = 10
FAILING_BATCHES = 5  # batches whose flaky_api call fails

# --- the workload -------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    batches: int = 5
    calls: int = 4
    # sdk-python#1890's shape (bench/long_peers.py): each fetch's result padded to this many
    # characters, and this many characters of earlier conversation before the prompt.
    result_chars: int = 0
    context_chars: int = 0

    def script(self) -> ModelScript:
        turns: list[dict[str, Any]] = []
        for b in range(self.batches):
            calls: list[dict[str, Any]] = [
                {"name": f"fetch_{k}", "arguments": {"path": f"data/{b}/{k}.json"}}
                for k in range(max(self.calls - 1, 1))
            ]
            # Each batch asks the endpoint about its own batch's data (a new question each
            # time: the same call with only a counter changed and the same answer would be a
            # near repeat, docs/architecture.md "R9"). One call a batch: only the fetch.
            if self.calls > 1:
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
        tools = {f"fetch_{k}": {"outcomes": [ok]} for k in range(max(self.calls - 1, 1))}
        if self.result_chars:  # each batch's result its own (peer_script.fetch_result)
            for k in range(max(self.calls - 1, 1)):
                tools[f"fetch_{k}"] = {
                    "outcomes": [
                        {**ok, "content": sized_result(f"data/{b}/{k}.json", self.result_chars)}
                        for b in range(self.batches)
                    ]
                }
        # Past the default's five batches the endpoint recovers: a tool failing in every
        # one of 100 batches is a loop, which the guard rightly stops.
        flaky = [fail] if self.batches <= FAILING_BATCHES else [fail] * FAILING_BATCHES + [ok]
        if self.calls > 1:
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
            prompt=context(self.context_chars) + "Fetch the data files.",
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
    *,
    eager_calls: int | None = None,
) -> Worker:
    """Seawall's worker as it ships; ``eager_calls`` sets its ``eager_calls_per_workflow_task``
    (``None``: the setting's default)."""
    from seawall.runtime.settings import default_of
    from seawall.worker.build import build_worker

    # With an executor, the workflow-task thread is handed in for profiling.
    return build_worker(
        client,
        queue,
        workflow_task_executor=executor,
        trust=bench_trust(),
        eager_calls_per_workflow_task=(
            default_of("eager_calls_per_workflow_task") if eager_calls is None else eager_calls
        ),
    )


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
