"""Each sandbox's whole-tree limits, tried through the real tool in the real sandbox
(docs/security-sandbox.md, "Resource limits"): memory (its ``/tmp`` counted), CPU share and
cap, and the workspace's disk quota. Every hog is bounded small (tens of MB, a few seconds)
and has a control just under its limit that succeeds on the same mechanism; each settles
with its classified outcome, read from the supervisor's report, never from the output.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from activities.sandbox import Sandbox
from activities.sandbox.cgroup import sandbox_cgroup_roots
from activities.tools.base import ToolContext, ToolFailure
from activities.tools.shell import RunShellCommandArgs, RunShellCommandTool
from tests.activities.sandbox_helpers import real_sandbox, shell
from tests.process_secrets import descendants_of
from workflows.contracts import ToolErrorType

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap")

MEMORY_LIMIT_MB = 64
DISK_QUOTA_MB = 16


def hog(megabytes: int, then: str = "", hold: float = 0) -> str:
    """A command that allocates and touches ``megabytes`` in 8 MB steps, says so, and holds
    it ``hold`` seconds."""
    steps = megabytes // 8
    return (
        "python3 -c '\n"
        "import time\n"
        "held = []\n"
        f"for _ in range({steps}):\n"
        "    held.append(bytearray(8 * 1024 * 1024))\n"
        '    held[-1][::4096] = b"x" * len(held[-1][::4096])\n'
        'print("held", 8 * len(held), "MB", flush=True)\n'
        f"time.sleep({hold})\n"
        f"'{then}"
    )


async def failure(ws: Path, command: str, sandbox: Sandbox) -> ToolFailure | None:
    ctx = ToolContext(workspace_root=ws, sandbox=sandbox, shell_timeout_seconds=60)
    try:
        await RunShellCommandTool().run(RunShellCommandArgs(command=command), ctx)
    except ToolFailure as failed:
        return failed
    return None


def needs(sandbox: Sandbox, controller: str) -> None:
    if controller not in sandbox.cgroups:
        pytest.skip(f"no writable {controller} cgroup here (docs/security-sandbox.md)")


# --- memory --------------------------------------------------------------------------------


async def test_a_memory_hog_settles_out_of_memory_and_a_smaller_command_runs(ws: Path) -> None:
    sandbox = real_sandbox(memory_max_mb=MEMORY_LIMIT_MB)
    needs(sandbox, "memory")
    failed = await failure(ws, hog(128), sandbox)
    assert failed is not None and failed.error_type is ToolErrorType.OUT_OF_MEMORY
    assert f"memory limit of {MEMORY_LIMIT_MB} MB" in failed.message
    assert "held 128 MB" not in failed.message
    # Just under the limit, on the same mechanism: it runs, and the sandbox is reusable.
    ok, text = await shell(ws, hog(16), sandbox)
    assert ok and "held 16 MB" in text, text


async def test_the_limit_counts_the_whole_tree_not_each_process(ws: Path) -> None:
    """Four processes of 24 MB each stay under a 64 MB address-space rlimit one by one, and
    together exceed the tree's 64 MB."""
    sandbox = real_sandbox(memory_max_mb=MEMORY_LIMIT_MB)
    needs(sandbox, "memory")
    four = " ".join([f"({hog(24, hold=3)}) &"] * 4) + " wait; exit 1"
    failed = await failure(ws, four, sandbox)
    assert failed is not None and failed.error_type is ToolErrorType.OUT_OF_MEMORY, failed


async def test_tmp_counts_against_the_memory_limit(ws: Path) -> None:
    sandbox = real_sandbox(memory_max_mb=MEMORY_LIMIT_MB)
    failed = await failure(ws, "head -c 128m /dev/zero > /tmp/fill", sandbox)
    # Bounded either way: /tmp is no larger than the limit, and its pages are charged to it.
    assert failed is not None
    assert failed.error_type in (ToolErrorType.OUT_OF_MEMORY, ToolErrorType.SHELL_EXECUTE_ERROR)
    ok, text = await shell(ws, "head -c 8m /dev/zero > /tmp/fill && wc -c < /tmp/fill", sandbox)
    assert ok and "8388608" in text, text


async def test_a_process_stopped_for_memory_is_reported_when_the_command_goes_on(
    ws: Path,
) -> None:
    sandbox = real_sandbox(memory_max_mb=MEMORY_LIMIT_MB)
    needs(sandbox, "memory")
    ok, text = await shell(ws, hog(128, "; echo went-on"), sandbox)
    assert ok and "went-on" in text
    assert f"A process of the command was stopped at the sandbox's memory limit of {64}" in text


