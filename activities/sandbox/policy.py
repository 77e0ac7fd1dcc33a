"""The operator's sandbox policy, read from the worker's settings (docs/settings.md, "The
sandbox").

One frozen model says how model-chosen processes — ``run_shell_command`` and stdio MCP
servers — are confined: the mode (``bwrap`` or ``none``), the network policy and the
resource limits. It is read from the one settings model
(:mod:`seawall.runtime.settings`), so only the operator decides it: nothing in a workspace
or a workflow input can change it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from seawall.runtime.settings import (
    WORKER,
    SeawallSettings,
    default_of,
    load_settings,
    user_config_dir,
)

MIB = 1024 * 1024
# The owners' workspace index, in the data directory (docs/security-sandbox.md, "Disk per
# owner").
OWNER_DISK_INDEX = "sandbox-owners"


class SandboxMode(StrEnum):
    BWRAP = "bwrap"
    # Bare processes: the operator's explicit choice for single-user local use.
    NONE = "none"


class NetworkPolicy(StrEnum):
    # Its own empty network namespace: loopback only, and that loopback is its own.
    OFF = "off"
    # A user-mode network stack (slirp4netns) with the host's loopback cut off.
    ON = "on"


class SandboxLimits(BaseModel):
    """Resource limits of each sandboxed process (rlimits) and process tree (cgroups, the
    size of its ``/tmp``, its workspace's disk quota)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_seconds: int = Field(default=default_of("sandbox_cpu_seconds"), ge=1)
    memory_mb: int = Field(default=default_of("sandbox_memory_mb"), ge=1)
    file_size_mb: int = Field(default=default_of("sandbox_file_size_mb"), ge=1)
    max_processes: int = Field(default=default_of("sandbox_max_processes"), ge=2)
    memory_max_mb: int = Field(default=default_of("sandbox_memory_max_mb"), ge=1)
    cpu_weight: int = Field(default=default_of("sandbox_cpu_weight"), ge=1, le=10000)
    cpu_max_percent: int = Field(default=default_of("sandbox_cpu_max_percent"), ge=0)
    workspace_disk_mb: int = Field(default=default_of("sandbox_workspace_disk_mb"), ge=1)
    # All of one owner's sandboxes on this worker together (0: no owner-wide bound).
    owner_cpu_max_percent: int = Field(default=default_of("sandbox_owner_cpu_max_percent"), ge=0)
    owner_memory_max_mb: int = Field(default=default_of("sandbox_owner_memory_max_mb"), ge=0)
    owner_disk_mb: int = Field(default=default_of("sandbox_owner_disk_mb"), ge=0)

    def rlimits(self) -> dict[str, int]:
        """The per-process limits set before the sandbox starts, by ``resource`` name."""
        return {
            "RLIMIT_CPU": self.cpu_seconds,
            "RLIMIT_AS": self.memory_mb * MIB,
            "RLIMIT_FSIZE": self.file_size_mb * MIB,
        }

    def cgroup_limits(self, *, owned: bool = False) -> dict[str, int]:
        """What the supervisor writes into each sandbox's cgroups (activities/sandbox/
        supervisor.py): bytes, a percent of one core (0: no cap). Every sandbox keeps the
        default CPU weight, so sandboxes share equally; ``cpu_weight`` is their parent's
        (activities/sandbox/cgroup.py). In an owner's group (``owned``) a sandbox's cap is
        never above its owner's: that one binds it anyway, and cgroup v1 refuses a child's
        quota above its parent's."""
        cpu = self.cpu_max_percent
        if owned and self.owner_cpu_max_percent:
            cpu = min(cpu or self.owner_cpu_max_percent, self.owner_cpu_max_percent)
        return {
            "max_processes": self.max_processes,
            "memory_bytes": self.memory_max_mb * MIB,
            "cpu_max_percent": cpu,
        }

    def owner_cgroup_limits(self) -> dict[str, int]:
        """What the supervisor writes into the group of the sandbox's owner, which holds all
        of that owner's sandboxes on this worker (activities/sandbox/owners.py): bytes and a
        percent of one core, 0 for no bound. Every owner's group keeps the default weight,
        so busy owners share the sandboxes' CPU equally whatever each one runs."""
        return {
            "memory_bytes": self.owner_memory_max_mb * MIB,
            "cpu_max_percent": self.owner_cpu_max_percent,
        }


class SandboxPolicy(BaseModel):
    """How model-chosen processes are confined on this worker."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: SandboxMode = SandboxMode.BWRAP
    network: NetworkPolicy = NetworkPolicy.OFF
    limits: SandboxLimits = SandboxLimits()
    # Extra variables handed through from the worker (secrets are withheld all the same).
    env_passthrough: tuple[str, ...] = ()
    # The helpers, resolved on the worker's PATH; None: not installed.
    bwrap: str | None = None
    slirp4netns: str | None = None
    # The operator's own files (tokens file, data, config and workspaces directories),
    # masked wherever a read-only bind would otherwise show them (e.g. a tokens file in
    # /etc); the session's workspace is bound again on top.
    hidden_paths: tuple[str, ...] = ()
    # Where the worker keeps each owner's workspaces and what they hold, for the owner-wide
    # disk quota (the supervisor's ``OwnerIndex``): inside the data directory, so no sandbox
    # sees it; None (tests of the tools): no owner-wide disk quota.
    owner_disk_index: str | None = None

    @property
    def confined(self) -> bool:
        return self.mode is SandboxMode.BWRAP


def _operator_paths(settings: SeawallSettings, config_dir: Path | None) -> tuple[str, ...]:
    paths = [settings.data_dir, settings.workspaces_dir, config_dir]
    paths += [settings.gateway_tokens_file, settings.payload_storage_dir]
    return tuple(sorted({str(Path(p).absolute()) for p in paths if p is not None}))


def policy_from_settings(
    settings: SeawallSettings, path: str | None = None, config_dir: Path | None = None
) -> SandboxPolicy:
    """The policy of ``settings``, with the helpers looked up on ``path`` (default: this
    process's ``PATH``); ``config_dir`` is the operator's user config directory."""
    search = path if path is not None else os.environ.get("PATH", os.defpath)
    return SandboxPolicy(
        mode=SandboxMode(settings.sandbox),
        network=NetworkPolicy(settings.sandbox_network),
        limits=SandboxLimits(
            cpu_seconds=settings.sandbox_cpu_seconds,
            memory_mb=settings.sandbox_memory_mb,
            file_size_mb=settings.sandbox_file_size_mb,
            max_processes=settings.sandbox_max_processes,
            memory_max_mb=settings.sandbox_memory_max_mb,
            cpu_weight=settings.sandbox_cpu_weight,
            cpu_max_percent=settings.sandbox_cpu_max_percent,
            workspace_disk_mb=settings.sandbox_workspace_disk_mb,
            owner_cpu_max_percent=settings.sandbox_owner_cpu_max_percent,
            owner_memory_max_mb=settings.sandbox_owner_memory_max_mb,
            owner_disk_mb=settings.sandbox_owner_disk_mb,
        ),
        env_passthrough=tuple(n for n in settings.sandbox_env_passthrough.split(",") if n),
        bwrap=shutil.which("bwrap", path=search),
        slirp4netns=shutil.which("slirp4netns", path=search),
        hidden_paths=_operator_paths(settings, config_dir),
        owner_disk_index=str((settings.data_dir / OWNER_DISK_INDEX).absolute()),
    )


def load_policy(environ: Mapping[str, str] | None = None) -> SandboxPolicy:
    """The policy of the settings of ``environ`` (default: this process's environment)."""
    env = os.environ if environ is None else environ
    return policy_from_settings(
        load_settings(env, reader=WORKER).settings,
        env.get("PATH", os.defpath),
        user_config_dir(env),
    )
