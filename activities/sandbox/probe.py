"""The worker's startup check of its sandbox: does a confined process actually start here?

Run once when the worker builds its activities (``seawall/worker/``). It starts ``true`` in a
throwaway workspace exactly as a tool would (same supervisor, same options, the network
helper when the policy allows network), so a missing binary, disabled user namespaces or a
container profile that forbids them are found before the first prompt. A failure is not a
crash: the worker runs, refuses shell commands and stdio MCP servers with a clear tool error
(fail closed), and logs one line naming the setting (:func:`log_sandbox_status`).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .cgroup import sandbox_cgroup_roots
from .environment import withheld_passthrough
from .launch import Sandbox, SandboxUnavailable
from .policy import NetworkPolicy, SandboxPolicy

PROBE_TIMEOUT_SECONDS = 30.0
MAX_REASON_CHARS = 200


def _reason(stderr: bytes, code: int) -> str:
    lines = [line.strip() for line in stderr.decode(errors="replace").splitlines()]
    last = next((line for line in reversed(lines) if line), "")
    return (last or f"exit code {code}")[:MAX_REASON_CHARS]


def _bounds_tmpfs_size(bwrap: str) -> bool:
    """Whether this bubblewrap takes ``--size`` for a tmpfs (0.6 and later)."""
    try:
        done = subprocess.run(
            [bwrap, "--help"], capture_output=True, timeout=PROBE_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"--size" in done.stdout + done.stderr


def probe(policy: SandboxPolicy) -> Sandbox:
    """The worker's :class:`Sandbox` for ``policy``, with its problem when it cannot start."""
    if not policy.confined:
        return Sandbox(policy)
    if policy.bwrap is None:
        return Sandbox(policy, problem="bubblewrap (bwrap) is not installed")
    if policy.network is NetworkPolicy.ON and policy.slirp4netns is None:
        return Sandbox(policy, problem="sandbox_network is on but slirp4netns is not installed")
    sandbox = Sandbox(
        policy,
        cgroups=sandbox_cgroup_roots(policy.limits.cpu_weight),
        tmp_size=_bounds_tmpfs_size(policy.bwrap),
    )
    with tempfile.TemporaryDirectory(prefix="seawall-sandbox-probe-") as scratch:
        workspace = Path(scratch).resolve()
        try:
            launch = sandbox.launch(["/bin/true"], workspace=workspace, cwd=workspace)
            done = subprocess.run(
                launch.argv,
                env=launch.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=PROBE_TIMEOUT_SECONDS,
                check=False,
            )
        except SandboxUnavailable as exc:
            return Sandbox(policy, problem=str(exc))
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Sandbox(policy, problem=f"the sandbox did not start ({type(exc).__name__})")
    if done.returncode != 0:
        reason = _reason(done.stderr, done.returncode)
        return Sandbox(policy, problem=f"the sandbox did not start: {reason}")
    return sandbox


def log_sandbox_status(sandbox: Sandbox, log: Any) -> None:
    """One startup line: the mode and how it is enforced, or the one error naming the
    setting when the sandbox cannot start."""
    policy = sandbox.policy
    if not sandbox.usable:
        log.error(
            "sandbox_unavailable",
            setting="sandbox",
            mode=policy.mode.value,
            problem=sandbox.problem,
            effect="run_shell_command and stdio MCP servers are refused; install bubblewrap "
            "(make install) or set sandbox: none for single-user local use",
        )
        return
    withheld = withheld_passthrough(policy.env_passthrough)
    limits = policy.limits
    log.info(
        "sandbox_ready",
        mode=policy.mode.value,
        network=policy.network.value if policy.confined else "host",
        process_limit=sandbox.process_limit,
        memory_limit=sandbox.memory_limit,
        memory_max_mb=limits.memory_max_mb,
        cpu_share=sandbox.cpu_share,
        cpu_weight=limits.cpu_weight,
        cpu_max_percent=limits.cpu_max_percent,
        owner_cpu_max_percent=limits.owner_cpu_max_percent,
        owner_memory_max_mb=limits.owner_memory_max_mb,
        disk_quota="watched" if policy.confined else "none",
        workspace_disk_mb=limits.workspace_disk_mb,
        owner_disk_mb=limits.owner_disk_mb if policy.owner_disk_index else 0,
        withheld_passthrough=len(withheld),
    )
    if sandbox.fallbacks:
        # Never silent: what this host cannot bound per sandbox, and what bounds it instead.
        log.warning(
            "sandbox_limits_fallback",
            setting="sandbox_memory_max_mb, sandbox_cpu_weight, sandbox_max_processes",
            fallbacks=sandbox.fallbacks,
            effect="one sandbox can take more of this worker than its settings say; "
            "docs/security-sandbox.md, 'Resource limits'",
        )
