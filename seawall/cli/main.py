"""The ``seawall`` command line: its parser (the help a user reads) and the ``run`` and
``config`` apps (``prompt`` and ``up`` live beside this module).

``seawall run SCENARIO.yaml [--mode M] [--json]`` runs a scripted scenario through the real
prompt workflow: against the Temporal server the operator configured (``TEMPORAL_ADDRESS``,
the user config file or a Temporal profile; seawall/runtime/temporal_connect.py), otherwise
on an embedded dev server it starts and stops itself. An in-process worker serves the run
unless ``--external-worker`` says a worker is already polling the task queue. It exits as
``seawall prompt`` does for the same stop (3 for a loop stop; docs/running.md).

Every subcommand but ``config`` checks the settings first (docs/settings.md): a bad one is
one line on stderr and exit code 2; ``config`` shows them all, each bad one marked. Each
command reads only its own settings (:func:`readers_of`), and ``run``, ``acp`` and ``up``,
which run Seawall code (a worker, the bridge, a supervisor) for their whole life, first start
themselves again without the secrets they do not read (:func:`keep_own_secrets`;
seawall/runtime/child_env.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import NoReturn

from seawall.cli.acp import add_acp_arguments, main_acp
from seawall.cli.prompt import (
    add_answer_arguments,
    add_prompt_arguments,
    exit_code,
    main_answer,
    main_prompt,
)
from seawall.cli.storage import add_storage_parser, main_storage
from seawall.rollout.cli import add_rollout_command, main_rollout
from seawall.runtime.cgroups import sandbox_limits_line
from seawall.runtime.child_env import exec_keeping, exec_without_withheld, stack_environment
from seawall.runtime.logs import configure_logging
from seawall.runtime.process_exit import run_then_exit
from seawall.runtime.settings import (
    ACP,
    EXIT_BAD_SETTINGS,
    GATEWAY,
    LOG_FORMATS,
    PROMPT,
    ROLLOUT,
    RUN,
    STORAGE,
    UP,
    WORKER,
    EffectiveSettings,
    SettingsError,
    config_json,
    inspect_settings,
    render_table,
    settings_or_exit,
)
from seawall.runtime.temporal_connect import (
    TemporalClientConfig,
    auth_summary,
    temporal_access_json,
    temporal_or_exit,
)
from seawall.scenario.format import ScenarioError, load_scenario
from workflows.contracts.prompt import PromptResult
from workflows.seed.guard import GuardMode, parse_guard_mode

EXIT_USAGE = 2

DESCRIPTION = """\
Seawall runs AI-agent prompts as durable Temporal workflows and stops the loops
that waste rounds and tokens, above all a model that keeps calling a tool that
keeps failing for the same reason."""
EPILOG = """\
examples:
  seawall up                        start Temporal, a worker and the gateway (make run)
  seawall prompt "hello"            send a prompt through the gateway and follow it
  seawall run scenarios/read-missing-file-loop.yaml --json
                                    run a scripted scenario, print its result as JSON
  seawall config                    show every setting and where its value came from
  seawall acp --embedded            serve an editor (Zed) over the Agent Client Protocol

Run `seawall COMMAND --help` for a command's options. Documentation: README.md and
docs/ (architecture.md, settings.md).
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"seawall: error: {message}\n")


