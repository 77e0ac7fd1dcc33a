"""The fleet chaos variant (``make chaos-fleet``): heavy shell calls on four workers, one of
them SIGKILLed mid-batch, at several ``eager_calls_per_workflow_task`` settings side by side.

Why it exists: a call started eagerly runs on the worker that ran its workflow task
(docs/capacity.md, "Eager calls"), so a batch of heavy tools does not spread over a fleet
and a worker's death takes the whole batch with it; where calls go through the task queue
they spread, at the price of a hand-off each. This variant measures that trade-off with
tools that cost seconds of CPU, and checks what a fleet under fire must never do.

For each setting a fresh stack (``scripts/chaos_stack.py``) runs four worker processes, each
pinned to one CPU (worker ``i`` to CPU ``i mod cores``): on one machine a shell command uses
any core whichever worker started it, so without the pinning a batch's placement could not
matter; pinned, each CPU stands for a host of its own. Sessions whose scripted model calls
``run_shell_command`` in batches run, a few at a time, twice on that stack: ``quiet``
(nothing killed) and ``fire`` (the worker running a call in flight at a seeded call number
is SIGKILLed and started again a second later). Every call runs
``scripts/chaos_fleet_tool.py``, which spins for its CPU seconds and appends ``start`` and
``end`` lines with its token and its worker to a side-effect ledger.

Counted per phase: where each call ran (its worker), how many workers each batch's calls
spread over, prompts finished, calls lost (no settled result, or a success the ledger never
saw finish), p50/p95/max prompt latency (submit to ``prompt_finished``), the calls a kill
cut off, and calls run twice. A shell command is not safe to repeat, so a call whose attempt
was lost with its worker must settle as "may have run" and not run again (at most once,
``activities/lost_calls.py``): those are counted, with the ones the kill took before their
command had started. A call whose run was lost with its worker and which ran again is an
**unsafe re-run**; one that ran again after a run that had finished is a double execution;
a call run again after a run cut short with no kill, and a call that settled as an error a
kill does not explain (any error but "may have run", or "may have run" on a worker that was
not killed), are counted apart. The verdict fails on any unfinished or lost prompt or call,
any call run twice and any error a kill does not explain; ``--json`` writes the figures.
``tests/e2e/test_chaos_fleet.py`` runs a small version in ``make test``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx

from scripts.chaos_client import STACK_START_SECONDS, Client, wait_ready
from scripts.chaos_mcp import Ledger
from scripts.chaos_prompts import lost_with_worker
from scripts.chaos_stack import ROOT, WORKER_ID_VARIABLE, ChaosStack
from scripts.chaos_watch import (
    PromptStuck,
    keep_logs,
    log_tails,
    run_all,
    waiting_for,
    within_deadline,
)
from seawall.runtime.settings import default_of
from workflows.contracts.scenario import ModelScript, ScriptedCall, ScriptedTurn

TOOL_SCRIPT = ROOT / "scripts" / "chaos_fleet_tool.py"
SHELL_TOOL = "run_shell_command"
FLEET_WORKERS = 4
PHASES = ("quiet", "fire")
FINISHED = "end_turn"
PROMPT_TEXT = "Run the heavy jobs."
# A killed worker is started again after this long (the fleet stays at four).
RESTART_SECONDS = 1.0
POLL_SECONDS = 0.05
DEFAULT_PROMPT_DEADLINE_SECONDS = 600.0
DEFAULT_KEPT_LOGS = ROOT / ".data" / "chaos-logs"
DEFAULT_EAGER = (int(default_of("eager_calls_per_workflow_task")), 2, 0)


@dataclass(frozen=True)
class FleetLoad:
    """What one phase sends: ``prompts`` sessions, ``concurrent`` at a time, each of
    ``batches`` batches of ``calls`` shell calls of ``cpu_seconds`` of CPU."""

    prompts: int = 6
    batches: int = 2
    calls: int = 4
    cpu_seconds: float = 1.5
    concurrent: int = 2

    @property
    def total_calls(self) -> int:
        return self.prompts * self.batches * self.calls


def token_of(phase: str, prompt: int, batch: int, call: int) -> str:
    """A call's token (and its call id): ``<phase>-p<prompt>-b<batch>-c<call>``."""
    return f"{phase}-p{prompt}-b{batch}-c{call}"


