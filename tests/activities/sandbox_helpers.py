"""Helpers of the sandbox tests: the worker's real sandbox, the real shell tool, host-side
process scans and a loopback service to try to reach."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from activities.sandbox import NetworkPolicy, Sandbox, SandboxLimits, load_policy, probe
from activities.tools.base import ToolContext, ToolFailure
from activities.tools.shell import RunShellCommandArgs, RunShellCommandTool

ROOT = Path(__file__).resolve().parents[2]


def real_sandbox(
    network: NetworkPolicy = NetworkPolicy.OFF, owner_disk_index: Path | None = None, **limits: Any
) -> Sandbox:
    """The sandbox a worker with default settings (and these overrides) would run; it must
    start here (``make install`` installs bubblewrap and slirp4netns). The owners' disk index
    is the test's (``owner_disk_index``; None: no owner-wide disk quota), never the checkout's
    data directory."""
    base = load_policy({"PATH": os.environ.get("PATH", os.defpath)})
    policy = base.model_copy(
        update={
            "network": network,
            "limits": SandboxLimits(**limits),
            "owner_disk_index": str(owner_disk_index) if owner_disk_index else None,
        }
    )
    sandbox = probe(policy)
    assert sandbox.usable, f"the sandbox cannot start here: {sandbox.problem}"
    return sandbox


async def shell(
    workspace: Path, command: str, sandbox: Sandbox, timeout: float = 60.0
) -> tuple[bool, str]:
    """``run_shell_command`` through the real tool: (succeeded, output or error message)."""
    ctx = ToolContext(workspace_root=workspace, sandbox=sandbox, shell_timeout_seconds=timeout)
    try:
        return True, await RunShellCommandTool().run(RunShellCommandArgs(command=command), ctx)
    except ToolFailure as failure:
        return False, failure.message


async def owned_shell(
    ws: Path, command: str, sandbox: Sandbox, owner: str | None
) -> ToolFailure | str:
    """``run_shell_command`` through the real tool for ``owner`` (its owner group): the
    output, or the failure itself, to check its type and text."""
    ctx = ToolContext(workspace_root=ws, sandbox=sandbox, shell_timeout_seconds=60, owner=owner)
    try:
        return await RunShellCommandTool().run(RunShellCommandArgs(command=command), ctx)
    except ToolFailure as failed:
        return failed


def marker() -> str:
    """A unique ``sleep`` argument, so a host-side /proc scan finds only this test's process."""
    return f"{7000 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**6:06d}"


def host_pids_running(argument: str, exclude: tuple[int, ...] = ()) -> list[int]:
    """Host pids of live processes with ``argument`` anywhere in their command line (the
    sandboxed process itself, before or after an exec, and its supervisor)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in (os.getpid(), *exclude):
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if argument.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


@contextlib.contextmanager
def listening(host: str = "127.0.0.1") -> Iterator[int]:
    """A TCP service on ``host`` that answers ``hello`` to every connection: its port."""
    server = socket.create_server((host, 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.sendall(b"hello\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


def connect_command(host: str, port: int) -> str:
    """A bash command that prints what the service at ``host:port`` says (fails if
    unreachable within 5 s)."""
    return f"timeout 5 bash -c 'exec 3<>/dev/tcp/{host}/{port} && head -n 1 <&3'"


def non_loopback_address() -> str | None:
    """One of this host's own non-loopback addresses, if it has one."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("10.255.255.255", 1))
        address = str(s.getsockname()[0])
        if not address.startswith("127."):
            return address
    return None


def _parent_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def descendants_running(argument: str) -> list[int]:
    """Host pids of this process's live descendants with ``argument`` in their command line
    (a sandboxed MCP server reports only its pid inside the sandbox)."""
    mine = []
    for pid in host_pids_running(argument):
        ancestor = _parent_of(pid)
        while ancestor not in (None, 0, 1):
            if ancestor == os.getpid():
                mine.append(pid)
                break
            ancestor = _parent_of(ancestor)
    return mine


def scripts_running(script: str) -> list[int]:
    """This process's live descendants that run ``python SCRIPT`` (not the supervisors and
    bubblewrap processes that carry the script in their arguments)."""
    running = []
    for pid in descendants_running(script):
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if len(argv) > 1 and argv[1] == script.encode():
                running.append(pid)
    return running
