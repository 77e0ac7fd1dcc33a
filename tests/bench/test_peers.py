"""The durable-agent peer benchmark (bench/peers.py) runs one conversation through
every peer that is installed, and that conversation is Seawall's.

No timing here (bench/peers.py prints figures, never assertions): that Seawall's scenario
(``bench.peer_seawall.Workload``) states the peers' script's calls and results, that the bare
loop is Seawall's floor and not a peer to beat, and that the benchmark at its smallest size
completes every installed peer's prompts (the bare loop's always) with the script's answer
and reports every figure. The durable agents need the ``peers`` extra
(``pip install -e '.[peers]'``); without it they are left out, saying so.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import peer_script, peers
from bench import peers as peers_module
from bench.peer_seawall import Workload
from bench.peers_report import against_best_peer, over_bare

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("batches", "calls"), [(2, 3), (5, 4), (8, 2)])
def test_the_peers_script_is_the_workloads(batches: int, calls: int) -> None:
    workload = Workload(batches=batches, calls=calls)
    turns = workload.script().turns
    assert len(turns) == batches + 1
    for b, turn in enumerate(turns[:-1]):
        assert [(c.name, c.arguments) for c in turn.tool_calls] == [
            (c.name, c.arguments) for c in peer_script.batch_calls(b, calls)
        ]
    assert turns[-1].text == peer_script.FINAL_TEXT and not turns[-1].tool_calls
    fixtures = workload.fixtures()
    for b in range(batches):
        flaky = fixtures["flaky_api"].outcome_for(b)
        assert (flaky.content or flaky.message) == peer_script.flaky_result(b)
        for name in peer_script.fetch_names(calls):
            assert fixtures[name].outcome_for(b).content == peer_script.fetch_result()
    assert peer_script.batches_in(peer_script.prompt_text(batches)) == batches


def test_the_bare_loop_is_a_floor_not_a_peer_to_beat() -> None:
    def row(peer: str, concurrency: int, ms: float, rate: float, events: float) -> dict[str, Any]:
        return {
            "peer": peer,
            "concurrency": concurrency,
            "batch_latency_ms_median": ms,
            "batch_latency_ms_p95": 2 * ms,
            "prompts_per_second": rate,
            "history_events_per_prompt": events,
            "worker_cpu_ms_per_prompt": ms,
        }

    levels = [
        row("seawall", 1, 100.0, 2.0, 130.0),
        row("bare", 1, 80.0, 2.5, 120.0),
        row("pydantic-ai", 1, 120.0, 1.0, 140.0),
    ]
    compared = {r["figure"]: r for r in against_best_peer(levels, {"bare"})}
    assert {r["best_peer"] for r in compared.values()} == {"pydantic-ai"}
    assert compared["batch_latency_ms_median"]["ratio"] == round(100 / 120, 3)
    overhead = over_bare(levels)["1"]
    assert overhead["batch_latency_ms_median"] == 1.25
    assert overhead["worker_cpu_ms_per_prompt"] == 1.25
    # Fewer prompts per second is a cost too: the ratio is the inverse throughput's.
    assert overhead["prompts_per_second"] == 1.25
    assert over_bare([r for r in levels if r["peer"] != "bare"]) == {}


@pytest.mark.parametrize(
    ("flag", "config"),
    [
        ([], {}),
        (["--reader-polls-per-second", "20"], {}),  # the server's own default: as it ships
        (["--reader-polls-per-second", "1000"], {"history.transferProcessorMaxPollRPS": 1000}),
    ],
)
def test_the_dev_server_runs_as_it_ships_unless_told(
    flag: list[str], config: dict[str, int]
) -> None:
    parser_args = argparse.Namespace(reader_polls_per_second=None)
    if flag:
        parser_args.reader_polls_per_second = int(flag[1])
    assert peers.server_config(parser_args) == config


def test_a_reader_rate_below_one_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        peers.main(["--reader-polls-per-second", "0"])
    assert "--reader-polls-per-second must be ≥ 1" in capsys.readouterr().err


def test_a_seawall_eager_setting_out_of_range_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        peers.main(["--seawall-eager-calls", "-1"])
    assert "--seawall-eager-calls must be 0 to 1000" in capsys.readouterr().err


def test_seawall_at_no_eager_calls_hands_every_call_to_the_task_queue(tmp_path: Path) -> None:
    out = tmp_path / "peers.json"
    batches, calls = 2, 2
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "peers.py"),
            *("--batches", str(batches), "--calls", str(calls), "--concurrency", "1"),
            *("--prompts", "1", "--rounds", "1", "--long-batches", "2"),
            *("--peers", "seawall", "--seawall-eager-calls", "0", "--json", str(out)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["eager_calls"] == {"seawall": 0}
    (row,) = report["levels"]
    # Every tool call and every model request went through the queue: none started eagerly.
    assert row["server_call_handoffs_per_prompt"] >= batches * calls


# The bare loop needs nothing; the durable agents need the `peers` extra.
INSTALLED = [
    key
    for key, peer in peers.PEERS.items()
    if peer.module is not None and peers.missing(peer) is None
]
AGENTS = [key for key in INSTALLED if not peers.PEERS[key].baseline]


# Six harnesses, the agent harness's prompts a few times Seawall's, and each round waits for
# one settle of the server's metrics (the read that ends a round starts the next): 110 s on the
# two-core machine at load average 7.5, over the suite's 300 s default with much load more.
@pytest.mark.timeout(480)
def test_the_smallest_run_reports_every_installed_peer(tmp_path: Path) -> None:
    out = tmp_path / "peers.json"
    peers = ["seawall", *INSTALLED]
    batches, prompts = 2, 2
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "peers.py"),
            "--batches",
            str(batches),
            "--calls",
            "2",
            "--concurrency",
            "1",
            "--prompts",
            str(prompts),
            "--rounds",
            str(prompts),
            "--long-batches",
            "3",
            "--bytes-batches",
            "1,3",
            # The dev server's transfer-queue reads lifted, as `make bench`'s second run.
            "--reader-polls-per-second",
            "500",
            "--peers",
            ",".join(peers),
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=450,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["skipped"] == {}
    assert report["server_config"] == {peers_module.READER_POLLS_KEY: 500}
    assert sorted(report["peers"]) == sorted(peers)
    levels = {row["peer"]: row for row in report["levels"]}
    assert sorted(levels) == sorted(peers)
    for row in levels.values():
        assert row["prompts"] == prompts
        # One gap between consecutive model steps per batch, in every prompt's history.
        assert row["batches_measured"] == prompts * batches
        assert row["history_events_per_prompt"] > 0
        assert 0 < row["payload_bytes_per_prompt"] < row["history_bytes_per_prompt"]
        assert row["worker_peak_rss_mib"] > 0
        # The prompt's start, at least, is a workflow task the server handed to matching.
        assert row["server_handoffs_per_prompt"] >= 1
        assert 0 <= row["server_call_handoffs_per_prompt"] <= row["server_handoffs_per_prompt"]
        assert row["server_handoff_wait_ms_mean"] is not None
        assert row["server_cpu_ms_per_prompt"] > 0 and row["server_workflow_writes_per_prompt"] > 0
        # Where a batch's time goes: each step measured in every batch but the last (the
        # last batch's calls lead to the final answer, not another batch).
        assert all(v is not None and v > 0 for v in row["batch_segments_ms_median"].values())
        # Interleaved rounds of one prompt each, merged into one row.
        assert len(row["prompts_per_second_by_round"]) == prompts
    # Seawall over the bare loop on every figure of the table: its overhead.
    overhead = report["over_bare"]["1"]
    assert overhead["history_events_per_prompt"] == round(
        levels["seawall"]["history_events_per_prompt"]
        / levels["bare"]["history_events_per_prompt"],
        3,
    )
    if not AGENTS:
        return
    # Seawall beside the best durable agent on each target figure, the ratio of the two.
    compared = {row["figure"]: row for row in report["against_best_peer"]}
    assert sorted(compared) == sorted(
        [
            "batch_latency_ms_median",
            "batch_latency_ms_p95",
            "seconds_per_prompt",
            "history_events_per_prompt",
        ]
    )
    for key, row in compared.items():
        others = {p: levels[p][key] for p in AGENTS}
        assert row["best_peer_value"] == min(others.values())
        assert row["seawall"] == levels["seawall"][key]
        assert row["ratio"] == round(row["seawall"] / row["best_peer_value"], 3)
    # One prompt per peer at each batch count: bytes grow with the batches, and the slope.
    rows = report["bytes"]["rows"]
    assert sorted((r["peer"], r["batches"]) for r in rows) == sorted(
        (p, b) for p in peers for b in (1, 3)
    )
    for peer in peers:
        one, three = (r for r in rows if r["peer"] == peer)
        assert 0 < one["history_bytes"] < three["history_bytes"]
        assert report["bytes"]["growth_exponent"][peer]["history_bytes"] > 0
    assert "Seawall ÷ best" in done.stdout
    replays = {r["peer"]: r for r in report["replay"]}
    assert sorted(replays) == sorted(peers)
    assert all(r["events"] > 0 and r["batches"] == 3 for r in replays.values())
