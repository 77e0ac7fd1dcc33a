"""The chaos suite (``make chaos``): prompts through the gateway while workers, the server, MCP
servers and the model endpoint fail.

A real stack on free ports — the Temporal dev server on a SQLite file, two worker processes,
the gateway — runs scenarios from the labeled corpus (``bench/corpus``: loops and legitimate
work, scripted tools) and MCP prompts twice: once undisturbed, as the reference, and once
while a seeded fault schedule SIGKILLs workers (and starts them again), SIGKILLs and restarts
the server on its SQLite file, SIGKILLs the workers' MCP server in the middle of a call
(``scripts/chaos_mcp.py``) and has the model endpoint answer 429, 500, hang, send a
malformed chunk or cut a stream (``scripts/chaos_model.py``). The model is that local
OpenAI-compatible endpoint serving each prompt's script, so every model request goes through
the real provider, its error mapping and Temporal's retries. Interactive sessions (scripted
in-process) add what a user does at the same time: a second prompt queued behind the first,
mid-turn input, and a cancel.

Checked per prompt, against its undisturbed run: the same stop reason, loop type, guard
decisions, tool-call counts and conversation length; the same server-sent events, read across
reconnects with ``Last-Event-ID`` (none lost, none twice), and streamed text that only ever
begins its reply; and, from the fixtures' ledger (``activities/fixtures.py``) and the MCP
server's, no call executed twice (a call the workflow had a result for, run again). A call
whose worker died mid-call is run again only when its tool is repeatable (another attempt of
the same activity, allowed and counted); any other settles as "may have run" (at most once,
``activities/lost_calls.py``), an allowed difference, as is an MCP call whose server a kill
cut off, which settles as a classified error (``scripts/chaos_mcp.py`` says exactly what is
allowed). Interactive sessions must lose nothing: every prompt
finishes, the cancelled one as ``cancelled``, and the mid-turn input reaches a prompt's
conversation.

Figures are printed at the end (and written with ``--json``); the exit code is 1 on any
mismatch. ``tests/e2e/test_chaos.py`` runs a small version in ``make test``.

Nothing hangs (``scripts/chaos_watch.py``): every prompt has a deadline (``--prompt-deadline``)
and one that misses it fails the run at once, naming the prompt and what its client was
waiting for; a failed run copies the stack's logs to a kept directory (``--keep-logs``,
default ``.data/chaos-logs/``) and its report ends with their last lines.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.server_metrics import free_port
from scripts.chaos_mcp import (
    MCP_CALLS_PER_PROMPT,
    MCP_SERVER_DOWN,
    MCP_SERVER_SCRIPT,
    MCP_TOOL,
    Ledger,
    check_mcp_ledger,
    cut_off_by_a_kill,
    kill_mcp_mid_call,
    kill_points,
    mcp_script,
    mcp_servers,
    step_of,
)
from scripts.chaos_model import FAULT_KINDS, ChaosModel, marked
from scripts.chaos_watch import (
    PromptStuck,
    keep_logs,
    log_tails,
    run_all,
    waiting_for,
    within_deadline,
)
from seawall.runtime.devserver import temporal_binary
from seawall.scenario.format import Scenario, load_scenario
from workflows.contracts.synthetic_outcomes import LOST_CALL_CONTENT

ROOT = Path(__file__).resolve().parent.parent

CORPUS = ROOT / "bench" / "corpus"
TASK_QUEUE = "chaos"
# Statuses a request can meet while the server restarts: try again.
RETRYABLE = {502, 503, 504}
INPUT_MARKER = "chaos-note"
MAX_TURNS = 25
# Long enough for a loaded machine's streams, short enough that a hung endpoint costs
# seconds: the client timeout of one model request.
MODEL_TIMEOUT_SECONDS = 5
# How long one prompt may take from its start before the run fails as stuck (make chaos;
# the test passes its own): far past any healthy prompt's time, even on a loaded machine.
DEFAULT_PROMPT_DEADLINE_SECONDS = 600.0
# How long the stack may take to answer its first session.
STACK_START_SECONDS = 120.0
CONCURRENT_PROMPTS = 8
DEFAULT_KEPT_LOGS = ROOT / ".data" / "chaos-logs"


# --- the stack -----------------------------------------------------------------------------


class ChaosStack:
    """The server, two workers and the gateway, each a process this suite may kill."""

    def __init__(self, data: Path, model_url: str, workers: int = 2) -> None:
        self.data = data
        self.mcp_ledger = data / "mcp-ledger.jsonl"
        self.temporal_port = free_port()
        self.gateway_port = free_port()
        self.address = f"127.0.0.1:{self.temporal_port}"
        self.workspaces = data / "workspaces"
        self.logs = data / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.server: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes] | None] = [None] * workers
        self.gateway: subprocess.Popen[bytes] | None = None
        # Every worker process ever started (and when each was SIGKILLed): its MCP server
        # is its child, and the ledgers are read against these.
        self.worker_pids: set[int] = set()
        self.worker_kills: dict[int, float] = {}
        self.env = {
            **{
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("TEMPORAL_", "SEAWALL_", "OPENAI_"))
            },
            "TEMPORAL_ADDRESS": self.address,
            "SEAWALL_TASK_QUEUE": TASK_QUEUE,
            "SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "enforce",
            "SEAWALL_CONNECT_TIMEOUT_SECONDS": "0",
            "SEAWALL_GATEWAY_PORT": str(self.gateway_port),
            "SEAWALL_WORKSPACES": str(self.workspaces),
            "SEAWALL_ALLOW_SCRIPTED_MODELS": "1",
            # Its sessions run in yolo, which the operator must allow a client to choose.
            "SEAWALL_LOOSEST_APPROVAL_MODE": "yolo",
            # One key for the gateway and both workers (docs/security-trust.md): the gateway
            # signs each session's start, the workers verify it.
            "SEAWALL_SESSION_SIGNING_KEY": secrets.token_urlsafe(32),
            "XDG_CONFIG_HOME": str(data / "config"),
            # The model is this suite's endpoint (scripts/chaos_model.py), through the real
            # OpenAI provider; the tools include a real MCP server.
            "OPENAI_BASE_URL": model_url,
            "SEAWALL_MODEL_TIMEOUT_SECONDS": str(MODEL_TIMEOUT_SECONDS),
            "SEAWALL_MCP_SERVERS": json.dumps(mcp_servers(self.mcp_ledger)),
            # The chaos MCP server reports its host pid (to be SIGKILLed) and appends to a
            # ledger outside any workspace: both need it unsandboxed. Durability, not
            # confinement, is under test here (docs/security-sandbox.md covers that).
            "SEAWALL_SANDBOX": "none",
        }

    def _spawn(self, name: str, command: list[str]) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("ab")
        try:
            return subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()

    def start_server(self) -> None:
        self.server = self._spawn(
            "temporal",
            [
                temporal_binary(),
                "server",
                "start-dev",
                "--headless",
                "--db-filename",
                str(self.data / "temporal.db"),
                "--ip",
                "127.0.0.1",
                "--port",
                str(self.temporal_port),
                "--log-level",
                "error",
            ],
        )

    def start_worker(self, index: int) -> None:
        worker = self._spawn(f"worker-{index}", [sys.executable, "worker.py"])
        self.workers[index] = worker
        self.worker_pids.add(worker.pid)

    def start(self) -> None:
        self.start_server()
        for index in range(len(self.workers)):
            self.start_worker(index)
        self.gateway = self._spawn("gateway", [sys.executable, "-m", "gateway"])

    def kill_worker(self, index: int) -> None:
        worker = self.workers[index]
        if worker is not None and worker.poll() is None:
            worker.send_signal(signal.SIGKILL)
            self.worker_kills[worker.pid] = time.time()
            worker.wait()

    def kill_mcp_server(self, pid: int) -> bool:
        """SIGKILL the MCP server ``pid`` if it is a live child of one of this suite's
        workers (the ledger names it; never any other process)."""
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent not in self.worker_pids or MCP_SERVER_SCRIPT.name.encode() not in command:
            return False
        os.kill(pid, signal.SIGKILL)
        return True

    def kill_server(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGKILL)
            self.server.wait()

    def stop(self) -> None:
        processes = [self.gateway, *self.workers, self.server]
        for process in processes:
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            if process is None:
                continue
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        # MCP servers of killed workers that have not noticed yet: each is in the process
        # group of the worker that spawned it (its session leader, started here).
        for pid in self.worker_pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)


# --- the prompts ---------------------------------------------------------------------------


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


class Client:
    """The gateway, asked patiently: requests that meet an outage are repeated."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def request(
        self, method: str, url: str, *, retry: bool = True, **kwargs: Any
    ) -> httpx.Response:
        """The answer, repeating the request through outages (writes carry an
        Idempotency-Key, so a repeat takes effect once)."""
        if method == "POST":
            kwargs.setdefault("headers", {})["Idempotency-Key"] = uuid.uuid4().hex
        for _ in range(600 if retry else 1):
            try:
                response = await self.http.request(method, url, **kwargs)
            except httpx.TransportError:
                await asyncio.sleep(0.2)
                continue
            if response.status_code not in RETRYABLE or not retry:
                return response
            await asyncio.sleep(0.2)
        if not retry:
            return httpx.Response(599)
        raise RuntimeError(f"{method} {url} kept failing")

    async def new_session(self, scenario: Scenario | None) -> str:
        """A session whose model is the suite's endpoint, with the scenario's fixture tools
        (none for an MCP prompt: its tools are the workers' MCP server's)."""
        waiting_for("its session to be created (POST /v1/sessions)")
        body: dict[str, Any] = {"approval_mode": "yolo"}
        if scenario is not None and scenario.tools:
            body["fixture_tools"] = {
                k: v.model_dump(mode="json") for k, v in scenario.tools.items()
            }
        response = await self.request("POST", "/v1/sessions", json=body)
        assert response.status_code == 201, response.text
        return str(response.json()["session_id"])

    async def submit(self, session_id: str, text: str) -> str:
        waiting_for(f"session {session_id} to accept a prompt (POST …/prompts)")
        response = await self.request(
            "POST", f"/v1/sessions/{session_id}/prompts", json={"text": text}
        )
        assert response.status_code == 202, response.text
        return str(response.json()["prompt_id"])

    async def result(self, prompt_id: str) -> dict[str, Any]:
        waiting_for(f"the result of {prompt_id} (GET /v1/prompts/{prompt_id})")
        while True:
            response = await self.request("GET", f"/v1/prompts/{prompt_id}")
            if response.status_code == 200 and response.json().get("result"):
                return dict(response.json()["result"])
            await asyncio.sleep(0.2)

    async def events(self, prompt_id: str) -> tuple[list[tuple[Any, ...]], int]:
        """Every event of the prompt, following the stream across disconnects."""
        seen: list[tuple[Any, ...]] = []
        cursor = 0
        reconnects = -1
        finished = False
        while not finished:
            reconnects += 1
            waiting_for(
                f"events of {prompt_id} after seq {cursor}, {len(seen)} seen "
                f"(GET …/events, {reconnects} reconnects)"
            )
            try:
                async with self.http.stream(
                    "GET",
                    f"/v1/prompts/{prompt_id}/events",
                    headers={"Last-Event-ID": str(cursor)},
                ) as stream:
                    if stream.status_code != 200:
                        await asyncio.sleep(0.2)
                        continue
                    async for line in stream.aiter_lines():
                        if not line.startswith("data: "):
                            continue
                        event = json.loads(line[len("data: ") :])
                        seen.append(
                            (
                                event["seq"],
                                event.get("batch", 0),
                                event["kind"],
                                event.get("call_id"),
                                event.get("status"),
                                event.get("text"),
                            )
                        )
                        cursor = event["seq"]
                        waiting_for(
                            f"events of {prompt_id} after seq {cursor} ({event['kind']}), "
                            f"{len(seen)} seen (GET …/events, {reconnects} reconnects)"
                        )
                        finished = event["kind"] == "prompt_finished"
            except httpx.TransportError:
                await asyncio.sleep(0.2)
        return seen, reconnects


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