def batch_of(token: str) -> str:
    """The batch a token belongs to (its token without the call)."""
    return token.rsplit("-", 1)[0]


def prompt_of(token: str) -> str:
    """The prompt a token belongs to (its token without the batch and the call)."""
    return token.rsplit("-", 2)[0]


def fleet_script(phase: str, prompt: int, load: FleetLoad, ledger: Path) -> ModelScript:
    """A prompt's model: ``load.batches`` batches of heavy shell calls, then an answer."""

    def call(batch: int, index: int) -> ScriptedCall:
        token = token_of(phase, prompt, batch, index)
        tool = [sys.executable, "-I", "-S", str(TOOL_SCRIPT), str(ledger), token]
        command = shlex.join([*tool, f"{load.cpu_seconds:g}"])
        return ScriptedCall(id=token, name=SHELL_TOOL, arguments={"command": command})

    turns = [
        ScriptedTurn(tool_calls=[call(b, c) for c in range(load.calls)])
        for b in range(load.batches)
    ]
    return ModelScript(turns=[*turns, ScriptedTurn(text="the heavy jobs are done")])


@dataclass
class FleetPrompt:
    """What one prompt did, as its client saw it."""

    stop_reason: str | None
    settled: dict[str, str]
    latency_seconds: float
    # The calls that settled as lost with their worker ("may have run", not run again).
    lost_with_worker: frozenset[str] = frozenset()


async def run_fleet_prompt(client: Client, script: ModelScript) -> FleetPrompt:
    """One prompt in a new session; its latency runs from its submission to its end."""
    waiting_for("its session to be created (POST /v1/sessions)")
    body = {"approval_mode": "yolo", "model_script": script.model_dump(mode="json")}
    response = await client.request("POST", "/v1/sessions", json=body)
    assert response.status_code == 201, response.text
    session_id = str(response.json()["session_id"])
    started = time.monotonic()
    prompt_id = await client.submit(session_id, PROMPT_TEXT)
    events, _ = await client.events(prompt_id)
    latency = time.monotonic() - started
    result = await client.result(prompt_id)
    settled = {str(e[3]): str(e[4]) for e in events if e[2] == "tool_call_settled"}
    lost = frozenset(lost_with_worker(result.get("messages", [])))
    return FleetPrompt(result.get("stop_reason"), settled, latency, lost)


@dataclass
class PhaseFigures:
    """One phase at one eager setting."""

    eager: int
    phase: str
    rounds: int = 1
    prompts: int = 0
    finished: int = 0
    calls: int = 0
    # By worker slot: the calls whose (first) run each worker started.
    calls_per_worker: list[int] = field(default_factory=lambda: [0] * FLEET_WORKERS)
    batches: int = 0
    batches_spread: int = 0
    mean_workers_per_batch: float = 0.0
    worker_kills: int = 0
    calls_cut_off: int = 0
    prompts_hit_by_the_kill: int = 0
    settled_as_errors: int = 0
    # Calls a kill cut off that settled as "may have run" instead of running again (at most
    # once), and of them the ones whose command had not started yet.
    calls_lost_with_worker: int = 0
    lost_before_their_command: int = 0
    # Calls that settled as an error no kill explains.
    errors_without_a_kill: list[str] = field(default_factory=list)
    unsafe_reruns: list[str] = field(default_factory=list)
    # A run cut short with no kill (its activity timed out or was cancelled) and run again.
    reruns_without_a_kill: list[str] = field(default_factory=list)
    double_executions: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def busiest_worker_share(self) -> float:
        """The calls the busiest worker ran over an even share of them (1.0: even)."""
        total = sum(self.calls_per_worker)
        return (
            round(max(self.calls_per_worker) * len(self.calls_per_worker) / total, 2)
            if total
            else 0.0
        )

    def latency(self, share: float) -> float:
        """The ``share`` quantile of the prompt latencies (nearest rank), seconds."""
        ordered = sorted(self.latencies)
        if not ordered:
            return 0.0
        return ordered[min(len(ordered), max(1, math.ceil(share * len(ordered)))) - 1]


