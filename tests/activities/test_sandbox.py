"""Escapes from ``run_shell_command`` attempted through the real tool in the real sandbox
(docs/security-sandbox.md): each property of the sandbox is checked by trying to break it,
and, where the attempt could fail for another reason, by the same attempt succeeding bare
(``sandbox: none``).

``tmp_path/ws`` is the workspace; ``tmp_path/outside`` stands for everything a model must
not reach (other workspaces, the data dir, the tokens file).
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from activities.sandbox import UNCONFINED, NetworkPolicy
from activities.sandbox.launch import SUPERVISOR
from tests.activities.escape_targets import SECRET
from tests.activities.sandbox_helpers import (
    ROOT,
    connect_command,
    host_pids_running,
    listening,
    marker,
    non_loopback_address,
    real_sandbox,
    shell,
)
from tests.process_secrets import cmdline_of, descendants_of

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap")


# --- the file system ---------------------------------------------------------------------


async def test_files_outside_the_workspace_do_not_exist(ws: Path, outside: Path) -> None:
    sandbox = real_sandbox()
    targets = [outside / "secret.txt", ROOT / "pyproject.toml", Path.home(), Path("/root")]
    for target in targets:
        ok, text = await shell(ws, f"cat {target} || ls {target}", sandbox)
        assert not ok and "No such file or directory" in text, target
        assert SECRET not in text
    # Bare, the same command reads it: the attempt itself is sound.
    ok, text = await shell(ws, f"cat {outside / 'secret.txt'}", UNCONFINED)
    assert ok and SECRET in text


async def test_the_workspace_is_writable_at_its_own_path(ws: Path) -> None:
    ok, text = await shell(ws, "pwd; echo made > made.txt", real_sandbox())
    assert ok and text.splitlines()[0] == str(ws)
    assert (ws / "made.txt").read_text() == "made\n"


async def test_nothing_outside_the_workspace_is_writable(ws: Path, outside: Path) -> None:
    sandbox = real_sandbox()
    for target in [outside / "new.txt", outside / "secret.txt", Path("/usr/seawall-x")]:
        ok, _text = await shell(ws, f"echo pwned > {target}", sandbox)
        assert not ok, target
    assert (outside / "secret.txt").read_text() == SECRET + "\n"
    assert not (outside / "new.txt").exists()
    ok, text = await shell(ws, "echo pwned >> /etc/hostname", sandbox)
    assert not ok and "Read-only file system" in text


async def test_tmp_is_private(ws: Path, tmp_path: Path) -> None:
    host_file = Path("/tmp") / f"seawall-host-{os.getpid()}-{tmp_path.name}"
    host_file.write_text("host\n")
    inner = f"seawall-inner-{tmp_path.name}"
    try:
        sandbox = real_sandbox()
        ok, text = await shell(ws, f"ls -a /tmp; echo x > /tmp/{inner}", sandbox)
        assert ok and host_file.name not in text
        ok, text = await shell(ws, f"cat {host_file}", sandbox)
        assert not ok and "No such file or directory" in text
        assert not (Path("/tmp") / inner).exists()
    finally:
        host_file.unlink()


async def test_secret_files_of_etc_are_masked(ws: Path) -> None:
    if not Path("/etc/shadow").exists():
        pytest.skip("no /etc/shadow on this host")
    ok, text = await shell(ws, "wc -c < /etc/shadow", real_sandbox())
    assert (ok and text.splitlines()[0] == "0") or "Permission denied" in text


# --- processes ---------------------------------------------------------------------------


async def test_no_other_process_is_visible(ws: Path) -> None:
    """A worker's /proc/<pid>/environ (its API keys and tokens) cannot be read: a process
    with a secret in its environment stands for the worker."""
    holder = subprocess.Popen(
        ["sleep", marker()], env={**os.environ, "SEAWALL_SANDBOX_TEST_SECRET": SECRET}
    )
    try:
        sandbox = real_sandbox()
        for pid in (holder.pid, os.getpid()):
            ok, text = await shell(ws, f"tr '\\0' '\\n' < /proc/{pid}/environ", sandbox)
            assert not ok and SECRET not in text
        ok, text = await shell(ws, f"grep -l {SECRET} /proc/[0-9]*/environ", sandbox)
        assert not ok and SECRET not in text
        ok, text = await shell(ws, "ls -d /proc/[0-9]* | wc -l", sandbox)
        assert ok and int(text.splitlines()[0]) < 10, text
        # Bare, the environment is right there.
        ok, text = await shell(ws, f"tr '\\0' '\\n' < /proc/{holder.pid}/environ", UNCONFINED)
        assert ok and SECRET in text
    finally:
        holder.kill()
        holder.wait()


async def test_a_setsid_child_dies_with_the_call(ws: Path) -> None:
    sleep_for = marker()
    ok, text = await shell(ws, f"setsid -f sleep {sleep_for}; echo started", real_sandbox())
    assert ok and "started" in text
    assert host_pids_running(sleep_for) == []


async def test_a_setsid_child_dies_when_the_call_times_out(ws: Path) -> None:
    sleep_for = marker()
    ok, text = await shell(
        ws, f"setsid -f sleep {sleep_for}; echo started; sleep 600", real_sandbox(), timeout=1
    )
    assert not ok and "timed out" in text
    assert host_pids_running(sleep_for) == []


FAKE_WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from activities.sandbox import load_policy, probe
    from activities.tools.base import ToolContext
    from activities.tools.shell import RunShellCommandArgs, RunShellCommandTool

    workspace, sleep_for = Path(sys.argv[1]).resolve(), sys.argv[2]
    command = f"setsid -f bash -c 'echo ready > ready; exec sleep {sleep_for}'; sleep {sleep_for}"
    ctx = ToolContext(workspace_root=workspace, sandbox=probe(load_policy()))
    asyncio.run(RunShellCommandTool().run(RunShellCommandArgs(command=command), ctx))
    """
)


