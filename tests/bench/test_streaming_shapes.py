"""The streaming benchmark's clients each see the whole workload, so ``bench/streaming.py``
cannot silently time a broken run. No timing here: the figures are printed by the benchmark
beside their baseline, never asserted."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client

from bench.streaming import VARIANTS, run_variant


async def test_every_client_receives_every_piece(client: Client, tmp_path: Path) -> None:
    requests, pieces = 2, 5
    runs = {
        variant.key: await run_variant(
            client,
            variant,
            prompts=2,
            concurrency=2,
            requests=requests,
            pieces=pieces,
            piece_seconds=0.0,
            workspace=str(tmp_path),
        )
        for variant in VARIANTS
    }
    for key in ("a", "b", "c", "d"):
        assert runs[key]["pieces_timed"] == 2 * requests * pieces, key
    # Deltas are signals; only the workflow_streams subscription adds Updates to history.
    assert runs["a"]["history"]["signals"] == 0
    assert all(runs[key]["history"]["signals"] > 0 for key in "bcde")
    assert runs["c"]["history"]["updates"] > 0
    assert all(runs[key]["history"]["updates"] == 0 for key in "abde")
    assert runs["e"]["events_per_second"] is None
