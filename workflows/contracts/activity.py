"""Exactly what crosses the workflow/activity boundary, one model per input and output.

Every activity takes a single model so fields can be added without breaking recorded
histories. Nothing here holds a secret: provider keys and server commands stay in the
worker's settings and never enter workflow history.

What never crosses into history, in either direction: model endpoints, API keys, request
options (temperature, max tokens, SDK timeouts), MCP server commands, arguments,
environments, URLs and headers, the gateway token and the worker's environment. The worker
reads them from its settings when an activity runs, which is why a prompt's
:class:`ModelSpec` says only which kind of provider answers (and, optionally, a model name,
which is not a secret). Every input the worker can check against its own settings it checks,
never trusts (docs/security-trust.md, "What the worker checks"): a scripted model or fixture
runs only with its ``allow_scripted_models``, a workspace root only strictly inside its
``workspaces`` (or ``editor_workspaces``), a fresh session's or root prompt's start only with
a session grant its key verifies (the ``start`` claim rides on the activity the workflow runs
first, :class:`ResolveOperatorSettingsInput` or :class:`ListToolsInput`); a refusal is a
non-retryable ``ApplicationError`` the workflow raises as its own failure.

The activities, and why each is one:

- ``seawall.call_model`` (:class:`CallModelInput` → :class:`ModelReply`): the conversation
  under the context policy (by reference to the request before and what is new since, in
  prompts started after ``CONVERSATION_REFS_PATCH``), the prompt's tools, and the retry window. The
  model's output is never trusted: broken JSON arguments, a missing function name and an
  unknown tool pass through as data for the workflow's invalid-parameter path. While the
  reply streams, the activity signals its text to the prompt (``activities.model_stream``);
  ``latency_seconds`` is a scripted turn's latency for the prompt's clock, 0 from a real
  provider.
- ``seawall.run_tool`` (:class:`RunToolInput` → ``ToolOutcome``, always): a tool error is a
  returned outcome, never an exception, so Temporal never retries a tool because the tool
  failed, only an activity whose worker was lost (``activities.lost_calls`` decides whether
  that attempt runs). ``ordinal`` (earlier runs of this tool in the prompt) picks a fixture's
  outcome deterministically whatever the retries. A finished call is never re-run: its result
  is in history.
- ``seawall.check_tool_call`` (→ ``ToolOutcome | None``): the ``not_started`` outcome a call
  would be refused with, asked before a permission request, so the user is never asked to
  approve a call that cannot run.
- ``seawall.list_tools`` and the local activity ``seawall.list_tools_without_mcp``
  (:class:`ListToolsOutput`): every tool the model may call in this prompt, recorded once, so
  the list is fixed for the prompt even if an MCP server changes its tools meanwhile; MCP
  tools appear as ``mcp__<server>__<tool>``, how to reach a server never does, and an
  unreachable server lists no tools.
- ``seawall.resolve_operator_settings`` (→ ``OperatorSettings``): the guard mode and its
  source, the loop settings, the owner's rollout cohort and the context budget, read from the
  worker's process environment and the operator's user config file only, never the working
  directory or a workspace; a session asks once, a prompt outside a session without them once,
  as a local activity. Resolving in an activity is what makes the operator's policy
  replay-safe: read once, recorded, replayed as recorded.
- ``seawall.judge_progress`` (:class:`JudgeProgressInput` → :class:`JudgeProgressOutput`): the
  progress judge's question and verdict (docs/protections.md, "The progress judge"), never a
  call's arguments; a request that fails for good is ``unknown``, never a failed prompt.

Timeouts, retries and heartbeats are ``workflows.prompt.activity_options``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workflows.contracts.approval import ApprovalRule
from workflows.contracts.conversation import Message
from workflows.contracts.conversation_ref import ConversationRef
from workflows.contracts.grant import StartClaim
from workflows.contracts.outcome import ToolCall
from workflows.contracts.prompt_options import (
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_TOOL_TIMEOUT_SECONDS,
)
from workflows.contracts.scenario import (
    FixtureTool,
    ModelScript,
    lift_legacy_key,
    lift_legacy_model_input,
)
from workflows.rules import LoopSettings
from workflows.seed.guard import GuardMode
from workflows.seed.rollout import RolloutAssignment

# Stable activity names: renaming one breaks every recorded history that used it.
CALL_MODEL = "seawall.call_model"
RUN_TOOL = "seawall.run_tool"
CHECK_TOOL_CALL = "seawall.check_tool_call"
# An editor-side call's plan: arguments parsed and its path confined on the worker
# (workflows/contracts/editor_calls.py).
PREPARE_EDITOR_CALL = "seawall.prepare_editor_call"
LIST_TOOLS = "seawall.list_tools"
# A local activity (TOOLS_WITHOUT_HOP_PATCH): the tools when no MCP server must be asked.
LIST_TOOLS_WITHOUT_MCP = "seawall.list_tools_without_mcp"
RESOLVE_OPERATOR_SETTINGS = "seawall.resolve_operator_settings"
# The progress judge (docs/protections.md, "The progress judge"): the operator's own model
# asked whether a suspicious stretch of a prompt is making progress.
JUDGE_PROGRESS = "seawall.judge_progress"
# The worker's check of a start that has no other activity to carry it (an owner's admission
# workflow; docs/security-trust.md): its input is a StartClaim.
CHECK_START = "seawall.check_start"

# The model activity's failure types the workflow tells apart (docs/durability.md, "Model requests
# and outages"): the endpoint refused the request (a 4xx other than 408/409/429; never retried), and
# the endpoint kept failing until the retry window had passed.
MODEL_REQUEST_REJECTED = "ModelRequestRejected"
MODEL_RETRIES_EXHAUSTED = "ModelRetriesExhausted"
# A model error's details: its short reason (``HTTP 503``), then, when the endpoint said
# anything, the endpoint's own error text (redacted, at most 500 characters). Its message
# never quotes the endpoint: the worker logs every failed attempt's message.

# The model activity's backoff between attempts: capped exponential. Shared by the retry
# policy (workflows/prompt/workflow.py) and the activity, which stops retrying when the next
# attempt could not start within the prompt's retry window (activities/model_retry.py).
MODEL_RETRY_INITIAL_SECONDS = 1.0
MODEL_RETRY_BACKOFF = 2.0
MODEL_RETRY_MAX_INTERVAL_SECONDS = 30.0


def model_retry_delay(attempt: int) -> float:
    """Seconds Temporal waits after failed attempt ``attempt`` (1, 2, 4, … at most 30)."""
    exponent = min(max(attempt - 1, 0), 32)
    return min(
        MODEL_RETRY_INITIAL_SECONDS * MODEL_RETRY_BACKOFF**exponent,
        MODEL_RETRY_MAX_INTERVAL_SECONDS,
    )


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- model ------------------------------------------------------------------------------


class ModelSpec(_Strict):
    """Which provider answers. ``operator`` (the default) is the worker's configured
    provider: the OpenAI-compatible endpoint in the worker's operator settings when one is
    configured, else the offline demo model (the documented fallback ``make run`` uses).
    ``demo`` and ``openai`` pin one of them. A scenario run's script answers instead of any
    provider (``CallModelInput.scenario_script``).

    ``model`` optionally overrides the operator's model name (``SEAWALL_MODEL``) for this
    prompt. It is not a secret; endpoints and keys never appear here.
    """

    provider: Literal["operator", "demo", "openai"] = "operator"
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
    # Scenario runs only: the script that answers instead of the provider.
    scenario_script: ModelScript | None = None
    # Seconds from the request's first attempt after which a failure is final (the prompt's
    # ``model_retry_window_seconds``); None in requests of prompts started before
    # MODEL_RETRY_WINDOW_PATCH, whose retry policy counts attempts instead.
    retry_window_seconds: float | None = None
    # Requests of prompts started after CONVERSATION_REFS_PATCH: the conversation (and the
    # tools and script, when unchanged) by reference to the request before, resolved by the
    # model activity (workflows/contracts/conversation_ref.py); ``messages`` then holds none.
    conversation: ConversationRef | None = None

    @model_validator(mode="before")
    @classmethod
    def _lift_legacy(cls, data: Any) -> Any:
        return lift_legacy_model_input(data)


class ModelUsage(_Strict):
    """The tokens one reply cost, as the endpoint reported them; None when it reported none
    (unknown, never 0)."""

    input_tokens: int | None = None
    output_tokens: int | None = None


def add_tokens(total: int | None, tokens: int | None) -> int | None:
    """A prompt's token total: unknown (None) from the first reply that did not report it."""
    if total is None or tokens is None:
        return None
    return total + tokens


