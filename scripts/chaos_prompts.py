"""The chaos suite's prompts: which ones it sends, and what each did as its client saw it.

Corpus prompts are scenarios of the labeled corpus (``bench/corpus``) the gateway can run as
they are (:func:`eligible`), in a seeded order; MCP prompts call the workers' MCP server
(``scripts/chaos_mcp.py``); both are marked with the key of the script the model endpoint
answers them with, and interleaved. :class:`PromptRun` is what one prompt did (stop reason,
guard decisions, calls, events, the calls lost with their worker), compared later against
its undisturbed run (``scripts/chaos_checks.py``). An interactive session
(:func:`run_interactive`) is what a user does while things break: a second prompt queued
behind the first, a mid-turn note and, every other time, a cancel; it must lose none of
them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts.chaos_client import Client
from scripts.chaos_mcp import MCP_SERVER_DOWN, MCP_TOOL
from scripts.chaos_watch import waiting_for
from seawall.scenario.format import Scenario, load_scenario
from workflows.contracts.synthetic_outcomes import LOST_CALL_CONTENT

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "corpus"
INPUT_MARKER = "chaos-note"
MAX_TURNS = 25
MCP_PROMPT = "Do the work, one step per turn."


def eligible(scenario: Scenario) -> bool:
    """Scenarios the gateway can run as they are: no scripted events, permission answers,
    hanging tools, workspace files or pinned loop settings."""
    return (
        not scenario.events
        and not scenario.permissions
        and not scenario.workspace.files
        and scenario.profile is None
        and not scenario.rule_modes
        and scenario.route.value == "interactive"
        and not scenario.channel
        and not any(o.hang for tool in scenario.tools.values() for o in tool.outcomes)
        # Long scripts (up to the session's 50 model requests) would only make the run slower.
        and len(scenario.model.turns) <= MAX_TURNS
    )


def pick_scenarios(count: int, seed: int) -> list[Scenario]:
    """``count`` eligible corpus scenarios in a seeded order (repeating when there are fewer)."""
    paths = sorted(p for p in CORPUS.glob("*.yaml") if p.name != "labels.yaml")
    pool = [s for s in map(load_scenario, paths) if eligible(s)]
    random.Random(seed).shuffle(pool)
    return [pool[i % len(pool)] for i in range(count)]


@dataclass
class PromptRun:
    """What one prompt did, as a client saw it."""

    stop_reason: str | None = None
    loop_type: str | None = None
    guard: list[str] = field(default_factory=list)
    guard_batches: list[int] = field(default_factory=list)
    tool_calls: dict[str, int] = field(default_factory=dict)
    messages: int = 0
    contents: list[str] = field(default_factory=list)
    events: list[tuple[Any, ...]] = field(default_factory=list)
    reconnects: int = 0
    # MCP calls (call id -> token) and the ones whose server died under them.
    mcp_tokens: dict[str, str] = field(default_factory=dict)
    server_down: list[str] = field(default_factory=list)
    # Calls whose attempt was lost with a killed worker and, their tool being able to change
    # things, settled as "may have run" instead of running again (activities/lost_calls.py).
    lost_with_worker: list[str] = field(default_factory=list)

    def verdict(self) -> dict[str, Any]:
        return {
            "stop_reason": self.stop_reason,
            "loop_type": self.loop_type,
            "guard": self.guard,
            "tool_calls": self.tool_calls,
            "messages": self.messages,
        }


# How a call lost with its worker settles (its content names the tool after this opening).
LOST_CALL_OPENING = LOST_CALL_CONTENT.split("{tool}")[0]


def lost_with_worker(messages: list[dict[str, Any]]) -> list[str]:
    """The calls of a prompt's result ``messages`` that settled as lost with their worker
    ("may have run", not run again: ``activities/lost_calls.py``)."""
    return [
        str(m.get("tool_call_id"))
        for m in messages
        if m.get("role") == "tool" and str(m.get("content", "")).startswith(LOST_CALL_OPENING)
    ]


def run_of(result: dict[str, Any], events: list[tuple[Any, ...]], reconnects: int) -> PromptRun:
    messages = result.get("messages", [])
    tokens = {
        str(call.get("call_id")): str((call.get("arguments") or {}).get("token"))
        for m in messages
        for call in m.get("tool_calls") or []
        if call.get("name") == MCP_TOOL
    }
    return PromptRun(
        mcp_tokens=tokens,
        server_down=[
            str(m.get("tool_call_id"))
            for m in messages
            if m.get("role") == "tool"
            and m.get("tool_call_id") in tokens
            and MCP_SERVER_DOWN in str(m.get("content", ""))
        ],
        lost_with_worker=lost_with_worker(messages),
        stop_reason=result.get("stop_reason"),
        loop_type=result.get("loop_type"),
        guard=[g["decision"] for g in result.get("guard", [])],
        guard_batches=[int(g["batch"]) for g in result.get("guard", [])],
        tool_calls=dict(result.get("tool_calls", {})),
        messages=len(result.get("messages", [])),
        contents=[str(m.get("content", "")) for m in result.get("messages", [])],
        events=events,
        reconnects=reconnects,
    )


async def run_scripted(
    client: Client, scenario: Scenario | None, prompt: str
) -> tuple[str, PromptRun]:
    """One prompt (its text marked with its script's key) in a new session."""
    session_id = await client.new_session(scenario)
    prompt_id = await client.submit(session_id, prompt)
    events, reconnects = await client.events(prompt_id)
    result = await client.result(prompt_id)
    return session_id, run_of(result, events, reconnects)


# A session a user works in while things break: a prompt of several slow-ish batches, a
# second prompt queued behind it, a note sent while the first runs, and (every other time)
# a cancel of the first.
INTERACTIVE_SCRIPT = {
    "turns": [
        *[
            {"tool_calls": [{"name": "probe", "arguments": {"n": n}} for n in range(3)]}
            for _ in range(6)
        ],
        {"text": "first done"},
        {"tool_calls": [{"name": "probe", "arguments": {"n": 9}}]},
        {"text": "second done"},
    ]
}
INTERACTIVE_TOOLS = {
    "probe": {"outcomes": [{"status": "success", "execution_status": "success", "content": "ok"}]}
}


@dataclass
class InteractiveRun:
    finished: int = 0
    cancelled: bool = False
    input_delivered: bool = False
    lost: list[str] = field(default_factory=list)


async def run_interactive(client: Client, index: int) -> InteractiveRun:
    body = {"model_script": INTERACTIVE_SCRIPT, "fixture_tools": INTERACTIVE_TOOLS}
    response = await client.request("POST", "/v1/sessions", json={**body, "approval_mode": "yolo"})
    session_id = response.json()["session_id"]
    first = await client.submit(session_id, "first")
    second = await client.submit(session_id, "second")
    note = f"{INPUT_MARKER}-{index}"
    waiting_for(f"session {session_id} to take mid-turn input (POST …/input)")
    sent = await client.request("POST", f"/v1/sessions/{session_id}/input", json={"text": note})
    # 409: no prompt was running to take it (refused, so nothing to lose).
    note_accepted = sent.status_code == 202
    if index % 2 == 0:
        # Not repeated: a second cancel could reach the queued prompt once it runs.
        waiting_for(f"session {session_id} to take a cancel (POST …/cancel)")
        await client.request("POST", f"/v1/sessions/{session_id}/cancel", retry=False)
    run = InteractiveRun()
    results = [await client.result(first), await client.result(second)]
    run.finished = len(results)
    run.cancelled = results[0]["stop_reason"] == "cancelled"
    contents = [str(m.get("content", "")) for r in results for m in r.get("messages", [])]
    pending = [text for r in results for text in r.get("pending_input", [])]
    # The note reached a conversation, or came back to be run next: never dropped.
    run.input_delivered = any(note in c for c in contents) or note in pending
    if note_accepted and not run.input_delivered:
        run.lost.append(note)
    return run


def corpus_key(index: int) -> str:
    return f"c{index}"


def mcp_key(phase: str, index: int) -> str:
    return f"{phase}-mcp{index}"


def interleaved(corpus: int, mcp: int) -> list[tuple[str, int]]:
    """The order prompts are started in: MCP prompts spread evenly among the corpus ones."""
    order = [("corpus", i) for i in range(corpus)]
    for j in reversed(range(mcp)):
        order.insert(round((j + 1) * corpus / (mcp + 1)), ("mcp", j))
    return order
