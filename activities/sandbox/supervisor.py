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
      CPU cap; with ``owner`` (a pseudonym, :mod:`activities.sandbox.owners`) that cgroup
      sits in the owner's group, which its first sandbox makes with ``owner_limits`` (the
      memory and CPU of all the owner's sandboxes together) and its last one removes,
    * set ``RLIMIT_NPROC`` on it (binds for a non-root worker; set after the user namespace
      exists, so it counts only the sandbox's own processes),
    * with ``slirp4netns``, attached a user-mode network to the sandbox's network namespace
      with the host's loopback cut off (``--disable-host-loopback``) and waited until it is
      configured;
  then it releases the sandbox. When the sandbox's init exits, the kernel kills every
  process left in its pid namespace (a ``setsid -f`` child included).

With ``disk`` (the workspace and its quota, and with ``owner`` the owner's quota over all
of the owner's workspaces, listed in an index in the worker's data directory) it measures
the workspace first, caps each file at what is left under both (``RLIMIT_FSIZE``) and
measures again while the sandbox runs, killing it when it took the workspace or the owner
past a quota: a sandbox that wrote nothing runs on beside one that did. With ``report_fd``
(a descriptor the caller passed on, which the sandbox never inherits) it writes, as it
ends, one JSON object: how many processes the kernel killed at a memory limit (and whether
the sandbox's or its owner's), and the disk watch's verdict (which quota, what the
workspace and the owner hold); :mod:`activities.sandbox.limits` reads it.

