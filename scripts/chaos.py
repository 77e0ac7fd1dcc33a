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

Its parts, one job each: the stack's processes (``scripts/chaos_stack.py``), the patient
client of the gateway (``scripts/chaos_client.py``), the prompts and what each did
(``scripts/chaos_prompts.py``) and the checks against the undisturbed run
(``scripts/chaos_checks.py``); this module injects the faults, runs the two phases and
reports. ``scripts/chaos_fleet.py`` is the fleet variant: heavy shell calls on four workers.

Nothing hangs (``scripts/chaos_watch.py``): every prompt has a deadline (``--prompt-deadline``)
and one that misses it fails the run at once, naming the prompt and what its client was
waiting for; a failed run copies the stack's logs to a kept directory (``--keep-logs``,
default ``.data/chaos-logs/``) and its report ends with their last lines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import httpx

from scripts.chaos_checks import (
    MESSAGE_DELTA,
    Figures,
    check_ledger,
    compare,
    failed,
)
from scripts.chaos_client import STACK_START_SECONDS, Client, wait_ready
from scripts.chaos_mcp import (
    MCP_CALLS_PER_PROMPT,
    Ledger,
    check_mcp_ledger,
    kill_mcp_mid_call,
    kill_points,
    mcp_script,
)
from scripts.chaos_model import FAULT_KINDS, ChaosModel, marked
from scripts.chaos_prompts import (
    MCP_PROMPT,
    corpus_key,
    interleaved,
    mcp_key,
    pick_scenarios,
    run_interactive,
    run_scripted,
)
from scripts.chaos_stack import ROOT, ChaosStack
from scripts.chaos_watch import PromptStuck, keep_logs, log_tails, run_all, within_deadline

# How long one prompt may take from its start before the run fails as stuck (make chaos;
# the test passes its own): far past any healthy prompt's time, even on a loaded machine.
DEFAULT_PROMPT_DEADLINE_SECONDS = 600.0
CONCURRENT_PROMPTS = 8
DEFAULT_KEPT_LOGS = ROOT / ".data" / "chaos-logs"


# --- faults --------------------------------------------------------------------------------


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


# --- the run -------------------------------------------------------------------------------


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
