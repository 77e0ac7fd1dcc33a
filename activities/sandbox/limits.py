"""What stopped a sandbox at one of its limits, in the words a tool reports it.

The supervisor (:mod:`activities.sandbox.supervisor`) reports, on a descriptor the command
never sees, how many of the sandbox's processes the kernel killed at its memory cgroup's
limit (or its owner's group's) and whether the call took its workspace past its disk quota
or its owner's. Here that report becomes a classified, truthful failure (``out_of_memory``,
``disk_quota_exceeded``) naming the limit, so the model, the guard and the operator see the
cause instead of a generic exit code. The command's own output cannot fake it.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from workflows.contracts import ToolErrorType

from .policy import MIB, SandboxLimits

MAX_REPORT_BYTES = 4096


def read_report(fd: int) -> dict[str, Any]:
    """The supervisor's report from the read end ``fd`` (empty when it wrote none: it was
    killed, or it ran no sandbox). Read once the supervisor has exited."""
    os.set_blocking(fd, False)
    data = b""
    with contextlib.suppress(BlockingIOError, OSError):
        while chunk := os.read(fd, MAX_REPORT_BYTES):
            data += chunk
            if len(data) > MAX_REPORT_BYTES:
                return {}
    try:
        report = json.loads(data)
    except ValueError:
        return {}
    return report if isinstance(report, dict) else {}


def stopped_by_limit(
    report: dict[str, Any], limits: SandboxLimits, *, whole: bool = True
) -> tuple[ToolErrorType, str] | None:
    """The classified failure of a sandbox its report says a limit stopped, with the words
    that name it (``whole``: the command failed, else one of its processes was stopped and
    the command went on); ``None`` when no limit did."""
    if report.get("disk_exceeded") is True:
        what = "was stopped at" if whole else "finished, but took its workspace past"
        return (
            ToolErrorType.DISK_QUOTA_EXCEEDED,
            f"The command {what} {_disk_quota(report, limits)}",
        )
    if report.get("disk_full_at_start") is True and whole:
        return (
            ToolErrorType.DISK_QUOTA_EXCEEDED,
            f"The command could write nothing: its workspace was already at "
            f"{_disk_quota(report, limits)}",
        )
    if isinstance(report.get("oom_kills"), int) and report["oom_kills"] > 0:
        what = "The command" if whole else "A process of the command"
        if report.get("memory_limit") == "owner":
            return (
                ToolErrorType.OUT_OF_MEMORY,
                f"{what} was stopped at the owner's memory limit of "
                f"{limits.owner_memory_max_mb} MB (all of the owner's commands running at "
                "once together); use less memory at once, or run fewer commands at a time.",
            )
        return (
            ToolErrorType.OUT_OF_MEMORY,
            f"{what} was stopped at the sandbox's memory limit of {limits.memory_max_mb} "
            "MB (its processes and its /tmp together); use less memory at once.",
        )
    return None


def _disk_quota(report: dict[str, Any], limits: SandboxLimits) -> str:
    """Which disk quota, what it holds and what to do, from the report's ``disk_limit``."""
    workspace = int(report.get("disk_used_bytes", 0)) // MIB
    if report.get("disk_limit") == "owner":
        owner = int(report.get("owner_disk_used_bytes", 0)) // MIB
        return (
            f"the owner's disk quota of {limits.owner_disk_mb} MB (all of the owner's "
            f"workspaces together hold {owner} MB, this one {workspace} MB); delete files "
            "here or in the owner's other sessions' workspaces to make room (a closed "
            "session's workspace counts until the operator removes it)."
        )
    return (
        f"the workspace's disk quota of {limits.workspace_disk_mb} MB (the workspace holds "
        f"{workspace} MB); delete files in it to make room."
    )