def _guard_mode(value: str) -> GuardMode:
    mode = parse_guard_mode(value)
    if mode is None:
        raise argparse.ArgumentTypeError(
            f"invalid mode {value!r} (choose off, shadow, warn or enforce)"
        )
    return mode


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="seawall",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(
        dest="command", required=True, parser_class=_Parser, title="commands", metavar="COMMAND"
    )
    run = commands.add_parser(
        "run",
        help="run a scripted scenario through the real prompt workflow",
        description="Run a scenario file (a scripted model, fixture tools, a workspace and "
        "events) through the real prompt workflow and print its result. Uses the Temporal "
        "server at TEMPORAL_ADDRESS when set, otherwise an embedded dev server it starts and "
        "stops; serves the run with an in-process worker unless --external-worker is given.",
    )
    run.add_argument("scenario", help="path to a scenario YAML file")
    run.add_argument(
        "--mode",
        type=_guard_mode,
        help="guard mode for this run: off, shadow, warn or enforce (overrides the scenario)",
    )
    run.add_argument(
        "--json", action="store_true", help="print the result as one JSON object on stdout"
    )
    run.add_argument(
        "--external-worker",
        action="store_true",
        help="do not start an in-process worker; one polls --task-queue already",
    )
    run.add_argument(
        "--task-queue",
        help="default: the task_queue setting when set or with --external-worker, "
        "else a fresh queue for the in-process worker",
    )
    run.add_argument(
        "--log-format",
        choices=list(LOG_FORMATS),
        help="how logs on stderr look (default: the log_format setting)",
    )
    prompt = commands.add_parser(
        "prompt",
        help="send a prompt through the gateway and follow its updates",
        description="Send a prompt through a running gateway (see `seawall up`) and print "
        "its agent updates as they happen: the model's text, each tool call and why it failed, "
        "the guard's reminders, what a protection in shadow would have done, and permission "
        "requests (asked at the terminal: y/n). Exit code 0 when the agent finished its turn, "
        "1 when the prompt ended with an error, 2 when the gateway could not be reached or "
        "refused it, 3 when a loop protection stopped it, 4 at the model-request cap, 5 when "
        "it was cancelled.",
    )
    add_prompt_arguments(prompt)
    answer = commands.add_parser(
        "answer",
        help="answer a prompt's permission request",
        description="Approve (yes) or reject (no) a tool call that waits for permission, "
        "as `seawall prompt` shows when it has no terminal to ask at.",
    )
    add_answer_arguments(answer)
    config = commands.add_parser(
        "config",
        help="show every setting, its effective value and its source",
        description="Print every operator setting with its effective value and where it "
        "came from (the environment, then the user config file, then the default). Secrets "
        "print as set/unset. See docs/settings.md.",
    )
    config.add_argument(
        "--json", action="store_true", help="print the settings as one JSON object on stdout"
    )
    acp = commands.add_parser(
        "acp",
        help="serve an editor over the Agent Client Protocol (stdio JSON-RPC)",
        description="Run Seawall as an Agent Client Protocol agent on stdin/stdout, for "
        "editors such as Zed: each editor session is a Seawall session, each turn a prompt "
        "workflow. Uses the Temporal server at TEMPORAL_ADDRESS and its running workers, or "
        "with --embedded its own dev server (state under the data directory) and worker. "
        "stdout carries only JSON-RPC; logs go to stderr.",
    )
    add_acp_arguments(acp)
    add_rollout_command(commands)
    commands.add_parser(
        "up",
        help="run the whole stack locally (what `make run` does)",
        description="Start the Temporal dev server with its UI (state in a SQLite file "
        "under .data/), a worker and the gateway; print their addresses; stop them all, "
        "gateway first, on Ctrl-C.",
    )
    add_storage_parser(commands)
    return parser


def _tokens(count: int | None) -> str:
    """A token count, or ``unknown`` when the endpoint reported none (never 0)."""
    return "unknown" if count is None else str(count)


def summarize(result: PromptResult) -> str:
    counts = result.tool_calls
    lines = [
        f"workflow:   {result.workflow_id}",
        f"stop:       {result.stop_reason.value}"
        + (f" ({result.loop_type.value})" if result.loop_type else ""),
        f"guard mode: {result.guard_mode}",
        f"profile:    {result.loop_profile}",
        f"requests:   {result.model_requests}",
        f"tokens:     {_tokens(result.input_tokens)} in, {_tokens(result.output_tokens)} out",
        f"tool calls: executed {counts.executed}, refused {counts.refused}, "
        f"duplicates {counts.duplicates}, skipped {counts.skipped}",
    ]
    if result.error:
        reason = f"({result.error_reason.value}) " if result.error_reason else ""
        lines.append(f"error:      {reason}{result.error}")
    for entry in result.guard:
        reason = f" reason={entry.reason}" if entry.reason else ""
        lines.append(
            f"  batch {entry.batch}: {entry.decision:<10} {entry.phase_before}->"
            f"{entry.phase_after} failures={entry.failure_count} batches={entry.batch_count}"
            f" candidate={entry.candidate_ordinal}{reason}"
        )
    # The recommended profile's rules (and the progress judge): what reminded or stopped.
    for rule in result.rules:
        lines.append(
            f"  batch {rule.batch}: {rule.rule} {rule.decision} (count {rule.count}, {rule.mode})"
        )
    return "\n".join(lines)


