"""A shell command dies with the worker that started it (``activities/sandbox/supervisor.py``).

A real process plays the worker: it runs ``run_shell_command`` with a command that leaves a
process in the background and then blocks. The test SIGKILLs that process — no cleanup code
of ours can run — and waits, through pidfds, for both the command and its background child
to be gone.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from activities.tools.base import ToolContext, ToolFailure
from activities.tools.shell import RunShellCommandArgs, RunShellCommandTool

ROOT = Path(__file__).resolve().parents[2]

FAKE_WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from activities.tools.base import ToolContext
    from activities.tools.shell import RunShellCommandArgs, RunShellCommandTool

    workspace = Path(sys.argv[1]).resolve()
    command = "sleep 600 & echo $! > bg.pid; echo $$ > fg.pid; echo ready > ready; sleep 600"
    args = RunShellCommandArgs(command=command)
    asyncio.run(RunShellCommandTool().run(args, ToolContext(workspace_root=workspace)))
    """
)


def wait_gone(pid: int, timeout: float = 60.0) -> bool:
    """Whether ``pid`` exits within ``timeout``: woken by the kernel, not by polling."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(fd)


def wait_until_ready(fifo: Path, timeout: float = 60.0) -> None:
    """Block until the command writes to ``fifo`` (it does so once both pids are written)."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        assert readable, "the command never said it was ready"
    finally:
        os.close(fd)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux")
def test_a_sigkilled_worker_takes_its_command_and_background_processes_with_it(
    tmp_path: Path,
) -> None:
    os.mkfifo(tmp_path / "ready")
    worker = subprocess.Popen(
        [sys.executable, "-c", FAKE_WORKER, str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_ready(tmp_path / "ready")
        foreground = int((tmp_path / "fg.pid").read_text())
        background = int((tmp_path / "bg.pid").read_text())
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=60)
        assert wait_gone(foreground), "the command outlived its worker"
        assert wait_gone(background), "the command's background process outlived its worker"
    finally:
        if worker.poll() is None:
            worker.kill()


async def test_exit_codes_and_signals_read_as_before(tmp_path: Path) -> None:
    tool = RunShellCommandTool()
    ctx = ToolContext(workspace_root=tmp_path.resolve())
    ok = await tool.run(RunShellCommandArgs(command="echo hi"), ctx)
    assert ok == "hi\nExit code: 0"
    with pytest.raises(ToolFailure) as failed:
        await tool.run(RunShellCommandArgs(command="echo no; exit 3"), ctx)
    assert failed.value.message.endswith("Exit code: 3")
    with pytest.raises(ToolFailure) as killed:
        await tool.run(RunShellCommandArgs(command="kill -SEGV $$"), ctx)
    assert "killed by SIGSEGV" in killed.value.message
