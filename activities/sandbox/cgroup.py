"""Where each sandbox gets its pids cgroup: the process limit that binds even for root.

``RLIMIT_NPROC`` is not enforced for processes whose real uid is root on the host, and a
user namespace does not change that (the kernel checks the host uid), so a worker running
as root (as in many containers) needs the pids controller: every sandbox gets its own
cgroup with ``pids.max``, made by the supervisor under the directory found here. It is the
worker's own cgroup (cgroup v1's pids hierarchy, or cgroup v2 when the pids controller is
delegated to it), plus ``seawall-sandbox``. Found at startup; ``None`` when none is
writable, and then only ``RLIMIT_NPROC`` limits processes (docs/security-sandbox.md,
"Resource limits").
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

SUBTREE = "seawall-sandbox"


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


def _candidates() -> list[Path]:
    own = _own_cgroups()
    result = []
    for fstype, root, point, options in _mounts():
        if fstype == "cgroup" and "pids" in options:
            path = next((p for c, p in own.items() if "pids" in c.split(",")), None)
            if path is not None:
                result.append(_under(point, root, path))
        elif fstype == "cgroup2" and "" in own:
            base = _under(point, root, own[""])
            with contextlib.suppress(OSError):
                if "pids" in (base / "cgroup.subtree_control").read_text().split():
                    result.append(base)
    return result


def pids_cgroup_root() -> Path | None:
    """A writable directory for per-sandbox pids cgroups (stale empty ones removed), or
    ``None``."""
    for base in _candidates():
        root = base / SUBTREE
        try:
            root.mkdir(mode=0o700, exist_ok=True)
            subtree = root / "cgroup.subtree_control"
            if subtree.exists() and "pids" not in subtree.read_text().split():
                subtree.write_text("+pids")
        except OSError:
            continue
        if not os.access(root, os.W_OK):
            continue
        for stale in root.iterdir():
            if stale.is_dir():
                with contextlib.suppress(OSError):
                    stale.rmdir()  # left by a supervisor that was SIGKILLed; busy ones stay
        return root
    return None
