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
from .policy import NetworkPolicy, SandboxMode, SandboxPolicy

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
    # Parent directory of the per-sandbox pids cgroups (None: RLIMIT_NPROC only).
    cgroup_root: Path | None = None
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
        if self.cgroup_root is not None:
            return "cgroup"
        return "rlimit" if os.getuid() != 0 else "none"

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
    ) -> Launch:
        """The supervisor command that runs ``command`` in ``cwd``, confined to
        ``workspace`` (bare when the mode is ``none``). ``network`` overrides the
        policy's (an operator's per-server option); ``extra_env`` is operator configuration
        (an MCP server's ``env``), passed as given. :class:`SandboxUnavailable` when the
        sandbox cannot start."""
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
            ),
        }
        spec["max_processes"] = policy.limits.max_processes
        if self.cgroup_root is not None:
            spec["cgroup"] = str(self.cgroup_root)
        if (network or policy.network) is NetworkPolicy.ON:
            if policy.slirp4netns is None:
                raise SandboxUnavailable("network access needs slirp4netns, not installed")
            spec["slirp4netns"] = policy.slirp4netns
        # The values reach the supervisor in its environment, never in its command line
        # (every local user reads /proc/<pid>/cmdline); the names say which of its
        # environment it hands bubblewrap (an MCP SDK adds its own defaults around them).
        spec["env"] = sorted(env)
        return Launch(self._supervisor(spec), env)

    def _check_workspace(self, workspace: Path) -> None:
        """Refuse a workspace whose writable bind would expose what the sandbox hides: ``/``,
        a system directory or one above it, or a directory holding the worker's own files
        (its data or config directory, tokens file, the workspaces root itself). The
        workflow input names the workspace; the worker checks it (docs/security-sandbox.md)."""
        system = [Path(name) for name in SYSTEM_DIRS]
        hidden = [Path(p) for p in self.policy.hidden_paths]
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