class ModelReply(_Strict):
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: ModelUsage = Field(default_factory=ModelUsage)
    # A scripted reply's ``latency_seconds``: how long the scenario says the model took, on
    # the prompt's clock (docs/scenarios.md, "Time"). 0 from a real provider, whose real
    # latency is on the workflow's clock already.
    latency_seconds: float = Field(default=0.0, ge=0)


# --- the progress judge -----------------------------------------------------------------

# What the judge sees of a stretch: each call's result masked and cut to JUDGE_EXCERPT_CHARS,
# all of them together at most JUDGE_EVIDENCE_CHARS (the newest batches kept), and the
# user's prompt cut to JUDGE_PROMPT_CHARS. Its reason is cut to JUDGE_REASON_CHARS.
JUDGE_EXCERPT_CHARS = 300
JUDGE_EVIDENCE_CHARS = 6_000
JUDGE_PROMPT_CHARS = 2_000
JUDGE_REASON_CHARS = 200


class JudgeVerdict(StrEnum):
    """The judge's answer; ``unknown`` (an unparsable reply, a failed request, no model to
    ask) never reminds."""

    PROGRESS = "progress"
    NO_PROGRESS = "no_progress"
    UNKNOWN = "unknown"


class JudgedCall(_Strict):
    """One call of a judged batch: the tool's name, how it ended and the start of its
    result with volatile parts masked (never its arguments)."""

    tool: str
    status: str
    excerpt: str = Field(default="", max_length=JUDGE_EXCERPT_CHARS)


