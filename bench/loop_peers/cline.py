"""Cline's soft/hard loop limits and consecutive-mistake limit, from its published source.

Why it exists: the loop benchmark compares Seawall with the peers' real detectors
(bench/loop_peers/__init__.py). Source: github.com/cline/cline at commit
``21cb8d2525bcedf1f4b6890b27a74a14fe7451e4`` (2026-08-22, "release v0.0.78": SDK core
0.0.78, CLI 3.0.56). Cline's agent loop now lives in its SDK; the older extension-only
``Task.consecutiveMistakeCount`` was ported there (the files cite "parity with pre-Step-9
agent.ts"):

- ``sdk/packages/core/src/runtime/safety/loop-detection.ts``: ``LoopDetectionTracker``,
  ``toolCallSignature``, ``checkRepeatedToolCall``, the soft/hard messages;
- ``sdk/packages/core/src/runtime/safety/mistake-tracker.ts``: ``MistakeTracker``;
- ``sdk/packages/core/src/runtime/orchestration/session-runtime-orchestrator.ts``: when
  each runs (``tool-started``, ``turn-finished``, ``inspectLoopForToolCall``);
- ``apps/cli/src/runtime/defaults.ts`` (``CLI_DEFAULT_LOOP_DETECTION = {softThreshold: 3,
  hardThreshold: 5}``), ``apps/cli/src/main.ts`` (``maxConsecutiveMistakes: args.retries
  ?? 3``; the SDK's own default is 6) and ``apps/cli/src/runtime/format.ts``
  (``resolveMistakeLimitDecision``).

What it does, and how it maps here:

- **Identical calls (soft/hard).** At each call's ``tool-started``, in order: equal to the
  previous call when the tool name is equal and the signature is equal — the input as JSON
  with object keys sorted recursively (a string input is its own signature). Equal adds 1,
  anything else sets the count to 1; nothing else resets it within a conversation. When
  the count is **exactly 3** (soft) Cline appends a ``user`` message "Detected 3
  consecutive identical calls to `NAME`; consider trying a different approach." and the
  call runs; it fires once per run of identical calls. When the count reaches **5**
  (hard) it records a mistake with ``forceAtLimit`` (the mistake count jumps to the
  limit), the limit is reached, and the run aborts.
- **Consecutive mistakes.** At ``turn-finished``: a turn in which at least one call failed
  (its tool result ``isError``) and none succeeded records one mistake; a turn with a
  success resets the count. At the limit (CLI: 3) the decision is asked for.
- **At the limit.** The CLI's ``resolveMistakeLimitDecision`` stops in yolo mode (every
  tool auto-approved) and when stdin/stdout are not a TTY; only a person at a terminal
  is asked "Try a different approach / Stop this run". An unattended benchmark is
  therefore a stop, the same for the hard loop limit and the mistake limit. The stop
  message is appended to the conversation, but the run is aborted so the model never
  reads it: it is not a warning.
- **Here.** Calls are inspected in :meth:`before_batch` (``tool-started`` fires before each
  call runs); the soft message is the :meth:`warning` after it. The hard stop and the
  mistake stop are returned from :meth:`after_batch`: the 5th identical call had started
  when the abort was queued.

Approximations:

- On a hard hit Cline aborts the running tool; here the batch holding the 5th identical
  call runs to the end before the halt (the calls after it in the same reply are counted
  as run).
- A failed call is a terminal ``error`` outcome; a cancelled one (a rejection, an abort)
  counts as neither failure nor success. Cline's ``api_error`` and ``invalid_tool_call``
  mistake reasons (a failed model request, an unparsable call) have no model-request
  failure in the benchmark; an unparsable call is answered with an error outcome here
  and counts through the turn's failures, as in the orchestrator.
- Two soft messages in one reply (two runs of 3 in the same batch) are two ``user``
  messages in Cline and one text, a line each, here.
- ``reminderAfterIterations`` (a reminder after N turns with tool calls) defaults to 0,
  off, in the SDK and is not set by the CLI, so it is left out.
"""

from __future__ import annotations

import json

from bench.tables import tables
from workflows.contracts import TerminalStatus, ToolCall, ToolOutcome

_T = tables(__file__)  # cline.yaml, each value with its source
CLINE_SOFT_THRESHOLD: int = _T["CLINE_SOFT_THRESHOLD"]
CLINE_HARD_THRESHOLD: int = _T["CLINE_HARD_THRESHOLD"]
CLINE_MAX_CONSECUTIVE_MISTAKES: int = _T["CLINE_MAX_CONSECUTIVE_MISTAKES"]


def cline_signature(call: ToolCall) -> str:
    """``toolCallSignature``: the input as JSON, object keys sorted; a string is itself."""
    if call.arguments is None:
        return call.raw_arguments if call.raw_arguments is not None else "null"
    return json.dumps(call.arguments, sort_keys=True, separators=(",", ":"), default=str)


def cline_soft_message(tool_name: str, count: int) -> str:
    return str(_T["SOFT_MESSAGE"].format(count=count, tool_name=tool_name))


class ClineLoopLimits:
    """Cline CLI, unattended: warn at 3 identical calls, stop at 5; stop after 3 failed turns."""

    name = "cline_limits"
    title = "Cline: identical calls warn 3 / stop 5; 3 failed turns"

    def __init__(
        self,
        soft_threshold: int = CLINE_SOFT_THRESHOLD,
        hard_threshold: int = CLINE_HARD_THRESHOLD,
        max_consecutive_mistakes: int = CLINE_MAX_CONSECUTIVE_MISTAKES,
    ) -> None:
        self.soft_threshold = soft_threshold
        self.hard_threshold = hard_threshold
        self.max_consecutive_mistakes = max_consecutive_mistakes
        self.last: tuple[str, str] | None = None
        self.identical_count = 0
        self.consecutive_mistakes = 0
        self.hard_hit = False
        self.pending_warnings: list[str] = []

    def before_batch(self, calls: list[ToolCall]) -> str | None:
        for call in calls:
            if self.hard_hit:  # trackerAbortInFlight: nothing more is inspected
                break
            key = (call.name, cline_signature(call))
            self.identical_count = self.identical_count + 1 if key == self.last else 1
            self.last = key
            if self.identical_count >= self.hard_threshold:
                self.hard_hit = True
            elif self.identical_count == self.soft_threshold:
                self.pending_warnings.append(cline_soft_message(call.name, self.identical_count))
        return None

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        if self.hard_hit:
            return self.name
        failed = sum(1 for o in outcomes if o.status == TerminalStatus.ERROR)
        succeeded = sum(1 for o in outcomes if o.status == TerminalStatus.SUCCESS)
        if failed > 0 and succeeded == 0:
            self.consecutive_mistakes += 1
            if self.consecutive_mistakes >= self.max_consecutive_mistakes:
                return self.name
        elif succeeded > 0:
            self.consecutive_mistakes = 0
        return None

    def warning(self) -> str | None:
        text = "\n".join(self.pending_warnings) or None
        self.pending_warnings = []
        return text
