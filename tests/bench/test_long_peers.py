"""sdk-python#1890's shape through Seawall and a peer (``bench/long_prompts.py
--issue-1890``), small: a long conversation before the prompt, one tool
call per model call, on a dev server whose history size limit sits between what the two need.
The peer records the conversation again in every model call and is terminated part-way, the
report showing where; Seawall records each message once and answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import long_prompts, peers

pytestmark = pytest.mark.skipif(
    peers.missing(peers.PEERS["openai-agents"]) is not None,
    reason="the OpenAI Agents SDK peer is not installed (pip install -e '.[peers]')",
)


@pytest.mark.timeout(300)
def test_a_peer_past_the_history_limit_shows_where_it_stopped_and_seawall_finishes(
    tmp_path: Path,
) -> None:
    out = tmp_path / "long.json"
    context, batches, result = 40_000, 8, 1_000
    long_prompts.main(
        [
            "--issue-1890",
            "--shape",
            f"{context},{batches},{result}",
            "--peers",
            "seawall,openai-agents",
            "--history-limit",
            "250000",
            "--json",
            str(out),
        ]
    )
    report = json.loads(out.read_text())
    assert report["shape"] == {
        "context_chars": context,
        "batches": batches,
        "result_chars": result,
    }
    rows = {row["peer"]: row for row in report["rows"]}
    seawall, peer = rows["seawall"], rows["openai-agents"]
    assert seawall["outcome"] == "COMPLETED"
    assert seawall["model_calls"] == batches + 1
    assert seawall["history_bytes"] < 250_000
    # Each of its model calls carried the 40 KB conversation again: terminated part-way.
    assert peer["outcome"] == "TERMINATED"
    assert 1 <= peer["model_calls"] < batches + 1
    assert "size" in peer["reason"].lower()
    assert peer["history_bytes"] >= 250_000 * 0.8