Exits the way the command did (same code, or the same signal when bare). A sandbox that
could not be set up exits with :data:`SETUP_FAILED` and one ``sandbox:`` line on stderr.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
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
# Tries at removing a sandbox's cgroup, 10 ms apart, while its last processes are still being
# reaped: up to 5 s on a loaded machine (0.5 s left one behind under a full test suite).
CGROUP_REMOVE_ATTEMPTS = 500
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
        # Bytes the sandbox's processes had written when the disk watch last looked (None:
        # not known), and its children's block output before the sandbox started.
        self.written: int | None = 0
        self.output_before = 0
        # Looks at which a workspace past a quota grew though this sandbox wrote nothing.
        self.unclaimed_growth = 0
        # The cgroup the supervisor left for its sandbox's cpu cgroup (cgroup v1), to go
        # back to before that one is removed.
        self.cpu_entered: str | None = None
        self.cgroup_name = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
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
        """Measure the workspace (and the owner's) against the quotas of ``disk``, before
        the sandbox starts; :meth:`limit_file_size` and :meth:`look` enforce them."""
        disk = self.spec.get("disk")
        if not disk:
            return
        owner = disk.get("owner") or {}
        try:
            self.disk = DiskWatch(
                disk["path"], int(disk["bytes"]), owner.get("index"), int(owner.get("bytes", 0))
            )
        except OSError as exc:
            raise SetupFailed(f"could not open the owners' disk index ({exc.strerror})") from None
        self.output_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_oublock

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

    def enter_cpu_cgroup(self) -> None:
        """Where the cpu controller has a hierarchy of its own (cgroup v1), make the
        sandbox's cpu cgroup before bubblewrap starts and enter it, so what the supervisor
        and bubblewrap spend (setting up, watching the disk) is the owner's CPU, not the
        worker's. Best effort: where the move is refused, the cgroup goes again (an empty
        one is another worker's to remove as stale at its start) and the supervisor stays
        the worker's."""
        for group in self.spec.get("cgroups", []):
            if group["version"] != 1 or group["controllers"] != ["cpu"]:
                continue
            path = self._new_cgroup(group)
            try:
                _enter(path, os.getpid())
            except OSError:
                self.cgroups.pop()
                with contextlib.suppress(OSError):
                    os.rmdir(path)
            else:
                self.cpu_entered = os.path.dirname(group["root"])

    def join_cgroups(self, pid: int) -> None:
        """Move the sandbox's init into a fresh cgroup of each hierarchy in ``cgroups`` (one
        directory serves every controller of a v2 hierarchy), its limits written first; with
        an ``owner``, inside that owner's group (made, with ``owner_limits``, by the owner's
        first sandbox). The cpu cgroup the supervisor entered is already made."""
        made = {id(group): path for path, group in self.cgroups}
        for group in self.spec.get("cgroups", []):
            path = made.get(id(group)) or self._new_cgroup(group)
            try:
                _enter(path, pid)
            except OSError as exc:
                raise SetupFailed(f"could not apply the cgroup limits ({exc.strerror})") from None

    def _new_cgroup(self, group: dict[str, Any]) -> str:
        """The sandbox's fresh cgroup in ``group``, its limits written."""
        limits = self.spec.get("cgroup_limits", {})
        try:
            path = self._make_cgroup(group, self.cgroup_name)
            self.cgroups.append((path, group))
            for controller in group["controllers"]:
                for file, value in _limit_files(controller, group["version"], limits):
                    _write_if_present(os.path.join(path, file), value)
        except OSError as exc:
            raise SetupFailed(f"could not apply the cgroup limits ({exc.strerror})") from None
        return path

    def _make_cgroup(self, group: dict[str, Any], name: str) -> str:
        """Make the sandbox's cgroup ``name`` in ``group``'s root, or in its owner's group
        there. The owner's last sandbox elsewhere may remove that group meanwhile (its
        clean-up), so a vanished one is made again."""
        owner = self.spec.get("owner")
        if not owner:
            path = os.path.join(group["root"], name)
            os.mkdir(path, 0o700)
            return path
        parent = os.path.join(group["root"], owner)
        for _ in range(CGROUP_REMOVE_ATTEMPTS):
            try:
                os.mkdir(parent, 0o700)
            except FileExistsError:
                pass  # made by another of the owner's sandboxes, which wrote its limits
            else:
                try:
                    _limit_owner(parent, group, self.spec.get("owner_limits", {}))
                except OSError:
                    with contextlib.suppress(OSError):
                        os.rmdir(parent)  # never leave an owner's group without its limits
                    raise
            try:
                os.mkdir(os.path.join(parent, name), 0o700)
            except FileNotFoundError:
                continue
            return os.path.join(parent, name)
        raise OSError(errno.ENOENT, "the owner's cgroup kept vanishing")

    def memory_stop(self) -> tuple[int, str]:
        """How many of the sandbox's processes the kernel killed for memory, and at whose
        limit: ``sandbox`` (its own cgroup reached its limit) or ``owner`` (it never did, so
        its owner's group did)."""
        for path, group in self.cgroups:
            if "memory" in group["controllers"]:
                if group["version"] == 2:
                    events = os.path.join(path, "memory.events")
                    kills, own = _counter(events, "oom_kill"), _counter(events, "oom")
                else:
                    kills = _counter(os.path.join(path, "memory.oom_control"), "oom_kill")
                    own = _read_int(os.path.join(path, "memory.failcnt"))
                owner = kills > 0 and own == 0 and bool(self.spec.get("owner"))
                return kills, "owner" if owner else "sandbox"
        return 0, "sandbox"

    def limit_processes(self, pid: int) -> None:
        limit = self.spec.get("max_processes")
        if limit is None:
            return
        try:
            resource.prlimit(pid, resource.RLIMIT_NPROC, (limit, limit))
        except OSError as exc:
            raise SetupFailed(f"could not apply the process limit ({exc.strerror})") from None

    def limit_file_size(self, pid: int) -> None:
        """One file of the sandbox's may grow only to what is left of its quotas
        (``RLIMIT_FSIZE`` on its init, so everything it starts inherits it, and not on the
        supervisor, which writes the owners' index): a single write stops at the quota
        itself, and a workspace already over one runs its command with no room to write
        (``rm`` works, so the model can make room) and is stopped if it grows."""
        if self.disk is None:
            return
        left = self.disk.left()
        limit = min(self.spec.get("rlimits", {}).get("RLIMIT_FSIZE", left), left)
        try:
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, limit))
        except OSError as exc:
            raise SetupFailed(f"could not apply the disk quota ({exc.strerror})") from None

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
        """The sandbox's exit, watching its disk quotas meanwhile (:meth:`look`)."""
        assert self.child is not None
        while True:
            try:
                return self.child.wait(timeout=self.disk.interval if self.disk else None)
            except subprocess.TimeoutExpired:
                self.look()

    def look(self) -> None:
        """Measure the workspace (and the owner's) and kill the sandbox when it is one that
        took them past a quota: it wrote since the last look (the kernel's count of the bytes
        its processes wrote to files, ``/proc/<pid>/io``), so a call of the same batch that
        only reads runs on beside a writer. Growth no sandbox owns up to (space taken
        without a write: ``fallocate``) stops every sandbox there at its second look."""
        disk = self.disk
        assert disk is not None
        previous = disk.used
        limit = disk.over()
        wrote = self.wrote_since_last_look()
        if limit is None:
            self.unclaimed_growth = 0
            return
        if not wrote and disk.used > previous:
            self.unclaimed_growth += 1
        if wrote or self.unclaimed_growth >= 2:
            disk.exceeded = disk.exceeded or limit
            self.child_kill()

    def child_kill(self) -> None:
        if self.child is not None:
            with contextlib.suppress(ProcessLookupError):
                self.child.kill()

    def wrote_since_last_look(self) -> bool:
        """Whether the sandbox's processes wrote to a file since the last look (``True``
        when that cannot be known: no cgroup lists them, or the kernel keeps no count)."""
        path = self.cgroups[0][0] if self.cgroups else None
        mine = {os.getpid(), self.child.pid if self.child else 0}
        total = written_by(path, mine) if path is not None else None
        before, self.written = self.written, total
        return total is None or before is None or total > before

    def report(self) -> dict[str, Any]:
        """What stopped the sandbox, for the tool (``report_fd``): never the command's word.
        A sandbox that finished with a quota passed counts as stopped by it when it wrote
        at all (its reaped processes' block output), not when another sandbox did."""
        disk = self.disk
        if disk is not None and not disk.exceeded:
            limit = disk.over()  # what was written after the last look counts too
            output = resource.getrusage(resource.RUSAGE_CHILDREN).ru_oublock
            if limit is not None and output > self.output_before:
                disk.exceeded = limit
        kills, limit = self.memory_stop()
        return {
            "oom_kills": kills,
            "memory_limit": limit,
            "disk_exceeded": disk is not None and bool(disk.exceeded),
            "disk_limit": (disk.exceeded or disk.full_at_start()) if disk else None,
            "disk_used_bytes": disk.used if disk is not None else 0,
            "owner_disk_used_bytes": disk.owner_used if disk is not None else 0,
            "disk_full_at_start": disk is not None and disk.full_at_start() is not None,
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
            self.enter_cpu_cgroup()
            self.child = subprocess.Popen(argv, pass_fds=fds, env=env)
        except SetupFailed as failure:
            for fd in (info_r, block_w):
                os.close(fd)
            print(f"sandbox: {failure}", file=sys.stderr, flush=True)
            return SETUP_FAILED
        finally:
            for fd in fds:
                os.close(fd)
        pid = None
        released = False
        try:
            pid = self._read_child_pid(info_r)
            if pid is not None and not self.terminated:
                self.join_cgroups(pid)
                self.limit_processes(pid)
                self.limit_file_size(pid)
                self.attach_network(pid)
                os.write(block_w, b"1")
                released = True
        except SetupFailed as failure:
            self.child.kill()
            self.child.wait()
            print(f"sandbox: {failure}", file=sys.stderr, flush=True)
            return SETUP_FAILED
        finally:
            if pid is not None and not released:
                # A sandbox not released (a failed step, the worker gone) dies before its
                # block descriptor closes: bubblewrap's own death does not always take its
                # init along, and on that end of file the init would run the command.
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
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
        if self.cpu_entered is not None:
            with contextlib.suppress(OSError):
                _enter(self.cpu_entered, os.getpid())
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
            if self.spec.get("owner"):
                # The owner's group goes with its last sandbox (busy: another one remains).
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.dirname(path))


