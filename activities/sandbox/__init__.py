"""The sandbox of every model-chosen process: shell commands and stdio MCP servers.

docs/security-sandbox.md describes what is confined and how. The modules, each one idea:

- :mod:`.policy`: the operator's policy (mode, network, limits) from the settings;
- :mod:`.environment`: the allowlisted environment of a confined process;
- :mod:`.bwrap`: the bubblewrap options (what is visible, writable, shared);
- :mod:`.cgroup`: where per-sandbox cgroups go (processes, memory, CPU of a whole tree);
- :mod:`.supervisor`: the standard-library script that applies the limits, attaches the
  network helper, and dies with the worker;
- :mod:`.launch`: the :class:`Sandbox` tools ask for a command line, or a refusal;
- :mod:`.limits`: what stopped a sandbox at a limit, as a classified tool failure;
- :mod:`.probe`: the worker's startup check (fail closed).
"""

from __future__ import annotations

from .launch import UNCONFINED, Launch, Sandbox, SandboxUnavailable
from .policy import NetworkPolicy, SandboxLimits, SandboxMode, SandboxPolicy, load_policy
from .probe import log_sandbox_status, probe

__all__ = [
    "UNCONFINED",
    "Launch",
    "NetworkPolicy",
    "Sandbox",
    "SandboxLimits",
    "SandboxMode",
    "SandboxPolicy",
    "SandboxUnavailable",
    "load_policy",
    "log_sandbox_status",
    "probe",
]