def run_task_queue(args: argparse.Namespace, effective: EffectiveSettings) -> str:
    """``--task-queue``, else the ``task_queue`` setting when the operator set it or an
    external worker serves the run, else a fresh queue only the in-process worker polls."""
    if args.task_queue:
        return str(args.task_queue)
    if args.external_worker or effective.is_set("task_queue"):
        return effective.settings.task_queue
    return f"seawall-run-{uuid.uuid4().hex[:8]}"


async def _run(
    args: argparse.Namespace, effective: EffectiveSettings, temporal: TemporalClientConfig
) -> PromptResult:
    # Imported here so `seawall --help` and usage errors stay instant.
    from seawall.runtime.devserver import start_dev_server
    from seawall.runtime.grants import GrantSigner, new_signing_key, signing_client, signing_key
    from seawall.runtime.plugin import connect
    from seawall.runtime.storage import payload_storage
    from seawall.runtime.temporal_setup import ensure_search_attributes
    from seawall.scenario.driver import run_scenario

    scenario = load_scenario(args.scenario)
    settings = effective.settings
    async with AsyncExitStack() as stack:
        if temporal.address_configured:
            storage = payload_storage(settings)
            client = await connect(temporal, storage=storage)
            await ensure_search_attributes(client, temporal.namespace)
        else:
            # An embedded server lives for this run only; so do its stored payloads, unless
            # the operator chose where they go.
            root = None
            if not effective.is_set("payload_storage_dir"):
                payloads = tempfile.TemporaryDirectory(prefix="seawall-payloads-")
                root = Path(stack.enter_context(payloads))
            env = await start_dev_server(storage=payload_storage(settings, root=root))
            await stack.enter_async_context(env)
            client = env.client
        task_queue = run_task_queue(args, effective)
        if args.external_worker:
            # The operator's workers check the run against their own settings
            # (docs/security-trust.md): it signs with their key, in their workspaces.
            key = signing_key(settings)
            settings.workspaces_dir.mkdir(parents=True, exist_ok=True)
            base = tempfile.TemporaryDirectory(prefix="run-", dir=settings.workspaces_dir)
            workspace = Path(stack.enter_context(base)) / "workspace"
        else:
            # The in-process worker (and so the activity code) loads only for this run. It
            # serves this run alone: its scripted model, in its own workspace, signed with a
            # key made for it.
            from seawall.runtime.owners import ANY_OWNER
            from seawall.worker.build import WorkerTrust, build_worker

            key = new_signing_key()
            base_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="seawall-")))
            workspace = base_dir / "workspace"
            trust = WorkerTrust(
                allow_scripted_models=True,
                workspace_roots=(base_dir,),
                keys=(key,),
                # The scenario's own route or channel: the operator's run decides.
                channel_owners=(ANY_OWNER,),
            )
            await stack.enter_async_context(build_worker(client, task_queue, trust=trust))
        workspace.mkdir()
        return await run_scenario(
            signing_client(client, GrantSigner(key)),
            scenario,
            task_queue=task_queue,
            workspace=workspace,
            mode_override=args.mode,
        )


@contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Point file descriptor 1 at stderr while servers and workers run: the dev server
    (a child process) prints its banner there, and stdout must carry only the result."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def readers_of(args: argparse.Namespace) -> tuple[str | tuple[str, ...] | None, tuple[str, ...]]:
    """Whose settings a command reads (``read_by``), and whose it also reads, their secrets
    aside (docs/settings.md, "Each process reads its own settings"). ``config`` reads them
    all; ``run`` and ``acp --embedded`` are also a worker; ``up`` refuses a value its worker
    or gateway would refuse, and says what they run (they check their secrets themselves)."""
    command = str(args.command)
    if command == "config":
        return None, ()
    if command == "up":
        return UP, (WORKER, GATEWAY)
    if command == "run":
        return (RUN if args.external_worker else (RUN, WORKER)), ()
    if command == "acp":
        return ((ACP, WORKER) if args.embedded else ACP), ()
    return {"prompt": PROMPT, "answer": PROMPT, "rollout": ROLLOUT, "storage": STORAGE}[command], ()