class DiskWatch:
    """A workspace's disk use against its quota and, for an owned call, all of its owner's
    workspaces' against the owner's, measured by walking (docs/security-sandbox.md, "Disk
    per workspace", "Disk per owner"). Only this workspace is walked on each look; the
    owner's others are read from the index, where the supervisors running in them write
    what they measure (:class:`OwnerIndex`). The walk is paced to cost at most a tenth of
    the time between two (``interval``), so a large workspace is measured less often,
    never more than once in :data:`DISK_POLL_SECONDS`."""

    def __init__(
        self, path: str, quota: int, owner_index: str | None = None, owner_quota: int = 0
    ) -> None:
        self.path = path
        self.quota = quota
        self.start = self.used = disk_usage(path)
        self.owner = OwnerIndex(owner_index, path) if owner_index and owner_quota else None
        self.owner_quota = owner_quota
        self.owner_start = self.owner_used = self._owner_total()
        # Which quota the call took its workspace past: "workspace", "owner" or None.
        self.exceeded: str | None = None
        self.interval = DISK_POLL_SECONDS

    def _owner_total(self) -> int:
        if self.owner is None:
            return 0
        self.owner.record(self.used)
        return self.used + self.owner.others()

    def left(self) -> int:
        """What the call may still write (0 for a workspace already over a quota)."""
        left = self.quota - self.start
        if self.owner is not None:
            left = min(left, self.owner_quota - self.owner_start)
        return max(0, left)

    def full_at_start(self) -> str | None:
        """The quota the workspace was already at or past when the call started."""
        if self.start >= self.quota:
            return "workspace"
        if self.owner is not None and self.owner_start >= self.owner_quota:
            return "owner"
        return None

    def over(self) -> str | None:
        """Which quota the workspace is past now (past where it started, for one that
        started over it): ``workspace``, ``owner`` or None."""
        started = time.monotonic()
        self.used = disk_usage(self.path)
        self.owner_used = self._owner_total()
        self.interval = max(DISK_POLL_SECONDS, 10 * (time.monotonic() - started))
        if self.used > max(self.quota, self.start):
            return "workspace"
        if self.owner is not None and self.owner_used > max(self.owner_quota, self.owner_start):
            return "owner"
        return None


