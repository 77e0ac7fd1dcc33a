"""What the chaos suite checks a disturbed prompt for, and the figures it fills.

A prompt run while things break (``scripts/chaos.py``) must end as its undisturbed run did:
the same verdict, the same server-sent events apart from their numbering and the order of
calls settling within one batch (:func:`same_events`), none repeated, and streamed text that
only ever begins its reply (:func:`delta_problem`). The allowed differences are an MCP call
a kill really cut off (:func:`compare`; ``scripts/chaos_mcp.py`` says what it may change)
and a call lost with its killed worker that settled as "may have run" instead of running
again (at most once, ``activities/lost_calls.py``). The fixtures' side-effect ledger
(``activities/fixtures.py``) tells a retry of one activity after a crash (counted) from a
call the workflow had a result for run again (:func:`check_ledger`, a failure).
:class:`Figures` holds the counts; :func:`failed` says whether any of them fails the run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts.chaos_mcp import Ledger, cut_off_by_a_kill, step_of
from scripts.chaos_prompts import PromptRun


@dataclass
class Figures:
    """What a chaos run counted and found (printed by ``scripts/chaos.py``'s report)."""

    prompts: int = 0
    mcp_prompts: int = 0
    interactive_sessions: int = 0
    worker_kills: int = 0
    server_restarts: int = 0
    mcp_kills: int = 0
    # MCP calls that settled as "server stopped" because a kill cut them off (the allowed
    # difference from the undisturbed run), and later calls of those prompts that succeeded.
    mcp_calls_cut_off: int = 0
    mcp_calls_after_a_kill_succeeded: int = 0
    # Calls a worker kill cut off whose tool may change things: settled as "may have run"
    # (at most once), the other allowed difference.
    calls_lost_with_worker: int = 0
    model_requests: int = 0
    model_faults: dict[str, int] = field(default_factory=dict)
    recovered: int = 0
    mismatches: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    reexecutions: int = 0
    double_executions: list[str] = field(default_factory=list)
    events_checked: int = 0
    deltas_checked: int = 0
    reconnects: int = 0
    # Prompts that missed their deadline (the run stopped there), and where the stack's
    # logs were kept when the run failed.
    stuck: list[str] = field(default_factory=list)
    logs_kept: str | None = None
    log_tails: str = ""
    undisturbed_seconds: float = 0.0
    seconds: float = 0.0


def failed(figures: Figures) -> bool:
    return bool(figures.mismatches or figures.lost or figures.double_executions or figures.stuck)


MESSAGE_DELTA = "message_delta"
TOOL_CALL_SETTLED = "tool_call_settled"
AGENT_MESSAGE = "agent_message"


def same_events(
    events: list[tuple[Any, ...]], lenient_calls: frozenset[str] = frozenset()
) -> list[tuple[Any, ...]]:
    """The events without their seq, in order, except that calls settling within one batch
    may finish in any order (they run concurrently). Streamed text (``message_delta``) is
    left out: how a reply's text is cut into deltas depends on timing, and
    :func:`delta_problem` checks it instead. ``lenient_calls`` settle with any status (an
    MCP call whose server was killed under it)."""
    kept = []
    for _seq, batch, kind, call_id, status, text in events:
        if kind == MESSAGE_DELTA:
            continue
        if kind == TOOL_CALL_SETTLED and call_id in lenient_calls:
            status = "*"
        kept.append((batch, kind, call_id, status, text))
    return sorted(kept, key=lambda e: (e[0], repr(e)))


def delta_problem(events: list[tuple[Any, ...]]) -> str | None:
    """What is wrong with the streamed text: each batch's deltas (a ``retry`` delta
    restarting it) must add up to a beginning of that batch's complete ``agent_message``
    — nothing shown twice, nothing that was not said."""
    shown: dict[int, str] = {}
    said: dict[int, list[str]] = {}
    for _seq, batch, kind, _call_id, status, text in events:
        if kind == MESSAGE_DELTA:
            before = "" if status == "retry" else shown.get(batch, "")
            shown[batch] = before + (text or "")
        elif kind == AGENT_MESSAGE:
            said.setdefault(batch, []).append(text or "")
    for batch, text in shown.items():
        if not any(message.startswith(text) for message in said.get(batch, [])):
            return f"batch {batch} streamed text its reply does not begin with"
    return None


def compare(
    run: PromptRun, ref: PromptRun, mcp_ledger: Ledger, killed: set[int], figures: Figures
) -> str | None:
    """How a disturbed prompt differs from its undisturbed run beyond what is allowed
    (``None``: it does not). Allowed: MCP calls that a kill cut off settle as errors, and
    calls lost with their worker settle as "may have run"."""
    if ref.server_down:
        return "an MCP call failed in the undisturbed run"
    for call_id in run.server_down:
        if not cut_off_by_a_kill(mcp_ledger, run.mcp_tokens[call_id], killed):
            return f"MCP call {run.mcp_tokens[call_id]} failed though no kill cut it off"
    if run.server_down:
        figures.mcp_calls_cut_off += len(run.server_down)
        first = min(step_of(run.mcp_tokens[c]) for c in run.server_down)
        figures.mcp_calls_after_a_kill_succeeded += sum(
            1
            for call_id, token in run.mcp_tokens.items()
            if step_of(token) > first and call_id not in run.server_down
        )
    figures.calls_lost_with_worker += len(run.lost_with_worker)
    lenient = frozenset(run.server_down) | frozenset(run.lost_with_worker)
    verdict = run.verdict()
    # The repeated-failure guard sees the cut-off calls fail: their batches may say
    # "tracked", and the next batch (whose call succeeds) "reset", where the undisturbed
    # run said "none". A call lost with its worker settles with no execution status, which
    # the guard counts as an incomplete batch: that batch may say "reset".
    settled = {e[3]: e[1] for e in run.events if e[2] == TOOL_CALL_SETTLED}
    allowed: dict[int, set[str]] = {}
    for call_id in run.server_down:
        if call_id in settled:
            allowed.setdefault(settled[call_id], set()).add("tracked")
            allowed.setdefault(settled[call_id] + 1, set()).add("reset")
    for call_id in run.lost_with_worker:
        if call_id in settled:
            allowed.setdefault(settled[call_id], set()).add("reset")
            allowed.setdefault(settled[call_id] + 1, set()).add("reset")
    verdict["guard"] = [
        expected if decision in allowed.get(batch, set()) and expected == "none" else decision
        for decision, expected, batch in zip(
            run.guard, ref.guard + [""] * len(run.guard), run.guard_batches, strict=False
        )
    ]
    if verdict != ref.verdict():
        return f"{run.verdict()} != {ref.verdict()}"
    if same_events(run.events, lenient) != same_events(ref.events, lenient):
        return "its events differ"
    if [e[0] for e in run.events] != sorted({e[0] for e in run.events}):
        return "an event repeated or out of order"
    return delta_problem(run.events)


def check_ledger(workspaces: Path, figures: Figures) -> None:
    """No call ran under two activities; retries of one activity are counted."""
    for ledger in workspaces.glob("*/.seawall/fixture-ledger.jsonl"):
        by_call: dict[tuple[str, str], set[str]] = {}
        attempts: dict[tuple[str, str], int] = {}
        for line in ledger.read_text().splitlines():
            entry = json.loads(line)
            key = (entry["workflow_id"], entry["call_id"])
            by_call.setdefault(key, set()).add(entry["activity_id"])
            attempts[key] = attempts.get(key, 0) + 1
        for key, activities in by_call.items():
            if len(activities) > 1:
                figures.double_executions.append(f"{key[0]} {key[1]}")
            figures.reexecutions += attempts[key] - 1
