"""pydantic-ai-harness's ``LoopDetection`` capability, re-implemented from its published source.

Why it exists: the loop benchmark compares Seawall with the peers' real detectors
(bench/loop_peers/__init__.py). Source: github.com/pydantic/pydantic-ai-harness,
``pydantic_ai_harness/loop_detection/_capability.py`` and ``README.md`` at commit
``f62e67ee976f5fc239c24e7c73958a517dd818a6`` (read from the stored index; the repository
could not be mirrored here). The README calls it "a released, non-experimental
capability" (0.x API).

What it does, and how it maps here. A call's fingerprint is ``tool_name(args)`` with the
arguments as ``json.dumps(args, sort_keys=True)`` (raw argument text that is not JSON is
kept as is). State is per run; a benchmark prompt is one run. Defaults:

- **Tier 1, exact repetition** (``after_model_request``, each call of the reply in order):
  a fingerprint occurring **5 times within the last 10 calls** (not necessarily in a row).
- **Tier 2b, alternation** (same place): the last 6 calls are A-B-A-B-A-B with A ≠ B
  (**3 full cycles**).
- **Tier 2a, "error cycle"** (``after_tool_execute``, each result): the same fingerprint
  returned a **byte-identical result 3 times in a row** (``repr(result)``), success or not.
- **Tier 2c, monologue** (``after_model_request`` on a reply with no tool call): **3
  consecutive** replies whose normalized text (whitespace collapsed, lowercased, first 200
  characters) is equal and non-empty; any reply with a tool call resets it.

After a tier fires its counters reset (tier 1 clears both call windows; tier 2b clears its
own), so the loop must rebuild before it fires again. Within one reply, the first
detection ends the observation of that reply's remaining calls.

On detection, with ``on_loop='nudge'`` (the default, and what an unattended run gets): a
``user`` message prefixed ``[harness:loop-detection]`` delivered on the next model request;
nothing is stopped. :class:`PydanticAiLoopDetection`'s :meth:`warning` returns that text.
(``on_loop='error'``, which aborts the run with ``LoopDetectedError``, is not run here.)

Approximations:

- Tier 2a sees only calls that executed: in pydantic-ai, a call answered without running
  (invalid arguments, unknown tool: a retry prompt) never reaches ``after_tool_execute``,
  so outcomes whose execution never started are skipped, and so are cancelled ones (a
  denial is not a tool result). A call that ran and failed is observed with the text the
  model saw, as the README intends ("tools usually report failure as an ordinary
  error-shaped result").
- Tier 2c needs replies without tool calls that do not end the prompt; the benchmark
  reports them through :meth:`observe_model`.
- pydantic-ai's own per-tool ``retries`` (a core setting, not this capability) is the
  simplified ``tool_budget_10`` baseline in ``bench/baselines.py`` and is not repeated here.
"""

from __future__ import annotations

import json
from collections import deque

from bench.loop_peers.base import NoStopByDefault
from bench.tables import tables
from workflows.contracts import ExecutionStatus, TerminalStatus, ToolCall, ToolOutcome

_T = tables(__file__)  # pydantic_ai_harness.yaml, each value with its source
REPEAT_THRESHOLD: int = _T["REPEAT_THRESHOLD"]
WINDOW: int = _T["WINDOW"]
ERROR_CYCLE_THRESHOLD: int = _T["ERROR_CYCLE_THRESHOLD"]
ALTERNATION_CYCLES: int = _T["ALTERNATION_CYCLES"]
MONOLOGUE_THRESHOLD: int = _T["MONOLOGUE_THRESHOLD"]
MONOLOGUE_PREFIX_CHARS: int = _T["MONOLOGUE_PREFIX_CHARS"]


def _nudge(key: str, **fields: object) -> str:
    """The nudge ``key`` of the tables, verbatim, with its marker."""
    return str(_T[key].format(marker=_T["MARKER"], change=_T["CHANGE_APPROACH"], **fields))


def pydantic_fingerprint(call: ToolCall) -> str:
    """``_fingerprint``: ``tool_name(canonical_args)``."""
    if call.arguments is not None:
        canonical = json.dumps(call.arguments, sort_keys=True, default=str)
    elif call.raw_arguments is None:
        canonical = ""
    else:
        try:
            canonical = json.dumps(json.loads(call.raw_arguments), sort_keys=True, default=str)
        except ValueError:
            canonical = call.raw_arguments
    return f"{call.name}({canonical})"


