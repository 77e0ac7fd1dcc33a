"""Side effects only: model providers and tool execution."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .model import call_model
from .operator_settings import resolve_operator_settings
from .tool_runner import check_tool_call, list_tools, run_tool

# Everything a worker registers; one list so a new activity cannot be forgotten.
ALL_ACTIVITIES: list[Callable[..., Any]] = [
    call_model,
    run_tool,
    check_tool_call,
    list_tools,
    resolve_operator_settings,
]

__all__ = [
    "ALL_ACTIVITIES",
    "call_model",
    "check_tool_call",
    "list_tools",
    "resolve_operator_settings",
    "run_tool",
]
