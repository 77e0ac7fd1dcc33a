"""Side effects only: model providers and tool execution.

Activities are methods of class instances that receive their dependencies (model providers,
the tool registry, the MCP pool, settings readers); ``seawall/worker/build.py`` builds them.
:class:`WorkerActivities` is every activity a worker registers, in one place so a new one
cannot be forgotten.

Why classes: a test builds one with exactly the parts it needs, and nothing is a module-level
singleton. ``ModelActivities`` keys its providers by ``ModelSpec.provider`` (``operator``: the
operator's endpoint when one is configured, asked on every request, else the demo model;
``openai``, whose SDK is imported on its first request; ``demo``); a request that carries a
scenario script is answered by the class's own fixed scripted provider, never an injected one.
``ToolActivities`` holds the built-in registry, the worker's MCP pool and a reader of the
operator's MCP configuration (read on every prompt, so a change applies to the next one).
Activities import ``workflows`` contracts and ``seawall.runtime``, never a client or the
composition root (docs/architecture.md, "Layers").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from .model import ModelActivities
from .operator_settings import OperatorSettingsActivities
from .tool_runner import ToolActivities
from .trust import StartCheckActivities


@dataclass(frozen=True)
class WorkerActivities:
    """The activity instances one worker serves."""

    model: ModelActivities
    tools: ToolActivities
    operator_settings: OperatorSettingsActivities
    start_check: StartCheckActivities

    def definitions(self) -> list[Callable[..., Any]]:
        """The ``@activity.defn`` methods to register."""
        return [
            *self.model.activities(),
            *self.tools.activities(),
            *self.operator_settings.activities(),
            *self.start_check.activities(),
        ]

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Wraps a worker's run: once the worker has shut down, its MCP servers stop."""
        try:
            yield
        finally:
            await self.tools.close()


__all__ = [
    "ModelActivities",
    "OperatorSettingsActivities",
    "StartCheckActivities",
    "ToolActivities",
    "WorkerActivities",
]
