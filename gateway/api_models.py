"""The HTTP API's request and response bodies.

Kept apart from the workflows' own messages so the public API can change shape without
touching workflow payloads (and vice versa). Every request body forbids unknown fields, so
a typo is a 422 with the field's name rather than a silently ignored setting.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from workflows.contracts.approval import ApprovalRule
from workflows.contracts.prompt import PromptResult, PromptStatus
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.scenario import FixtureTool, ModelScript
from workflows.contracts.session import MAX_PROMPT_CHARS, SessionStatus

_REQUEST = ConfigDict(extra="forbid")


class CreateSessionRequest(BaseModel):
    model_config = _REQUEST

    # None: the gateway's configured approval mode; at most as loose as the operator allows
    # (gateway/session_policy.py).
    approval_mode: ApprovalMode | None = None
    # Passed to every prompt of the session; {"channel": true} marks a channel bridge, which
    # only the owners the operator names may do (gateway/session_policy.py).
    client_metadata: dict[str, Any] = Field(default_factory=dict)
    # A scripted model for the whole session (turns across all its prompts); accepted only
    # when the gateway runs with SEAWALL_ALLOW_SCRIPTED_MODELS=1.
    model_script: ModelScript | None = None
    # Tools whose outcomes are scripted (the scenario format's ``tools`` section), so any
    # labeled scenario can run through the gateway; like model_script, only with
    # SEAWALL_ALLOW_SCRIPTED_MODELS=1.
    fixture_tools: dict[str, FixtureTool] = Field(default_factory=dict)
    # The session's own approval rules (docs/protections.md, "Approval rules"): they can
    # only make a call ask or be denied where the operator's would let it run, never the
    # reverse.
    approval_rules: tuple[ApprovalRule, ...] = Field(default=(), max_length=100)

    @field_validator("client_metadata")
    @classmethod
    def _channel_is_a_boolean(cls, value: dict[str, Any]) -> dict[str, Any]:
        # The workflow turns the guard off for any truthy marker, so "false" or "no" would
        # do so silently (workflows/contracts/prompt.py, route_label): only a boolean says
        # what it means.
        if "channel" in value and not isinstance(value["channel"], bool):
            raise ValueError(
                "channel marks a channel-bridge session (the guard off) and must be true or false"
            )
        return value


class SessionCreated(BaseModel):
    session_id: str
    workflow_id: str


class SubmitPromptRequest(BaseModel):
    model_config = _REQUEST

    text: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)


class PromptAccepted(BaseModel):
    prompt_id: str
    # Prompts ahead of this one in the session's queue (0: it runs next, or now).
    position: int


class InputRequest(BaseModel):
    model_config = _REQUEST

    text: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)


class InputAccepted(BaseModel):
    prompt_id: str


class CancelRequested(BaseModel):
    prompt_id: str


class CloseRequested(BaseModel):
    session_id: str


class PermissionAnswerRequest(BaseModel):
    model_config = _REQUEST

    approve: bool
    # With approve: allow the same call (the same tool with the same command or path)
    # without asking for the rest of the session.
    remember: bool = False


class PermissionAnswered(BaseModel):
    prompt_id: str
    request_id: str
    # "approved", "approved for this session" (remember) or "rejected".
    outcome: str


class PromptView(BaseModel):
    prompt_id: str
    # None while the prompt waits in its session's queue (its workflow has not started).
    status: PromptStatus | None = None
    # Set once the prompt's workflow has completed.
    result: PromptResult | None = None


class ErrorBody(BaseModel):
    detail: str


class Health(BaseModel):
    ok: bool


class SessionView(SessionStatus):
    """A session as ``GET /v1/sessions/{id}`` answers it: its status, and whether it is
    ``open``, ``closed`` (closed, cancelled, terminated, failed) or ``refused`` (the worker
    refused to start it; its prompts never run), with ``reason`` saying why when not open."""

    state: Literal["open", "closed", "refused"] = "open"
    reason: str | None = None
