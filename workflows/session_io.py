"""The session workflow's public messages: its input (also its continue-as-new carry),
updates and queries. One model per message so fields can be added safely."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from workflows.activity_io import ModelSpec
from workflows.conversation import Message
from workflows.guard import GuardMode
from workflows.prompt_io import (
    DEFAULT_MAX_TOOL_CALLS_PER_TURN,
    ApprovalMode,
    LoopType,
    StopReason,
)
from workflows.repeats import RefusalMode

MAX_PROMPT_CHARS = 100_000
# A session keeps this many finished prompts in its status; older ones are in Temporal.
FINISHED_PROMPTS_KEPT = 50


class SessionSettings(BaseModel):
    """What every prompt of the session runs with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    workspace_root: str
    model: ModelSpec = Field(default_factory=ModelSpec)
    approval_mode: ApprovalMode = ApprovalMode.DEFAULT
    refusal_mode: RefusalMode = RefusalMode.ENFORCE
    max_tool_calls_per_turn: int = Field(default=DEFAULT_MAX_TOOL_CALLS_PER_TURN, ge=0)
    permission_timeout_seconds: float = Field(default=300.0, gt=0)
    client_metadata: dict[str, Any] = Field(default_factory=dict)


class QueuedSessionPrompt(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_id: str
    text: str


class FinishedPrompt(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_id: str
    stop_reason: StopReason
    loop_type: LoopType | None = None


class SessionInput(BaseModel):
    """Start a session, or carry one across continue-as-new (every field after
    ``settings`` is carried state)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    settings: SessionSettings
    # None: resolved once through an activity when the session starts.
    guard_mode: GuardMode | None = None
    conversation: list[Message] = Field(default_factory=list)
    queue: list[QueuedSessionPrompt] = Field(default_factory=list)
    finished: list[FinishedPrompt] = Field(default_factory=list)
    prompts_submitted: int = 0
    closing: bool = False


class PromptSubmission(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)


class SubmittedPrompt(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_id: str
    # Prompts ahead of this one (0: it runs now, or next once the running one ends).
    position: int


class InputDelivery(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_id: str


class SessionStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    session_id: str
    guard_mode: GuardMode | None
    running_prompt_id: str | None
    queued_prompt_ids: list[str]
    finished: list[FinishedPrompt]
    conversation_messages: int
    closing: bool
