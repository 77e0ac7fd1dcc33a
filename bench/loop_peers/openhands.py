"""OpenHands' StuckDetector (V1 agent SDK), re-implemented for the loop benchmark.

Source: OpenHands/software-agent-sdk, ``openhands-sdk/openhands/sdk/conversation/
stuck_detector.py`` with its thresholds in ``conversation/types.py``
(``StuckDetectionThresholds``) and its caller ``LocalConversation._check_stuck_or_nudge``
in ``conversation/impl/local_conversation.py``; commit 611629e6 (2026-08-22, SDK 1.43.1).

What it does there, and here:

- It runs before every agent step, i.e. once the previous step's calls settled: here
  ``after_batch``. It looks at the last 20 events (``MAX_EVENTS_TO_SCAN_FOR_STUCK_DETECTION``)
  after the last user message. A step emits one ``ActionEvent`` per call, then one
  observation per call.
- Patterns (defaults): the last 4 actions all equal and the last 4 observations all equal
  (``action_observation = 4``); the last 4 (action, observation) pairs the same action
  ending in an ``AgentErrorEvent``, i.e. a streak *past* ``action_error = 3``; the last 6
  actions and 6 observations alternating with period 2 (``alternating_pattern = 6``); 3
  agent messages in a row (``monologue = 3``). Any of them sets the conversation STUCK and
  the run stops: a halt.
- The warning: when an action-error streak first reaches exactly 3, it injects a nudge
  instead of checking (once per error event) as a ``user``-role message
  (``MessageEvent(source="environment")``, which does not reset the window); its text is
  the SDK's verbatim. The run goes on.
- Equality (``_event_eq``): actions by tool name, arguments and ``thought`` — the reply's
  text, which the SDK attaches to the first call of a reply only, so two identical calls in
  one reply are not equal when the reply had text; observations by tool name and content;
  errors by text; anything else (a user rejection) by identity, so never.

Mapping onto the scenario world (the approximations): a call that never started and
ended ``error`` (invalid arguments, unknown tool) is an ``AgentErrorEvent``, as the SDK
makes one for a malformed call; a call that ran and failed is an ``ObservationEvent``
with an error flag, as the SDK's tools return ``is_error`` observations (a tool raising
``ValueError`` would be an ``AgentErrorEvent`` instead; fixtures do not say which); a
denied call is a ``UserRejectObservation``. Arguments compare as canonical JSON (the SDK
compares parsed ``Action`` models, which ignore key order too). The monologue pattern
never fires inside one prompt here: a reply without calls ends the prompt (and the SDK's
run: FINISHED), so no two agent messages are consecutive. The context-window pattern is a
TODO returning False in the source. Mid-turn user input (``observe_user``) is a user
``MessageEvent`` after the batch's observations, so the next check starts after it, as the
SDK's does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import count

from bench.loop_peers.base import NoStopByDefault
from bench.tables import tables
from workflows.contracts import TerminalStatus, ToolCall, ToolOutcome
from workflows.contracts.outcome import ExecutionStatus

_T = tables(__file__)  # openhands.yaml, each value with its source
MAX_EVENTS_TO_SCAN: int = _T["MAX_EVENTS_TO_SCAN"]
ACTION_OBSERVATION: int = _T["ACTION_OBSERVATION"]
ACTION_ERROR: int = _T["ACTION_ERROR"]
MONOLOGUE: int = _T["MONOLOGUE"]
ALTERNATING_PATTERN: int = _T["ALTERNATING_PATTERN"]

_ids = count()


@dataclass(frozen=True)
class Event:
    """One SDK event: ``kind`` is action, observation, error, reject or message."""

    kind: str
    key: tuple[object, ...]
    source: str = "agent"
    id: int = field(default_factory=lambda: next(_ids))

    def same(self, other: Event) -> bool:
        if self.kind != other.kind:
            return False
        if self.kind == "reject":  # the default fallback: pydantic equality, ids differ
            return self.id == other.id
        return self.source == other.source and self.key == other.key


OBSERVATIONS = ("observation", "error", "reject")


def _arguments(call: ToolCall) -> str | None:
    if call.arguments is None:
        return None
    return json.dumps(call.arguments, sort_keys=True, separators=(",", ":"))


def _observation(outcome: ToolOutcome) -> Event:
    if outcome.denied:
        return Event("reject", ())
    if outcome.status != TerminalStatus.SUCCESS and outcome.execution_status in (
        ExecutionStatus.NOT_STARTED,
        None,
    ):
        return Event("error", (outcome.content,))
    is_error = outcome.status != TerminalStatus.SUCCESS
    return Event("observation", (outcome.tool_name, outcome.content, is_error))


def nudge_text(tool_name: str, error: str, threshold: int = ACTION_ERROR) -> str:
    """The SDK's action-error nudge, verbatim."""
    return str(_T["NUDGE"].format(tool_name=tool_name, threshold=threshold, error=error))