def _tool_name_of(fingerprint: str) -> str:
    return fingerprint.split("(", 1)[0]


def _detect_alternation(fingerprints: deque[str], cycles: int) -> tuple[str, str] | None:
    needed = cycles * 2
    if len(fingerprints) < needed:
        return None
    tail = list(fingerprints)[-needed:]
    a, b = tail[0], tail[1]
    if a == b:
        return None
    for index, fingerprint in enumerate(tail):
        if fingerprint != (a if index % 2 == 0 else b):
            return None
    return a, b


class PydanticAiLoopDetection(NoStopByDefault):
    """pydantic-ai-harness ``LoopDetection()`` with its default ``on_loop='nudge'``: warns only."""

    name = "pydantic_ai_loop_detection"
    title = "pydantic-ai-harness LoopDetection (nudge)"

    def __init__(self) -> None:
        self.calls: deque[str] = deque(maxlen=WINDOW)
        self.alternation: deque[str] = deque(maxlen=max(ALTERNATION_CYCLES * 2, 2))
        self.last_outcome: tuple[str, str] | None = None
        self.outcome_repeats = 0
        self.last_monologue: str | None = None
        self.monologue_repeats = 0
        self.nudges: list[str] = []

    # -- after_model_request --------------------------------------------------------------

    def observe_model(self, text: str, calls: list[ToolCall]) -> None:
        if calls:
            return  # tracked in before_batch; a reply with calls resets the monologue there
        normalized = " ".join(text.split()).lower()[:MONOLOGUE_PREFIX_CHARS]
        if not normalized:
            return
        if self.last_monologue is not None and normalized == self.last_monologue:
            self.monologue_repeats += 1
        else:
            self.monologue_repeats = 1
        self.last_monologue = normalized
        if self.monologue_repeats >= MONOLOGUE_THRESHOLD:
            count = self.monologue_repeats
            self.last_monologue, self.monologue_repeats = None, 0
            self.nudges.append(_nudge("MONOLOGUE_NUDGE", count=count))

    def _observe_call(self, call: ToolCall) -> str | None:
        fingerprint = pydantic_fingerprint(call)
        self.calls.append(fingerprint)
        self.alternation.append(fingerprint)
        count = self.calls.count(fingerprint)
        if count >= REPEAT_THRESHOLD:
            self.calls.clear()
            self.alternation.clear()
            return _nudge("REPEAT_NUDGE", tool_name=call.name, count=count)
        alternation = _detect_alternation(self.alternation, ALTERNATION_CYCLES)
        if alternation is not None:
            a, b = (_tool_name_of(fingerprint) for fingerprint in alternation)
            self.alternation.clear()
            return _nudge("ALTERNATION_NUDGE", a=a, b=b, cycles=ALTERNATION_CYCLES)
        return None

    def before_batch(self, calls: list[ToolCall]) -> str | None:
        if calls:
            self.last_monologue, self.monologue_repeats = None, 0
        for call in calls:
            message = self._observe_call(call)
            if message is not None:
                self.nudges.append(message)
                break
        return None

    # -- after_tool_execute ---------------------------------------------------------------

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        for call, outcome in zip(calls, outcomes, strict=False):
            if outcome.status == TerminalStatus.CANCELLED:
                continue
            if outcome.execution_status == ExecutionStatus.NOT_STARTED:
                continue  # answered without running: a retry prompt, not a tool result
            if outcome.status == TerminalStatus.ERROR:
                result = outcome.error_message or outcome.content
            else:
                result = outcome.content
            observed = (pydantic_fingerprint(call), result)
            if observed == self.last_outcome:
                self.outcome_repeats += 1
            else:
                self.last_outcome, self.outcome_repeats = observed, 1
            if self.outcome_repeats >= ERROR_CYCLE_THRESHOLD:
                count = self.outcome_repeats
                self.last_outcome, self.outcome_repeats = None, 0
                self.nudges.append(_nudge("ERROR_CYCLE_NUDGE", tool_name=call.name, count=count))
        return None

    def warning(self) -> str | None:
        text = "\n\n".join(self.nudges) or None
        self.nudges = []
        return text
