"""The prompt workflow's public messages: its input, result, signals, updates and queries.

One model per message so fields can be added safely; these are what a gateway, a session
workflow or ``seawall run`` send and read.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workflows.contracts.activity import ModelSpec
from workflows.contracts.approval import ApprovalRule
from workflows.contracts.conversation import Message, Role
from workflows.contracts.grant import SessionGrant
from workflows.contracts.prompt_options import ApprovalMode, PromptOptions
from workflows.contracts.scenario import ScenarioHooks, lift_legacy_prompt_keys
from workflows.rules import LoopSettings
from workflows.seed.guard import GuardMode
from workflows.seed.rollout import RolloutAssignment


class Route(StrEnum):
    INTERACTIVE = "interactive"
    CRON = "cron"
    NOTIFICATION = "notification"
    BACKGROUND = "background"


class StopReason(StrEnum):
    END_TURN = "end_turn"
    LOOP_DETECTED = "loop_detected"
    CANCELLED = "cancelled"
    MAX_TURN_REQUESTS = "max_turn_requests"
    ERROR = "error"


class ErrorReason(StrEnum):
    """Why a prompt ended ``error``, for clients and reports (the ``error`` text says more)."""

    # The model endpoint kept failing until the retry window had passed (docs/settings.md,
    # ``model_retry_window_seconds``).
    MODEL_RETRIES_EXHAUSTED = "model_retries_exhausted"
    # The model endpoint refused the request (an HTTP 4xx that retrying cannot change).
    MODEL_REQUEST_REJECTED = "model_request_rejected"
    # Any other failed model request: a bad provider setting, an unknown provider, a
    # scripted model the worker refuses, or attempts counted out (prompts started before
    # the retry window).
    MODEL_REQUEST_FAILED = "model_request_failed"
    # The conversation outgrew what a durable prompt carries (prompts before the context
    # policy).
    CONVERSATION_TOO_LARGE = "conversation_too_large"
    # The worker refused to start the prompt or its session (a workspace outside its
    # workspaces, a missing grant, a scripted model it does not allow); ``error`` says which.
    # Never recorded by a workflow: the gateway answers it for a prompt that never started.
    START_REFUSED = "start_refused"


# A refused start's ``error`` (the gateway's answer for the prompt, and what a client prints).
REFUSED_START_TEXT = "the worker refused to start this prompt's session: {reason}"


class LoopType(StrEnum):
    GLOBAL_TOOL_CALL_DUPLICATE = "global_tool_call_duplicate"
    INVALID_TOOL_PARAMS_STAGNATION = "invalid_tool_params_stagnation"
    REPEATED_FAILED_CALL = "repeated_failed_call"
    REPEATED_TOOL_EXECUTION_FAILURE = "repeated_tool_execution_failure"
    # The recommended profile's own rules (workflows.rules.LoopRule, one per row of the rule table).
    REPEATED_DENIED_CALL = "repeated_denied_call"
    REPEATED_FAILURE_CYCLE = "repeated_failure_cycle"
    REPEATED_IDENTICAL_RESULT = "repeated_identical_result"
    REPEATED_CALL_CYCLE = "repeated_call_cycle"
    REPEATED_VERIFICATION = "repeated_verification"
    REPEATED_WORKSPACE_STATE = "repeated_workspace_state"
    REPEATED_REFORMULATION = "repeated_reformulation"
    REPEATED_NEAR_RESULT = "repeated_near_result"
    REPEATED_REWRITE = "repeated_rewrite"
    REPEATED_STAGNATION = "repeated_stagnation"
    REPEATED_STALE_WAIT = "repeated_stale_wait"
    # The progress judge's second "no progress" after its reminder (workflows.rules.judge).
    JUDGED_NO_PROGRESS = "judged_no_progress"
    TURN_TOOL_CALL_CAP = "turn_tool_call_cap"


class PromptInput(PromptOptions):
    """Start one prompt: its text, workspace, model and history, plus every option of
    :class:`PromptOptions` as a top-level field."""

    prompt: str = Field(min_length=1)
    workspace_root: str
    model: ModelSpec = Field(default_factory=ModelSpec)
    history: list[Message] = Field(default_factory=list)
    route: Route = Route.INTERACTIVE
    # Client-asserted metadata; {"channel": true} marks a channel-bridge prompt, which
    # runs with the guard off. A routing hint, not a trust signal.
    client_metadata: dict[str, Any] = Field(default_factory=dict)
    # None: resolve the operator's mode through an activity when the prompt starts.
    guard_mode: GuardMode | None = None
    # The loop profile and per-rule modes (docs/protections.md, "Loop profiles"); None:
    # resolved with the guard mode through the same activity.
    loop_settings: LoopSettings | None = None
    # Scenario runs only (scripted model, fixture tools, batch pauses); None otherwise.
    scenario: ScenarioHooks | None = None
    # The session's owner and rollout cohort (docs/rollout.md, "Rollout cohorts"), for
    # `seawall rollout report`; in history only, the owner never in a log, label or search
    # attribute.
    owner_id: str | None = None
    rollout: RolloutAssignment | None = None
    # A root prompt's grant (docs/security-trust.md): the worker checks it when the prompt
    # starts; a session's prompts need none (the session's start was checked). A trusted
    # starter signals it for the started run instead (``grant_follows``).
    grant: SessionGrant | None = None
    grant_follows: bool = False

    @model_validator(mode="before")
    @classmethod
    def _lift_legacy_scenario_keys(cls, data: Any) -> Any:
        return lift_legacy_prompt_keys(data)

    def start_messages(self) -> list[Message]:
        """The conversation the prompt starts with: its history, then its text."""
        return [*self.history, Message(role=Role.USER, content=self.prompt)]


# The longest title a prompt's workflow shows in the Temporal UI (its static summary).
PROMPT_TITLE_CHARS = 80


def prompt_title(text: str) -> str:
    """A prompt as the Temporal UI lists it: its first non-empty line, whitespace collapsed,
    at most :data:`PROMPT_TITLE_CHARS` characters."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    line = " ".join(first.split())
    return line if len(line) <= PROMPT_TITLE_CHARS else line[: PROMPT_TITLE_CHARS - 1] + "…"


