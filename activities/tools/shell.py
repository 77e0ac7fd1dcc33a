"""``run_shell_command``: a bash command in the workspace, bounded in time and in reach.

The command runs in its own process group (a new session), and that group is killed with
SIGKILL whenever the call ends — finished, timed out or cancelled — so a retried or cancelled
prompt never leaves stray processes behind. The group's leader is a small supervisor
(``shell_supervisor.py``) that kills the group when the worker itself dies, so a SIGKILLed
worker leaves no command running beside the call's retry. Output is stdout and stderr
merged, keeping the tail when it is very long, since errors usually come last.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from activities.heartbeat import HEARTBEAT_INTERVAL_SECONDS
from workflows.outcome import ToolErrorType

from .base import BuiltinTool, ToolArgs, ToolContext, ToolFailure, expect_args
from .workspace import display_path, resolve_in_workspace

# Starts every command and kills its group if this worker dies (see its docstring).
SUPERVISOR = str(Path(__file__).with_name("shell_supervisor.py"))
MAX_OUTPUT_BYTES = 256 * 1024
SETTLE_SECONDS = 2.0


# Worker settings a model-chosen command must never see: provider keys, the gateway token,
# Temporal credentials, anything that looks like a secret.
_WITHHELD_PREFIXES = ("OPENAI_", "SEAWALL_", "TEMPORAL_", "QWEN_CODE_", "AWS_", "OTEL_")
_WITHHELD_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


def command_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The worker's environment minus its secrets and operator settings."""
    return {
        name: value
        for name, value in environ.items()
        if not name.upper().startswith(_WITHHELD_PREFIXES)
        and not any(word in name.upper() for word in _WITHHELD_WORDS)
    }


class _Tail:
    """The last ``MAX_OUTPUT_BYTES`` of the output, and how much was dropped before it."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.buffer += chunk
        excess = len(self.buffer) - MAX_OUTPUT_BYTES
        if excess > 0:
            del self.buffer[:excess]
            self.dropped += excess

    def text(self) -> str:
        body = self.buffer.decode("utf-8", errors="replace").rstrip("\n")
        if self.dropped:
            body = f"[first {self.dropped} bytes of output omitted]\n{body}"
        return body or "(no output)"


class _ShellProtocol(asyncio.SubprocessProtocol):
    """Collects output and reports the shell's exit as soon as it happens.

    ``Process.wait()`` is not used: on Python 3.11 it only returns once every pipe is closed,
    so a background job holding stdout would keep a finished command "running".
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.tail = _Tail()
        self.exited: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.tail.add(data)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def _kill_group(pgid: int) -> None:
    # Already gone (or never ours) is the outcome we want anyway.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"Exit code: {code} (killed by {name})"
    return f"Exit code: {code}"


class RunShellCommandArgs(ToolArgs):
    command: str = Field(min_length=1, description="Command line, run with /bin/bash -c.")
    directory: str = Field(
        default=".", description="Working directory, relative to the workspace root."
    )
    timeout_seconds: float | None = Field(
        default=None, gt=0, description="Time limit; capped by the configured maximum."
    )


class RunShellCommandTool(BuiltinTool):
    name: ClassVar[str] = "run_shell_command"
    description: ClassVar[str] = (
        "Run a bash command in a workspace directory with no stdin and return its combined "
        "stdout/stderr and exit code; background processes are killed when it finishes."
    )
    args_model: ClassVar[type[BaseModel]] = RunShellCommandArgs
    mutating: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        a = expect_args(args, RunShellCommandArgs)
        cwd = resolve_in_workspace(ctx.workspace_root, a.directory)
        shown = display_path(ctx.workspace_root, cwd)
        if not cwd.exists():
            raise ToolFailure(
                ToolErrorType.FILE_NOT_FOUND,
                f"directory {shown!r} does not exist; create it or pick an existing one.",
            )
        if not cwd.is_dir():
            raise ToolFailure(
                ToolErrorType.SHELL_EXECUTE_ERROR,
                f"{shown!r} is not a directory; give a directory as the working directory.",
            )
        limit = ctx.shell_timeout_seconds
        timeout = min(a.timeout_seconds, limit) if a.timeout_seconds is not None else limit
        loop = asyncio.get_running_loop()
        try:
            transport, proto = await loop.subprocess_exec(
                lambda: _ShellProtocol(loop),
                sys.executable,
                "-S",
                "-I",
                SUPERVISOR,
                str(os.getpid()),
                a.command,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=command_environment(os.environ),
            )
        except OSError as exc:
            raise ToolFailure(
                ToolErrorType.SHELL_EXECUTE_ERROR,
                f"could not start the shell: {exc.strerror or type(exc).__name__}.",
            ) from None
        try:
            finished = await _wait(proto.exited, timeout, ctx)
        finally:
            # Runs on success, timeout and cancellation alike: the group dies with the call.
            _kill_group(transport.get_pid())
            # Killing the group closes its pipes; the bound covers processes that escaped it
            # (setsid) and still hold the output pipe.
            await asyncio.wait({proto.closed}, timeout=SETTLE_SECONDS)
            transport.close()
        if not finished:
            raise ToolFailure(
                ToolErrorType.EXECUTION_TIMEOUT,
                f"Command timed out after {timeout:g} s and was killed. Make it faster, run "
                f"less at once, or raise timeout_seconds (maximum {limit:g} s).\n"
                f"Output before the timeout:\n{proto.tail.text()}",
            )
        code = transport.get_returncode()
        assert code is not None
        if code != 0:
            raise ToolFailure(
                ToolErrorType.SHELL_EXECUTE_ERROR,
                f"Command failed.\nOutput:\n{proto.tail.text()}\n{_exit_text(code)}",
            )
        return f"{proto.tail.text()}\n{_exit_text(code)}"


async def _wait(exited: asyncio.Future[None], timeout: float, ctx: ToolContext) -> bool:
    """Wait for the shell to exit, heartbeating; ``False`` when the timeout expired."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not exited.done():
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        await asyncio.wait({exited}, timeout=min(HEARTBEAT_INTERVAL_SECONDS, remaining))
        if not exited.done():
            ctx.heartbeat()
    return True
