"""What stopped a sandbox at one of its limits, in the words a tool reports it.

The supervisor (:mod:`activities.sandbox.supervisor`) reports, on a descriptor the command
never sees, how many of the sandbox's processes the kernel killed at its memory cgroup's
limit and whether the workspace went past its disk quota. Here that report becomes a
classified, truthful failure (``out_of_memory``, ``disk_quota_exceeded``) naming the limit,
so the model, the guard and the operator see the cause instead of a generic exit code. The
command's own output cannot fake it.
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
        used = int(report.get("disk_used_bytes", 0)) // MIB
        what = "was stopped at" if whole else "finished, but took the workspace past"
        return (
            ToolErrorType.DISK_QUOTA_EXCEEDED,
            f"The command {what} the workspace's disk quota of {limits.workspace_disk_mb} MB "
            f"(the workspace holds {used} MB); delete files to make room.",
        )
    if report.get("disk_full_at_start") is True and whole:
        used = int(report.get("disk_used_bytes", 0)) // MIB
        return (
            ToolErrorType.DISK_QUOTA_EXCEEDED,
            f"The workspace was over its disk quota of {limits.workspace_disk_mb} MB when the "
            f"command started (it holds {used} MB), so nothing could be written; delete "
            "files to make room.",
        )
    if isinstance(report.get("oom_kills"), int) and report["oom_kills"] > 0:
        return (
            ToolErrorType.OUT_OF_MEMORY,
            f"{'The command' if whole else 'A process of the command'} was stopped at the "
            f"sandbox's memory limit of {limits.memory_max_mb} "
            "MB (its processes and its /tmp together); use less memory at once.",
        )
    return None
