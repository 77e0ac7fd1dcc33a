"""The loop protections that predate the repeated-failure guard, as pure workflow state.

docs/architecture.md, "The prompt loop", protections 1, 2 and 5: provider call-id
deduplication, the invalid-parameter guard, and the per-prompt tool-call cap, with their
stop messages. ``workflows.batch`` consults them around every batch, most specific first.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from workflows.outcome import TerminalStatus, ToolErrorType, ToolOutcome

INVALID_PARAMS_ERROR_TYPES = frozenset(
    {ToolErrorType.INVALID_TOOL_PARAMS, ToolErrorType.TOOL_NOT_REGISTERED}
)

DUPLICATE_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the model kept resending tool calls "
    "that were already handled. New user input is required to continue."
)
INVALID_PARAMS_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the model kept calling a tool with "
    "invalid parameters or an unknown tool name. New user input is required to continue."
)
TOOL_CALL_CAP_STOP_MESSAGE = (
    "System: Automatic continuation stopped because this prompt reached its tool-call cap "
    "({cap} calls); the last batch was not run. New user input is required to continue."
)


class CallIdDeduper(BaseModel):
    """Provider call ids already answered in this prompt, with their call fingerprint."""

    handled: dict[str, str] = Field(default_factory=dict)
    duplicates: dict[str, int] = Field(default_factory=dict)
    stop: bool = False

    def is_duplicate(self, call_id: str, fingerprint: str) -> bool:
        """True for a replay of an answered call; the second replay of one id stops."""
        if self.handled.get(call_id) != fingerprint:
            return False
        seen = self.duplicates.get(call_id, 0) + 1
        self.duplicates[call_id] = seen
        if seen >= 2:
            self.stop = True
        return True

    def remember(self, call_id: str, fingerprint: str) -> None:
        self.handled[call_id] = fingerprint


class InvalidParamsGuard(BaseModel):
    """Per tool name, invalid-parameter, unregistered and nameless calls; three stop."""

    limit: int = 3
    counts: dict[str, int] = Field(default_factory=dict)

    def observe(self, outcome: ToolOutcome) -> None:
        # A permission cancellation or an abort is the user's doing, never the model's.
        if outcome.status != TerminalStatus.ERROR or outcome.provider_duplicate:
            return
        if outcome.error_type in INVALID_PARAMS_ERROR_TYPES:
            self.counts[outcome.tool_name] = self.counts.get(outcome.tool_name, 0) + 1

    @property
    def stop(self) -> bool:
        return any(count >= self.limit for count in self.counts.values())


def over_cap(cap: int, calls_so_far: int, batch_size: int) -> bool:
    """The cap (0 disables it) counts every call the model asked for in this prompt."""
    return cap > 0 and calls_so_far + batch_size > cap
