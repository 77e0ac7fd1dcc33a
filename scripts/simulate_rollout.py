"""A simulated rollout of the repeated tool failure guard, end to end (issue 14).

Many owners submit prompts drawn from the scenario corpus (``bench/corpus``: scripted models
and fixture tools, loops and legitimate work alike) in two deployment environments, each
served by its own worker, through the real ``SessionWorkflow`` and ``PromptWorkflow`` on an
embedded Temporal dev server (nothing is simulated below the model and the tools: every
prompt is a real workflow whose cohort its session resolves through the operator-settings
activity). The operator's settings change between three phases exactly as the seed's
rollout prescribes:

1. **shadow** in both environments;
2. **warn** in ``internal`` with a concurrent shadow control cohort,
   ``SEAWALL_GUARD_ROLLOUT=warn:50%,shadow:rest`` (``--warn-percent``), ``public`` still in
   shadow;
3. **cohort split** in ``internal``: ``SEAWALL_GUARD_ROLLOUT=enforce:5%,warn:rest`` (the
   percentage is ``--enforce-percent``), ``public`` in shadow.

After each phase, ``seawall rollout report``'s own code (:mod:`seawall.rollout`) reads the
phase's window back from Temporal and reports it. The dev server's database is kept in
``--data-dir`` (``temporal.db``), and the script ends by printing, for each phase and
environment, the exact ``seawall rollout report --db …`` command (this Python's ``seawall``,
that phase's own window, the same bootstrap) that reports the same data again.

The behaviour of users is a model, stated here so nobody mistakes it for evidence: an owner
whose prompt was stopped (or ended in an error) submits the same text again, in the same
session, with probability ``--retry``; a prompt's client drops its event stream with
probability ``--disconnect``.

    .venv/bin/python scripts/simulate_rollout.py --owners 40 --prompts 30 --concurrency 6 \
        --enforce-percent 50 --data-dir rollout-sim --html report.html   # minutes

Scenarios that need a driver (scripted mid-turn events or permission answers) are left out:
a session runs its prompts unattended.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shlex
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError

from seawall.rollout.records import read_records, visibility_query
from seawall.rollout.render import render_html, render_text
from seawall.rollout.report import Report, build_report
from seawall.rollout.wording import plural
from seawall.runtime.devserver import start_dev_server
from seawall.runtime.logs import configure_logging
from seawall.scenario.driver import prepare_workspace
from seawall.scenario.format import Scenario, load_scenario
from seawall.worker.build import build_activities, build_worker, trusted_local_run
from workflows.contracts.prompt import ClientDisconnect, PromptResult, StopReason
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.scenario import ScenarioHooks
from workflows.contracts.session import PromptSubmission, SessionInput, SessionSettings
from workflows.prompt.workflow import PromptWorkflow
from workflows.session import SessionWorkflow, session_workflow_id

ROOT = Path(__file__).resolve().parent.parent

CORPUS = ROOT / "bench" / "corpus"
ENVIRONMENTS = ("internal", "public")
VERSION = "1.0.0"
SALT = "simulated-rollout"
VISIBILITY_WAIT_SECONDS = 60.0


def corpus(only: Sequence[str] = ()) -> list[Scenario]:
    """The corpus scenarios a session can run unattended (``only``: these names)."""
    found = []
    for path in sorted(CORPUS.glob("*.yaml")):
        if path.name == "labels.yaml" or (only and path.stem not in only):
            continue
        scenario = load_scenario(path)
        if scenario.events or scenario.permissions:
            continue
        found.append(scenario)
    if not found:
        raise SystemExit(f"no runnable corpus scenario among {list(only)}")
    return found


@dataclass(frozen=True)
class Phase:
    name: str
    # environment -> the worker's operator settings in this phase
    settings: dict[str, dict[str, str]]


def phases(enforce_percent: float, warn_percent: float = 50.0) -> list[Phase]:
    shadow = {"SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "shadow"}
    cohorts = {"SEAWALL_GUARD_ROLLOUT_SALT": SALT, "SEAWALL_GUARD_ROLLOUT_VERSION": VERSION}
    # Phase 2's control is concurrent: a shadow cohort beside the warn cohort.
    warn = {
        "SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "shadow",
        "SEAWALL_GUARD_ROLLOUT": f"warn:{warn_percent:g}%,shadow:rest",
        **cohorts,
    }
    split = {
        "SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "warn",
        "SEAWALL_GUARD_ROLLOUT": f"enforce:{enforce_percent:g}%,warn:rest",
        **cohorts,
        **({"SEAWALL_GUARD_ROLLOUT_ALLOW_WIDE_ENFORCE": "true"} if enforce_percent > 5 else {}),
    }
    return [
        Phase("shadow", {"internal": shadow, "public": shadow}),
        Phase("warn", {"internal": warn, "public": shadow}),
        Phase("cohort split", {"internal": split, "public": shadow}),
    ]


def worker_environ(environment: str, home: str) -> dict[str, str]:
    """A worker's settings sources: a private config home, its environment and version."""
    return {
        "HOME": home,
        "XDG_CONFIG_HOME": f"{home}/xdg",
        "SEAWALL_DEPLOYMENT_ENVIRONMENT": environment,
        "SEAWALL_SERVICE_VERSION": VERSION,
    }


