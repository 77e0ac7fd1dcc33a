"""The parent of every model-chosen process: it applies the limits, starts the sandbox, and
dies with the worker taking the sandbox with it.

Run as a script with ``python -S -I supervisor.py SPEC`` (no site, isolated; standard
library only, so it starts in milliseconds) by ``run_shell_command`` and by stdio MCP
servers. ``SPEC`` is a JSON object built by :mod:`activities.sandbox.launch`:

- ``parent``: the worker's pid. The supervisor asks the kernel for SIGTERM when its parent
  dies (Linux ``PR_SET_PDEATHSIG``) and on SIGTERM kills the sandbox, so a SIGKILLed worker
  leaves nothing running beside its retried call;
- ``command``: what to run; ``rlimits``: per-process limits (CPU seconds, address space,
  file size), set here so everything started below inherits them;
- ``bwrap`` (absent: run ``command`` bare, the ``sandbox: none`` mode): the bubblewrap path
  and options, and ``env``: the names of the variables of the supervisor's own environment
  that bubblewrap, and so the command, gets (their values never travel in a command line,
  which every local user can read). The supervisor adds ``--info-fd`` and ``--block-fd``:
  bubblewrap reports the sandbox's init pid and waits, namespaces made, until the
  supervisor has
    * moved that pid into a fresh cgroup per hierarchy of ``cgroups`` with the
      ``cgroup_limits`` written first: ``pids.max`` (the process limit that binds even for a
      root worker), the memory limit of the whole tree (its tmpfs ``/tmp`` included), the
      CPU cap,
    * set ``RLIMIT_NPROC`` on it (binds for a non-root worker; set after the user namespace
      exists, so it counts only the sandbox's own processes),
    * with ``slirp4netns``, attached a user-mode network to the sandbox's network namespace
      with the host's loopback cut off (``--disable-host-loopback``) and waited until it is
      configured;
  then it releases the sandbox. When the sandbox's init exits, the kernel kills every
  process left in its pid namespace (a ``setsid -f`` child included).

With ``disk`` (the workspace and its quota) it measures the workspace first, caps each
file at what is left (``RLIMIT_FSIZE``) and measures again while the sandbox runs, killing
it when the workspace grows past the quota. With ``report_fd`` (a descriptor the caller
passed on, which the sandbox never inherits) it writes, as it ends, one JSON object: how
many processes the kernel killed at the memory limit, and the disk watch's verdict
(:mod:`activities.sandbox.limits` reads it).

Exits the way the command did (same code, or the same signal when bare). A sandbox that
could not be set up exits with :data:`SETUP_FAILED` and one ``sandbox:`` line on stderr.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
import uuid
from typing import Any

PR_SET_PDEATHSIG = 1
SETUP_FAILED = 125
SETUP_TIMEOUT_SECONDS = 30.0
CGROUP_REMOVE_ATTEMPTS = 50
RESOLV_CONF = b"nameserver 10.0.2.3\n"  # slirp4netns's DNS forwarder
CPU_PERIOD_US = 100_000
DISK_POLL_SECONDS = 0.25


class SetupFailed(Exception):
    """The sandbox could not be set up as the policy asks; nothing ran."""


class Supervisor:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.child: subprocess.Popen[bytes] | None = None
        self.helper: subprocess.Popen[bytes] | None = None
        self.helper_exit_fd: int | None = None
        # (directory, its entry of the spec's ``cgroups``) of each cgroup made for the sandbox.
        self.cgroups: list[tuple[str, dict[str, Any]]] = []
        self.disk: DiskWatch | None = None
        self.terminated = False

    # --- death with the worker ------------------------------------------------------------

    def on_sigterm(self, signum: int, frame: object) -> None:
        self.terminated = True
        if self.child is not None:
            with contextlib.suppress(ProcessLookupError):
                self.child.kill()

    def die_with(self, parent_pid: int) -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            return  # not Linux: the worker's own cleanup is all there is
        if os.getppid() != parent_pid:
            self.terminated = True  # the worker died before the request took effect

    # --- limits ---------------------------------------------------------------------------

    def watch_disk(self) -> None:
        """Watch the workspace's disk quota (``disk``) while the sandbox runs. One file may
        grow only to what is left (``RLIMIT_FSIZE``), so a single write stops at the quota
        itself; a workspace already over it runs its command with no room to write (``rm``
        works, so the model can make room) and is stopped if it grows."""
        disk = self.spec.get("disk")
        if not disk:
            return
        self.disk = DiskWatch(disk["path"], int(disk["bytes"]))
        rlimits = self.spec.setdefault("rlimits", {})
        left = max(0, self.disk.quota - self.disk.start)
        rlimits["RLIMIT_FSIZE"] = min(rlimits.get("RLIMIT_FSIZE", left), left)

    def set_rlimits(self) -> None:
        for name, value in self.spec.get("rlimits", {}).items():
            which = getattr(resource, name)
            _soft, hard = resource.getrlimit(which)
            limit = value if hard == resource.RLIM_INFINITY else min(value, hard)
            # CPU: SIGXCPU at the soft limit (a clear "killed by SIGXCPU"), SIGKILL a
            # second later for a process that ignores it.
            ceiling = limit + 1 if which == resource.RLIMIT_CPU else limit
            if hard != resource.RLIM_INFINITY:
                ceiling = min(ceiling, hard)
            resource.setrlimit(which, (limit, ceiling))

    def join_cgroups(self, pid: int) -> None:
        """Move the sandbox's init into a fresh cgroup of each hierarchy in ``cgroups`` (one
        directory serves every controller of a v2 hierarchy), its limits written first."""
        name = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        limits = self.spec.get("cgroup_limits", {})
        for group in self.spec.get("cgroups", []):
            path = os.path.join(group["root"], name)
            try:
                os.mkdir(path, 0o700)
                self.cgroups.append((path, group))
                for controller in group["controllers"]:
                    for file, value in _limit_files(controller, group["version"], limits):
                        _write_if_present(os.path.join(path, file), value)
                with open(os.path.join(path, "cgroup.procs"), "w") as fh:
                    fh.write(str(pid))
            except OSError as exc:
                raise SetupFailed(f"could not apply the cgroup limits ({exc.strerror})") from None

    def oom_kills(self) -> int:
        """How many of the sandbox's processes the kernel killed at its memory limit."""
        for path, group in self.cgroups:
            if "memory" in group["controllers"]:
                events = "memory.events" if group["version"] == 2 else "memory.oom_control"
                return _counter(os.path.join(path, events), "oom_kill")
        return 0

    def limit_processes(self, pid: int) -> None:
        limit = self.spec.get("max_processes")
        if limit is None:
            return
        try:
            resource.prlimit(pid, resource.RLIMIT_NPROC, (limit, limit))
        except OSError as exc:
            raise SetupFailed(f"could not apply the process limit ({exc.strerror})") from None

    # --- network --------------------------------------------------------------------------

    def attach_network(self, pid: int) -> None:
        helper = self.spec.get("slirp4netns")
        if not helper:
            return
        ready_r, ready_w = os.pipe()
        exit_r, exit_w = os.pipe()
        try:
            self.helper = subprocess.Popen(
                [
                    helper,
                    "--configure",
                    "--mtu=65520",
                    "--disable-host-loopback",
                    f"--ready-fd={ready_w}",
                    f"--exit-fd={exit_r}",
                    str(pid),
                    "tap0",
                ],
                pass_fds=(ready_w, exit_r),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError as exc:
            os.close(ready_r)
            os.close(exit_w)
            raise SetupFailed(f"could not start slirp4netns ({exc.strerror})") from None
        finally:
            os.close(ready_w)
            os.close(exit_r)
        self.helper_exit_fd = exit_w
        try:
            readable, _, _ = select.select([ready_r], [], [], SETUP_TIMEOUT_SECONDS)
            ready = bool(readable) and os.read(ready_r, 1) == b"1"
        finally:
            os.close(ready_r)
        if not ready:
            raise SetupFailed("slirp4netns did not configure the network")

    # --- running --------------------------------------------------------------------------

    def run_bare(self) -> int:
        self.child = subprocess.Popen(self.spec["command"])
        if self.terminated:
            self.child.kill()
        return self.child.wait()

    def wait(self) -> int:
        """The sandbox's exit, watching its workspace's disk quota meanwhile: a sandbox whose
        workspace grows past it is killed."""
        assert self.child is not None
        while True:
            try:
                return self.child.wait(timeout=self.disk.interval if self.disk else None)
            except subprocess.TimeoutExpired:
                assert self.disk is not None
                if self.disk.over():
                    self.child.kill()

    def report(self) -> dict[str, Any]:
        """What stopped the sandbox, for the tool (``report_fd``): never the command's word."""
        disk = self.disk
        if disk is not None:
            disk.over()  # what was written after the last look counts too
        return {
            "oom_kills": self.oom_kills(),
            "disk_exceeded": disk is not None and disk.exceeded,
            "disk_used_bytes": disk.used if disk is not None else 0,
            "disk_full_at_start": disk is not None and disk.start >= disk.quota,
        }

    def run_sandboxed(self) -> int:
        bwrap = self.spec["bwrap"]
        info_r, info_w = os.pipe()
        block_r, block_w = os.pipe()
        fds = [info_w, block_r]
        extra = ["--info-fd", str(info_w), "--block-fd", str(block_r)]
        if self.spec.get("slirp4netns"):
            resolv_r, resolv_w = os.pipe()
            os.write(resolv_w, RESOLV_CONF)
            os.close(resolv_w)
            fds.append(resolv_r)
            extra += ["--ro-bind-data", str(resolv_r), _resolv_conf_target()]
        argv = [bwrap["path"], *bwrap["options"], *extra, "--", *self.spec["command"]]
        env = {name: os.environ[name] for name in self.spec["env"] if name in os.environ}
        try:
            self.child = subprocess.Popen(argv, pass_fds=fds, env=env)
        finally:
            for fd in fds:
                os.close(fd)
        try:
            pid = self._read_child_pid(info_r)
            if pid is not None and not self.terminated:
                self.join_cgroups(pid)
                self.limit_processes(pid)
                self.attach_network(pid)
                os.write(block_w, b"1")
        except SetupFailed as failure:
            self.child.kill()
            self.child.wait()
            print(f"sandbox: {failure}", file=sys.stderr, flush=True)
            return SETUP_FAILED
        finally:
            os.close(info_r)
            os.close(block_w)
        if self.terminated:
            self.child.kill()
        return self.wait()

    def _read_child_pid(self, info_r: int) -> int | None:
        """The sandbox init's pid from bubblewrap's info (None: it failed before that,
        and says why on stderr)."""
        data = b""
        while True:
            readable, _, _ = select.select([info_r], [], [], SETUP_TIMEOUT_SECONDS)
            if not readable:
                raise SetupFailed("bubblewrap did not start in time")
            chunk = os.read(info_r, 4096)
            if not chunk:
                break
            data += chunk
        if not data:
            return None
        try:
            return int(json.loads(data)["child-pid"])
        except (ValueError, KeyError, TypeError):
            raise SetupFailed("bubblewrap reported no sandbox pid") from None

    def clean_up(self) -> None:
        if self.helper_exit_fd is not None:
            os.close(self.helper_exit_fd)  # slirp4netns exits on EOF
            self.helper_exit_fd = None
        if self.helper is not None:
            try:
                self.helper.wait(timeout=SETUP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.helper.kill()
                self.helper.wait()
        for path, _group in self.cgroups:
            # Empty once the sandbox's processes have exited; they may still be on their way.
            for _ in range(CGROUP_REMOVE_ATTEMPTS):
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    select.select([], [], [], 0.01)


class DiskWatch:
    """A workspace's disk use against its quota, measured by walking it (docs/security-
    sandbox.md, "Disk per workspace"). The walk is paced to cost at most a tenth of the time
    between two (``interval``), so a large workspace is measured less often, never more
    than once in :data:`DISK_POLL_SECONDS`."""

    def __init__(self, path: str, quota: int) -> None:
        self.path = path
        self.quota = quota
        self.start = self.used = disk_usage(path)
        self.exceeded = False
        self.interval = DISK_POLL_SECONDS

    def over(self) -> bool:
        """Whether the call has taken the workspace past its quota (past where it started,
        for a workspace that started over it)."""
        started = time.monotonic()
        self.used = disk_usage(self.path)
        self.interval = max(DISK_POLL_SECONDS, 10 * (time.monotonic() - started))
        self.exceeded = self.exceeded or self.used > max(self.quota, self.start)
        return self.exceeded


def disk_usage(path: str) -> int:
    """Bytes the files and directories under ``path`` occupy on disk (allocated blocks;
    hard links once), symlinks not followed."""
    seen: set[tuple[int, int]] = set()
    total = 0
    stack = [path]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            total += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return total


def _limit_files(controller: str, version: int, limits: dict[str, int]) -> list[tuple[str, str]]:
    """(file, value) pairs that set ``limits`` in a cgroup of ``controller``; a file whose
    name ends in ``?`` is optional (absent on some kernels: swap accounting off)."""
    if controller == "pids":
        return [("pids.max", str(limits["max_processes"]))]
    if controller == "memory":
        memory = str(limits["memory_bytes"])
        if version == 1:
            return [("memory.limit_in_bytes", memory), ("memory.memsw.limit_in_bytes?", memory)]
        return [("memory.max", memory), ("memory.swap.max?", "0"), ("memory.oom.group?", "1")]
    # The cap only: each sandbox keeps the default weight (the sandboxes together get
    # ``sandbox_cpu_weight``, written on their parent by activities/sandbox/cgroup.py).
    percent = limits["cpu_max_percent"]
    if not percent:
        return []
    if version == 1:
        quota = str(percent * CPU_PERIOD_US // 100)
        return [("cpu.cfs_period_us", str(CPU_PERIOD_US)), ("cpu.cfs_quota_us", quota)]
    return [("cpu.max", f"{percent * CPU_PERIOD_US // 100} {CPU_PERIOD_US}")]


def _write_if_present(path: str, value: str) -> None:
    """Write ``value`` to the cgroup file ``path``; one marked optional (``?``) that does not
    exist is skipped."""
    if path.endswith("?"):
        path = path[:-1]
        if not os.path.exists(path):
            return
    with open(path, "w") as fh:
        fh.write(value)


def _counter(path: str, name: str) -> int:
    """The ``name N`` line of a cgroup's flat-keyed file (0 when unreadable)."""
    with contextlib.suppress(OSError, ValueError), open(path) as fh:
        for line in fh:
            key, _, value = line.partition(" ")
            if key == name:
                return int(value)
    return 0


def _resolv_conf_target() -> str:
    """Where the sandbox's resolver configuration goes: ``/etc/resolv.conf``, or the file it
    links to (systemd-resolved's stub under ``/run``), which the sandbox would otherwise
    resolve to a path that does not exist inside."""
    path = "/etc/resolv.conf"
    if os.path.islink(path):
        return os.path.realpath(path)
    return path


def _exit_like(code: int) -> int:
    if code < 0:
        # Die of the same signal, so the tool sees "killed by SIGSEGV" as before (SIGKILL
        # and SIGSTOP have no handler to reset).
        with contextlib.suppress(OSError, ValueError):
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def main(argv: list[str]) -> int:
    spec = json.loads(argv[1])
    supervisor = Supervisor(spec)
    signal.signal(signal.SIGTERM, supervisor.on_sigterm)
    supervisor.die_with(int(spec["parent"]))
    report_fd = spec.get("report_fd")
    try:
        supervisor.watch_disk()
        supervisor.set_rlimits()
        code = supervisor.run_sandboxed() if spec.get("bwrap") else supervisor.run_bare()
        report = supervisor.report()
    finally:
        supervisor.clean_up()
    if report_fd is not None:
        with contextlib.suppress(OSError):
            os.write(report_fd, json.dumps(report).encode())
    if supervisor.terminated and os.getpgid(0) == os.getpid():
        # Leading the command's process group (the shell tool): take it all down.
        os.killpg(0, signal.SIGKILL)
    return _exit_like(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
