"""How a tool starts a model-chosen process: the supervisor command line of one sandbox.

:class:`Sandbox` is what the worker knows about its sandbox after the startup probe
(:mod:`activities.sandbox.probe`): the operator's policy, whether it can be honoured, and
the pids cgroup directory. Tools ask it for :meth:`Sandbox.launch`, the command that runs a
process under the supervisor (:mod:`activities.sandbox.supervisor`), confined to one
workspace; a sandbox that could not start refuses with :meth:`Sandbox.refusal` instead
(fail closed), unless the operator chose ``sandbox: none``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .bwrap import SYSTEM_DIRS, bwrap_options
from .environment import sandbox_environment
from .policy import MIB, NetworkPolicy, SandboxMode, SandboxPolicy

SUPERVISOR = str(Path(__file__).with_name("supervisor.py"))


class SandboxUnavailable(Exception):
    """The sandbox the policy asks for cannot start; the message says why, for the tool
    error (it names settings, never a path or a server)."""


@dataclass(frozen=True)
class Launch:
    """A process to start: its command line and the environment of that command line (the
    supervisor's; a sandboxed process gets its own, set inside)."""

    argv: list[str]
    env: dict[str, str]


@dataclass(frozen=True)
class Sandbox:
    """The worker's sandbox: its policy and, after the probe, whether it works."""

    policy: SandboxPolicy
    # Why the sandbox cannot start (None: it can, or the mode is none).
    problem: str | None = None
    # controller ("pids", "memory", "cpu") -> (cgroup version, parent directory of the
    # per-sandbox cgroups), for each controller that works here (activities/sandbox/cgroup.py).
    cgroups: Mapping[str, tuple[int, Path]] = field(default_factory=dict)
    # Whether bubblewrap takes --size for a tmpfs (0.6 and later): /tmp bounded in size.
    tmp_size: bool = False
    # The worker's environment, read when a process starts (tests pass their own).
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ, repr=False)

    @property
    def usable(self) -> bool:
        return self.problem is None

    @property
    def process_limit(self) -> str:
        """How the process limit is enforced: ``cgroup``, ``rlimit`` or ``none``."""
        if not self.policy.confined:
            return "none"
        if "pids" in self.cgroups:
            return "cgroup"
        return "rlimit" if os.getuid() != 0 else "none"

    @property
    def memory_limit(self) -> str:
        """How a sandbox's whole tree is bounded in memory: ``cgroup`` (its ``/tmp``
        counted), ``rlimit`` (each process's address space only, and ``/tmp``'s size when
        bubblewrap can bound it), or ``none``."""
        if not self.policy.confined:
            return "rlimit"
        return "cgroup" if "memory" in self.cgroups else "rlimit"

    @property
    def cpu_share(self) -> str:
        """How a sandbox's CPU share is bounded: ``cgroup`` or ``none`` (CPU time only)."""
        return "cgroup" if self.policy.confined and "cpu" in self.cgroups else "none"

    @property
    def fallbacks(self) -> list[str]:
        """What a confined sandbox cannot bound here, and what bounds it instead, in the
        startup line's words (empty: every limit is enforced as configured)."""
        if not self.policy.confined:
            return []
        found = []
        if self.memory_limit != "cgroup":
            found.append("memory: no memory cgroup, each process's address space only")
        if not self.tmp_size:
            found.append("/tmp: bubblewrap cannot bound a tmpfs's size (before 0.6)")
        if self.cpu_share != "cgroup":
            found.append("cpu share: no cpu cgroup, CPU time per process only")
        if self.process_limit == "none":
            found.append("processes: no pids cgroup and a root worker, no process limit")
        return found

    def refusal(self, what: str, problem: str | None = None) -> str:
        """The tool error of a refused ``what`` (``"shell commands"``, ...)."""
        return (
            f"The sandbox that confines {what} cannot start on this worker "
            f"({problem or self.problem}), so they are refused. The operator must install "
            "bubblewrap (and slirp4netns for network access) or set sandbox: none "
            "(docs/security-sandbox.md)."
        )

    def launch(
        self,
        command: Sequence[str],
        *,
        workspace: Path,
        cwd: Path,
        read_only_paths: Sequence[Path] = (),
        network: NetworkPolicy | None = None,
        extra_env: Mapping[str, str] | None = None,
        report_fd: int | None = None,
        owner: str | None = None,
    ) -> Launch:
        """The supervisor command that runs ``command`` in ``cwd``, confined to
        ``workspace`` (bare when the mode is ``none``). ``network`` overrides the
        policy's (an operator's per-server option); ``extra_env`` is operator configuration
        (an MCP server's ``env``), passed as given; ``report_fd``, a descriptor the caller
        passes on, gets the supervisor's report of what stopped the sandbox (its memory
        limit, its disk quota); ``owner``, the pseudonym of the call's owner
        (:mod:`.owners`), puts the sandbox's cgroups in that owner's group, bound with the
        owner's other sandboxes, and its workspace under the owner's disk quota.
        :class:`SandboxUnavailable` when the sandbox cannot start."""
        policy = self.policy
        if self.problem is not None:
            raise SandboxUnavailable(self.problem)
        bare = policy.mode is SandboxMode.NONE
        env = sandbox_environment(self.environ, policy.env_passthrough, bare=bare)
        env.update(extra_env or {})
        spec: dict[str, object] = {
            "parent": os.getpid(),
            "command": list(command),
            "rlimits": policy.limits.rlimits(),
        }
        if bare:
            return Launch(self._supervisor(spec), env)
        if policy.bwrap is None:
            raise SandboxUnavailable("bubblewrap (bwrap) is not installed")
        self._check_workspace(workspace)
        spec["bwrap"] = {
            "path": policy.bwrap,
            "options": bwrap_options(
                workspace,
                cwd=cwd,
                read_only_paths=read_only_paths,
                hidden_paths=[Path(p) for p in policy.hidden_paths],
                tmp_size=policy.limits.memory_max_mb * MIB if self.tmp_size else None,
            ),
        }
        spec["max_processes"] = policy.limits.max_processes
        spec["cgroups"] = self._cgroup_groups()
        spec["cgroup_limits"] = policy.limits.cgroup_limits(owned=owner is not None)
        if owner is not None and spec["cgroups"]:
            spec["owner"] = owner
            spec["owner_limits"] = policy.limits.owner_cgroup_limits()
        spec["disk"] = self._disk(workspace, owner)
        if report_fd is not None:
            spec["report_fd"] = report_fd
        if (network or policy.network) is NetworkPolicy.ON:
            if policy.slirp4netns is None:
                raise SandboxUnavailable("network access needs slirp4netns, not installed")
            spec["slirp4netns"] = policy.slirp4netns
        # The values reach the supervisor in its environment, never in its command line
        # (every local user reads /proc/<pid>/cmdline); the names say which of its
        # environment it hands bubblewrap (an MCP SDK adds its own defaults around them).
        spec["env"] = sorted(env)
        return Launch(self._supervisor(spec), env)

    def _disk(self, workspace: Path, owner: str | None) -> dict[str, object]:
        """The disk quotas the supervisor watches: the workspace's and, for an owned call,
        its owner's over every workspace of the owner's that the index in the data
        directory lists (the supervisor adds this one to it)."""
        limits, index = self.policy.limits, self.policy.owner_disk_index
        disk: dict[str, object] = {"path": str(workspace), "bytes": limits.workspace_disk_mb * MIB}
        if owner is not None and index is not None and limits.owner_disk_mb:
            disk["owner"] = {"index": str(Path(index) / owner), "bytes": limits.owner_disk_mb * MIB}
        return disk

    def _cgroup_groups(self) -> list[dict[str, object]]:
        """The cgroups to make per sandbox: one per directory (a v2 directory serves every
        controller delegated to it, v1 has one hierarchy per controller)."""
        groups: dict[Path, dict[str, object]] = {}
        for controller, (version, root) in sorted(self.cgroups.items()):
            group = groups.setdefault(
                root, {"root": str(root), "version": version, "controllers": []}
            )
            controllers = group["controllers"]
            assert isinstance(controllers, list)
            controllers.append(controller)
        return list(groups.values())

    def _check_workspace(self, workspace: Path) -> None:
        """Refuse a workspace whose writable bind would expose what the sandbox hides: ``/``,
        a system directory or one above it, or a directory holding the worker's own files
        (its data or config directory, tokens file, the workspaces root itself). The
        workflow input names the workspace; the worker checks it (docs/security-sandbox.md)."""
        system = [Path(name) for name in SYSTEM_DIRS]
        hidden = [Path(p) for p in self.policy.hidden_paths]
        index = self.policy.owner_disk_index
        if index is not None and (Path(index) == workspace or Path(index) in workspace.parents):
            # The owners' disk index is the worker's: no sandbox writes it.
            raise SandboxUnavailable("the workspace would expose the worker's own files")
        for path in [*system, *hidden]:
            if workspace == path or workspace in path.parents or path in workspace.parents:
                if path in hidden and path in workspace.parents:
                    continue  # a workspace inside the data dir is where workspaces live
                raise SandboxUnavailable(
                    "the workspace would expose system directories or the worker's own files"
                )

    @staticmethod
    def _supervisor(spec: Mapping[str, object]) -> list[str]:
        return [sys.executable, "-S", "-I", SUPERVISOR, json.dumps(spec)]


# The bare sandbox of code paths that run no model-chosen process under a policy (tests of
# the tools themselves); the worker always builds its own with the probe.
UNCONFINED = Sandbox(SandboxPolicy(mode=SandboxMode.NONE))