@dataclass
class FleetFigures:
    load: FleetLoad
    eager: list[int]
    worker_cpus: list[int]
    seed: int
    rounds: int = 1
    phases: list[PhaseFigures] = field(default_factory=list)
    stuck: list[str] = field(default_factory=list)
    logs_kept: str | None = None
    log_tails: str = ""
    load_average_before: list[float] = field(default_factory=list)
    load_average_after: list[float] = field(default_factory=list)
    seconds: float = 0.0


def failed(figures: FleetFigures) -> bool:
    return bool(figures.stuck) or any(
        unexplained(p) or p.unsafe_reruns or p.finished != p.prompts for p in figures.phases
    )


def unexplained(phase: PhaseFigures) -> bool:
    """Whether ``phase`` failed in a way its kill does not explain."""
    return bool(
        phase.lost
        or phase.double_executions
        or phase.reruns_without_a_kill
        or phase.errors_without_a_kill
    )


def check_phase(
    phase: PhaseFigures,
    load: FleetLoad,
    prompts: Sequence[FleetPrompt],
    ledger: Ledger,
    worker_slots: Mapping[int, int],
    worker_kills: Collection[int],
) -> None:
    """Fill ``phase`` from its prompts' results and the ledger (its tokens only), given
    which slot each worker process filled and which were SIGKILLed."""
    prefix = f"{phase.phase}-"
    phase.prompts = len(prompts)
    for index, prompt in enumerate(prompts):
        phase.latencies.append(round(prompt.latency_seconds, 2))
        if prompt.stop_reason == FINISHED:
            phase.finished += 1
        else:
            phase.lost.append(f"prompt {index} ended {prompt.stop_reason!r}")
        for batch in range(load.batches):
            for call in range(load.calls):
                token = token_of(phase.phase, index, batch, call)
                status = prompt.settled.get(token)
                finished_runs = len(ledger.ends.get(token, []))
                if status is None:
                    phase.lost.append(f"call {token} never settled")
                elif status == "success" and not finished_runs:
                    phase.lost.append(f"call {token} settled as a success the ledger never saw")
                elif status != "success":
                    phase.settled_as_errors += 1
                    problem = lost_call_problem(
                        token, token in prompt.lost_with_worker, ledger, worker_kills
                    )
                    if problem:
                        phase.errors_without_a_kill.append(problem)
                    else:
                        phase.calls_lost_with_worker += 1
                        if token not in ledger.starts:
                            phase.lost_before_their_command += 1
    placement: dict[str, set[int]] = {}
    hit: set[str] = set()
    for token, starts in ledger.starts.items():
        if not token.startswith(prefix):
            continue
        phase.calls += 1
        slot = worker_slots.get(int(starts[0]["worker_pid"]))
        if slot is not None:
            phase.calls_per_worker[slot] += 1
        placement.setdefault(batch_of(token), set()).add(-1 if slot is None else slot)
        ended = {int(e["pid"]) for e in ledger.ends.get(token, [])}
        # A run on a worker that was SIGKILLed was started by it before its death (a worker
        # id names one process), even when the command wrote its line a moment after.
        for before in starts[:-1]:
            if int(before["worker_pid"]) in worker_kills:
                # Whether or not the command had finished, its attempt died with the worker
                # and it ran again: what at most once (activities/lost_calls.py) prevents.
                phase.unsafe_reruns.append(f"{token} ran again after its worker was SIGKILLed")
            elif int(before["pid"]) in ended:
                phase.double_executions.append(f"{token} ran again after it had finished")
            else:
                phase.reruns_without_a_kill.append(
                    f"{token} ran again after a run that did not finish, on a worker not killed"
                )
        cut_off = sum(
            int(start["worker_pid"]) in worker_kills and int(start["pid"]) not in ended
            for start in starts
        )
        phase.calls_cut_off += cut_off
        if cut_off:
            hit.add(prompt_of(token))
    phase.prompts_hit_by_the_kill = len(hit)
    phase.batches = len(placement)
    phase.batches_spread = sum(len(slots) > 1 for slots in placement.values())
    if placement:
        phase.mean_workers_per_batch = round(statistics.mean(map(len, placement.values())), 2)