# How a call lost with its worker settles (its content names the tool after this opening).
LOST_CALL_OPENING = LOST_CALL_CONTENT.split("{tool}")[0]


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
        lost_with_worker=[
            str(m.get("tool_call_id"))
            for m in messages
            if m.get("role") == "tool" and str(m.get("content", "")).startswith(LOST_CALL_OPENING)
        ],
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


# --- faults and the ledger -----------------------------------------------------------------


@dataclass
class Figures:
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


async def inject_faults(
    stack: ChaosStack,
    figures: Figures,
    rng: random.Random,
    done: asyncio.Event,
    *,
    kills: int,
    restarts: int,
    wait: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Kill workers and restart the server at seeded moments until the runs are done and the
    minimum counts are reached."""
    schedule = ["worker"] * kills + ["server"] * restarts
    rng.shuffle(schedule)
    for fault in schedule:
        await wait(rng.uniform(0.3, 1.5))
        if fault == "worker":
            index = rng.randrange(len(stack.workers))
            stack.kill_worker(index)
            figures.worker_kills += 1
            await wait(rng.uniform(0.1, 1.0))
            stack.start_worker(index)
        else:
            stack.kill_server()
            figures.server_restarts += 1
            await wait(rng.uniform(0.2, 1.0))
            stack.start_server()
    await done.wait()


def model_fault_plan(requests: int, per_kind: int, rng: random.Random) -> dict[int, str]:
    """``per_kind`` faults of each kind at seeded request numbers in the first half of
    ``requests`` (the undisturbed run's count: the disturbed run makes at least as many, so
    a fault passed on from a retry to the next request still finds one)."""
    kinds = [kind for kind in FAULT_KINDS for _ in range(per_kind)]
    at = rng.sample(range(max(requests // 2, len(kinds))), len(kinds))
    return dict(zip(at, kinds, strict=True))


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


# --- the run -------------------------------------------------------------------------------


async def wait_ready(client: Client) -> None:
    """Until the gateway answers and starts a session (under :data:`STACK_START_SECONDS`)."""
    while True:
        try:
            waiting_for("the gateway's /healthz to answer 200")
            response = await client.http.get("/healthz")
            if response.status_code == 200:
                waiting_for("the gateway to start a first session (POST /v1/sessions)")
                probe = await client.http.post("/v1/sessions", json={})
                if probe.status_code == 201:
                    return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.2)


MCP_PROMPT = "Do the work, one step per turn."


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


async def chaos(
    *,
    prompts: int,
    interactive: int,
    kills: int,
    restarts: int,
    seed: int,
    data: Path,
    mcp_prompts: int = 0,
    mcp_kills: int = 0,
    model_faults: int = 0,
    prompt_deadline: float = DEFAULT_PROMPT_DEADLINE_SECONDS,
    keep_logs_in: Path = DEFAULT_KEPT_LOGS,
    workers: int = 2,
) -> Figures:
    """Run the suite; ``model_faults`` is the number of each kind of model-endpoint fault.

    A prompt that takes longer than ``prompt_deadline`` seconds stops the run (``stuck``);
    a failed run's stack logs are copied under ``keep_logs_in``. ``workers`` is for the
    watchdog's own test (none: no prompt can finish)."""
    started = time.monotonic()
    figures = Figures()
    scenarios = pick_scenarios(prompts, seed)
    order = interleaved(len(scenarios), mcp_prompts)
    async with ChaosModel() as model:
        for index, scenario in enumerate(scenarios):
            model.add(corpus_key(index), scenario.model)
        for phase in ("ref", "run"):
            for index in range(mcp_prompts):
                model.add(mcp_key(phase, index), mcp_script(mcp_key(phase, index)))
        stack = ChaosStack(data, model.url, workers)

        def prompt_runs(phase: str, client: Client) -> list[tuple[str, Awaitable[Any]]]:
            where = "undisturbed run" if phase == "ref" else "disturbed run"
            return [
                (
                    f"{where} prompt {n} ({scenarios[i].name})",
                    run_scripted(client, scenarios[i], marked(scenarios[i].prompt, corpus_key(i))),
                )
                if kind == "corpus"
                else (
                    f"{where} prompt {n} ({mcp_key(phase, i)})",
                    run_scripted(client, None, marked(MCP_PROMPT, mcp_key(phase, i))),
                )
                for n, (kind, i) in enumerate(order)
            ]

        stack.start()
        try:
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{stack.gateway_port}", timeout=60
            ) as http:
                client = Client(http)
                await within_deadline("the stack's start", wait_ready(client), STACK_START_SECONDS)
                phase_started = time.monotonic()
                reference = await run_all(
                    prompt_runs("ref", client), limit=CONCURRENT_PROMPTS, deadline=prompt_deadline
                )
                figures.undisturbed_seconds = round(time.monotonic() - phase_started, 1)

                model.plan(model_fault_plan(model.requests, model_faults, random.Random(seed + 1)))
                done = asyncio.Event()
                faults = asyncio.create_task(
                    inject_faults(
                        stack, figures, random.Random(seed), done, kills=kills, restarts=restarts
                    )
                )
                mcp_faults = asyncio.create_task(
                    kill_mcp_mid_call(
                        stack.mcp_ledger,
                        stack.kill_mcp_server,
                        prefix="run-",
                        at_calls=kill_points(
                            mcp_prompts * MCP_CALLS_PER_PROMPT, mcp_kills, random.Random(seed + 2)
                        ),
                        done=done.is_set,
                        wait=asyncio.sleep,
                    )
                )
                try:
                    disturbed = await run_all(
                        [
                            *prompt_runs("run", client),
                            *[
                                (f"interactive session {i}", run_interactive(client, i))
                                for i in range(interactive)
                            ],
                        ],
                        limit=CONCURRENT_PROMPTS,
                        deadline=prompt_deadline,
                    )
                finally:
                    done.set()
                    await faults
                    killed = await mcp_faults
        except PromptStuck as stuck:
            figures.stuck.append(str(stuck))
        except BaseException as err:
            stack.stop()
            kept = keep_logs(stack.logs, keep_logs_in, f"seed{seed}-error")
            err.add_note(f"the chaos stack's logs are kept in {kept}")
            raise
        finally:
            stack.stop()
        figures.model_requests = model.requests
        figures.model_faults = {kind: model.faults[kind] for kind in FAULT_KINDS}
        if model.unknown:
            figures.mismatches.append(f"{model.unknown} model requests had no script")

    if figures.stuck:
        return _kept(figures, stack, keep_logs_in, seed, started)
    figures.mcp_kills = len(killed)
    mcp_ledger = Ledger.read(stack.mcp_ledger)
    for (kind, index), (_, ref), (_, run) in zip(order, reference, disturbed, strict=False):
        name = scenarios[index].name if kind == "corpus" else mcp_key("run", index)
        if kind == "corpus":
            figures.prompts += 1
        else:
            figures.mcp_prompts += 1
        figures.recovered += run.stop_reason is not None
        figures.events_checked += sum(e[2] != MESSAGE_DELTA for e in run.events)
        figures.deltas_checked += sum(e[2] == MESSAGE_DELTA for e in run.events)
        figures.reconnects += run.reconnects
        problem = compare(run, ref, mcp_ledger, set(killed), figures)
        if problem is not None:
            figures.mismatches.append(f"{name}: {problem}")
    for run in disturbed[len(order) :]:
        figures.interactive_sessions += 1
        figures.recovered += run.finished
        figures.lost.extend(run.lost)
        if run.finished != 2:
            figures.lost.append("a prompt of an interactive session never finished")
    check_ledger(stack.workspaces, figures)
    mcp_check = check_mcp_ledger(mcp_ledger, stack.worker_kills)
    figures.reexecutions += mcp_check.reexecutions
    figures.double_executions.extend(mcp_check.double_executions)
    if failed(figures):
        return _kept(figures, stack, keep_logs_in, seed, started)
    figures.seconds = round(time.monotonic() - started, 1)
    return figures


