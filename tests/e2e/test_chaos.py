"""A small chaos run in ``make test`` (``make chaos`` runs the full one, scripts/chaos.py):
prompts through the gateway on two workers while workers are SIGKILLed and the server is
restarted, each checked against its undisturbed run."""

from __future__ import annotations

import json
from pathlib import Path

from scripts.chaos import Figures, chaos, check_ledger, failed, report


async def test_prompts_survive_killed_workers_and_a_server_restart(tmp_path: Path) -> None:
    figures = await chaos(prompts=8, interactive=2, kills=3, restarts=1, seed=3, data=tmp_path)
    print(report(figures))
    assert (figures.worker_kills, figures.server_restarts) == (3, 1)
    assert figures.prompts == 8 and figures.interactive_sessions == 2
    assert figures.recovered == 8 + 2 * 2
    assert figures.events_checked > 0
    assert not failed(figures), report(figures)


def test_the_ledger_tells_a_retry_from_a_second_execution(tmp_path: Path) -> None:
    ledger = tmp_path / "s1" / ".seawall" / "fixture-ledger.jsonl"
    ledger.parent.mkdir(parents=True)
    entries = [
        # call a: its activity retried after a crash (allowed, counted)
        {"workflow_id": "p1", "activity_id": "7", "attempt": 1, "call_id": "a"},
        {"workflow_id": "p1", "activity_id": "7", "attempt": 2, "call_id": "a"},
        # call b: run by two activities — the workflow ran a call it had a result for
        {"workflow_id": "p1", "activity_id": "8", "attempt": 1, "call_id": "b"},
        {"workflow_id": "p1", "activity_id": "12", "attempt": 1, "call_id": "b"},
    ]
    ledger.write_text("".join(json.dumps(e) + "\n" for e in entries))
    figures = Figures()
    check_ledger(tmp_path, figures)
    assert figures.reexecutions == 2
    assert figures.double_executions == ["p1 b"]
    assert failed(figures)
