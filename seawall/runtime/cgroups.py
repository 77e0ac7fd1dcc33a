"""Which cgroup controllers this process can hand each sandbox: the host facts behind the
sandbox's process, memory and CPU limits (docs/security-sandbox.md, "Resource limits").

The worker gives every sandbox a cgroup of its own under its own cgroup, per controller:
``pids`` (the process limit that binds even for root), ``memory`` (the whole tree's memory,
its ``/tmp`` included) and ``cpu`` (its share, and an optional cap). Each controller is
found where this process's cgroup has it: cgroup v1's hierarchy of that controller, or
cgroup v2 where the controller is delegated (listed in the cgroup's
``cgroup.subtree_control``). A controller found nowhere writable is not there, and the
sandbox falls back (an rlimit, or nothing) and says so at start.

Here, not in the worker's sandbox package, because the processes that report the limits at
start without running a sandbox (``seawall up``'s banner, ``seawall config``) read the same
facts; the worker's package (activities/sandbox/cgroup.py) makes the directories.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

# The controllers a sandbox uses, in the order the reports name them.
CONTROLLERS = ("memory", "cpu", "pids")
# What each one bounds, in the reports' words.
BOUNDS = {"memory": "memory", "cpu": "cpu share", "pids": "processes"}


@dataclass(frozen=True)
class ControllerDir:
    """This process's own cgroup directory in a hierarchy that has ``controller``."""

    controller: str
    version: int  # 1 or 2
    path: Path


def _own_cgroups() -> dict[str, str]:
    """Controller list (``""`` for v2) -> this process's cgroup path."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _id, controllers, path = line.split(":", 2)
            paths[controllers] = path
    return paths


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(fstype, mount root, mount point, super options) of every cgroup mount."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                found.append((tail[0], fields[3], fields[4], set(tail[2].split(","))))
    return found


def _under(mount_point: str, mount_root: str, path: str) -> Path:
    relative = os.path.relpath(path, mount_root) if path.startswith(mount_root) else path
    relative = relative.lstrip("/")
    return Path(mount_point) / relative if relative not in ("", ".") else Path(mount_point)


def _delegated(base: Path, subtree: str) -> set[str]:
    """The v2 controllers a child of ``base`` gets: those in its ``cgroup.subtree_control``
    (or in that of its ``subtree`` directory, made by an earlier worker)."""
    found: set[str] = set()
    for path in (base / "cgroup.subtree_control", base / subtree / "cgroup.subtree_control"):
        with contextlib.suppress(OSError):
            found |= set(path.read_text().split())
    return found


def controller_dirs(subtree: str) -> dict[str, ControllerDir]:
    """Each of :data:`CONTROLLERS` this process may give a child cgroup, and where: the
    first hierarchy, in mount order, that has it (``subtree`` is the directory the worker
    makes beneath, for a v2 delegation it made earlier)."""
    own = _own_cgroups()
    found: dict[str, ControllerDir] = {}
    for fstype, root, point, options in _mounts():
        if fstype == "cgroup":
            for controller in CONTROLLERS:
                if controller not in options or controller in found:
                    continue
                path = next((p for c, p in own.items() if controller in c.split(",")), None)
                if path is not None:
                    found[controller] = ControllerDir(controller, 1, _under(point, root, path))
        elif fstype == "cgroup2" and "" in own:
            base = _under(point, root, own[""])
            for controller in CONTROLLERS:
                if controller not in found and controller in _delegated(base, subtree):
                    found[controller] = ControllerDir(controller, 2, base)
    return {c: d for c, d in found.items() if os.access(d.path, os.W_OK)}


def describe(found: dict[str, int]) -> str:
    """``memory, cpu share, processes: cgroup v1`` (or what is missing) for the reports, from
    controller -> cgroup version."""
    groups: dict[int, list[str]] = {}
    for controller in CONTROLLERS:
        if controller in found:
            groups.setdefault(found[controller], []).append(BOUNDS[controller])
    parts = [f"{', '.join(names)} by cgroup v{v}" for v, names in sorted(groups.items())]
    missing = [BOUNDS[c] for c in CONTROLLERS if c not in found]
    if missing:
        parts.append(f"no cgroup for {', '.join(missing)}")
    return "; ".join(parts)


def sandbox_limits_line(mode: str, owner_disk_mb: int = 0, subtree: str = "seawall-sandbox") -> str:
    """What bounds each sandbox here, for ``seawall up``'s banner and ``seawall config``:
    the controllers this process could hand a sandbox (the worker, started the same way,
    finds the same; its ``sandbox_ready`` line is the word on what it uses), and the disk
    quotas (``owner_disk_mb``: ``sandbox_owner_disk_mb``, 0 for none)."""
    if mode != "bwrap":
        return "sandbox limits: rlimits per process only (sandbox: none runs commands bare)"
    found = {c: d.version for c, d in controller_dirs(subtree).items()}
    fallback = "" if len(found) == len(CONTROLLERS) else " (the rest: rlimits per process)"
    owner = f" and per owner ({owner_disk_mb} MB)" if owner_disk_mb else ", none per owner"
    return (
        f"sandbox limits: {describe(found)}{fallback}; disk by a watched quota per workspace{owner}"
    )
