"""Where each sandbox gets its cgroups: the process, memory and CPU limits of a whole tree.

``RLIMIT_NPROC`` is not enforced for processes whose real uid is root on the host, and
rlimits bound one process, not a tree (N processes may hold N times ``RLIMIT_AS``), so every
sandbox gets its own cgroup per controller (docs/security-sandbox.md, "Resource limits"):
``pids.max``, a memory limit that counts its tmpfs ``/tmp``, and an optional CPU cap. The
controllers this worker may use are found by :mod:`seawall.runtime.cgroups` (cgroup
v1's hierarchies, or v2 where delegated); here the worker makes ``seawall-sandbox/`` in each
at startup, checks that a child of it takes the limits, and removes empty children a killed
supervisor left. The supervisor makes one child per sandbox beneath. A controller that fails
any step is left out, and the startup line says what then bounds that resource.

The CPU weight (``sandbox_cpu_weight``) is written here, on ``seawall-sandbox/`` itself, not
on each sandbox: its siblings are the worker's own processes, so the weight says how much of
the worker's CPU all its sandboxes together get when both want it (100: as much as one
busy process of the worker's on cgroup v1, as much as a sibling group of default weight on
v2), and every sandbox beneath keeps the default weight, an equal share of that. A weight
per sandbox that every sandbox got alike would change nothing.
"""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path

from seawall.runtime.cgroups import controller_dirs

SUBTREE = "seawall-sandbox"

# The file each controller's check writes in a fresh child (the first of the limits the
# supervisor sets), per cgroup version.
_LIMIT_FILE = {
    ("pids", 1): "pids.max",
    ("pids", 2): "pids.max",
    ("memory", 1): "memory.limit_in_bytes",
    ("memory", 2): "memory.max",
    ("cpu", 1): "cpu.shares",
    ("cpu", 2): "cpu.weight",
}


def cpu_weight_file(version: int, weight: int) -> tuple[str, str]:
    """(file, value) that give a cpu cgroup ``weight`` (1-10000, 100 the default): v2's
    ``cpu.weight``; v1's ``cpu.shares``, whose default is 1024."""
    if version == 1:
        return "cpu.shares", str(max(2, weight * 1024 // 100))
    return "cpu.weight", str(weight)


def _prepare(root: Path, controller: str, version: int, cpu_weight: int) -> bool:
    """Make ``root``, delegate ``controller`` to its children (v2), remove stale children,
    check that a child takes the controller's limit, and give ``root`` its CPU weight."""
    try:
        root.mkdir(mode=0o700, exist_ok=True)
        if version == 2:
            subtree = root / "cgroup.subtree_control"
            if controller not in subtree.read_text().split():
                subtree.write_text(f"+{controller}")
    except OSError:
        return False
    for stale in root.iterdir():
        if stale.is_dir() and stale.name[:1].isdigit():
            with contextlib.suppress(OSError):
                stale.rmdir()  # left by a supervisor that was SIGKILLed; busy ones stay
    check = root / f"check-{uuid.uuid4().hex[:8]}"
    try:
        check.mkdir(mode=0o700)
        limit = check / _LIMIT_FILE[(controller, version)]
        limit.write_text(limit.read_text().strip())
        if controller == "cpu":
            name, value = cpu_weight_file(version, cpu_weight)
            (root / name).write_text(value)
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            check.rmdir()


def sandbox_cgroup_roots(
    cpu_weight: int = 100, subtree: str = SUBTREE
) -> dict[str, tuple[int, Path]]:
    """controller -> (cgroup version, directory for per-sandbox cgroups), for each controller
    that works here; empty when none does. The cpu directory gets ``cpu_weight``."""
    roots: dict[str, tuple[int, Path]] = {}
    for controller, found in controller_dirs(subtree).items():
        root = found.path / subtree
        if _prepare(root, controller, found.version, cpu_weight):
            roots[controller] = (found.version, root)
    return roots