class JudgedBatch(_Strict):
    batch: int
    calls: list[JudgedCall] = Field(default_factory=list)


class JudgeProgressInput(_Strict):
    """One question to the judge: ``ask`` is its number in the prompt (1 to 3), ``batches``
    the stretch it is about, oldest first."""

    model: ModelSpec
    prompt_id: str
    ask: int = Field(ge=1)
    user_prompt: str = Field(default="", max_length=JUDGE_PROMPT_CHARS)
    batches: list[JudgedBatch] = Field(default_factory=list)
    # Scenario runs only: the script's verdicts, answered in order instead of any provider.
    scenario_verdicts: list[JudgeVerdict] | None = None
    # As in CallModelInput: seconds from the first attempt after which a failure is final.
    retry_window_seconds: float | None = None


class JudgeProgressOutput(_Strict):
    """The verdict, its short reason (kept in history only, never logged) and what the
    request cost."""

    verdict: JudgeVerdict = JudgeVerdict.UNKNOWN
    reason: str = Field(default="", max_length=JUDGE_REASON_CHARS)
    usage: ModelUsage = Field(default_factory=ModelUsage)


# --- tools ------------------------------------------------------------------------------


class ListToolsInput(_Strict):
    # Scenario runs only: fixture tools, listed over the built-ins of the same name.
    scenario_tools: dict[str, FixtureTool] | None = None
    # A root prompt's start, for the worker to check before anything runs
    # (docs/security-trust.md); None for a session's prompts.
    start: StartClaim | None = None
    # The session's workspace: a sandboxed stdio MCP server is started confined to it
    # (docs/security-sandbox.md, "MCP servers"). None (prompts started before it was
    # recorded): a scratch workspace of the worker's.
    workspace_root: str | None = None
    # The prompt's owner, as in RunToolInput: a stdio MCP server started for the listing
    # runs in the owner's cgroup and under her disk quota. None: no owner, or a prompt
    # recorded before it was passed.
    owner_id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _lift_legacy(cls, data: Any) -> Any:
        return lift_legacy_key(data, "fixture_tools", "scenario_tools")


