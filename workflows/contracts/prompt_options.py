"""How a prompt runs: its protection limits, approvals, timeouts and output size, with one
set of defaults.

``PromptInput`` and ``SessionSettings`` inherit :class:`PromptOptions`, so their JSON stays
flat and a session hands its prompts exactly the options it was given. The scenario file
format, the gateway and the CLI reuse the defaults below instead of restating them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from workflows.contracts.approval import ApprovalRule
from workflows.contracts.conversation import MIN_CONTEXT_BUDGET_CHARS
from workflows.contracts.editor_calls import EditorTools
from workflows.seed.failed_call_refusal import MAX_REPEATS, REMEMBERED_FAILURES, RefusalMode

DEFAULT_MAX_TOOL_CALLS_PER_TURN = 100
DEFAULT_MAX_MODEL_REQUESTS = 50
DEFAULT_PERMISSION_TIMEOUT_SECONDS = 300.0
DEFAULT_TOOL_TIMEOUT_SECONDS = 600.0
DEFAULT_MAX_OUTPUT_CHARS = 20_000
# Argument names (case-insensitive globs) whose values a permission request never shows
# (docs/settings.md, ``redacted_arguments``).
DEFAULT_REDACTED_ARGUMENTS = (
    "*token*",
    "*secret*",
    "*password*",
    "*passwd*",
    "*api_key*",
    "*apikey*",
    "*authorization*",
    "*credential*",
    "*private_key*",
)
# How long a failing model request is retried, from its first attempt (docs/settings.md,
# ``model_retry_window_seconds``; docs/durability.md, "Model requests and outages").
DEFAULT_MODEL_RETRY_WINDOW_SECONDS = 600.0
MIN_MODEL_RETRY_WINDOW_SECONDS = 1.0
MAX_MODEL_RETRY_WINDOW_SECONDS = 86_400.0

# File edits run without asking in ``auto_edit``; every other mutating tool asks.
MUTATING_TOOLS_ALLOWED_IN_AUTO_EDIT = frozenset({"write_file", "edit_file"})


class ApprovalMode(StrEnum):
    """Which mutating tools run without asking the user, from the strictest to the loosest
    (the order the operator's ``loosest_approval_mode`` bounds: docs/security.md, "What a
    client may choose")."""

    DEFAULT = "default"  # ask for every mutating tool
    AUTO_EDIT = "auto_edit"  # file edits run, shell commands ask
    YOLO = "yolo"  # nothing asks

    def looser_than(self, other: ApprovalMode) -> bool:
        """Whether this mode asks before fewer calls than ``other``."""
        order = list(ApprovalMode)
        return order.index(self) > order.index(other)

    def allowed_by(self, loosest: ApprovalMode | None) -> bool:
        """Whether the operator's ``loosest`` mode allows this one (``None``: no bound, as
        in inputs recorded before the bound existed)."""
        return loosest is None or not self.looser_than(loosest)

    def asks_before(self, tool_name: str, *, mutating: bool) -> bool:
        """Whether a call of this tool waits for the user's approval before it runs."""
        if not mutating or self is ApprovalMode.YOLO:
            return False
        return not (
            self is ApprovalMode.AUTO_EDIT and tool_name in MUTATING_TOOLS_ALLOWED_IN_AUTO_EDIT
        )


def loosest_allowed(default: ApprovalMode, loosest: ApprovalMode | None) -> ApprovalMode:
    """The loosest approval mode a client may choose: the operator's ``loosest`` (the
    ``loosest_approval_mode`` setting), never stricter than its ``default`` (the
    ``approval_mode`` setting, which is always allowed); unset, the default itself."""
    if loosest is None or default.looser_than(loosest):
        return default
    return loosest


def allowed_approval_modes(loosest: ApprovalMode | None) -> list[ApprovalMode]:
    """The modes ``loosest`` allows, strictest first."""
    return [mode for mode in ApprovalMode if mode.allowed_by(loosest)]


def looser_mode_refusal(mode: ApprovalMode, loosest: ApprovalMode, *, where: str) -> str:
    """The one refusal of an approval mode looser than the operator's ``loosest`` (the
    gateway's ``403``, ``seawall acp``'s invalid params, the session's own check): what the
    client may choose instead, and what the operator sets, ``where``, to allow ``mode``."""
    allowed = " or ".join(choice.value for choice in allowed_approval_modes(loosest))
    return (
        f"approval mode {mode.value!r} asks before fewer calls than the operator allows (the "
        f"loosest is {loosest.value!r}; choose {allowed}); to allow it, the operator sets "
        f"SEAWALL_LOOSEST_APPROVAL_MODE={mode.value} (or loosest_approval_mode: {mode.value} "
        f"in the config file) {where}"
    )


class PromptOptions(BaseModel):
    """The options every prompt runs with (a session's settings carry them for each of its
    prompts)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    refusal_mode: RefusalMode = RefusalMode.ENFORCE
    remembered_failures: int = Field(default=REMEMBERED_FAILURES, ge=1)
    max_repeats: int = Field(default=MAX_REPEATS, ge=0)
    # A hard cap; 0 disables it. Unset, the default cap applies (DEFAULT_MAX_TOOL_CALLS_PER_TURN),
    # hard in the seed profile and adaptive in the recommended one (workflows.seed.protections).
    # Recorded inputs from before it could be unset carry 100, so they replay unchanged.
    max_tool_calls_per_turn: int | None = Field(default=None, ge=0)
    max_model_requests: int = Field(default=DEFAULT_MAX_MODEL_REQUESTS, ge=1)
    approval_mode: ApprovalMode = ApprovalMode.DEFAULT
    # The loosest approval mode a client may switch the prompt (or its session) to: the
    # operator's, fixed at the start (docs/security.md, "What a client may choose"). None:
    # no bound (inputs recorded before it existed).
    loosest_approval_mode: ApprovalMode | None = None
    permission_timeout_seconds: float = Field(default=DEFAULT_PERMISSION_TIMEOUT_SECONDS, gt=0)
    # What a permission request never shows (workflows/prompt/approvals.py).
    redacted_arguments: tuple[str, ...] = DEFAULT_REDACTED_ARGUMENTS
    # The approval rules (workflows/contracts/approval.py): the operator's, over the approval
    # mode's preset (None: not resolved; the prompt resolves them where it resolves the
    # operator's settings, else none); the session's own, which can only tighten; the calls
    # the user allowed "always for this session".
    approval_rules: tuple[ApprovalRule, ...] | None = None
    session_approval_rules: tuple[ApprovalRule, ...] = ()
    remembered_approvals: tuple[ApprovalRule, ...] = ()
    tool_timeout_seconds: float = Field(default=DEFAULT_TOOL_TIMEOUT_SECONDS, gt=0)
    max_output_chars: int = Field(default=DEFAULT_MAX_OUTPUT_CHARS, ge=100)
    # What one model request may carry of the conversation (workflows/contracts/conversation.py);
    # the durable conversation is never cut. Unset: the operator's ``context_budget_chars`` setting
    # (DEFAULT_CONTEXT_BUDGET_CHARS unless set), resolved with the guard mode. Inputs recorded
    # before it could be unset carry 400,000.
    context_budget_chars: int | None = Field(default=None, ge=MIN_CONTEXT_BUDGET_CHARS)
    # Whether the prompt names its model and tool activities in the Temporal UI (docs/
    # settings.md, ``activity_summaries``). Unset: the operator's setting where the prompt
    # resolves operator settings, else off; inputs recorded before it existed run without.
    activity_summaries: bool | None = None
    # How long a failing model request is retried, from its first attempt (docs/settings.md,
    # ``model_retry_window_seconds``). Unset: the operator's setting where the prompt
    # resolves operator settings, else DEFAULT_MODEL_RETRY_WINDOW_SECONDS.
    model_retry_window_seconds: float | None = Field(
        default=None, ge=MIN_MODEL_RETRY_WINDOW_SECONDS, le=MAX_MODEL_RETRY_WINDOW_SECONDS
    )

    # Which built-in tools run through the session's ACP editor (workflows/contracts/
    # editor_calls.py): set by ``seawall acp`` from ``acp_client_tools`` and what the editor
    # advertised; inputs recorded before it existed run every tool on the worker.
    editor_tools: EditorTools = EditorTools.OFF

    def prompt_options(self) -> dict[str, Any]:
        """Just the options, as keyword arguments for another model that has them."""
        return {name: getattr(self, name) for name in PromptOptions.model_fields}
