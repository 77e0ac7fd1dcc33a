"""The session workflow's public messages: its input (also its continue-as-new carry),
updates and queries. One model per message so fields can be added safely."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workflows.contracts.activity import ModelSpec
from workflows.contracts.conversation import Message
from workflows.contracts.grant import SessionGrant
from workflows.contracts.prompt import LoopType, StopReason
from workflows.contracts.prompt_options import ApprovalMode, PromptOptions
from workflows.contracts.scenario import ScenarioHooks, lift_legacy_prompt_keys
from workflows.rules import LoopProfile, LoopSettings
from workflows.seed.guard import GuardMode
from workflows.seed.rollout import RolloutAssignment

MAX_PROMPT_CHARS = 100_000
# A session keeps this many finished prompts in its status; older ones are in Temporal.
FINISHED_PROMPTS_KEPT = 50
# A session remembers what its newest this-many submits made, by update id, across
# continue-as-new (Temporal deduplicates update ids within one run only): a repeated
# ``submit_prompt`` (the same Idempotency-Key) is answered as the first was, never run again.
SUBMITS_REMEMBERED = 1000


class SessionSettings(PromptOptions):
    """What every prompt of the session runs with: the workspace, the model, the client's
    metadata and every option of :class:`PromptOptions` as a top-level field."""

    workspace_root: str
    model: ModelSpec = Field(default_factory=ModelSpec)
    client_metadata: dict[str, Any] = Field(default_factory=dict)
    # A scripted session (simulations, end-to-end tests): handed to every prompt.
    scenario: ScenarioHooks | None = None

    @model_validator(mode="before")
    @classmethod
    def _lift_legacy_scenario_keys(cls, data: Any) -> Any:
        return lift_legacy_prompt_keys(data)


class QueuedSessionPrompt(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_id: str
    text: str


class FinishedPrompt(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_id: str
    stop_reason: StopReason
    loop_type: LoopType | None = None


class RememberedSubmit(BaseModel):
    """What one ``submit_prompt`` (by its update id) answered."""

    model_config = ConfigDict(frozen=True)

    update_id: str
    prompt_id: str
    position: int


class SessionInput(BaseModel):
    """Start a session, or carry one across continue-as-new (every field after
    ``settings`` is carried state)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    settings: SessionSettings
    # The authenticated principal that started the session (the gateway's token owner, or a
    # local client's owner id); None: unknown ownership, which is never enforced. In history
    # only: never logged, never a label or search attribute.
    owner_id: str | None = None
    # None: resolved once through an activity when the session starts.
    guard_mode: GuardMode | None = None
    # The owner's rollout cohort, resolved with the guard mode (docs/rollout.md, "Rollout cohorts");
    # None before it is resolved, or for a session started with a mode.
    rollout: RolloutAssignment | None = None
    # The loop profile and per-rule modes, resolved with the guard mode (docs/protections.md, "Loop
    # profiles"); None: each prompt resolves them itself.
    loop_settings: LoopSettings | None = None
    # The starter's signature over the session's start (docs/security-trust.md); the worker
    # checks it at the session's fresh start, not in the runs continue-as-new makes. A
    # trusted starter signals it for the started run instead (``grant_follows``).
    grant: SessionGrant | None = None
    grant_follows: bool = False
    conversation: list[Message] = Field(default_factory=list)
    queue: list[QueuedSessionPrompt] = Field(default_factory=list)
    finished: list[FinishedPrompt] = Field(default_factory=list)
    prompts_submitted: int = 0
    closing: bool = False
    # Aligned with ``conversation``: a tool message's settled status (success | error |
    # cancelled), None for every other message or when it is not known.
    tool_statuses: list[str | None] = Field(default_factory=list)
    # Aligned with ``conversation``: the id of the prompt that added each message (None when
    # not known: sessions that continued before it was kept).
    message_prompt_ids: list[str | None] = Field(default_factory=list)
    # The newest submits' answers (at most SUBMITS_REMEMBERED), oldest first.
    submits: list[RememberedSubmit] = Field(default_factory=list)


class PromptSubmission(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)


class SubmittedPrompt(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_id: str
    # Prompts ahead of this one (0: it runs now, or next once the running one ends).
    position: int


class SubmitLookup(BaseModel):
    """Ask what the ``submit_prompt`` with this update id answered (query ``submitted``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    update_id: str


class SubmitFound(BaseModel):
    """The answer of the submit looked up; None: the session knows no such submit (not
    made, or older than the submits it remembers)."""

    model_config = ConfigDict(frozen=True)

    submitted: SubmittedPrompt | None = None


class InputDelivery(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_id: str


class SessionStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    session_id: str
    guard_mode: GuardMode | None
    # The loop profile the session's prompts run with; None until resolved (or when each
    # prompt resolves its own).
    loop_profile: LoopProfile | None = None
    # The owner's rollout cohort (a workflows.seed.rollout.Cohort value); None until resolved.
    rollout_cohort: str | None = None
    running_prompt_id: str | None
    queued_prompt_ids: list[str]
    finished: list[FinishedPrompt]
    conversation_messages: int
    closing: bool
    # The mode the session's next calls are asked about in (None: reported by older code).
    approval_mode: ApprovalMode | None = None


class SessionOwner(BaseModel):
    """The session's owner (query ``owner``): for the gateway, never shown or logged."""

    model_config = ConfigDict(frozen=True)

    owner_id: str | None


class PromptWithdrawal(BaseModel):
    """Take a prompt that has not started out of the queue (update ``withdraw_prompt``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_id: str


# A transcript page stays far below Temporal's 2 MB payload limit.
TRANSCRIPT_PAGE_CHARS = 200_000


class TranscriptQuery(BaseModel):
    """A page of the retained conversation from message ``after`` (query ``transcript``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    after: int = Field(default=0, ge=0)
    max_chars: int = Field(default=TRANSCRIPT_PAGE_CHARS, ge=1, le=TRANSCRIPT_PAGE_CHARS)


class TranscriptPage(BaseModel):
    """Messages ``[after, next_index)`` of ``total``, with each tool message's settled
    status (aligned with ``messages``); a page holds at least one message when any is left."""

    model_config = ConfigDict(frozen=True)

    messages: list[Message]
    tool_statuses: list[str | None]
    # The prompt that added each message (aligned with ``messages``; None when not known).
    prompt_ids: list[str | None] = Field(default_factory=list)
    next_index: int
    total: int