class ListToolsOutput(_Strict):
    tools: list[ToolSpec]


class RunToolInput(_Strict):
    call: ToolCall
    workspace_root: str
    # How many earlier calls of this tool ran in the prompt: picks a fixture's outcome
    # deterministically, whatever the retries.
    ordinal: int = 0
    batch: int = 0
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS
    shell_timeout_seconds: float = DEFAULT_TOOL_TIMEOUT_SECONDS
    # Scenario runs only: the fixture that answers instead of the tool, or (``fixture_in_start``)
    # the one the prompt's start input names after the call (activities/prompt_preamble.py).
    scenario_fixture: FixtureTool | None = None
    fixture_in_start: bool = False
    # The prompt's owner (its checked start's, PromptInput.owner_id): the worker binds the
    # owner's sandboxes together under a pseudonym (activities/sandbox/owners.py). In history
    # only, like the prompt's: never logged, never a label, never a cgroup's name.
    owner_id: str | None = None
    # The prompt reads a labelled id as one whatever its characters (LOOKS_AND_IDS_PATCH): the
    # readings returned with the outcome are made so (workflows.rules.normalize.with_readings).
    labelled_ids: bool = False
    # The prompt reads the ids each text holds (WORLD_IDS_PATCH): the readings returned with the
    # outcome carry them (``ExchangeReadings.asked_ids``, ``answer_ids``).
    world_ids: bool = False

    @model_validator(mode="before")
    @classmethod
    def _lift_legacy(cls, data: Any) -> Any:
        return lift_legacy_key(data, "fixture", "scenario_fixture")


class CheckToolCallInput(_Strict):
    """Validate a call without running it (before asking the user for permission)."""

    call: ToolCall
    # Scenario runs only: the fixture that answers instead of the tool (as in RunToolInput).
    scenario_fixture: FixtureTool | None = None
    fixture_in_start: bool = False
    # As in ListToolsInput: where a sandboxed stdio MCP server of the call runs.
    workspace_root: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _lift_legacy(cls, data: Any) -> Any:
        return lift_legacy_key(data, "fixture", "scenario_fixture")


# --- operator settings ------------------------------------------------------------------


class SettingSource(StrEnum):
    ENVIRONMENT = "environment"
    USER_CONFIG = "user_config"
    DEFAULT = "default"


class ResolveOperatorSettingsInput(_Strict):
    # The session's owner, for its rollout cohort (workflows/seed/rollout.py); None: no owner.
    owner_id: str | None = None
    # A session's fresh start, for the worker to check before anything runs
    # (docs/security-trust.md); None in a continued run and in a prompt's request.
    start: StartClaim | None = None


class OperatorSettings(_Strict):
    guard_mode: GuardMode
    guard_mode_source: SettingSource
    # None in results recorded before loop profiles existed (docs/protections.md, "Loop profiles").
    loop_settings: LoopSettings | None = None
    # The session's rollout cohort (docs/rollout.md, "Rollout cohorts"); None in results
    # recorded before rollout cohorts existed.
    rollout: RolloutAssignment | None = None
    # The operator's context budget (docs/settings.md, ``context_budget_chars``) for prompts
    # that set none; None in results recorded before it was an operator setting.
    context_budget_chars: int | None = None
    # Whether prompts name their activities in the UI (docs/settings.md,
    # ``activity_summaries``); None in results recorded before it was a setting.
    activity_summaries: bool | None = None
    # How long prompts retry a failing model request (docs/settings.md,
    # ``model_retry_window_seconds``); None in results recorded before it was a setting.
    model_retry_window_seconds: float | None = None
    # The operator's approval rules (docs/protections.md, "Approval rules"); None in results
    # recorded before they existed.
    approval_rules: list[ApprovalRule] | None = None
