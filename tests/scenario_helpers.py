"""Helpers for tests that run scenarios through the real workflow on the dev server."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from temporalio.client import Client

from seawall.scenario.driver import run_scenario
from seawall.scenario.format import Scenario, load_scenario
from workflows.contracts import Message, Role
from workflows.contracts.prompt import PromptResult
from workflows.seed.guard import (
    REPEATED_TOOL_FAILURE_REMINDER,
    REPEATED_TOOL_FAILURE_STOP_MESSAGE,
    GuardMode,
)

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"


def scenario_file(name: str) -> Scenario:
    return load_scenario(SCENARIOS / f"{name}.yaml")


def scenario(**fields: Any) -> Scenario:
    fields.setdefault("name", "test")
    return Scenario.model_validate(fields)


async def run(
    client: Client,
    task_queue: str,
    spec: Scenario,
    mode: GuardMode | None = None,
    workspace: Path | None = None,
) -> PromptResult:
    root = workspace or Path(tempfile.mkdtemp(prefix="seawall-test-"))
    return await run_scenario(
        client, spec, task_queue=task_queue, workspace=root, mode_override=mode
    )


def count_text(messages: list[Message], text: str) -> int:
    return sum(1 for m in messages if m.content == text)


def reminders(result: PromptResult) -> int:
    return count_text(result.messages, REPEATED_TOOL_FAILURE_REMINDER)


def stops(result: PromptResult) -> int:
    return count_text(result.messages, REPEATED_TOOL_FAILURE_STOP_MESSAGE)


def decisions(result: PromptResult) -> list[str]:
    return [entry.decision for entry in result.guard]


def tool_messages(result: PromptResult) -> list[Message]:
    return [m for m in result.messages if m.role is Role.TOOL]


def fail(message: str = "HTTP 500", error_type: str = "execution_failed") -> dict[str, Any]:
    return {
        "status": "error",
        "execution_status": "error",
        "error_type": error_type,
        "message": message,
    }


def ok(content: str = "ok") -> dict[str, Any]:
    return {"status": "success", "execution_status": "success", "content": content}


def calls(tool: str, count: int, start: int = 0) -> dict[str, Any]:
    """One model turn with ``count`` distinct calls of ``tool`` (distinct arguments)."""
    return {"tool_calls": [{"name": tool, "arguments": {"n": start + i}} for i in range(count)]}
