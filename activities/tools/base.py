"""The interface every built-in tool implements, and the one exception type tools raise.

A tool either returns the content for the model or raises :class:`ToolFailure` carrying a
structured :class:`~workflows.contracts.outcome.ToolErrorType`. The runner turns that into the
``execution_error_type`` of the outcome contract, so the classification is decided here, at
the point of failure, and never guessed later from message text.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

from activities.heartbeat import Heartbeat, no_heartbeat
from activities.sandbox import UNCONFINED, Sandbox
from workflows.contracts import ToolErrorType
from workflows.contracts.outcome import file_write

ArgsT = TypeVar("ArgsT", bound=BaseModel)


class ToolFailure(Exception):
    """A tool ran (or refused to run because of its input) and failed with a structured type."""

    def __init__(self, error_type: ToolErrorType, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message

    def __str__(self) -> str:
        return f"{self.error_type}: {self.message}"


@dataclass(frozen=True)
class ToolContext:
    """What a tool may touch: one workspace directory, a heartbeat, time limits, and the
    sandbox its processes run in."""

    # Already resolved (Path.resolve()) and absolute; containment checks compare against it.
    workspace_root: Path
    # Long-running tools call this so the activity's heartbeat timeout does not fire.
    heartbeat: Heartbeat = no_heartbeat
    shell_timeout_seconds: float = 120.0
    # The worker's probed sandbox (activities/sandbox/); the tool runner always passes it.
    # The default runs bare: only tests of the tools themselves rely on it.
    sandbox: Sandbox = UNCONFINED
    # What the call wrote, as ``ToolOutcome.writes`` pairs (one context per call): the file
    # tools record each file they changed, and the runner copies them into a successful
    # outcome (progress evidence for the loop rules; docs/protections.md, "The rules").
    written: list[tuple[str, str]] = field(default_factory=list)

    def record_write(self, shown: str, content: bytes | None) -> None:
        """Record that the file ``shown`` (workspace-relative) now holds ``content``
        (``None``: it was deleted), as private digests only."""
        self.written.append(file_write(shown, content))


class ToolArgs(BaseModel):
    """Base for tool argument models: unknown fields are the model's mistake, not ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class BuiltinTool(ABC):
    """A native tool the model can call."""

    name: ClassVar[str]
    description: ClassVar[str]
    args_model: ClassVar[type[BaseModel]]
    # Mutating tools need the user's permission before they run.
    mutating: ClassVar[bool] = False

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any]) -> BaseModel:
        """Validate raw model arguments; raises ``pydantic.ValidationError``."""
        return cls.args_model.model_validate(dict(raw))

    @classmethod
    def parameters_schema(cls) -> dict[str, Any]:
        """JSON schema of the arguments, for the provider's function declaration."""
        return cls.args_model.model_json_schema()

    @abstractmethod
    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        """Return the content for the model, or raise :class:`ToolFailure`."""


def expect_args(args: BaseModel, model: type[ArgsT]) -> ArgsT:
    """Narrow ``args`` to the tool's own model; a mismatch is a runner bug, not the model's."""
    if not isinstance(args, model):
        raise TypeError(f"expected {model.__name__}, got {type(args).__name__}")
    return args