class OpenHandsStuckDetector(NoStopByDefault):
    """OpenHands V1 ``StuckDetector`` with its default thresholds."""

    name = "openhands_stuck"
    title = "OpenHands StuckDetector (V1 SDK)"
    warning_role = "user"

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.text = ""
        self.pattern: str | None = None
        self._warning: str | None = None
        self._last_nudged: int | None = None
        self._user_texts: list[str] = []

    # hooks -------------------------------------------------------------------------------

    def observe_model(self, text: str, calls: list[ToolCall]) -> None:
        self.text = text

    def observe_user(self, texts: list[str]) -> None:
        self._user_texts = list(texts)

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        for index, (call, outcome) in enumerate(zip(calls, outcomes, strict=True)):
            thought = self.text if index == 0 else ""
            action = _arguments(call) if _observation(outcome).kind != "error" else None
            self.events.append(Event("action", (call.name, thought, action)))
        self.events.extend(_observation(outcome) for outcome in outcomes)
        self.events.extend(Event("message", (text,), source="user") for text in self._user_texts)
        self._user_texts = []
        nudge = self._action_error_nudge()
        if nudge is not None:
            self.events.append(Event("message", (nudge,), source="environment"))
            self._warning = nudge
            return None
        return self.name if self.is_stuck() else None

    def warning(self) -> str | None:
        text, self._warning = self._warning, None
        return text

    # the detector ------------------------------------------------------------------------

    def _window(self) -> list[Event]:
        window = self.events[-MAX_EVENTS_TO_SCAN:]
        for index in range(len(window) - 1, -1, -1):
            if window[index].kind == "message" and window[index].source == "user":
                return window[index + 1 :]
        return window

    @staticmethod
    def _collect(events: list[Event], needed: int) -> tuple[list[Event], list[Event]]:
        actions: list[Event] = []
        observations: list[Event] = []
        for event in reversed(events):
            if event.kind == "action" and len(actions) < needed:
                actions.append(event)
            elif event.kind in OBSERVATIONS and len(observations) < needed:
                observations.append(event)
            if len(actions) >= needed and len(observations) >= needed:
                break
        return actions, observations

    @staticmethod
    def _error_streak(actions: list[Event], observations: list[Event]) -> int:
        if not actions or not observations:
            return 0
        streak = 0
        for action, observation in zip(actions, observations, strict=False):
            if not actions[0].same(action) or observation.kind != "error":
                break
            streak += 1
        return streak

    def _action_error_nudge(self) -> str | None:
        actions, observations = self._collect(self._window(), ACTION_ERROR + 1)
        if self._error_streak(actions, observations) != ACTION_ERROR:
            return None
        error = observations[0]
        if error.id == self._last_nudged:
            return None
        self._last_nudged = error.id
        tool_name = str(actions[0].key[0])
        return nudge_text(tool_name, str(error.key[0]))

    def is_stuck(self) -> bool:
        events = self._window()
        if len(events) < min(ACTION_OBSERVATION, ACTION_ERROR, MONOLOGUE):
            return False
        actions, observations = self._collect(events, max(ACTION_OBSERVATION, ACTION_ERROR + 1))
        enough = len(actions) >= ACTION_OBSERVATION and len(observations) >= ACTION_OBSERVATION
        if (
            enough
            and all(actions[0].same(a) for a in actions[:ACTION_OBSERVATION])
            and all(observations[0].same(o) for o in observations[:ACTION_OBSERVATION])
        ):
            self.pattern = "action_observation"
            return True
        if self._error_streak(actions, observations) > ACTION_ERROR:
            self.pattern = "action_error"
            return True
        if self._monologue(events):
            self.pattern = "monologue"
            return True
        if len(events) >= ALTERNATING_PATTERN and self._alternating(events):
            self.pattern = "alternating"
            return True
        return False

    @staticmethod
    def _monologue(events: list[Event]) -> bool:
        agent_messages = 0
        for event in reversed(events):
            if event.kind != "message":
                break
            if event.source == "agent":
                agent_messages += 1
            elif event.source == "user":
                break
        return agent_messages >= MONOLOGUE

    @staticmethod
    def _alternating(events: list[Event]) -> bool:
        n = ALTERNATING_PATTERN
        actions: list[Event] = []
        observations: list[Event] = []
        for event in reversed(events):
            if event.kind == "action" and len(actions) < n:
                actions.append(event)
            elif event.kind in ("observation", "error") and len(observations) < n:
                observations.append(event)
            if len(actions) == n and len(observations) == n:
                break
        if len(actions) < n or len(observations) < n:
            return False
        return all(actions[i].same(actions[i + 2]) for i in range(n - 2)) and all(
            observations[i].same(observations[i + 2]) for i in range(n - 2)
        )