def channel_marked(client_metadata: dict[str, Any]) -> bool:
    """Whether a client's metadata marks a channel-bridge prompt (any true value: the seed's
    reading; the gateway accepts only a boolean, and only for the operator's
    ``channel_owners``)."""
    return bool(client_metadata.get("channel"))


def route_label(prompt: PromptInput) -> str:
    """The route as a telemetry label: a channel prompt is its own route."""
    return "channel" if channel_marked(prompt.client_metadata) else prompt.route.value


def guard_forced_off(prompt: PromptInput) -> bool:
    """Channel prompts and the cron, notification and background routes run unguarded."""
    return route_label(prompt) != Route.INTERACTIVE.value


class UserInput(BaseModel):
    """Mid-turn user input (signal ``submit_input``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    text: str = Field(min_length=1, max_length=100_000)


class QueuedPrompt(BaseModel):
    """A full prompt is waiting behind this one (signal ``set_queued_prompt``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    queued: bool = True


class InputBoundaryReport(BaseModel):
    """A host that cannot prove it delivered all mid-turn input reports it (signal
    ``report_unreliable_input``); enforcement is then disabled for the prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    reason: str = "host could not confirm the mid-turn input drain"


class PermissionRequest(BaseModel):
    """An open request for the user's approval of one call, with what the call would do
    (docs/http-api.md, "Approvals"): ``arguments`` as the model sent them, long values
    shortened and the operator's secret names redacted (``redacted_arguments``), and
    ``summary``, the call on one line. Both empty in requests opened before they existed."""

    model_config = ConfigDict(frozen=True)
    request_id: str
    call_id: str
    tool_name: str
    batch: int
    arguments: dict[str, Any] = Field(default_factory=dict)
    summary: str = ""
    # The approval rule that asked (workflows/contracts/approval.py); "" in older requests.
    rule: str = ""


class PermissionAnswer(BaseModel):
    """The user's answer to a permission request (update ``answer_permission``); with
    ``remember``, an approval also allows the same call again for the rest of the session."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    request_id: str
    approve: bool
    remember: bool = False


class EventKind(StrEnum):
    TOOL_CALL_STARTED = "tool_call_started"
    TOOL_CALL_SETTLED = "tool_call_settled"
    AGENT_MESSAGE = "agent_message"
    REMINDER = "reminder"
    STOP = "stop"
    PERMISSION_REQUEST = "permission_request"
    PROMPT_FINISHED = "prompt_finished"
    # Model text as it streams (workflows/prompt/events.py): ``text`` is the next
    # chunk of the reply whose complete ``agent_message`` follows with the same ``batch``.
    # ``status`` is ``retry`` when a retried model request's text diverged from what was
    # already streamed: ``text`` then restarts the batch's text from its beginning.
    MESSAGE_DELTA = "message_delta"
    # A protection in shadow (or a rule's own shadow mode) would have reminded the model or
    # stopped the prompt after this batch; nothing was sent to the model. ``status`` is
    # ``would_warn`` or ``would_stop``, ``text`` the loop type it would have named.
    SHADOW_DECISION = "shadow_decision"
    # An editor-side call waits for the ACP editor (workflows/prompt/editor_calls.py):
    # ``request_id`` names it in the ``editor_calls`` query; no path, no content here.
    EDITOR_REQUEST = "editor_request"


# ``AgentEvent.status`` of a ``message_delta`` that restarts its batch's text.
DELTA_RETRY_STATUS = "retry"
# The prompt workflow's signal that carries a :class:`ModelDelta` (named here so the model
# activity, which never imports workflow code, sends it by name).
PUBLISH_MODEL_DELTA = "publish_model_delta"


class AgentEvent(BaseModel):
    """One streamed agent update; ``seq`` is a cursor clients resume from."""

    model_config = ConfigDict(frozen=True)
    seq: int
    kind: EventKind
    batch: int = 0
    call_id: str | None = None
    tool_name: str | None = None
    status: str | None = None
    text: str | None = None
    request_id: str | None = None
    # A ``tool_call_settled`` that did not succeed: why, in a few fixed words (``not found``,
    # ``not approved``; workflows/prompt/events.py), never the tool's own error text.
    reason: str | None = None
    # A ``permission_request``: the call's shown arguments (PermissionRequest.arguments).
    arguments: dict[str, Any] | None = None
    # ``tool_call_started`` and ``permission_request``: the approval rule that decided the
    # call (``default mode``, an operator's rule name, ``allowed for this session: …``).
    rule: str | None = None


class ModelDelta(BaseModel):
    """Streamed model text (signal ``publish_model_delta``, sent by the model activity).

    ``text`` continues the attempt's reply at character ``offset``; the workflow turns it
    into ``message_delta`` events, dropping what a client already saw (a repeated signal, or
    a retried attempt re-streaming the same beginning). Never durable state of its own: the
    reply's ``agent_message`` is the record.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    request_number: int = Field(ge=1)
    attempt: int = Field(default=1, ge=1)
    offset: int = Field(default=0, ge=0)
    text: str = Field(min_length=1)


class EventsQuery(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    after: int = 0


# The most event text one ``events_page`` answer carries (a query answer must stay well under
# the server's message size; streamed text doubles a prompt's event text).
EVENTS_PAGE_CHARS = 500_000


class EventsPage(BaseModel):
    """The events after a cursor, at most :data:`EVENTS_PAGE_CHARS` of text of them (query
    ``events_page``); ``more`` when the rest needs another read from the last ``seq``."""

    model_config = ConfigDict(frozen=True)
    events: list[AgentEvent]
    more: bool = False


class ApprovalModeChange(BaseModel):
    """Switch the approval mode (session update and prompt signal ``set_approval_mode``):
    it applies to the calls cleared after it; a request already open stays open."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    approval_mode: ApprovalMode


class ClientDisconnect(BaseModel):
    """A client's event stream of this prompt ended before ``prompt_finished``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    # Only where it came from (a fixed word such as "sse"); nothing about the client.
    channel: str = "sse"


class ToolCallsQuery(BaseModel):
    """The calls with these ids as the model sent them (query ``tool_calls``): what an
    editor shows of a call (its file, its diff), for the session's own client only."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    call_ids: list[str] = Field(max_length=1000)


# A ``tool_call_started`` event's status when the call waits for the user's approval
# before it runs (its ``permission_request`` follows); None when it runs at once.
AWAITING_APPROVAL_STATUS = "awaiting_approval"
# How much of a settled call's output the ``tool_results`` query answers: what an editor
# shows of it (docs/acp.md, "Updates"), not what the model reads.
TOOL_RESULT_CHARS = 4000


class ToolResult(BaseModel):
    """A settled call's status and the start of its output (query ``tool_results``), for
    the session's own client only: never logged, never in events or telemetry."""

    model_config = ConfigDict(frozen=True)
    call_id: str
    status: str
    content: str = ""
    truncated: bool = False


class GuardEntry(BaseModel):
    """One settled batch's guard decision, ``none`` included (docs/scenarios.md, "Running a
    scenario")."""

    model_config = ConfigDict(frozen=True)
    batch: int
    decision: str
    phase_before: str
    phase_after: str
    reason: str | None
    failure_count: int
    batch_count: int
    candidate_ordinal: int
    mode: str


class RuleEntry(BaseModel):
    """One decision of a recommended-profile rule (docs/protections.md, "Loop profiles"):
    a reminder, a stop, or a denied re-request answered, and their shadow counterparts."""

    model_config = ConfigDict(frozen=True)
    batch: int
    rule: str
    decision: str
    mode: str
    count: int


class ToolCallCounts(BaseModel):
    executed: int = 0
    refused: int = 0
    duplicates: int = 0
    skipped: int = 0
    # Identical re-requests of a denied call, answered without asking the user again.
    denied_repeats: int = 0


class PromptStatus(BaseModel):
    model_config = ConfigDict(frozen=True)
    running: bool
    batch: int
    model_requests: int
    guard_mode: str | None
    # "seed" or "recommended" once the operator settings are resolved.
    loop_profile: str | None = None
    guard_phase: str
    paused_batch: int | None
    pending_permissions: list[PermissionRequest]
    tool_calls: ToolCallCounts
    stop_reason: StopReason | None = None


class PromptResult(BaseModel):
    workflow_id: str
    stop_reason: StopReason
    loop_type: LoopType | None = None
    error: str | None = None
    # Set with ``error``: why, as a word a client can act on; None in results recorded
    # before it existed.
    error_reason: ErrorReason | None = None
    # Model requests made, the one that failed included.
    model_requests: int
    tool_calls: ToolCallCounts
    guard_mode: str
    refusal_mode: str
    enforcement_disabled: bool = False
    # The tokens the completed model replies cost, as the endpoint reported them; None
    # (unknown) when a reply came without them, never a made-up 0.
    input_tokens: int | None = None
    output_tokens: int | None = None
    guard: list[GuardEntry]
    messages: list[Message]
    loop_profile: str = "seed"
    rules: list[RuleEntry] = Field(default_factory=list)
    # Mid-turn input the prompt never handed to the model (it stopped or was cancelled
    # first); a session runs it as its next prompt so nothing the user said is lost.
    pending_input: list[str] = Field(default_factory=list)
    # call id -> the settled status of every call of this prompt (success | error |
    # cancelled), so a client replaying the conversation shows each call as it ended.
    tool_statuses: dict[str, str] = Field(default_factory=dict)
    # How often a client's event stream ended before the prompt finished
    # (workflows/prompt/client_connection.py); 0 in results recorded before it was counted.
    client_disconnects: int = 0
    # The text a model request that failed had streamed to clients before it failed (it is
    # in no message of the conversation); None when none had.
    streamed_text: str | None = None
    # The calls the user allowed "always for this session" in this prompt, as rules: the
    # session keeps them for its next prompts (workflows/prompt/approval_policy.py).
    remembered_approvals: list[ApprovalRule] = Field(default_factory=list)