def _kept(
    figures: Figures, stack: ChaosStack, keep_root: Path, seed: int, started: float
) -> Figures:
    """``figures`` of a failed run, with the stack's logs kept and their last lines."""
    figures.logs_kept = str(keep_logs(stack.logs, keep_root, f"seed{seed}"))
    figures.log_tails = log_tails(stack.logs)
    figures.seconds = round(time.monotonic() - started, 1)
    return figures


def compare(
    run: PromptRun, ref: PromptRun, mcp_ledger: Ledger, killed: set[int], figures: Figures
) -> str | None:
    """How a disturbed prompt differs from its undisturbed run beyond what is allowed
    (``None``: it does not). Allowed: MCP calls that a kill cut off settle as errors."""
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


def report(figures: Figures) -> str:
    faults = "  ".join(f"{kind} {count}" for kind, count in figures.model_faults.items())
    lines = [
        "Chaos suite",
        f"  prompts checked against their undisturbed run: {figures.prompts} corpus"
        f" + {figures.mcp_prompts} MCP",
        f"  interactive sessions (queued prompt, mid-turn input, cancel): "
        f"{figures.interactive_sessions}",
        f"  worker SIGKILLs: {figures.worker_kills}   server restarts: {figures.server_restarts}",
        f"  MCP servers SIGKILLed mid-call: {figures.mcp_kills}   calls cut off (settled as "
        f"'server stopped', allowed): {figures.mcp_calls_cut_off}   later calls that "
        f"succeeded on a restarted server: {figures.mcp_calls_after_a_kill_succeeded}",
        f"  model requests: {figures.model_requests}   endpoint faults: {faults or 'none'}",
        f"  prompts recovered: {figures.recovered}",
        f"  events checked: {figures.events_checked} + {figures.deltas_checked} text deltas"
        f" (stream reconnects: {figures.reconnects})",
        f"  tool calls re-executed after a crash (allowed): {figures.reexecutions}   calls "
        f"lost with their worker (settled as 'may have run', allowed): "
        f"{figures.calls_lost_with_worker}",
        f"  calls executed twice: {len(figures.double_executions)}",
        f"  mismatches: {len(figures.mismatches)}   lost input or prompts: {len(figures.lost)}",
        f"  {figures.seconds} s in all ({figures.undisturbed_seconds} s the undisturbed run)",
    ]
    lines += [f"  MISMATCH {m}" for m in figures.mismatches]
    lines += [f"  LOST {m}" for m in figures.lost]
    lines += [f"  TWICE {m}" for m in figures.double_executions]
    lines += [f"  STUCK {m}" for m in figures.stuck]
    if figures.logs_kept:
        lines.append(f"  the stack's logs are kept in {figures.logs_kept}")
    if figures.log_tails:
        lines += ["", figures.log_tails]
    return "\n".join(lines)


