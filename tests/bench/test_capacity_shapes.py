"""The capacity plan's arithmetic and the results it reads (``bench/capacity.py``,
docs/capacity.md): structure and proportion, never a timing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import server_metrics
from bench.capacity import ASSUMPTIONS, Costs, measured_costs, peer_table, render, size
from bench.scaling import summarise, verdict
from bench.server_metrics import ServerCounters, SettledReadings, parse_counters

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"
DEFAULTS = {name: a.value for name, a in ASSUMPTIONS.items()}


def costs(**changes: float) -> Costs:
    base = {
        "batches": 5,
        "server_cpu_ms": 150.0,
        "worker_cpu_ms": 100.0,
        "workflow_writes": 40.0,
        "history_events": 140.0,
        "history_bytes": 60_000.0,
        "workflow_tasks": 16.0,
        "activity_tasks": 27.0,
        "visibility_updates": 9.0,
        "kib_per_cached_prompt": 240.0,
        "worker_base_mib": 120.0,
        "long_stored_bytes": 13e6,
        "long_stored_payloads": 34.0,
        "long_history_bytes": 4e6,
        "replay_seconds": 1.5,
        "replay_events": 1200,
    }
    base.update(changes)
    return Costs(**base)  # type: ignore[arg-type]


def values(concurrent: int, c: Costs) -> dict[str, str]:
    lines, _ = size(concurrent, c, DEFAULTS)
    return {line.what: line.value for line in lines}


def test_ten_times_the_prompts_is_ten_times_the_load() -> None:
    small, large = values(1000, costs()), values(10000, costs())
    rate = float(small["prompts completed per second"].rstrip("/s"))
    assert rate == 1000 / (5 * DEFAULTS["batch_seconds"])
    assert float(large["persistence writes (workflow updates)"].rstrip("/s").replace(",", "")) == (
        10 * float(small["persistence writes (workflow updates)"].rstrip("/s").replace(",", ""))
    )
    assert int(large["worker processes"]) > int(small["worker processes"]) >= 2


def test_long_prompts_write_their_own_history() -> None:
    def history_mb_s(**changes: float) -> float:
        return float(values(1000, costs(**changes))["history written"].split(" MB/s")[0])

    share = DEFAULTS["long_share"]
    short, longer = history_mb_s(), history_mb_s(long_history_bytes=8e6)
    # Only the long share of prompts writes the long prompt's history.
    assert longer - short == pytest.approx(20.0 * share * 4e6 / 1e6, abs=0.01)


def test_shards_are_a_power_of_two_and_at_least_512() -> None:
    for concurrent in (10, 1000, 100_000):
        shards = int(values(concurrent, costs())["history shards"].replace(",", ""))
        assert shards >= 512 and shards & (shards - 1) == 0


def test_the_first_bottleneck_is_named_and_moves_with_the_costs() -> None:
    _, verdict_partitions = size(10000, costs(), DEFAULTS)
    _, verdict_database = size(10000, costs(workflow_writes=4000.0, activity_tasks=1.0), DEFAULTS)
    assert "task-queue partition" in verdict_partitions.split(",")[0]
    assert "PostgreSQL" in verdict_database.split(",")[0]


def test_render_shows_the_arithmetic_and_every_assumption() -> None:
    text = render([1000, 10000], costs(), DEFAULTS, markdown=True)
    assert "#### 1,000 concurrent prompts" in text and "#### 10,000 concurrent prompts" in text
    assert text.count("| history shards |") == 2
    for name in ASSUMPTIONS:
        assert f"`{name}`" in text


def test_the_committed_results_carry_what_the_plan_reads() -> None:
    """``make bench`` writes these; the plan must find a non-zero figure for each cost."""
    if not (RESULTS / "peers.json").exists() or not (RESULTS / "scaling.json").exists():
        pytest.skip("no benchmark results committed")
    c = measured_costs(RESULTS)
    assert c.server_cpu_ms > 0 and c.worker_cpu_ms > 0 and c.workflow_writes > 0
    assert c.history_events > 0 and c.history_bytes > 0 and c.kib_per_cached_prompt > 0
    assert c.workflow_tasks > 0 and c.activity_tasks > 0
    assert c.replay_seconds is not None and c.replay_seconds > 0 and c.replay_events > 0


def test_results_without_seawall_rows_are_refused_naming_what_to_run(tmp_path: Path) -> None:
    (tmp_path / "peers.json").write_text(json.dumps({"levels": []}))
    with pytest.raises(SystemExit, match=r"run bench/scaling\.py and bench/peers\.py"):
        measured_costs(tmp_path)


def test_the_peer_table_shows_seawall_over_the_bare_loop_as_a_column(tmp_path: Path) -> None:
    def row(peer: str, ms: float) -> dict[str, object]:
        return {"peer": peer, "concurrency": 1, "batch_latency_ms_median": ms}

    report = {
        "commit": "abc1234",
        "workload": {"batches_per_prompt": 5, "calls_per_batch": 4, "tool_latency_seconds": 0},
        "peers": {"seawall": "Seawall", "bare": "bare loop"},
        "levels": [row("seawall", 110.0), row("bare", 100.0)],
        "over_bare": {"1": {"batch_latency_ms_median": 1.1}},
    }
    (tmp_path / "peers.json").write_text(json.dumps(report))
    table = peer_table(tmp_path)
    assert "| per prompt | concurrency | Seawall | bare loop | Seawall over bare |" in table
    assert "| per-batch latency, median ms | 1 | 110.0 | 100.0 | 1.10× |" in table


def test_scaling_summary_finds_the_plateau() -> None:
    def row(workers: int, throughput: float) -> dict[str, object]:
        return {
            "workers": workers,
            "prompts_per_second": throughput,
            "cores_busy": {"server": 1.2, "workers": 0.6, "driver": 0.1},
            "machine_idle_share": 0.02,
            "server_cpu_ms_per_prompt": 150.0,
            "worker_cpu_ms_per_prompt": 90.0,
        }

    rows = [row(1, 5.0), row(2, 8.0), row(3, 8.2), row(4, 8.1)]
    summary = summarise(rows)
    assert [r["gain_over_one_fewer"] for r in summary] == [None, 1.6, 1.02, 0.99]
    assert verdict(summary, 2).startswith("plateau from 2 to 3 workers")
    assert "the dev server" in verdict(summary, 2)


def test_server_counters_read_the_default_namespace_only() -> None:
    text = "\n".join(
        [
            "# TYPE persistence_requests counter",
            'persistence_requests{namespace="default",operation="UpdateWorkflowExecution",'
            'service_name="history"} 30',
            'persistence_requests{namespace="default",operation="CreateWorkflowExecution",'
            'service_name="history"} 3',
            'persistence_requests{namespace="default",operation="ReadHistoryBranch",'
            'service_name="history"} 5',
            'persistence_requests{namespace="system",operation="UpdateWorkflowExecution",'
            'service_name="history"} 1000',
            'state_transition_count_sum{namespace="default",namespace_state="active",'
            'operation="WorkflowContext",service_name="history"} 42',
        ]
    )
    counters = parse_counters(text)
    assert counters.workflow_writes == 33
    assert counters.history_reads == 5
    assert counters.persistence_requests == 38


def test_server_counters_time_the_handoffs_to_matching_only() -> None:
    def line(kind: str, operation: str, value: float, namespace: str = "default") -> str:
        return (
            f'task_latency_queue_{kind}{{namespace="{namespace}",operation="{operation}",'
            f'service_name="history"}} {value}'
        )

    text = "\n".join(
        [
            line("count", "TransferActiveTaskActivity", 40),
            line("sum", "TransferActiveTaskActivity", 1.6),
            line("count", "TransferActiveTaskWorkflowTask", 10),
            line("sum", "TransferActiveTaskWorkflowTask", 0.4),
            # Not a hand-off to matching: a closed execution, a visibility record.
            line("count", "TransferActiveTaskCloseExecution", 7),
            line("sum", "VisibilityTaskStartExecution", 9.0),
            line("count", "TransferActiveTaskActivity", 500, namespace="temporal-system"),
            'task_latency_queue_bucket{namespace="default",operation='
            '"TransferActiveTaskActivity",le="0.05"} 33',
        ]
    )
    later = parse_counters(text)
    assert later.handoffs == 50
    assert later.activity_handoffs == 40
    assert later.handoff_wait_seconds == pytest.approx(2.0)
    run = later - parse_counters(line("count", "TransferActiveTaskActivity", 30))
    assert run.handoffs == 20
    assert run.activity_handoffs == 10
    assert run.workflow_writes == 0


def reading_writes(monkeypatch: pytest.MonkeyPatch, writes: list[float]) -> None:
    """The dev server's counters read as ``writes`` workflow writes, one read after another."""
    reads: Iterator[float] = iter(writes)
    monkeypatch.setattr(server_metrics, "SETTLE_SECONDS", 0)
    monkeypatch.setattr(
        server_metrics, "read_counters", lambda port: ServerCounters(workflow_writes=next(reads))
    )


def test_each_run_counts_the_writes_between_two_settled_reads_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Settled at 5; the first run's writes keep arriving (9, then 12) until two reads agree;
    # that read starts the second run, which wrote nothing.
    reading_writes(monkeypatch, [5, 5, 9, 12, 12, 12, 12])

    async def two_runs() -> tuple[ServerCounters, ServerCounters]:
        readings = await SettledReadings.start(9999)
        return await readings.since_last(), await readings.since_last()

    first, second = asyncio.run(two_runs())
    assert (first.workflow_writes, second.workflow_writes) == (7, 0)


def test_a_settle_gives_up_after_its_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    reading_writes(monkeypatch, [float(n) for n in range(100)])  # writes that never stop
    counters = asyncio.run(server_metrics.settled_counters(9999))
    assert counters.workflow_writes == server_metrics.SETTLE_READS
