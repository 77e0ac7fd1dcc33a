"""Shared by the MCP activity tests and the workflow tests: the fixture server's
configuration (and servers that make a tool listing wait), and a capture of every log
record written while a test runs."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import structlog
from temporalio.client import WorkflowHandle

FIXTURE_SERVER = Path(__file__).resolve().parent / "mcp_server_fixture.py"
# A server name that must never show up in logs or guard telemetry.
SERVER = "srvSENTINEL42"


# What the fixture server needs to see in the sandbox (docs/security-sandbox.md, "MCP
# servers"): its interpreter, the virtual environment with the SDK, and its own directory.
FIXTURE_SANDBOX = {
    "read_only_paths": sorted({sys.prefix, sys.base_prefix, str(FIXTURE_SERVER.parent)})
}


def stdio_server(**extra: Any) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": [str(FIXTURE_SERVER)],
        "sandbox": FIXTURE_SANDBOX,
        **extra,
    }


# A stdio server that reads its requests and never answers ``initialize``: a prompt's tool
# listing waits on it (up to the connect timeout) until the prompt is cancelled.
SILENT_SERVER_CODE = "import sys\nfor _ in sys.stdin: pass\n"
# A stdio server that waits until the file ``gate`` appears in its working directory (the
# session's workspace), then is the fixture server: listing waits until a test opens it.
GATED_SERVER_CODE = (
    "import os, sys, time\n"
    "while not os.path.exists('gate'):\n"
    "    time.sleep(0.05)\n"
    f"os.execv(sys.executable, [sys.executable, {str(FIXTURE_SERVER)!r}])\n"
)


def silent_server(**extra: Any) -> dict[str, Any]:
    return stdio_server(args=["-c", SILENT_SERVER_CODE], **extra)


def gated_server(**extra: Any) -> dict[str, Any]:
    return stdio_server(args=["-c", GATED_SERVER_CODE], **extra)


async def wait_for_scheduled(handle: WorkflowHandle[Any, Any], activity_type: str) -> None:
    """Return once ``activity_type`` is scheduled in the workflow's history (a long poll on
    the history, no sleeps): with a silent or gated server, the prompt's listing now waits."""
    async for event in handle.fetch_history_events(wait_new_event=True):
        scheduled = event.activity_task_scheduled_event_attributes
        if event.HasField("activity_task_scheduled_event_attributes") and (
            scheduled.activity_type.name == activity_type
        ):
            return
    raise AssertionError(f"the workflow closed before it scheduled {activity_type}")


def servers_env(servers: dict[str, Any]) -> str:
    return json.dumps(servers)


def qualified(tool: str, server: str = SERVER) -> str:
    return f"mcp__{server}__{tool}"


class _Collect(logging.Handler):
    def __init__(self, level: int) -> None:
        super().__init__(level=level)
        self.texts: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:
            message = str(record.msg)
        self.texts.append(f"{record.name} {message} {record.__dict__!r}")


@contextlib.contextmanager
def captured_logs(level: int = logging.INFO) -> Iterator[list[str]]:
    """Every structlog event and every stdlib record on the root logger at ``level`` and
    above (INFO: what a worker logs), as text.

    Not DEBUG: the Temporal SDK's own debug logging dumps whole activity payloads, which
    carry the conversation (and so the tool names the model used).
    """
    texts: list[str] = []
    handler = _Collect(level)
    root = logging.getLogger()
    previous_level = root.level
    root.addHandler(handler)
    root.setLevel(level)
    try:
        with structlog.testing.capture_logs() as events:
            yield texts
    finally:
        root.removeHandler(handler)
        root.setLevel(previous_level)
        texts.extend(repr(event) for event in events)
        texts.extend(handler.texts)
