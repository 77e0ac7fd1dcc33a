"""``run_shell_command``: a bash command in the workspace, bounded in time and in reach.

The command runs in the worker's sandbox (:mod:`activities.sandbox`; docs/security-sandbox.md):
under bubblewrap, the session's workspace is its only writable path, the rest of the system
is read-only, the worker's data, config, checkout and other workspaces do not exist, no
other process is visible, the network follows the operator's policy, rlimits bound each
process and cgroups the whole tree. A command stopped at the sandbox's memory limit or its
workspace's disk quota fails as ``out_of_memory`` / ``disk_quota_exceeded``, from the
supervisor's report on a pipe of its own (:mod:`activities.sandbox.limits`).
A sandbox that cannot start refuses the command (fail closed) unless the operator chose
``sandbox: none``.

The command's parent is a small supervisor (:mod:`activities.sandbox.supervisor`) that
leads its own process group (a new session). Whenever the call ends — finished, timed out
or cancelled — the tool stops the supervisor and SIGKILLs that group; the sandbox's pid
namespace then takes every process the command started with it (a ``setsid -f`` child
included), so a retried or cancelled prompt never leaves stray processes behind. The
supervisor also dies with the worker and takes the command along. Output is stdout and
stderr merged, keeping the tail when it is very long, since errors usually come last.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from activities.heartbeat import HEARTBEAT_INTERVAL_SECONDS
from activities.sandbox import Launch, SandboxUnavailable
from activities.sandbox.limits import read_report, stopped_by_limit
from workflows.contracts import ToolErrorType

from .base import BuiltinTool, ToolArgs, ToolContext, ToolFailure, expect_args
from .workspace import display_path, resolve_in_workspace

MAX_OUTPUT_BYTES = 256 * 1024
SETTLE_SECONDS = 2.0
# bubblewrap reports a command killed by signal N as exit code 128 + N.
SIGNAL_EXIT_BASE = 128


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


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _exit_text(code: int, confined: bool = False) -> str:
    if code < 0:
        return f"Exit code: {code} (killed by {_signal_name(-code)})"
    if confined and SIGNAL_EXIT_BASE < code < SIGNAL_EXIT_BASE + signal.NSIG:
        # The sandbox's init cannot die of its command's signal, so it reports 128 + N.
        name = _signal_name(code - SIGNAL_EXIT_BASE)
        return f"Exit code: {code} (killed by {name}, or exited with {code})"
    return f"Exit code: {code}"


async def _stop(pid: int, exited: asyncio.Future[None]) -> None:
    """Stop a supervisor that is still running: SIGTERM lets it kill its sandbox and clean
    up (cgroup, network helper); the group's SIGKILL that always follows is the backstop."""
    if exited.done():
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGTERM)
    await asyncio.wait({exited}, timeout=SETTLE_SECONDS)


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
        sandbox = ctx.sandbox
        # The supervisor's report of what stopped the sandbox: a pipe the command never sees.
        report_r, report_w = os.pipe()
        try:
            launch = sandbox.launch(
                ["/bin/bash", "-c", a.command],
                workspace=ctx.workspace_root,
                cwd=cwd,
                report_fd=report_w,
            )
        except BaseException as exc:
            os.close(report_w)
            os.close(report_r)
            if isinstance(exc, SandboxUnavailable):
                raise ToolFailure(
                    ToolErrorType.EXECUTION_DENIED, sandbox.refusal("shell commands", str(exc))
                ) from None
            raise
        try:
            finished, code, output = await _run(launch, cwd, timeout, report_w, ctx)
            report = read_report(report_r)
        finally:
            os.close(report_r)
        if not finished:
            raise ToolFailure(
                ToolErrorType.EXECUTION_TIMEOUT,
                f"Command timed out after {timeout:g} s and was killed. Make it faster, run "
                f"less at once, or raise timeout_seconds (maximum {limit:g} s).\n"
                f"Output before the timeout:\n{output}",
            )
        status = _exit_text(code, confined=sandbox.policy.confined)
        limits = sandbox.policy.limits
        stopped = stopped_by_limit(report, limits, whole=code != 0)
        if stopped is not None:
            kind, why = stopped
            if code != 0 or kind is ToolErrorType.DISK_QUOTA_EXCEEDED:
                raise ToolFailure(kind, f"{why}\nOutput:\n{output}\n{status}")
            # A process of the command was stopped, yet the command itself succeeded.
            status = f"{status}\n{why}"
        if code != 0:
            raise ToolFailure(
                ToolErrorType.SHELL_EXECUTE_ERROR,
                f"Command failed.\nOutput:\n{output}\n{status}",
            )
        return f"{output}\n{status}"


async def _run(
    launch: Launch, cwd: Path, timeout: float, report_w: int, ctx: ToolContext
) -> tuple[bool, int, str]:
    """Run the supervisor of ``launch`` until it exits or ``timeout`` expires: (finished,
    exit code, output). Its whole process group dies with the call, however it ends."""
    loop = asyncio.get_running_loop()
    try:
        transport, proto = await loop.subprocess_exec(
            lambda: _ShellProtocol(loop),
            *launch.argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=launch.env,
            pass_fds=(report_w,),
        )
    except OSError as exc:
        raise ToolFailure(
            ToolErrorType.SHELL_EXECUTE_ERROR,
            f"could not start the shell: {exc.strerror or type(exc).__name__}.",
        ) from None
    finally:
        os.close(report_w)  # the supervisor holds its own copy
    try:
        finished = await _wait(proto.exited, timeout, ctx)
    finally:
        # Runs on success, timeout and cancellation alike: the group dies with the call.
        try:
            await _stop(transport.get_pid(), proto.exited)
        finally:
            _kill_group(transport.get_pid())
        # Killing the group closes its pipes; the bound covers processes that escaped it
        # (setsid) and still hold the output pipe.
        await asyncio.wait({proto.closed}, timeout=SETTLE_SECONDS)
        transport.close()
    code = transport.get_returncode()
    return finished, code if code is not None else -signal.SIGKILL, proto.tail.text()


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
