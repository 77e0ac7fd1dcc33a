"""The durability benchmark's four shapes run the same workload to the same end.

No timing here (timings are ratios printed by ``bench/overhead.py``, never assertions):
only that (a), (b), (c) and (d) each complete the scripted workload, that the long prompt
and the long-history replay report every figure, and that the ratios are formed the way
the report says, so the benchmark cannot silently measure a broken run.
"""

from __future__ import annotations

import functools
import tempfile
import uuid

from temporalio.client import Client

from bench.overhead import ratios
from bench.overhead_harness import Bench, Run, Workload, bare_worker
from bench.overhead_replay import OTHER_RUNNERS, measure_long_replay, replayer_for
from workflows.contracts.prompt_options import (
    DEFAULT_MAX_MODEL_REQUESTS,
    DEFAULT_MAX_TOOL_CALLS_PER_TURN,
)


async def test_every_shape_completes_the_workload(client: Client, task_queue: str) -> None:
    bare_queue = f"bench-bare-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="seawall-bench-") as workspace:
        bench = Bench(client, Workload(batches=2, calls=3), workspace)
        bench.queues = {"seawall": task_queue, "d": bare_queue}
        async with bare_worker(client, bare_queue):
            for variant in ("a", "b", "c", "d"):
                run = await bench.many(variant, prompts=2, concurrency=2)
                assert run.prompts == 2
                if variant == "c":  # in-process: every batch is timed
                    assert len(run.batch_seconds) == 2 * 2


async def test_a_long_workload_runs_past_the_default_caps_to_its_answer(
    client: Client, task_queue: str
) -> None:
    """The long prompt (100 batches in the benchmark) needs more model requests and tool
    calls than a prompt's defaults allow; the workload lifts both, so it reaches
    ``end_turn`` instead of a cap. 51 batches x 2 calls passes both defaults (50 requests,
    100 calls)."""
    workload = Workload(batches=51, calls=2)
    assert workload.batches + 1 > DEFAULT_MAX_MODEL_REQUESTS
    assert workload.batches * workload.calls > DEFAULT_MAX_TOOL_CALLS_PER_TURN
    with tempfile.TemporaryDirectory(prefix="seawall-bench-") as workspace:
        bench = Bench(client, workload, workspace, {"seawall": task_queue})
        run = await bench.many("b", prompts=1, concurrency=1)  # asserts END_TURN
    assert run.prompts == 1


async def test_the_long_replay_reports_every_figure(client: Client, task_queue: str) -> None:
    """``measure_long_replay`` runs one prompt per variant, replays its history with the
    worker's workflows, and says whether it reached the 10,000-event size it is meant for."""
    bare_queue = f"bench-bare-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="seawall-bench-") as workspace:
        bench = Bench(client, Workload(batches=2, calls=3), workspace)
        bench.queues = {"seawall": task_queue, "d": bare_queue}
        async with bare_worker(client, bare_queue):
            report = await measure_long_replay(
                bench,
                replayer_for,
                repeats=2,
                other_runners={
                    runner: functools.partial(replayer_for, runner=runner)
                    for runner in OTHER_RUNNERS
                },
            )
    assert report["batches"] == 2 and report["calls_per_batch"] == 3
    for variant in ("b", "d"):
        figures = report["variants"][variant]
        # The same history replays (a failure raises) on every runner, the sandbox's or not.
        assert set(figures["runners"]) == set(OTHER_RUNNERS)
        assert all(seconds > 0 for seconds in figures["runners"].values())
        assert figures["events"] > 2 * 3 * 3  # every tool call's scheduled/started/completed
        assert figures["history_bytes"] > 0
        assert len(figures["replay_seconds_all"]) == 2
        assert figures["reached_target_events"] is False  # a small history, said so


def test_ratios_set_each_variant_beside_its_baseline() -> None:
    """b/a, a/d and a/c for latency, throughput and CPU, and the server's CPU share for the
    two Temporal pairs (the in-process loop has no server)."""

    def run(variant: str, batch_ms: float, wall: float, server_cpu: float) -> Run:
        return Run(
            variant=variant,
            concurrency=1,
            prompts=10,
            wall_seconds=wall,
            cpu_seconds=1.0,
            server_cpu_seconds=server_cpu,
            batch_seconds=[batch_ms / 1000] * 5,
        )

    level = {
        "a": run("a", 100, 10, 2.0),
        "b": run("b", 110, 20, 2.2),
        "c": run("c", 1, 0.1, 0.0),
        "d": run("d", 80, 8, 1.6),
    }
    out = ratios(level)
    assert out["b/a"]["latency"] == 1.1 and out["a/d"]["latency"] == 1.25
    assert out["b/a"]["throughput"] == 2.0
    assert out["a/d"]["server_cpu"] == 1.25 and out["b/a"]["server_cpu"] == 1.1
    assert "server_cpu" not in out["a/c"]
