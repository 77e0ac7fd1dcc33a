"""Where a history's bytes go and how fast they grow (bench/peer_history.py), on hand-built
histories and figures: the readings ``bench/peers.py --bytes-batches`` prints."""

from __future__ import annotations

import pytest

from bench.peer_history import breakdown, bytes_table, growth_exponent, with_exponents
from tests.bench.test_peer_history import HISTORY


def test_each_activity_type_s_inputs_and_results_are_a_part_of_their_own() -> None:
    parts = breakdown(HISTORY)
    assert parts["ACTIVITY_TASK_SCHEDULED x.call_model"].events == 2
    assert parts["ACTIVITY_TASK_SCHEDULED x.run_tool"].events == 2
    assert parts["ACTIVITY_TASK_COMPLETED x.call_model"].events == 2
    assert parts["ACTIVITY_TASK_COMPLETED x.run_tool"].events == 2
    # The model requests' inputs carry 300 payload bytes, the calls' 20: the largest first.
    model = parts["ACTIVITY_TASK_SCHEDULED x.call_model"]
    assert next(iter(parts)) == "ACTIVITY_TASK_SCHEDULED x.call_model"
    assert 300 <= model.payload_bytes < model.bytes
    assert sum(p.bytes for p in parts.values()) == sum(e.ByteSize() for e in HISTORY.events)


@pytest.mark.parametrize(
    ("points", "exponent"),
    [
        ([(5, 50_000), (20, 200_000), (100, 1_000_000)], 1.0),  # linear
        ([(5, 25), (20, 400), (100, 10_000)], 2.0),  # quadratic
        ([(5, 74_500), (20, 277_692)], 0.949),  # Seawall's two figures after the chain
    ],
)
def test_the_growth_exponent_is_the_log_log_slope(
    points: list[tuple[int, int]], exponent: float
) -> None:
    assert growth_exponent(points) == pytest.approx(exponent, abs=0.001)


def test_one_batch_count_or_nothing_stored_has_no_exponent() -> None:
    assert growth_exponent([(5, 100)]) is None
    assert growth_exponent([(5, 0), (20, 0)]) is None


ROWS = [
    {"peer": "seawall", "batches": 5, "history_bytes": 40_000, "payload_bytes": 30_000,
     "stored_bytes": 0},
    {"peer": "seawall", "batches": 20, "history_bytes": 160_000, "payload_bytes": 120_000,
     "stored_bytes": 0},
    {"peer": "openai-agents", "batches": 5, "history_bytes": 50_000, "payload_bytes": 45_000,
     "stored_bytes": 0},
    {"peer": "openai-agents", "batches": 20, "error": "TerminatedError('history size')"},
]  # fmt: skip


def test_a_failed_prompt_is_shown_where_it_stopped_and_left_out_of_the_exponent() -> None:
    exponents = with_exponents(ROWS)
    assert exponents["seawall"]["history_bytes"] == pytest.approx(1.0)
    assert exponents["openai-agents"]["history_bytes"] is None  # one point left
    lines = bytes_table({"rows": ROWS, "growth_exponent": exponents})
    at5 = next(line for line in lines if line.split()[:1] == ["5"])
    assert "40,000 (30,000)" in at5 and "50,000 (45,000)" in at5 and at5.endswith("0.80×")
    at20 = next(line for line in lines if line.split()[:1] == ["20"])
    assert "stopped: TerminatedError" in at20 and at20.endswith("-")
    assert lines[-1].split()[:4] == ["exponent", "1.00", "/", "-"]


def test_seawall_s_ratio_leaves_out_the_bare_loop_a_floor_not_a_peer() -> None:
    bare = {"peer": "bare", "batches": 5, "history_bytes": 10_000, "payload_bytes": 5_000,
            "stored_bytes": 0}  # fmt: skip
    rows = [*ROWS, bare]
    report = {"rows": rows, "growth_exponent": with_exponents(rows), "baselines": ["bare"]}
    at5 = next(line for line in bytes_table(report) if line.split()[:1] == ["5"])
    assert "10,000 (5,000)" in at5 and at5.endswith("0.80×")  # over openai-agents' 50,000
