"""The scenario file format (docs/scenarios.md, "Running a scenario"): a scripted prompt run through
the real workflow.

Unknown keys are errors, not silently ignored: a misspelt ``after_remindr`` would otherwise
turn a test of the reminder into a test of nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from workflows.contracts.conversation import MIN_CONTEXT_BUDGET_CHARS
from workflows.contracts.prompt import Route
from workflows.contracts.prompt_options import (
    DEFAULT_MAX_MODEL_REQUESTS,
    DEFAULT_MAX_OUTPUT_CHARS,
    ApprovalMode,
)
from workflows.contracts.scenario import FixtureTool, ModelScript
from workflows.rules import LoopProfile, LoopSettings
from workflows.seed import GuardMode, RefusalMode

# Scenarios answer "ignore" permission choices by letting the request time out: a short
# default keeps such runs quick (prompts default to DEFAULT_PERMISSION_TIMEOUT_SECONDS).
SCENARIO_PERMISSION_TIMEOUT_SECONDS = 2.0


class ScenarioError(Exception):
    """A scenario that cannot be run; the message is one line for the user."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScenarioEvent(_Strict):
    """Something that happens while batch ``batch`` runs; exactly one action."""

    batch: int = Field(ge=1)
    input: str | None = None
    queued_prompt: bool = False
    cancel: bool = False
    unreliable_input: bool = False

    @model_validator(mode="after")
    def _one_action(self) -> ScenarioEvent:
        actions = [self.input is not None, self.queued_prompt, self.cancel, self.unreliable_input]
        if sum(actions) != 1:
            raise ValueError(
                "an event needs exactly one of input, queued_prompt, cancel, unreliable_input"
            )
        return self


class WorkspaceSpec(_Strict):
    files: dict[str, str] = Field(default_factory=dict)


PermissionChoice = Literal["approve", "reject", "ignore"]
RuleName = Literal[
    "failure_cycle",
    "identical_result",
    "denied_call",
    "call_cycle",
    "verification",
    "workspace_revisit",
    "reformulation",
    "near_repeat",
    "rewrite",
    "stagnation",
    "stale_wait",
]


class Scenario(_Strict):
    name: str
    description: str = ""
    prompt: str = "Run the scripted scenario."
    mode: GuardMode | None = None
    # The loop profile (docs/protections.md, "Loop profiles") and per-rule modes; unset:
    # the operator's settings decide.
    profile: LoopProfile | None = None
    rule_modes: dict[RuleName, GuardMode] = Field(default_factory=dict)
    # The progress judge's mode (docs/protections.md, "The progress judge"); unset: the
    # operator's (off unless set). Its verdicts are the script's ``model.judge``.
    progress_judge: GuardMode | None = None
    refusal: RefusalMode = RefusalMode.ENFORCE
    route: Route = Route.INTERACTIVE
    channel: bool = False
    # Unset: the default cap of 100, adaptive in the recommended profile; set: a hard cap.
    max_tool_calls_per_turn: int | None = Field(default=None, ge=0)
    max_model_requests: int = Field(default=DEFAULT_MAX_MODEL_REQUESTS, ge=1)
    approval_mode: ApprovalMode = ApprovalMode.DEFAULT
    permission_timeout_seconds: float = Field(default=SCENARIO_PERMISSION_TIMEOUT_SECONDS, gt=0)
    # Tool output a model request may see whole, and the context budget
    # (workflows/contracts/conversation.py): long-prompt scenarios raise or lower them. An unset
    # budget is the operator's (the ``context_budget_chars`` setting), as for any other prompt.
    max_output_chars: int = Field(default=DEFAULT_MAX_OUTPUT_CHARS, ge=100)
    context_budget_chars: int | None = Field(default=None, ge=MIN_CONTEXT_BUDGET_CHARS)
    workspace: WorkspaceSpec = Field(default_factory=WorkspaceSpec)
    tools: dict[str, FixtureTool] = Field(default_factory=dict)
    model: ModelScript = Field(default_factory=ModelScript)
    events: list[ScenarioEvent] = Field(default_factory=list)
    permissions: dict[str, PermissionChoice] = Field(default_factory=dict)


def scenario_loop_settings(scenario: Scenario) -> LoopSettings | None:
    """The loop settings a scenario pins, or ``None`` when it leaves them to the operator."""
    if scenario.profile is None and not scenario.rule_modes and scenario.progress_judge is None:
        return None
    modes: dict[str, GuardMode] = {
        f"{rule}_mode": mode for rule, mode in scenario.rule_modes.items()
    }
    if scenario.progress_judge is not None:
        modes["progress_judge_mode"] = scenario.progress_judge
    if scenario.profile is None:
        return LoopSettings.model_validate(modes)
    return LoopSettings.model_validate({"profile": scenario.profile, **modes})


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "scenario"
    more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file, or raise :class:`ScenarioError` with one line."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{source}: no such file") from None
    except OSError as err:
        raise ScenarioError(f"{source}: cannot be read ({err.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ScenarioError(f"{source}: malformed YAML{where}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario must be a YAML mapping")
    try:
        return Scenario.model_validate(data)
    except ValidationError as err:
        raise ScenarioError(f"{source}: {_first_error(err)}") from None