def keep_own_secrets(argv: Sequence[str]) -> None:
    """Start this program again without the secrets its command does not read, when it runs
    Seawall code for its whole life (seawall/runtime/child_env.py): ``run`` and ``acp``
    keep their roles' secrets; ``up`` what its worker and gateway get. The console script
    does this before :func:`main`; a test calling :func:`main` stays in its own process."""
    args = build_parser().parse_args(argv)
    if args.command == "up":
        exec_keeping(stack_environment(os.environ))
    elif args.command in ("run", "acp"):
        reader, _ = readers_of(args)
        exec_without_withheld(*((reader,) if isinstance(reader, str) else reader or ()))


def main_config(args: argparse.Namespace) -> int:
    """``seawall config``: every setting, an invalid one marked ``invalid`` in its row and
    named on stderr as a start would name it; exit code 2 when any value is invalid (also
    the guard mode the seed profile runs as shadow), and for a config file that does not
    parse (then only that line)."""
    try:
        effective = inspect_settings()
    except SettingsError as err:
        print(f"seawall: error: {err}", file=sys.stderr)
        return EXIT_BAD_SETTINGS
    if args.json:
        print(json.dumps({**config_json(effective), **temporal_access_json(effective)}))
    else:
        print(render_table(effective))
        print(auth_summary(effective))
        print(
            sandbox_limits_line(
                effective.settings.sandbox, effective.settings.sandbox_owner_disk_mb
            )
        )
    if effective.problems:
        print(f"seawall: error: {'; '.join(effective.problems)}", file=sys.stderr)
    return EXIT_BAD_SETTINGS if effective.invalid else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "config":
        return main_config(args)
    reader, also = readers_of(args)
    effective = settings_or_exit("seawall", reader=reader, also=also)
    settings = effective.settings
    if args.command == "up":
        from seawall.cli.stack import run_stack

        return run_stack(effective)
    if args.command == "prompt":
        return main_prompt(args, settings)
    if args.command == "answer":
        return main_answer(args, settings)
    if args.command == "acp":
        return main_acp(args, effective)
    if args.command == "rollout":
        return main_rollout(args, temporal_or_exit("seawall", effective))
    if args.command == "storage":
        return main_storage(args, settings, temporal_or_exit("seawall", effective))
    # Quiet unless asked: stdout carries the result, stderr only what went wrong.
    level = settings.log_level if effective.is_set("log_level") else "WARNING"
    configure_logging(args.log_format or settings.log_format, level=level)
    if args.command == "run":
        try:
            load_scenario(args.scenario)  # fail fast, before any server starts
            temporal = temporal_or_exit("seawall", effective)
            with _stdout_to_stderr():
                result = asyncio.run(_run(args, effective, temporal))
        except ScenarioError as err:
            print(f"seawall: error: {err}", file=sys.stderr)
            return EXIT_USAGE
        except KeyboardInterrupt:
            return 130
        if args.json:
            print(json.dumps(result.model_dump(mode="json")))
        else:
            print(summarize(result))
        return exit_code(result.stop_reason.value)
    return EXIT_USAGE


def entry() -> NoReturn:
    """The ``seawall`` console script: :func:`main`, then an exit that skips interpreter
    finalization, which the Temporal SDK's core threads can crash after ``seawall run`` shut
    its embedded server down (seawall/runtime/process_exit.py), on every way out (an
    exception or Ctrl-C included), after :func:`keep_own_secrets`. Tests call :func:`main`."""
    keep_own_secrets(sys.argv[1:])
    run_then_exit(main)


if __name__ == "__main__":
    entry()
