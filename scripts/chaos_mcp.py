"""The chaos suite's MCP part: prompts that call a real MCP server, and that server killed mid-call.

Every worker runs ``scripts/chaos_mcp_server.py`` as its stdio MCP server through its pool
(``activities/mcp/``). An MCP prompt calls the server's ``work`` tool once per turn; at seeded
call numbers the suite SIGKILLs the server process while the call is in flight (the server's
ledger says it started and has not ended).

What is expected of a call whose server dies under it (workflows/contracts/outcome.py;
``activities/mcp/tools.py``): it settles at once as an ``execution_failed`` error outcome saying the
server "stopped or lost its connection" — not retried (the tool may have had its effect), never a
hang — the pool drops the connection, and the prompt's next call of that server starts a fresh
process. So a disturbed MCP prompt must match its undisturbed run in everything (stop reason, loop
type, guard decisions, call counts, messages, events) except the settled status of exactly those
calls and what the repeated-failure guard makes of them (``tracked`` for their batch, ``reset`` for
the next, where the undisturbed run said ``none``); and each of those calls must really have been
cut off by a kill: no ``end`` in the ledger, and a start (if any) on a killed process. A later call
of the same prompt that succeeds shows the server came back.

The ledger also proves no completed call ran twice: a token started again is allowed only
when the worker that ran it before was SIGKILLed after that start (the tool activity was
retried on another worker: at-least-once across a crash).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workflows.contracts.scenario import ModelScript, ScriptedCall, ScriptedTurn

ROOT = Path(__file__).resolve().parent.parent
MCP_SERVER = "chaos"
MCP_TOOL = f"mcp__{MCP_SERVER}__work"
MCP_SERVER_SCRIPT = ROOT / "scripts" / "chaos_mcp_server.py"
MCP_CALLS_PER_PROMPT = 4
MCP_WORK_SECONDS = 0.5
# How a call whose server died under it settles (activities/mcp/tools.py, _server_down).
MCP_SERVER_DOWN = "stopped or lost its connection"
POLL_SECONDS = 0.05


def mcp_servers(ledger: Path) -> dict[str, Any]:
    """The workers' ``SEAWALL_MCP_SERVERS``: the chaos server, writing to ``ledger``."""
    return {
        MCP_SERVER: {
            "command": sys.executable,
            "args": [str(MCP_SERVER_SCRIPT)],
            "env": {"CHAOS_MCP_LEDGER": str(ledger)},
            "trust": True,
        }
    }


def mcp_script(key: str) -> ModelScript:
    """A prompt that calls the MCP tool once per turn, then answers; each call's token
    (``key``-n) names it in the ledger."""
    calls = [
        ScriptedTurn(
            tool_calls=[
                ScriptedCall(
                    name=MCP_TOOL, arguments={"token": f"{key}-{n}", "seconds": MCP_WORK_SECONDS}
                )
            ]
        )
        for n in range(MCP_CALLS_PER_PROMPT)
    ]
    return ModelScript(turns=[*calls, ScriptedTurn(text="the work is done")])


@dataclass
class Ledger:
    """The MCP server's ledger, by token: its ``start`` and ``end`` entries in order."""

    starts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    ends: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> Ledger:
        ledger = cls()
        try:
            lines = path.read_text().splitlines()
        except FileNotFoundError:
            return ledger
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line being written
            token = str(entry["token"])
            if entry["event"] == "start":
                ledger.starts.setdefault(token, []).append(entry)
                ledger.order.append(token)
            else:
                ledger.ends.setdefault(token, []).append(entry)
        return ledger


async def kill_mcp_mid_call(
    ledger_path: Path,
    kill: Callable[[int], bool],
    *,
    prefix: str,
    at_calls: list[int],
    done: Callable[[], bool],
    wait: Callable[[float], Awaitable[None]],
) -> list[int]:
    """SIGKILL the MCP server running call number ``n`` (counted over tokens starting with
    ``prefix``) for each ``n`` in ``at_calls``, while that call is in flight; a call that
    finished before it could be hit passes the kill on to the next call in flight. A prompt's
    last call is never the one hit, so a later call can show the server came back. Returns
    the killed process ids (stops early once ``done()``)."""
    killed: list[int] = []
    pending = sorted(at_calls)
    while pending and not done():
        ledger = Ledger.read(ledger_path)
        started = [t for t in ledger.order if t.startswith(prefix)]
        if len(started) > pending[0]:
            in_flight = [
                t
                for t in started[pending[0] :]
                if t not in ledger.ends and step_of(t) < MCP_CALLS_PER_PROMPT - 1
            ]
            for token in in_flight:
                pid = int(ledger.starts[token][-1]["pid"])
                if pid not in killed and kill(pid):
                    killed.append(pid)
                    pending.pop(0)
                    break
        await wait(POLL_SECONDS)
    return killed


def kill_points(calls: int, kills: int, rng: random.Random) -> list[int]:
    """``kills`` distinct call numbers in the first half of ``calls``, so calls that are not
    a prompt's last are still to come when each is due."""
    return sorted(rng.sample(range(max(calls // 2, kills)), kills))


def step_of(token: str) -> int:
    """A call's step in its prompt (its token is ``<prompt key>-<step>``)."""
    return int(token.rsplit("-", 1)[1])


@dataclass
class McpCheck:
    reexecutions: int = 0
    double_executions: list[str] = field(default_factory=list)


def check_mcp_ledger(ledger: Ledger, worker_kills: dict[int, float], prefix: str = "") -> McpCheck:
    """Re-executions of a token are allowed only after its worker was SIGKILLed."""
    check = McpCheck()
    for token, starts in ledger.starts.items():
        if not token.startswith(prefix):
            continue
        for before in starts[:-1]:
            check.reexecutions += 1
            killed_at = worker_kills.get(int(before["worker_pid"]))
            if killed_at is None or killed_at < float(before["at"]):
                check.double_executions.append(f"MCP call {token}")
    return check


def cut_off_by_a_kill(ledger: Ledger, token: str, killed_pids: set[int]) -> bool:
    """Whether the call ``token`` really lost its server to a kill: its last start (if it
    started at all: a server killed between calls fails the next call before it is sent)
    was on a server the suite killed, which never ended it."""
    starts = ledger.starts.get(token)
    if not starts:
        return True
    pid = int(starts[-1]["pid"])
    ended = any(int(end["pid"]) == pid for end in ledger.ends.get(token, []))
    return pid in killed_pids and not ended