def _wait_gone(pid: int, timeout: float = 60.0) -> bool:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def test_a_sigkilled_worker_takes_the_sandbox_with_it(ws: Path) -> None:
    os.mkfifo(ws / "ready")
    sleep_for = marker()
    worker = subprocess.Popen(
        [sys.executable, "-c", FAKE_WORKER, str(ws), sleep_for],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        fd = os.open(ws / "ready", os.O_RDONLY | os.O_NONBLOCK)
        try:
            assert select.select([fd], [], [], 60)[0], "the command never said it was ready"
        finally:
            os.close(fd)
        # The supervisor, bubblewrap, the shell, its sleep and the setsid child.
        running = host_pids_running(sleep_for, exclude=(worker.pid,))
        assert len(running) >= 5, running
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=60)
        for pid in running:
            assert _wait_gone(pid), "a sandboxed process outlived its worker"
    finally:
        if worker.poll() is None:
            worker.kill()


# --- the network -------------------------------------------------------------------------


async def test_network_off_reaches_no_host_service(ws: Path) -> None:
    with listening("127.0.0.1") as port:
        ok, text = await shell(ws, connect_command("127.0.0.1", port), real_sandbox())
        assert not ok and "hello" not in text
        ok, text = await shell(ws, connect_command("127.0.0.1", port), UNCONFINED)
        assert ok and "hello" in text
    ok, text = await shell(ws, "cat /proc/net/dev", real_sandbox())
    lines = text.splitlines()[2:-1]  # two header lines, then one per interface
    interfaces = [line.split(":")[0].strip() for line in lines]
    assert interfaces == ["lo"]


async def test_network_on_keeps_host_loopback_unreachable(ws: Path) -> None:
    sandbox = real_sandbox(NetworkPolicy.ON)
    ok, text = await shell(ws, "cat /proc/net/dev /etc/resolv.conf", sandbox)
    assert ok and "tap0" in text and "10.0.2.3" in text
    with listening("127.0.0.1") as port:
        for host in ["127.0.0.1", "10.0.2.2"]:
            ok, text = await shell(ws, connect_command(host, port), sandbox)
            assert not ok and "hello" not in text, host


async def test_network_on_reaches_the_network(ws: Path) -> None:
    """The control of the test above: a service on a non-loopback address answers (as it
    would to any machine on the network; docs/security-sandbox.md, "Network")."""
    address = non_loopback_address()
    if address is None:
        pytest.skip("this host has no non-loopback address")
    with listening("0.0.0.0") as port:
        ok, text = await shell(ws, connect_command(address, port), real_sandbox(NetworkPolicy.ON))
    assert ok and "hello" in text


# --- resource limits ---------------------------------------------------------------------


async def test_cpu_time_is_limited(ws: Path) -> None:
    ok, text = await shell(ws, "while :; do :; done", real_sandbox(cpu_seconds=1))
    assert not ok and "SIGXCPU" in text


async def test_memory_is_limited(ws: Path) -> None:
    command = "head -c 400m /dev/zero | tail -n 1 | wc -c"
    ok, text = await shell(ws, command, real_sandbox(memory_mb=128))
    assert "memory exhausted" in text and "419430400" not in text
    ok, text = await shell(ws, command, real_sandbox())
    assert ok and "419430400" in text


async def test_file_size_is_limited(ws: Path) -> None:
    _ok, text = await shell(ws, "head -c 3m /dev/zero > big", real_sandbox(file_size_mb=1))
    assert "File size limit exceeded" in text
    assert (ws / "big").stat().st_size == 1024 * 1024


FORK_BOMB = """python3 -c '
import os, time
n = 0
try:
    for _ in range(64):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
except BlockingIOError:
    print("refused after", n)
else:
    print("forked", n)
'"""


