"""The resource limits of each sandbox, declared in one place (docs/settings.md, "The sandbox";
docs/security-sandbox.md, "Resource limits").

Every limit is a worker setting with a default that suits a laptop (one user, generous) and
a suggestion for a fleet of workers shared by many owners, kept here beside it so the two
docs tables and the catalogue cannot drift. The catalogue declares one field per row (its
sandbox block, with :func:`sandbox_limit_setting`), in this order;
activities/sandbox/policy.py reads them into ``SandboxLimits``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .fields import WORKER, setting


@dataclass(frozen=True)
class SandboxLimitSetting:
    name: str
    default: int
    fleet: int  # a suggestion for a shared worker, in docs/security-sandbox.md's table
    help: str
    ge: int
    le: int

    @property
    def env(self) -> str:
        return f"SEAWALL_{self.name.upper()}"


SANDBOX_LIMIT_SETTINGS: tuple[SandboxLimitSetting, ...] = (
    SandboxLimitSetting(
        "sandbox_cpu_seconds",
        600,
        600,
        "CPU time of one sandboxed process, in seconds (RLIMIT_CPU)",
        ge=1,
        le=86400,
    ),
    SandboxLimitSetting(
        "sandbox_memory_mb",
        8192,
        8192,
        "address space of one sandboxed process, in MiB (RLIMIT_AS)",
        ge=64,
        le=1048576,
    ),
    SandboxLimitSetting(
        "sandbox_file_size_mb",
        1024,
        1024,
        "largest file a sandboxed process may write, in MiB (RLIMIT_FSIZE)",
        ge=1,
        le=1048576,
    ),
    SandboxLimitSetting(
        "sandbox_max_processes",
        256,
        256,
        "processes (and threads) one sandbox may run at once (pids cgroup, else RLIMIT_NPROC)",
        ge=2,
        le=65536,
    ),
    SandboxLimitSetting(
        "sandbox_memory_max_mb",
        4096,
        1024,
        "memory of one sandbox's whole process tree, its /tmp included, in MiB (a memory "
        "cgroup; also the size of its /tmp)",
        ge=16,
        le=1048576,
    ),
    SandboxLimitSetting(
        "sandbox_cpu_weight",
        100,
        100,
        "CPU share of all sandboxes together against the worker's own processes, 1-10000 "
        "(cpu.weight of their parent cgroup, seawall-sandbox/; cgroup v1: cpu.shares of "
        "weight x 1024 / 100); each sandbox gets an equal part of it",
        ge=1,
        le=10000,
    ),
    SandboxLimitSetting(
        "sandbox_cpu_max_percent",
        0,
        100,
        "CPU cap of one sandbox, in percent of one core (100: one core; 0: no cap; cpu.max "
        "or cpu.cfs_quota_us)",
        ge=0,
        le=100000,
    ),
    SandboxLimitSetting(
        "sandbox_owner_cpu_max_percent",
        0,
        100,
        "CPU cap of all of one owner's sandboxes on this worker together, in percent of one "
        "core (100: one core; 0: no cap; cpu.max or cpu.cfs_quota_us of the owner's group)",
        ge=0,
        le=100000,
    ),
    SandboxLimitSetting(
        "sandbox_owner_memory_max_mb",
        0,
        2048,
        "memory of all of one owner's sandboxes on this worker together, their /tmp "
        "included, in MiB (0: no owner-wide limit; a memory cgroup of the owner's group)",
        ge=0,
        le=1048576,
    ),
    SandboxLimitSetting(
        "sandbox_workspace_disk_mb",
        10240,
        2048,
        "disk space one workspace may hold, in MiB (checked before each sandboxed call and "
        "watched during it)",
        ge=1,
        le=1048576 * 16,
    ),
    SandboxLimitSetting(
        "sandbox_owner_disk_mb",
        20480,
        8192,
        "disk space all of one owner's workspaces may hold together, in MiB (0: no owner-wide "
        "quota; checked before each of the owner's sandboxed calls and watched during it)",
        ge=0,
        le=1048576 * 16,
    ),
)


def sandbox_limit_setting(name: str) -> Any:
    """The field of the sandbox limit ``name`` of :data:`SANDBOX_LIMIT_SETTINGS`."""
    (row,) = (r for r in SANDBOX_LIMIT_SETTINGS if r.name == name)
    return setting(row.default, row.help, env=row.env, read_by=(WORKER,), ge=row.ge, le=row.le)