@dataclass
class Counts:
    prompts: int = 0
    retries: int = 0
    disconnects: int = 0
    by_environment: dict[str, int] = field(default_factory=dict)


async def visit(
    client: Client,
    environment: str,
    queue: str,
    owner: str,
    scenario: Scenario,
    workspace_root: Path,
    rng: random.Random,
    args: argparse.Namespace,
    counts: Counts,
) -> None:
    """One owner's session running one corpus prompt (and the owner's retry, if any)."""
    session_id = uuid.uuid4().hex
    workspace = prepare_workspace(scenario, workspace_root / session_id)
    handle = await client.start_workflow(
        SessionWorkflow.run,
        SessionInput(
            session_id=session_id,
            settings=SessionSettings(
                workspace_root=str(workspace),
                approval_mode=ApprovalMode.YOLO,
                max_model_requests=scenario.max_model_requests,
                max_tool_calls_per_turn=scenario.max_tool_calls_per_turn,
                scenario=ScenarioHooks(model_script=scenario.model, fixture_tools=scenario.tools),
            ),
            owner_id=owner,
        ),
        id=session_workflow_id(session_id),
        task_queue=queue,
    )
    text = f"{scenario.prompt} ({scenario.name}, visit {session_id[:8]})"
    retry = rng.random() < args.retry
    disconnect = rng.random() < args.disconnect
    for attempt in range(2):
        submitted = await handle.execute_update(
            SessionWorkflow.submit_prompt, PromptSubmission(text=text)
        )
        counts.prompts += 1
        counts.by_environment[environment] = counts.by_environment.get(environment, 0) + 1
        prompt = client.get_workflow_handle(submitted.prompt_id, result_type=PromptResult)
        result = await _result(prompt, disconnect and attempt == 0, counts)
        stopped = result.stop_reason in (StopReason.LOOP_DETECTED, StopReason.ERROR)
        if attempt or not (stopped and retry):
            break
        counts.retries += 1
    await handle.signal(SessionWorkflow.close)
    await handle.result()


async def _result(
    prompt: WorkflowHandle[PromptWorkflow, PromptResult], disconnect: bool, counts: Counts
) -> PromptResult:
    while True:  # until the session has started the prompt
        try:
            await prompt.describe()
            break
        except RPCError:
            await asyncio.sleep(0.05)
    if disconnect:
        # What the gateway sends when a client's event stream ends before the prompt.
        with contextlib.suppress(RPCError):  # it may have finished already
            await prompt.signal(PromptWorkflow.client_disconnected, ClientDisconnect())
            counts.disconnects += 1
    return await prompt.result()


async def run_phase(
    client: Client,
    queues: dict[str, str],
    scenarios: Sequence[Scenario],
    owners: Sequence[str],
    args: argparse.Namespace,
    rng: random.Random,
    workspace_root: Path,
) -> Counts:
    counts = Counts()
    gate = asyncio.Semaphore(args.concurrency)
    plan = [
        (rng.choice(ENVIRONMENTS), rng.choice(owners), rng.choice(scenarios))
        for _ in range(args.prompts)
    ]
    seeds = [rng.random() for _ in plan]

    async def one(n: int) -> None:
        environment, owner, scenario = plan[n]
        async with gate:
            await visit(
                client,
                environment,
                queues[environment],
                owner,
                scenario,
                workspace_root,
                random.Random(seeds[n]),
                args,
                counts,
            )

    await asyncio.gather(*(one(n) for n in range(len(plan))))
    return counts


