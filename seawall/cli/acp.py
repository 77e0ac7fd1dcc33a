"""``seawall acp``: the Agent Client Protocol agent an editor launches (docs/acp.md, "Using
it from an editor").

Without ``--embedded`` it is a client of the Temporal server at ``temporal_address`` and of
the workers already polling ``task_queue`` (the ``make run`` stack, say). With
``--embedded`` it also starts the Temporal dev server, with its SQLite state in the data
directory (``data_dir`` when set, else a per-user directory, so sessions survive an editor
restart), and a worker in this process, as ``seawall run`` does. Either way the operator's
settings (environment and user config file) are the only policy: the embedded worker reads
them exactly as ``python worker.py`` would. The process holds none of the operator's
secrets it does not read (no gateway or codec token): the ``seawall`` program starts itself
again without them before it runs this (seawall/cli/main.py, ``keep_own_secrets``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from contextlib import AsyncExitStack
from pathlib import Path

from seawall.runtime.logs import configure_logging
from seawall.runtime.private_files import make_private_data_dir
from seawall.runtime.settings import (
    LOG_FORMATS,
    EffectiveSettings,
    redacted_names,
    user_data_dir,
)
from seawall.runtime.temporal_connect import (
    TemporalAccessRefused,
    TemporalClientConfig,
    temporal_or_exit,
)

DATABASE_FILE = "temporal.db"
# The embedded dev server's own output (its banner, its errors, the ones it logs while it
# stops) goes here, not to the editor's agent log.
SERVER_LOG_FILE = "temporal-server.log"
EXIT_UNREACHABLE = 1


class TemporalUnreachable(RuntimeError):
    """The bridge cannot serve without Temporal; the editor shows the agent's exit."""


def add_acp_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--embedded",
        action="store_true",
        help="also start the Temporal dev server (state under the data directory) and a "
        "worker in this process",
    )
    parser.add_argument(
        "--detach-on-exit",
        action="store_true",
        help="when stdin closes, leave running prompts running instead of cancelling them",
    )
    parser.add_argument(
        "--log-format",
        choices=list(LOG_FORMATS),
        help="how logs on stderr look (default: the log_format setting)",
    )


def embedded_data_dir(effective: EffectiveSettings) -> Path:
    """``data_dir`` when the operator set it, else the per-user data directory."""
    if effective.is_set("data_dir"):
        return effective.settings.data_dir.absolute()
    return user_data_dir(os.environ)


def main_acp(args: argparse.Namespace, effective: EffectiveSettings) -> int:
    # This process already keeps only the secrets it reads, the bridge's and, with
    # --embedded, its in-process worker's (seawall/cli/main.py); the embedded dev server
    # gets none (seawall/runtime/devserver.py).
    # First of all: from here on only protocol frames reach the real stdout.
    from seawall.acp.stdio import protect_stdout

    # The connection's settings are checked before the first frame, like every setting.
    temporal = None if args.embedded else temporal_or_exit("seawall", effective)
    protocol_fd = protect_stdout()
    settings = effective.settings
    configure_logging(args.log_format or settings.log_format, level=settings.log_level)
    try:
        asyncio.run(_serve(args, effective, temporal, protocol_fd))
    except KeyboardInterrupt:
        return 130
    except TemporalUnreachable as err:
        print(f"seawall: error: {err}", file=sys.stderr)
        return EXIT_UNREACHABLE
    return 0


async def _serve(
    args: argparse.Namespace,
    effective: EffectiveSettings,
    temporal: TemporalClientConfig | None,
    protocol_fd: int,
) -> None:
    from seawall.acp.agent import BridgeOptions
    from seawall.acp.server import serve
    from seawall.runtime.devserver import start_dev_server
    from seawall.runtime.grants import (
        GrantSigner,
        existing_signing_key,
        signing_key,
        verifying_keys,
    )
    from seawall.runtime.owners import local_owner_id, owner_list
    from seawall.runtime.plugin import connect
    from seawall.runtime.storage import payload_storage
    from seawall.runtime.workspace_roots import editor_worker_roots, resolved_roots
    from workflows.contracts.prompt_options import loosest_allowed

    settings = effective.settings
    data_dir = embedded_data_dir(effective) if args.embedded else None
    if data_dir is not None:
        # 0700, its files 0600 (seawall/runtime/private_files.py), before the key file is
        # made in it; no umask here: the in-process worker writes the user's own files.
        make_private_data_dir(data_dir)
    # The key the sessions' starts are signed with (docs/security-trust.md): the setting,
    # else the data directory's key file (--embedded makes it; a client of a stack reads
    # the stack's, when its data_dir is this one's).
    key = (
        signing_key(settings, data_dir=data_dir)
        if data_dir is not None
        else existing_signing_key(settings)
    )
    options = BridgeOptions(
        task_queue=settings.task_queue,
        approval_mode=settings.approval_mode,
        loosest_approval_mode=loosest_allowed(
            settings.approval_mode, settings.loosest_approval_mode
        ),
        permission_timeout_seconds=settings.permission_timeout_seconds,
        redacted_arguments=redacted_names(settings.redacted_arguments),
        allow_scripted_models=settings.allow_scripted_models,
        max_prompt_chars=settings.max_prompt_chars,
        client_tools=settings.acp_client_tools,
        owner_id=local_owner_id(settings.owner_id),
        signer=GrantSigner(key) if key else None,
        # --embedded: exactly the roots of the worker below; else what the operator allows
        # editors (the stack's workers may accept more; they refuse what they do not).
        workspace_roots=(
            editor_worker_roots(settings)
            if args.embedded
            else resolved_roots((settings.editor_workspaces,))
            if settings.editor_workspaces
            else None
        ),
    )
    async with AsyncExitStack() as stack:
        if data_dir is not None:
            # Payloads past the threshold live beside the dev server's database.
            storage = payload_storage(settings, root=data_dir / "payloads")
            env = await start_dev_server(
                database_file=str(data_dir / DATABASE_FILE),
                storage=storage,
                log_file=data_dir / SERVER_LOG_FILE,
            )
            await stack.enter_async_context(env)
            client = env.client
            # The in-process worker (and so the activity code) loads only for --embedded.
            from seawall.worker.build import WorkerTrust, build_worker

            # This worker serves the editor: it accepts the folders the operator's settings
            # allow editors (editor_workspaces, else the home directory), and the grants of
            # this data directory's key.
            trust = WorkerTrust(
                allow_scripted_models=settings.allow_scripted_models,
                workspace_roots=editor_worker_roots(settings),
                keys=verifying_keys(settings, data_dir=data_dir),
                channel_owners=owner_list(settings.channel_owners or ""),
            )
            await stack.enter_async_context(build_worker(client, settings.task_queue, trust=trust))
        else:
            assert temporal is not None  # main_acp resolved it
            try:
                # The workers' payload store, as the operator configured it for them.
                client = await connect(temporal, storage=payload_storage(settings))
            except TemporalAccessRefused as err:
                raise TemporalUnreachable(str(err)) from None
            except Exception as err:
                raise TemporalUnreachable(
                    f"cannot connect to Temporal at {temporal.target_host} "
                    f"({type(err).__name__}); start it (make run) or use --embedded"
                ) from None
        await serve(client, options, protocol_fd, detach_on_exit=args.detach_on_exit)
