"""The ``seawall`` command.

``seawall run SCENARIO.yaml [--mode M] [--json]`` runs a scripted scenario through the real
prompt workflow: against the ``temporal_address`` setting when the operator set one
(``TEMPORAL_ADDRESS`` or the user config file), otherwise on an embedded dev server it starts
and stops itself. An in-process worker serves the run unless ``--external-worker`` says a
worker is already polling the task queue.

Every subcommand but ``config`` checks the settings first (docs/settings.md): a bad one is
one line on stderr and exit code 2.
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

from seawall.cli.prompt import add_prompt_arguments, main_prompt
from seawall.runtime.logs import configure_logging
from seawall.runtime.settings import (
    LOG_FORMATS,
    EffectiveSettings,
    render_table,
    settings_or_exit,
)
from seawall.scenario.format import ScenarioError, load_scenario
from workflows.guard import GuardMode, parse_guard_mode
from workflows.prompt_io import PromptResult

EXIT_USAGE = 2


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
    parser = _Parser(prog="seawall", description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = commands.add_parser("run", help="run a scenario file through the prompt workflow")
    run.add_argument("scenario", help="path to a scenario YAML file")
    run.add_argument("--mode", type=_guard_mode, help="override the scenario's guard mode")
    run.add_argument("--json", action="store_true", help="print one JSON object on stdout")
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
        "--log-format", choices=list(LOG_FORMATS), help="default: the log_format setting"
    )
    prompt = commands.add_parser(
        "prompt",
        help="send a prompt through the gateway and stream its updates",
        description="Send a prompt through a running gateway (see `make run`) and print "
        "its agent updates as they happen.",
    )
    add_prompt_arguments(prompt)
    config = commands.add_parser(
        "config",
        help="print the effective operator settings and where each came from",
        description="Print the effective operator settings (environment, then the user "
        "config file, then defaults) and the source of each. Secrets print as set/unset.",
    )
    config.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    commands.add_parser(
        "up",
        help="run the whole stack on the embedded default (what `make run` does)",
        description="Start the Temporal dev server (SQLite under .data/), a worker and the "
        "gateway; print their addresses; stop them all on Ctrl-C.",
    )
    return parser


def summarize(result: PromptResult) -> str:
    counts = result.tool_calls
    lines = [
        f"workflow:   {result.workflow_id}",
        f"stop:       {result.stop_reason.value}"
        + (f" ({result.loop_type.value})" if result.loop_type else ""),
        f"guard mode: {result.guard_mode}",
        f"requests:   {result.model_requests}",
        f"tool calls: executed {counts.executed}, refused {counts.refused}, "
        f"duplicates {counts.duplicates}, skipped {counts.skipped}",
    ]
    if result.error:
        lines.append(f"error:      {result.error}")
    for entry in result.guard:
        reason = f" reason={entry.reason}" if entry.reason else ""
        lines.append(
            f"  batch {entry.batch}: {entry.decision:<10} {entry.phase_before}->"
            f"{entry.phase_after} failures={entry.failure_count} batches={entry.batch_count}"
            f" candidate={entry.candidate_ordinal}{reason}"
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


async def _run(args: argparse.Namespace, effective: EffectiveSettings) -> PromptResult:
    # Imported here so `seawall --help` and usage errors stay instant.
    from seawall.runtime.devserver import start_dev_server
    from seawall.runtime.temporal_setup import ensure_search_attributes
    from seawall.scenario.driver import run_scenario
    from worker import build_worker, connect

    scenario = load_scenario(args.scenario)
    settings = effective.settings
    namespace = settings.temporal_namespace
    async with AsyncExitStack() as stack:
        if effective.is_set("temporal_address"):
            client = await connect(settings.temporal_address, namespace)
            await ensure_search_attributes(client, namespace)
        else:
            env = await start_dev_server()
            await stack.enter_async_context(env)
            client = env.client
        task_queue = run_task_queue(args, effective)
        if not args.external_worker:
            await stack.enter_async_context(build_worker(client, task_queue))
        workspace = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="seawall-")))
        return await run_scenario(
            client, scenario, task_queue=task_queue, workspace=workspace, mode_override=args.mode
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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    effective = settings_or_exit("seawall")
    if args.command == "config":
        print(json.dumps(effective.as_json()) if args.json else render_table(effective))
        return 0
    settings = effective.settings
    if args.command == "up":
        from seawall.cli.stack import run_stack

        return run_stack(settings)
    if args.command == "prompt":
        return main_prompt(args, settings)
    # Quiet unless asked: stdout carries the result, stderr only what went wrong.
    level = settings.log_level if effective.is_set("log_level") else "WARNING"
    configure_logging(args.log_format or settings.log_format, level=level)
    if args.command == "run":
        try:
            load_scenario(args.scenario)  # fail fast, before any server starts
            with _stdout_to_stderr():
                result = asyncio.run(_run(args, effective))
        except ScenarioError as err:
            print(f"seawall: error: {err}", file=sys.stderr)
            return EXIT_USAGE
        except KeyboardInterrupt:
            return 130
        if args.json:
            print(json.dumps(result.model_dump(mode="json")))
        else:
            print(summarize(result))
        return 0
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