async def simulate(args: argparse.Namespace, client: Client) -> list[tuple[str, str, Report]]:
    rng = random.Random(args.seed)
    scenarios = corpus([n for n in (args.only or "").split(",") if n])
    owners = [f"owner-{n:04d}" for n in range(args.owners)]
    reports: list[tuple[str, str, Report]] = []
    # The simulation is the operator's own starts: signed, checked by its workers.
    client, trust = trusted_local_run(client)
    with tempfile.TemporaryDirectory(prefix="seawall-rollout-") as tmp:
        environs = {env: worker_environ(env, f"{tmp}/{env}") for env in ENVIRONMENTS}
        queues = {env: f"rollout-{env}-{uuid.uuid4().hex[:6]}" for env in ENVIRONMENTS}
        workers = [
            build_worker(client, queues[env], build_activities(environs[env], trust=trust))
            for env in ENVIRONMENTS
        ]
        for worker in workers:
            await worker.__aenter__()
        try:
            starts: list[datetime] = []
            for phase in phases(args.enforce_percent, args.warn_percent):
                for env in ENVIRONMENTS:
                    # The operator changes the workers' settings; sessions read them at start.
                    base = worker_environ(env, f"{tmp}/{env}")
                    environs[env].clear()
                    environs[env].update({**base, **phase.settings[env]})
                starts.append(datetime.now(UTC))
                # Each phase is its own window: Phase 2 and 3 have concurrent controls.
                since = starts[-1]
                started = time.monotonic()
                counts = await run_phase(
                    client, queues, scenarios, owners, args, rng, Path(tmp) / "workspaces"
                )
                until = datetime.now(UTC)
                print(
                    f"phase {phase.name}: {plural(counts.prompts, 'prompt')} "
                    f"({plural(counts.retries, 'retry')}, "
                    f"{plural(counts.disconnects, 'dropped stream')}) "
                    f"in {time.monotonic() - started:.0f} s",
                    file=sys.stderr,
                )
                for env in ENVIRONMENTS:
                    expected = counts.by_environment.get(env, 0)
                    await visible(client, env, starts[-1], until, expected)
                    records = await read_records(client, env, since, until)
                    reports.append(
                        (
                            phase.name,
                            env,
                            build_report(
                                records,
                                environment=env,
                                since=since,
                                until=until,
                                resamples=args.resamples,
                                seed=args.seed,
                                min_days=args.min_days,
                            ),
                        )
                    )
        finally:
            for worker in reversed(workers):
                await worker.__aexit__(None, None, None)
    return reports


async def visible(
    client: Client, environment: str, since: datetime, until: datetime, expected: int
) -> None:
    """Until visibility (eventually consistent) lists every closed prompt of the phase."""
    query = visibility_query(environment, since, until) + " AND ExecutionStatus != 'Running'"
    deadline = time.monotonic() + VISIBILITY_WAIT_SECONDS
    while (await client.count_workflows(query)).count < expected:
        if time.monotonic() > deadline:
            raise SystemExit(f"visibility lists fewer than {expected} prompts of {environment}")
        await asyncio.sleep(0.2)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="simulate_rollout.py",
        description=textwrap.fill(
            "A simulated rollout of the repeated tool failure guard, end to end, "
            "through real sessions and prompts on an embedded Temporal dev server. Three phases "
            "run in turn (shadow; warn with a concurrent shadow control; enforce "
            "with warn as the control), each reported from Temporal after it ends; the dev "
            "server's database is kept so the printed commands report each phase again.",
            78,
        ),
        epilog="example, minutes on 2 cores (docs/rollout.md):\n  .venv/bin/python "
        "scripts/simulate_rollout.py --owners 40 --prompts 30 --concurrency 6 \\\n"
        "      --enforce-percent 50 --data-dir rollout-sim --html report.html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    who = parser.add_argument_group("owners and prompts")
    who.add_argument(
        "--owners",
        type=int,
        default=200,
        help="distinct owners (each with its own cohort); each session picks one at random "
        "(default %(default)s)",
    )
    who.add_argument(
        "--prompts",
        type=int,
        default=400,
        help="sessions per phase, each one corpus prompt (plus its owner's retry, if any), "
        "spread at random over the two environments (default %(default)s)",
    )
    who.add_argument(
        "--only",
        metavar="NAMES",
        help="comma-separated bench/corpus scenario names to draw from (default: every "
        "scenario a session can run unattended)",
    )
    who.add_argument(
        "--concurrency",
        type=int,
        default=24,
        help="sessions running at once (lower it on a small machine) (default %(default)s)",
    )
    policy = parser.add_argument_group("the operator's rollout settings (internal environment)")
    policy.add_argument(
        "--warn-percent",
        type=float,
        default=50.0,
        help="Phase 2: the warn cohort's share of owners, the rest a concurrent shadow "
        "control (SEAWALL_GUARD_ROLLOUT=warn:N%%,shadow:rest) (default %(default)s)",
    )
    policy.add_argument(
        "--enforce-percent",
        type=float,
        default=5.0,
        help="Phase 3: the enforce cohort's share of owners, the rest warn "
        "(SEAWALL_GUARD_ROLLOUT=enforce:N%%,warn:rest); above 5 sets "
        "SEAWALL_GUARD_ROLLOUT_ALLOW_WIDE_ENFORCE, and a small run needs e.g. 50 for an "
        "enforce cohort to show at all (default %(default)s)",
    )
    users = parser.add_argument_group("the users' model (stated, not evidence)")
    users.add_argument(
        "--retry",
        type=float,
        default=0.3,
        help="probability that an owner resubmits a prompt that was stopped or ended in an "
        "error (the retry of the disconnect-or-retry gate) (default %(default)s)",
    )
    users.add_argument(
        "--disconnect",
        type=float,
        default=0.02,
        help="probability that a prompt's client drops its event stream (default %(default)s)",
    )
    report = parser.add_argument_group("the reports")
    report.add_argument(
        "--resamples",
        type=int,
        default=1000,
        help="bootstrap resamples per report (default %(default)s)",
    )
    report.add_argument(
        "--seed",
        type=int,
        default=7,
        help="seed of the plan (who sends what, where) and of the bootstrap: the same seed "
        "gives the same plan (default %(default)s)",
    )
    report.add_argument(
        "--min-days",
        type=float,
        default=7.0,
        help="days of data a verdict needs before it can promote (the seed's 7, so a "
        "simulation of minutes holds; 0 lifts it for a demonstration) (default %(default)s)",
    )
    report.add_argument(
        "--html",
        type=Path,
        metavar="PATH",
        help="also write the last phase's internal report as an HTML page here",
    )
    report.add_argument(
        "--data-dir",
        type=Path,
        default=Path("rollout-simulation"),
        help="where the dev server's database (temporal.db) is kept for the printed report "
        "commands; an existing one is added to (default %(default)s)",
    )
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