async def test_processes_are_limited(ws: Path) -> None:
    sandbox = real_sandbox(max_processes=16)
    if sandbox.process_limit == "none":
        pytest.skip("root worker without a writable pids cgroup (docs/security-sandbox.md)")
    ok, text = await shell(ws, FORK_BOMB, sandbox)
    assert ok and "refused after" in text, text
    assert int(text.split("refused after")[1].split()[0]) < 16
    ok, text = await shell(ws, FORK_BOMB, real_sandbox())
    assert ok and "forked 64" in text


UNPRIVILEGED = 65534  # nobody


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv") or not Path("/usr/bin/python3").exists(),
    reason="needs root (to drop to an unprivileged uid), setpriv and /usr/bin/python3",
)
def test_without_a_cgroup_rlimit_nproc_binds_for_a_non_root_worker() -> None:
    """The supervisor run as an unprivileged uid (as the Docker image's worker runs), with
    no pids cgroup: RLIMIT_NPROC, set once the sandbox's user namespace exists, binds."""
    with tempfile.TemporaryDirectory(prefix="seawall-nonroot-") as scratch:
        _fork_as_nobody(Path(scratch))


def _fork_as_nobody(home: Path) -> None:
    # Outside pytest's 0700 base directory, so the unprivileged uid can reach it.
    home.chmod(0o755)
    workspace = home / "ws"
    workspace.mkdir()
    supervisor = home / "supervisor.py"
    shutil.copy(SUPERVISOR, supervisor)
    for path in (workspace, supervisor):
        os.chown(path, UNPRIVILEGED, UNPRIVILEGED)
    sandbox = real_sandbox(max_processes=16)
    no_cgroup = dataclasses.replace(sandbox, cgroups={})
    launch = no_cgroup.launch(["/bin/bash", "-c", FORK_BOMB], workspace=workspace, cwd=workspace)
    spec = json.loads(launch.argv[-1])
    spec["parent"] = os.getpid()
    done = subprocess.run(
        [
            "setpriv",
            f"--reuid={UNPRIVILEGED}",
            f"--regid={UNPRIVILEGED}",
            "--clear-groups",
            "/usr/bin/python3",
            "-S",
            "-I",
            str(supervisor),
            json.dumps(spec),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "refused after" in done.stdout, done.stdout
    assert int(done.stdout.split("refused after")[1].split()[0]) < 16


def test_the_operators_files_stay_hidden_under_a_read_only_path(tmp_path: Path) -> None:
    """A tokens file or data directory inside a directory the sandbox binds read-only (a
    tokens file in /etc, a data dir beside an MCP server's install prefix) is masked."""
    prefix = tmp_path / "opt"
    (prefix / "data").mkdir(parents=True)
    (prefix / "tokens.yaml").write_text(SECRET + "\n")
    (prefix / "data" / "temporal.db").write_text(SECRET + "\n")
    (prefix / "server.txt").write_text("public\n")
    base = real_sandbox()
    hidden = (str(prefix / "tokens.yaml"), str(prefix / "data"))
    sandbox = dataclasses.replace(
        base, policy=base.policy.model_copy(update={"hidden_paths": hidden})
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    command = f"cat {prefix}/server.txt; cat {prefix}/tokens.yaml; ls -A {prefix}/data; true"
    launch = sandbox.launch(
        ["/bin/bash", "-c", command], workspace=workspace, cwd=workspace, read_only_paths=[prefix]
    )
    done = subprocess.run(launch.argv, env=launch.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "public" in done.stdout
    assert SECRET not in done.stdout and "temporal.db" not in done.stdout


def test_an_operator_given_variable_reaches_the_command_but_no_command_line(
    tmp_path: Path,
) -> None:
    """An MCP server's ``env`` (its own token) is in the sandboxed command's environment,
    which is exactly the allowlist and that; it is in no command line of the supervisor or
    bubblewrap, which every local user can read (/proc/<pid>/cmdline), even when whoever
    starts the supervisor adds variables of its own (the MCP SDK adds HOME, USER, ...)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    launch = real_sandbox().launch(
        ["/bin/bash", "-c", "env; echo END; sleep 30"],
        workspace=workspace,
        cwd=workspace,
        extra_env={"SERVER_TOKEN": SECRET},
    )
    assert not [part for part in launch.argv if SECRET in part]
    started = subprocess.Popen(
        launch.argv,
        env={**launch.env, "USER": "worker-user", "LOGNAME": "worker-user"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert started.stdout is not None
        lines_seen = list(iter(started.stdout.readline, "END\n"))
        seen = dict(line.strip().split("=", 1) for line in lines_seen)
        for added in ("PWD", "SHLVL", "_"):  # the shell's own
            seen.pop(added, None)
        lines = [cmdline_of(pid) for pid in [started.pid, *descendants_of(started.pid)]]
    finally:
        started.kill()
        started.wait()
    assert seen == launch.env and seen["SERVER_TOKEN"] == SECRET
    assert len(lines) >= 3 and not [line for line in lines if SECRET in line]