def failed(figures: Figures) -> bool:
    return bool(figures.mismatches or figures.lost or figures.double_executions or figures.stuck)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=100, help="corpus prompts (default 100)")
    parser.add_argument("--interactive", type=int, default=10, help="interactive sessions")
    parser.add_argument("--kills", type=int, default=12, help="worker SIGKILLs (default 12)")
    parser.add_argument("--restarts", type=int, default=2, help="server restarts (default 2)")
    parser.add_argument("--mcp-prompts", type=int, default=10, help="MCP prompts (default 10)")
    parser.add_argument(
        "--mcp-kills", type=int, default=4, help="MCP server SIGKILLs mid-call (default 4)"
    )
    parser.add_argument(
        "--model-faults",
        type=int,
        default=3,
        help="model endpoint faults of each kind: 429, 500, hang, malformed chunk (default 3)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--prompt-deadline",
        type=float,
        default=DEFAULT_PROMPT_DEADLINE_SECONDS,
        help="seconds one prompt may take before the run fails as stuck "
        f"(default {DEFAULT_PROMPT_DEADLINE_SECONDS:g})",
    )
    parser.add_argument(
        "--keep-logs",
        type=Path,
        default=DEFAULT_KEPT_LOGS,
        help="where a failed run's stack logs are copied (default .data/chaos-logs)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="seawall-chaos-") as tmp:
        figures = asyncio.run(
            chaos(
                prompts=args.prompts,
                interactive=args.interactive,
                kills=args.kills,
                restarts=args.restarts,
                seed=args.seed,
                data=Path(tmp),
                mcp_prompts=args.mcp_prompts,
                mcp_kills=args.mcp_kills,
                model_faults=args.model_faults,
                prompt_deadline=args.prompt_deadline,
                keep_logs_in=args.keep_logs,
            )
        )
    print(report(figures), flush=True)
    if args.json:
        args.json.write_text(json.dumps(asdict(figures), indent=2) + "\n")
    return 1 if failed(figures) else 0


if __name__ == "__main__":
    from seawall.runtime.process_exit import run_then_exit

    run_then_exit(main)