DATABASE = "temporal.db"


def seawall_command() -> list[str]:
    """How to run ``seawall`` from here: the ``seawall`` script beside this Python (the
    README's ``.venv/bin/seawall``), relative to the working directory when it is below it;
    else this Python with ``-m seawall.cli.main``."""
    python = Path(sys.executable)
    script = python.with_name("seawall")
    if script.is_file():
        return [_from_here(script)]
    return [_from_here(python), "-m", "seawall.cli.main"]


def _from_here(path: Path) -> str:
    absolute = Path(os.path.abspath(path))  # not resolved: a venv's python is a symlink
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


def report_command(
    database: Path, phase: str, report: Report, args: argparse.Namespace
) -> list[str]:
    """The ``seawall rollout report`` command that reads one phase's window of the kept data
    again, with the simulation's bootstrap, so it prints the same report."""
    page = f"{report.environment}-{phase.replace(' ', '-')}.html"
    command = [
        *seawall_command(),
        "rollout",
        "report",
        "--db",
        str(database),
        "--environment",
        report.environment,
        "--since",
        report.since.isoformat(),
        "--until",
        report.until.isoformat(),
        "--resamples",
        str(args.resamples),
        "--seed",
        str(args.seed),
        "--min-days",
        f"{args.min_days:g}",
        "--html",
        page,
    ]
    return command


async def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging("console", "ERROR")  # the workers' loop_detected lines would drown it
    # On a database file, not in memory (an in-memory dev server ran out of memory after
    # about 1,500 prompts' histories), and kept: the report can be run on it again.
    args.data_dir.mkdir(parents=True, exist_ok=True)
    database = (args.data_dir / DATABASE).resolve()
    async with await start_dev_server(database_file=str(database)) as env:
        reports = await simulate(args, env.client)
    for phase, environment, report in reports:
        print(f"\n===== phase: {phase} / environment: {environment} =====")
        print(render_text(report))
    if args.html is not None:
        final = next(r for p, e, r in reversed(reports) if e == "internal")
        args.html.write_text(render_html(final), encoding="utf-8")
        print(f"\nwrote {args.html}", file=sys.stderr)
    print(f"\nThe data is kept in {database}. Report a phase again (its own window) with:")
    for phase, environment, report in reports:
        print(f"  # phase {phase}, environment {environment}")
        print(f"  {shlex.join(report_command(database, phase, report, args))}")
    return 0


if __name__ == "__main__":
    from seawall.runtime.process_exit import run_then_exit

    run_then_exit(lambda: asyncio.run(main()))