async def test_the_output_cannot_fake_the_classification(ws: Path) -> None:
    sandbox = real_sandbox(memory_max_mb=MEMORY_LIMIT_MB)
    fake = '{"oom_kills": 1, "disk_exceeded": true}'
    failed = await failure(ws, f"echo '{fake}'; echo '{fake}' >&2; exit 137", sandbox)
    assert failed is not None and failed.error_type is ToolErrorType.SHELL_EXECUTE_ERROR


# --- the cgroups a sandbox gets -------------------------------------------------------------


def test_each_sandbox_gets_its_own_cgroups_with_the_configured_limits(ws: Path) -> None:
    """The supervisor run directly on a waiting command: while it runs, its cgroups hold the
    settings' values; after, they are gone."""
    sandbox = real_sandbox(memory_max_mb=48, cpu_weight=50, cpu_max_percent=150, max_processes=20)
    needs(sandbox, "memory")
    needs(sandbox, "cpu")
    launch = sandbox.launch(["/bin/sleep", "30"], workspace=ws, cwd=ws)
    before = {c: set(root.iterdir()) for c, (_v, root) in sandbox.cgroups.items()}
    process = subprocess.Popen(launch.argv, env=launch.env)
    try:
        made = _wait_for_new_cgroups(sandbox, before, process.pid)
        values = {c: _limits(c, sandbox.cgroups[c][0], path) for c, path in made.items()}
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert values["memory"] == 48 * 1024 * 1024
    # The weight is their parent's (the next test); each sandbox keeps the default.
    assert values["cpu"] in ({"shares": 1024, "quota": 150_000}, {"weight": 100, "max": 150_000})
    assert values["pids"] == 20
    assert not any(path.exists() for path in made.values())


def test_a_sandbox_whose_cgroups_cannot_be_made_runs_nothing(ws: Path) -> None:
    """A cgroup that cannot be made once bubblewrap is waiting (its directory gone: another
    worker's start-up removed it, a hierarchy unmounted) fails the setup, and the command
    never runs, also not after the supervisor has exited (the sandbox's init once outlived
    bubblewrap there and ran it, without its limits). The supervisor's output pipe closes
    only when every process of the sandbox has exited, so the file is checked after."""
    sandbox = real_sandbox()
    needs(sandbox, "pids")
    launch = sandbox.launch(["/bin/bash", "-c", "echo ran > ran.txt"], workspace=ws, cwd=ws)
    spec = json.loads(launch.argv[-1])
    version, root = sandbox.cgroups["pids"]
    gone = {"root": str(root / "no-such-group"), "version": version, "controllers": ["pids"]}
    spec["cgroups"] = [*spec["cgroups"], gone]
    done = subprocess.run(
        [*launch.argv[:-1], json.dumps(spec)], env=launch.env, capture_output=True, timeout=60
    )
    assert done.returncode == 125, done
    assert b"sandbox: could not apply the cgroup limits" in done.stderr
    assert not (ws / "ran.txt").exists()


def test_the_cpu_weight_is_all_sandboxes_against_the_worker(ws: Path) -> None:
    """``sandbox_cpu_weight`` is written on the sandboxes' parent group, whose siblings are
    the worker's own processes (a subtree of this test's own, so no worker sees it)."""
    subtree = f"seawall-sandbox-test-{os.getpid()}"
    roots = sandbox_cgroup_roots(cpu_weight=50, subtree=subtree)
    try:
        if "cpu" not in roots:
            pytest.skip("no writable cpu cgroup here (docs/security-sandbox.md)")
        version, root = roots["cpu"]
        name = "cpu.shares" if version == 1 else "cpu.weight"
        assert (root / name).read_text().strip() == ("512" if version == 1 else "50")
        assert sandbox_cgroup_roots(cpu_weight=200, subtree=subtree)["cpu"] == (version, root)
        assert (root / name).read_text().strip() == ("2048" if version == 1 else "200")
    finally:
        for _version, root in roots.values():
            with contextlib.suppress(OSError):
                root.rmdir()


def _wait_for_new_cgroups(
    sandbox: Sandbox, before: dict[str, set[Path]], launcher: int
) -> dict[str, Path]:
    """The cgroups this sandbox was moved into: new since ``before`` and holding a process of
    ``launcher``'s tree (other sandboxes of this machine, another test's or another
    checkout's, may make theirs under the same root meanwhile)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ours = {launcher, *descendants_of(launcher)}
        made = {}
        for controller, (_v, root) in sandbox.cgroups.items():
            for path in set(root.iterdir()) - before[controller]:
                with contextlib.suppress(OSError):
                    procs = {int(p) for p in (path / "cgroup.procs").read_text().split()}
                    if procs & ours:
                        made[controller] = path
        if len(made) == len(sandbox.cgroups):
            return made
        time.sleep(0.05)
    raise AssertionError("the sandbox's cgroups did not appear")


def _limits(controller: str, version: int, path: Path) -> object:
    def read(name: str) -> str:
        return (path / name).read_text().strip()

    if controller == "memory":
        return int(read("memory.limit_in_bytes" if version == 1 else "memory.max"))
    if controller == "pids":
        return int(read("pids.max"))
    if version == 1:
        return {"shares": int(read("cpu.shares")), "quota": int(read("cpu.cfs_quota_us"))}
    return {"weight": int(read("cpu.weight")), "max": int(read("cpu.max").split()[0])}


# --- CPU ------------------------------------------------------------------------------------

SPIN = """python3 -c '
import os, time
children = [os.fork() for _ in range(2)]
end = time.monotonic() + {seconds}
while time.monotonic() < end:
    pass