class OwnerIndex:
    """The owner's workspaces on this worker and what each held when last measured: one
    small file per workspace (``{"path": ..., "bytes": ...}``, named by a hash of its
    path) in the owner's directory of the index, in the worker's data directory, which no
    sandbox sees. Each supervisor adds its own workspace and rewrites its entry at every
    look; an entry whose workspace is gone (the operator removed it) is dropped."""

    def __init__(self, directory: str, workspace: str) -> None:
        self.directory = directory
        self.workspace = workspace
        self.name = _entry_name(workspace)
        self.recorded: int | None = None
        os.makedirs(os.path.dirname(directory), mode=0o700, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, 0o700)

    def record(self, used: int) -> None:
        if used == self.recorded:
            return
        self.recorded = used
        entry = os.path.join(self.directory, self.name)
        scratch = f"{entry}.{os.getpid()}.tmp"
        with contextlib.suppress(OSError):
            # 0600 like every file of the data directory's: it names the owner's sessions.
            fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with open(fd, "w") as fh:
                json.dump({"path": self.workspace, "bytes": used}, fh)
            os.replace(scratch, entry)

    def others(self) -> int:
        """What the owner's other workspaces held when their supervisors last measured
        them (an entry without a figure, which no supervisor writes, is walked)."""
        total = 0
        names: list[str] = []
        with contextlib.suppress(OSError):
            names = os.listdir(self.directory)
        for name in names:
            if name == self.name or name.endswith(".tmp"):
                continue
            entry = os.path.join(self.directory, name)
            try:
                with open(entry) as fh:
                    known = json.load(fh)
                path = str(known["path"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if not os.path.isdir(path):
                with contextlib.suppress(OSError):
                    os.unlink(entry)
                continue
            held = known.get("bytes")
            total += held if isinstance(held, int) else disk_usage(path)
        return total


def _entry_name(workspace: str) -> str:
    return hashlib.sha256(workspace.encode()).hexdigest()[:32]


def written_by(cgroup: str, skip: set[int]) -> int | None:
    """Bytes the processes of ``cgroup`` but ``skip`` (the supervisor and bubblewrap's
    outer process, in the sandbox's cpu cgroup on cgroup v1), and the children they
    reaped, wrote to files (``write_bytes`` of ``/proc/<pid>/io``); None when they cannot
    be read."""
    total = 0
    try:
        with open(os.path.join(cgroup, "cgroup.procs")) as fh:
            pids = [pid for pid in fh.read().split() if int(pid) not in skip]
    except (OSError, ValueError):
        return None
    for pid in pids:
        try:
            with open(f"/proc/{pid}/io") as fh:
                counts = dict(line.split(": ", 1) for line in fh.read().splitlines())
            total += int(counts["write_bytes"])
        except FileNotFoundError:
            continue  # exited meanwhile: its parent has counted it
        except (OSError, ValueError, KeyError):
            return None
    return total


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


def _limit_owner(path: str, group: dict[str, Any], limits: dict[str, int]) -> None:
    """Give the owner's fresh group ``path`` its limits (``owner_limits``: 0 is none) and,
    on cgroup v2, hand its children the controllers. No weight and no process limit: every
    owner's group keeps the default weight, and each sandbox has its own ``pids.max``."""
    version = group["version"]
    if version == 2:
        with open(os.path.join(path, "cgroup.subtree_control"), "w") as fh:
            fh.write(" ".join(f"+{c}" for c in group["controllers"]))
    for controller in group["controllers"]:
        files: list[tuple[str, str]] = []
        if controller == "memory" and limits.get("memory_bytes"):
            files = _limit_files("memory", version, limits)
            files = [(f, v) for f, v in files if not f.startswith("memory.oom.group")]
        elif controller == "cpu" and limits.get("cpu_max_percent"):
            files = _limit_files("cpu", version, limits)
        for file, value in files:
            _write_if_present(os.path.join(path, file), value)


def _enter(cgroup: str, pid: int) -> None:
    with open(os.path.join(cgroup, "cgroup.procs"), "w") as fh:
        fh.write(str(pid))


def _read_int(path: str) -> int:
    """A cgroup file holding one number (0 when unreadable)."""
    with contextlib.suppress(OSError, ValueError), open(path) as fh:
        return int(fh.read().strip() or 0)
    return 0


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
        try:
            supervisor.watch_disk()
        except SetupFailed as failure:
            print(f"sandbox: {failure}", file=sys.stderr, flush=True)
            return SETUP_FAILED
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
