"""Exactly what crosses the workflow/activity boundary, one model per input and output.

Every activity takes a single model so fields can be added without breaking recorded
histories. Nothing here holds a secret: provider keys and server commands stay in the
worker's settings and never enter workflow history.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workflows.conversation import Message
from workflows.guard import GuardMode
from workflows.outcome import ToolCall

# Stable activity names: renaming one breaks every recorded history that used it.
CALL_MODEL = "seawall.call_model"
RUN_TOOL = "seawall.run_tool"
CHECK_TOOL_CALL = "seawall.check_tool_call"
LIST_TOOLS = "seawall.list_tools"
RESOLVE_OPERATOR_SETTINGS = "seawall.resolve_operator_settings"


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- model ------------------------------------------------------------------------------


class ScriptedCall(_Strict):
    """A tool call a scripted model emits. ``arguments`` given as a string is sent as raw
    argument text, so a script can reproduce a model's broken JSON."""

    name: str | None = None
    arguments: dict[str, Any] | str | None = Field(default_factory=dict)
    id: str | None = None


class ScriptedTurn(_Strict):
    text: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)


class ModelScript(_Strict):
    """A scripted model: the reply to each request in order. Once a reminder was
    delivered, ``after_reminder`` replies are used instead (when given)."""

    turns: list[ScriptedTurn] = Field(default_factory=list)
    after_reminder: list[ScriptedTurn] | None = None


class ModelSpec(_Strict):
    """Which provider answers. ``operator`` (the default) lets the worker choose: the
    OpenAI-compatible endpoint configured in its operator settings, else the offline demo
    model. ``scripted`` plays ``script``; ``demo`` is the offline demo model; ``openai``
    asks the operator's endpoint.

    ``model`` optionally overrides the operator's model name (``SEAWALL_MODEL``) for this
    prompt. It is not a secret; endpoints and keys never appear here.
    """

    provider: Literal["operator", "scripted", "demo", "openai"] = "operator"
    script: ModelScript = Field(default_factory=ModelScript)
    model: str | None = None


class ToolSpec(_Strict):
    """A tool as the workflow and the model see it; resolved once per prompt."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)
    mutating: bool = False
    tool_type: str = "native"


class CallModelInput(_Strict):
    model: ModelSpec
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    request_number: int


class ModelUsage(_Strict):
    input_tokens: int = 0
    output_tokens: int = 0


class ModelReply(_Strict):
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: ModelUsage = Field(default_factory=ModelUsage)


# --- tools ------------------------------------------------------------------------------


class FixtureOutcome(_Strict):
    """A scripted tool outcome (docs/architecture.md, "Scenario runs"). Any contract field may be
    set, including
    a missing (``None``) or never-seen execution status and contract-violating pairs.
    ``error_type`` also sets the frozen ``execution_error_type`` unless that is given;
    ``hang`` makes the call run until it is cancelled."""

    status: str = "success"
    execution_status: str | None = None
    error_type: str | None = None
    execution_error_type: str | None = None
    message: str | None = None
    content: str | None = None
    hang: bool = False


class FixtureTool(_Strict):
    """Outcomes used in order; the last one repeats."""

    outcomes: list[FixtureOutcome] = Field(min_length=1)
    description: str = "A scenario fixture tool."
    mutating: bool = False
    tool_type: Literal["native", "mcp"] = "native"


class ListToolsInput(_Strict):
    fixture_tools: dict[str, FixtureTool] = Field(default_factory=dict)


class ListToolsOutput(_Strict):
    tools: list[ToolSpec]


class RunToolInput(_Strict):
    call: ToolCall
    workspace_root: str
    # How many earlier calls of this tool ran in the prompt: picks a fixture's outcome
    # deterministically, whatever the retries.
    ordinal: int = 0
    batch: int = 0
    fixture: FixtureTool | None = None
    max_output_chars: int = 20_000
    shell_timeout_seconds: float = 120.0


class CheckToolCallInput(_Strict):
    """Validate a call without running it (before asking the user for permission)."""

    call: ToolCall
    fixture: FixtureTool | None = None


# --- operator settings ------------------------------------------------------------------


class SettingSource(StrEnum):
    ENVIRONMENT = "environment"
    USER_CONFIG = "user_config"
    DEFAULT = "default"


class ResolveOperatorSettingsInput(_Strict):
    pass


class OperatorSettings(_Strict):
    guard_mode: GuardMode
    guard_mode_source: SettingSource