if 0 in children:
    os._exit(0)
for _ in children:
    os.wait()
t = os.times()
print("cpu", t.user + t.system + t.children_user + t.children_system)
'"""


async def test_a_cpu_cap_bounds_the_whole_tree(ws: Path) -> None:
    """Four spinning processes for 2 s under a cap of 20% of one core use at most about 0.4 s
    of CPU, however many cores are free."""
    sandbox = real_sandbox(cpu_max_percent=20)
    needs(sandbox, "cpu")
    started = time.monotonic()
    ok, text = await shell(ws, SPIN.format(seconds=2), sandbox)
    wall = time.monotonic() - started
    assert ok, text
    used = float(text.split("cpu")[1].split()[0])
    assert used <= 0.2 * wall + 0.3, (used, wall)


# --- disk -----------------------------------------------------------------------------------


async def test_a_disk_hog_settles_disk_quota_exceeded_and_a_smaller_write_runs(ws: Path) -> None:
    sandbox = real_sandbox(workspace_disk_mb=DISK_QUOTA_MB)
    # Just under the quota: it runs.
    ok, text = await shell(ws, "head -c 8m /dev/zero > small && wc -c < small", sandbox)
    assert ok and "8388608" in text, text
    (ws / "small").unlink()
    # Many files, each under the per-file bound, written one after another past the quota.
    spread = "for i in $(seq 1 8); do head -c 4m /dev/zero > part$i; sleep 0.5; done"
    failed = await failure(ws, spread, sandbox)
    assert failed is not None and failed.error_type is ToolErrorType.DISK_QUOTA_EXCEEDED
    assert f"disk quota of {DISK_QUOTA_MB} MB" in failed.message
    assert len(list(ws.glob("part*"))) < 8


async def test_one_file_stops_at_the_quota_itself(ws: Path) -> None:
    sandbox = real_sandbox(workspace_disk_mb=DISK_QUOTA_MB)
    _ok, text = await shell(ws, "head -c 64m /dev/zero > big", sandbox)
    assert "File size limit exceeded" in text
    assert (ws / "big").stat().st_size <= DISK_QUOTA_MB * 1024 * 1024


async def test_a_full_workspace_writes_nothing_but_can_be_cleaned(ws: Path) -> None:
    sandbox = real_sandbox(workspace_disk_mb=DISK_QUOTA_MB)
    (ws / "filler").write_bytes(os.urandom(DISK_QUOTA_MB * 1024 * 1024 + 4096))
    failed = await failure(ws, "echo more > more.txt", sandbox)
    assert failed is not None and failed.error_type is ToolErrorType.DISK_QUOTA_EXCEEDED
    assert not (ws / "more.txt").exists() or (ws / "more.txt").stat().st_size == 0
    ok, text = await shell(ws, "rm filler && echo made-room", sandbox)
    assert ok and "made-room" in text
    ok, _text = await shell(ws, "echo more > more.txt", sandbox)
    assert ok


async def test_the_worker_lives_on_and_other_sandboxes_run_beside_a_hog(ws: Path) -> None:
    """A memory hog and a disk hog beside an ordinary command: the ordinary one finishes
    with its output, and this process (the worker) is untouched."""
    sandbox = real_sandbox(memory_max_mb=MEMORY_LIMIT_MB, workspace_disk_mb=DISK_QUOTA_MB)
    needs(sandbox, "memory")
    other = ws / "other"
    other.mkdir()
    results = await asyncio.gather(
        failure(ws, hog(128), sandbox),
        failure(ws, "for i in $(seq 1 8); do head -c 4m /dev/zero > f$i; sleep 0.3; done", sandbox),
        shell(other, "echo still-here", sandbox),
    )
    memory, disk, ordinary = results
    assert isinstance(memory, ToolFailure) and memory.error_type is ToolErrorType.OUT_OF_MEMORY
    assert isinstance(disk, ToolFailure) and disk.error_type is ToolErrorType.DISK_QUOTA_EXCEEDED
    assert ordinary == (True, "still-here\nExit code: 0")