def lost_call_problem(
    token: str, settled_as_lost: bool, ledger: Ledger, worker_kills: Collection[int]
) -> str | None:
    """What is wrong with call ``token`` settling as an error (``None``: nothing). The one
    error a fleet under fire may show is a call lost with its killed worker, settled as "may
    have run": its last run (if its command had started at all) on a worker SIGKILLed."""
    if not settled_as_lost:
        return f"call {token} settled as an error that is not a call lost with its worker"
    starts = ledger.starts.get(token, [])
    if not worker_kills or (starts and int(starts[-1]["worker_pid"]) not in worker_kills):
        return f"call {token} settled as lost with its worker, but no kill cut it off"
    return None


def read_ledger(path: Path, worker_ids: Mapping[str, int]) -> Ledger:
    """The side-effect ledger, each entry with the pid of the worker it names
    (``worker_pid``; 0 for a worker this stack did not start)."""
    ledger = Ledger.read(path)
    for entries in (*ledger.starts.values(), *ledger.ends.values()):
        for entry in entries:
            entry["worker_pid"] = worker_ids.get(str(entry.get("worker")), 0)
    return ledger


async def kill_mid_batch(
    stack: ChaosStack,
    ledger_path: Path,
    *,
    prefix: str,
    at_call: int,
    done: Callable[[], bool],
    wait: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> int:
    """SIGKILL the worker running call number ``at_call`` (in the order calls with tokens
    starting with ``prefix`` started) while that call is in flight, or the worker of the
    next call still in flight; start it again :data:`RESTART_SECONDS` later. The kills made
    (0 when every call had finished or the phase was ``done()`` first)."""
    while not done():
        ledger = read_ledger(ledger_path, stack.worker_ids)
        started = [t for t in ledger.order if t.startswith(prefix)]
        for token in started[at_call:]:
            start = ledger.starts[token][-1]
            if any(e["pid"] == start["pid"] for e in ledger.ends.get(token, [])):
                continue
            slot = stack.worker_slots.get(int(start["worker_pid"]))
            worker = None if slot is None else stack.workers[slot]
            if slot is None or worker is None or worker.pid != int(start["worker_pid"]):
                continue
            stack.kill_worker(slot)
            await wait(RESTART_SECONDS)
            stack.start_worker(slot)
            return 1
        await wait(POLL_SECONDS)
    return 0


async def run_setting(
    eager: int,
    load: FleetLoad,
    *,
    data: Path,
    rng: random.Random,
    phases: Sequence[str],
    worker_cpus: Sequence[int],
    prompt_deadline: float,
) -> list[PhaseFigures]:
    """Both phases at one eager setting on a fresh stack; raises :class:`PromptStuck`."""
    # Beside the stack's logs, so a failed run keeps it with them.
    ledger_path = data / "logs" / "fleet-ledger.jsonl"
    stack = ChaosStack(
        data,
        None,
        FLEET_WORKERS,
        settings={
            "SEAWALL_EAGER_CALLS_PER_WORKFLOW_TASK": str(eager),
            # The tool names its worker by the id the worker was started with.
            "SEAWALL_SANDBOX_ENV_PASSTHROUGH": WORKER_ID_VARIABLE,
        },
        worker_cpus=worker_cpus,
    )
    results: list[PhaseFigures] = []
    stack.start()
    try:
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{stack.gateway_port}", timeout=60
        ) as http:
            client = Client(http)
            await within_deadline("the stack's start", wait_ready(client), STACK_START_SECONDS)
            for name in phases:
                figures = PhaseFigures(eager=eager, phase=name)
                runs = [
                    (
                        f"eager {eager}, {name} phase, prompt {i}",
                        run_fleet_prompt(client, fleet_script(name, i, load, ledger_path)),
                    )
                    for i in range(load.prompts)
                ]
                done = asyncio.Event()
                # Mid-run: a quarter to half of the calls have started, so batches are in
                # flight on every worker.
                at_call = rng.randrange(load.total_calls // 4, max(load.total_calls // 2, 1))
                killer = (
                    asyncio.create_task(
                        kill_mid_batch(
                            stack, ledger_path, prefix=f"{name}-", at_call=at_call, done=done.is_set
                        )
                    )
                    if name == "fire"
                    else None
                )
                started = time.monotonic()
                try:
                    prompts = await run_all(runs, limit=load.concurrent, deadline=prompt_deadline)
                finally:
                    done.set()
                    figures.worker_kills = await killer if killer is not None else 0
                figures.seconds = round(time.monotonic() - started, 1)
                ledger = read_ledger(ledger_path, stack.worker_ids)
                check_phase(figures, load, prompts, ledger, stack.worker_slots, stack.worker_kills)
                results.append(figures)
    finally:
        stack.stop()
    return results


async def fleet(
    *,
    load: FleetLoad,
    eager: Sequence[int] = DEFAULT_EAGER,
    rounds: int = 1,
    seed: int = 7,
    data: Path,
    phases: Sequence[str] = PHASES,
    pin: bool = True,
    prompt_deadline: float = DEFAULT_PROMPT_DEADLINE_SECONDS,
    keep_logs_in: Path = DEFAULT_KEPT_LOGS,
) -> FleetFigures:
    """Run the variant at each ``eager`` setting in turn, ``rounds`` times (every other
    round in reverse order, so a change in the machine's load falls on every setting; each
    setting of a round is killed at the same call number). A failed setting's stack logs
    are kept under ``keep_logs_in``."""
    started = time.monotonic()
    cpus = sorted(os.sched_getaffinity(0)) if pin else []
    figures = FleetFigures(
        load=load,
        eager=list(eager),
        rounds=rounds,
        worker_cpus=[cpus[i % len(cpus)] for i in range(FLEET_WORKERS)] if cpus else [],
        seed=seed,
        load_average_before=[round(x, 2) for x in os.getloadavg()],
    )
    for number in range(rounds):
        order = list(eager) if number % 2 == 0 else list(reversed(eager))
        for value in order:
            where = data / f"round-{number}-eager-{value}"
            label = f"fleet-round{number}-eager{value}"
            try:
                phase_figures = await run_setting(
                    value,
                    load,
                    data=where,
                    rng=random.Random(f"{seed}-{number}"),
                    phases=phases,
                    worker_cpus=figures.worker_cpus,
                    prompt_deadline=prompt_deadline,
                )
            except PromptStuck as stuck:
                figures.stuck.append(str(stuck))
                figures.logs_kept = str(keep_logs(where / "logs", keep_logs_in, label))
                figures.log_tails = log_tails(where / "logs")
                break
            except BaseException as err:
                kept = keep_logs(where / "logs", keep_logs_in, f"{label}-error")
                err.add_note(f"the fleet stack's logs are kept in {kept}")
                raise
            figures.phases.extend(phase_figures)
            # Kept when something failed that a kill does not explain.
            if any(unexplained(p) for p in phase_figures) and not figures.logs_kept:
                figures.logs_kept = str(keep_logs(where / "logs", keep_logs_in, label))
        if figures.stuck:
            break
    figures.load_average_after = [round(x, 2) for x in os.getloadavg()]
    figures.seconds = round(time.monotonic() - started, 1)
    return figures


def combined(phases: Sequence[PhaseFigures]) -> PhaseFigures:
    """The rounds of one phase at one setting as one: counts added, latencies pooled."""
    first = phases[0]
    total = PhaseFigures(eager=first.eager, phase=first.phase, rounds=0)
    spread = 0.0
    for one in phases:
        total.rounds += one.rounds
        for name in (
            "prompts",
            "finished",
            "calls",
            "batches",
            "batches_spread",
            "worker_kills",
            "calls_cut_off",
            "prompts_hit_by_the_kill",
            "settled_as_errors",
            "calls_lost_with_worker",
            "lost_before_their_command",
        ):
            setattr(total, name, getattr(total, name) + getattr(one, name))
        pairs = zip(total.calls_per_worker, one.calls_per_worker, strict=True)
        total.calls_per_worker = [a + b for a, b in pairs]
        total.unsafe_reruns += one.unsafe_reruns
        total.errors_without_a_kill += one.errors_without_a_kill
        total.reruns_without_a_kill += one.reruns_without_a_kill
        total.double_executions += one.double_executions
        total.lost += one.lost
        total.latencies += one.latencies
        total.seconds += one.seconds
        spread += one.mean_workers_per_batch * one.batches
    if total.batches:
        total.mean_workers_per_batch = round(spread / total.batches, 2)
    return total


def _row(label: str, values: Sequence[object]) -> str:
    return "| " + " | ".join([label, *map(str, values)]) + " |"


def report(figures: FleetFigures) -> str:
    """The figures side by side, one column per eager setting, and the verdict."""
    load = figures.load
    pinned = (
        "worker i pinned to CPU " + ", ".join(map(str, figures.worker_cpus))
        if figures.worker_cpus
        else "workers not pinned"
    )
    lines = [
        f"Fleet chaos: {FLEET_WORKERS} workers ({pinned}); per phase {load.prompts} prompts, "
        f"{load.concurrent} at a time, each {load.batches} batches of {load.calls} shell calls "
        f"of {load.cpu_seconds:g} s CPU; {figures.rounds} round(s); seed {figures.seed}; "
        "load average "
        f"{figures.load_average_before} before, {figures.load_average_after} after; "
        f"{figures.seconds} s in all",
        "",
    ]
    runs: dict[tuple[str, int], list[PhaseFigures]] = {}
    for phase in figures.phases:
        runs.setdefault((phase.phase, phase.eager), []).append(phase)
    for name in dict.fromkeys(phase.phase for phase in figures.phases):
        columns = [combined(runs[name, v]) for v in figures.eager if (name, v) in runs]
        rows: list[tuple[str, list[object]]] = [
            ("prompts finished", [f"{p.finished}/{p.prompts}" for p in columns]),
            (
                "prompt latency p50 / p95 / max, s",
                [
                    f"{p.latency(0.5):.1f} / {p.latency(0.95):.1f} / {p.latency(1):.1f}"
                    for p in columns
                ],
            ),
            (
                "phase wall time, s (a round's mean)",
                [round(p.seconds / p.rounds, 1) for p in columns],
            ),
            ("calls run, by worker", [" / ".join(map(str, p.calls_per_worker)) for p in columns]),
            (
                "busiest worker's calls over an even share",
                [f"{p.busiest_worker_share:.2f}" for p in columns],
            ),
            (
                "batches spread over more than one worker",
                [f"{p.batches_spread}/{p.batches}" for p in columns],
            ),
            ("workers per batch, mean", [p.mean_workers_per_batch for p in columns]),
        ]
        if name == "fire":
            rows += [
                ("workers SIGKILLed mid-batch", [p.worker_kills for p in columns]),
                ("calls cut off by the kill", [p.calls_cut_off for p in columns]),
                ("prompts with a call cut off", [p.prompts_hit_by_the_kill for p in columns]),
                ("calls settled as errors", [p.settled_as_errors for p in columns]),
                (
                    "of them lost with their worker ('may have run', not run again)",
                    [p.calls_lost_with_worker for p in columns],
                ),
                (
                    "of those, before their command started",
                    [p.lost_before_their_command for p in columns],
                ),
            ]
        rows += [
            ("unsafe re-runs (target 0)", [len(p.unsafe_reruns) for p in columns]),
            (
                "errors a kill does not explain (target 0)",
                [len(p.errors_without_a_kill) for p in columns],
            ),
            (
                "calls run again with no kill (target 0)",
                [len(p.reruns_without_a_kill) for p in columns],
            ),
            (
                "calls run twice after finishing (target 0)",
                [len(p.double_executions) for p in columns],
            ),
            ("prompts or calls lost (target 0)", [len(p.lost) for p in columns]),
        ]
        lines += [
            _row(f"{name} phase", [f"eager {p.eager}" for p in columns]),
            _row("---", ["---"] * len(columns)),
            *(_row(label, values) for label, values in rows),
            "",
        ]
    for phase in figures.phases:
        where = f"eager {phase.eager}, {phase.phase}"
        lines += [f"  UNSAFE {where}: {m}" for m in phase.unsafe_reruns]
        lines += [f"  AGAIN {where}: {m}" for m in phase.reruns_without_a_kill]
        lines += [f"  ERROR {where}: {m}" for m in phase.errors_without_a_kill]
        lines += [f"  TWICE {where}: {m}" for m in phase.double_executions]
        lines += [f"  LOST {where}: {m}" for m in phase.lost]
    lines += [f"  STUCK {m}" for m in figures.stuck]
    lines.append(f"Verdict: {'FAILED' if failed(figures) else 'passed'}")
    if figures.logs_kept:
        lines.append(f"  the stack's logs are kept in {figures.logs_kept}")
    if figures.log_tails:
        lines += ["", figures.log_tails]
    return "\n".join(lines)


def _eager_values(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of integers"
        ) from None
    if not values or any(v < 0 or v > 1000 for v in values):
        raise argparse.ArgumentTypeError("each eager setting is 0 to 1000")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = FleetLoad()
    parser.add_argument(
        "--eager",
        type=_eager_values,
        default=list(DEFAULT_EAGER),
        help="eager_calls_per_workflow_task settings, side by side (default "
        f"{','.join(map(str, DEFAULT_EAGER))})",
    )
    parser.add_argument("--prompts", type=int, default=defaults.prompts)
    parser.add_argument("--concurrent", type=int, default=defaults.concurrent)
    parser.add_argument("--batches", type=int, default=defaults.batches)
    parser.add_argument("--calls", type=int, default=defaults.calls, help="calls per batch")
    parser.add_argument("--cpu-seconds", type=float, default=defaults.cpu_seconds)
    parser.add_argument(
        "--no-pin", dest="pin", action="store_false", help="do not pin each worker to a CPU"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="runs of every setting, interleaved (default 1)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--prompt-deadline", type=float, default=DEFAULT_PROMPT_DEADLINE_SECONDS)
    parser.add_argument("--keep-logs", type=Path, default=DEFAULT_KEPT_LOGS)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    counts = ("prompts", "concurrent", "batches", "calls", "rounds")
    for name in counts:
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if not args.cpu_seconds > 0:
        parser.error("--cpu-seconds must be more than 0")
    load = FleetLoad(
        prompts=args.prompts,
        batches=args.batches,
        calls=args.calls,
        cpu_seconds=args.cpu_seconds,
        concurrent=args.concurrent,
    )
    with tempfile.TemporaryDirectory(prefix="seawall-fleet-") as tmp:
        figures = asyncio.run(
            fleet(
                load=load,
                eager=args.eager,
                rounds=args.rounds,
                seed=args.seed,
                data=Path(tmp),
                pin=args.pin,
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
