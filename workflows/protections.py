"""The loop protections that predate the repeated-failure guard, as pure workflow state.

docs/architecture.md, "The prompt loop", protections 1, 2 and 5: provider call-id
deduplication, the invalid-parameter guard, and the per-prompt tool-call cap, with their
stop messages. ``workflows.batch`` consults them around every batch, most specific first.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from workflows.outcome import TerminalStatus, ToolErrorType, ToolOutcome
from workflows.prompt_options import DEFAULT_MAX_TOOL_CALLS_PER_TURN

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
ADAPTIVE_CAP_STOP_MESSAGE = (
    "System: Automatic continuation stopped because this prompt passed {cap} tool calls and "
    "kept asking for a call it had already made {repeats} times; the last batch was not run. "
    "New user input is required to continue."
)

# The adaptive default (recommended profile): past the default, a batch stops the prompt
# only when it asks for a call the prompt already asked for this many times (counting it),
# and every batch past ten times the default stops it whatever it asks.
ADAPTIVE_CAP_REPEATS = 6
ADAPTIVE_CAP_BACKSTOP_FACTOR = 10


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


def cap_limit(configured: int | None) -> int:
    """The hard cap a prompt runs with: the one it set, else the default."""
    return DEFAULT_MAX_TOOL_CALLS_PER_TURN if configured is None else configured


class ToolCallCap:
    """The per-prompt tool-call cap, fixed or adaptive.

    A cap the prompt (or its session) sets is a hard cap: the batch that would pass it is
    skipped. So is the default in the seed profile. In the recommended profile the unset
    default is *adaptive*: a fixed cap of 100 ends long runs that are making progress (a
    render pipeline verifying every frame of six stages), which is what peers learned too
    (docs/architecture.md, "The adaptive tool-call cap"). Past the default, a batch is
    skipped only when it repeats a call the prompt has already asked for
    :data:`ADAPTIVE_CAP_REPEATS` − 1 times, which is what a stuck model does; ten times the
    default stays a hard backstop, so a runaway whose every call differs is still bounded.

    Counts are keyed by the call's private argument digest and live only in workflow state.
    """

    def __init__(self, configured: int | None, *, adaptive: bool = False) -> None:
        self.limit = cap_limit(configured)
        self._configured = configured is not None
        self.adaptive = adaptive and not self._configured
        self.requested = 0
        self._asked: dict[str, int] = {}
        # Why the last over-the-cap batch was skipped: a repeated call (adaptive) or not.
        self.stopped_on_repeat = False

    def make_adaptive(self, adaptive: bool) -> None:
        """Adapt the default cap (the recommended profile); a configured cap stays hard."""
        self.adaptive = adaptive and not self._configured

    def over(self, digests: list[str]) -> bool:
        """Whether the batch of these call digests must not run; counts it when it may."""
        total = self.requested + len(digests)
        if self.limit == 0 or total <= self.limit:
            return self._count(digests)
        if not self.adaptive or total > self.limit * ADAPTIVE_CAP_BACKSTOP_FACTOR:
            return True
        asked = dict(self._asked)
        for digest in digests:
            asked[digest] = asked.get(digest, 0) + 1
            if asked[digest] >= ADAPTIVE_CAP_REPEATS:
                self.stopped_on_repeat = True
                return True
        return self._count(digests)

    def _count(self, digests: list[str]) -> bool:
        self.requested += len(digests)
        for digest in digests:
            self._asked[digest] = self._asked.get(digest, 0) + 1
        return False

    @property
    def backstop(self) -> int:
        return self.limit * ADAPTIVE_CAP_BACKSTOP_FACTOR if self.adaptive else self.limit
