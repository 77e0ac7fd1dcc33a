"""The durability benchmark's four shapes run the same workload to the same end.

No timing here (timings are ratios printed by ``bench/overhead.py``, never assertions):
only that (a), (b), (c) and (d) each complete the scripted workload, so the benchmark
cannot silently measure a broken run.
"""

from __future__ import annotations

import tempfile
import uuid

from temporalio.client import Client

from bench.overhead import Bench, Workload, bare_worker


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
