"""A small chaos run in ``make test`` (``make chaos`` runs the full one, scripts/chaos.py):
prompts through the gateway on two workers while workers are SIGKILLed, the server is
restarted, an MCP server is SIGKILLed mid-call and the model endpoint answers 429, 500,
hangs, sends a malformed chunk and cuts a stream, each prompt checked against its
undisturbed run."""

from __future__ import annotations

import json
from pathlib import Path

from scripts.chaos import Figures, chaos, check_ledger, failed, report
from scripts.chaos_model import FAULT_KINDS


async def test_prompts_survive_killed_workers_servers_and_a_faulty_model(tmp_path: Path) -> None:
    figures = await chaos(
        prompts=8,
        interactive=2,
        kills=3,
        restarts=1,
        seed=3,
        data=tmp_path,
        mcp_prompts=2,
        mcp_kills=1,
        model_faults=1,
    )
    print(report(figures))
    assert (figures.worker_kills, figures.server_restarts) == (3, 1)
    assert figures.mcp_kills == 1
    # Each kind of endpoint fault was served (and recovered from: no mismatch below).
    assert figures.model_faults == {kind: 1 for kind in FAULT_KINDS}
    assert figures.prompts == 8 and figures.mcp_prompts == 2
    assert figures.interactive_sessions == 2
    assert figures.recovered == 8 + 2 + 2 * 2
    # The kill cut a call off, which settled as a classified error, not a hang.
    assert figures.mcp_calls_cut_off >= 1
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
