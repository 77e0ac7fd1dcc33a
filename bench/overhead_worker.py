"""Inside one worker: its memory per cached prompt, and where its CPU goes.

Why it exists: beside latency and throughput (``bench/overhead.py``), two costs are read off
a worker itself, each beside the bare workflow's: the RSS a worker subprocess grows by per
prompt it holds paused mid-prompt (:func:`measure_memory`), and, when a ratio is worse than
the limit, a cProfile of the worker's event-loop and workflow-task threads grouped by where
the time goes (:func:`profile_variant`, :func:`profile_notes`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import cProfile
import pstats
import signal
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from temporalio.service import RPCError, RPCStatusCode

from bench.bare import BareLoopWorkflow
from bench.overhead_harness import WARMUP_PROMPTS, Bench, bare_worker, seawall_worker
from bench.trusted import worker_process_environment
from seawall.runtime.plugin import connect
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode

ROOT = Path(__file__).resolve().parent.parent
OVERHEAD_SCRIPT = ROOT / "bench" / "overhead.py"  # its --serve-worker is the memory worker

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
            str(OVERHEAD_SCRIPT),
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
