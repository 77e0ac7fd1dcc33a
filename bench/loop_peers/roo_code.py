"""Roo Code's ``ToolRepetitionDetector``, re-implemented from its published source.

Why it exists: the loop benchmark compares Seawall with the peers' real detectors
(bench/loop_peers/__init__.py). Source: github.com/RooCodeInc/Roo-Code at commit
``cb836567180a3ff1da6d082f3178b90c3bd22a70`` (2026-04-14; extension 3.52.1, CLI 0.1.17):

- ``src/core/tools/ToolRepetitionDetector.ts`` (last changed in 04ffb64): the detector;
- ``src/core/assistant-message/presentAssistantMessage.ts`` (``check(block)`` and the
  refusal around it);
- ``src/core/task/Task.ts`` (``new ToolRepetitionDetector(this.consecutiveMistakeLimit)``)
  and ``packages/types/src/provider-settings.ts`` (``DEFAULT_CONSECUTIVE_MISTAKE_LIMIT = 3``);
- ``apps/cli/src/agent/ask-dispatcher.ts`` (``handleMistakeLimitReached``: non-interactive
  mode answers "yes" by itself).

What it does, and how it maps here:

- **Identity.** A call is serialized as stable (sorted-key) JSON of ``{name, params}``
  (plus ``nativeArgs`` when non-empty); two calls are equal when the strings are equal.
  Here: the tool name and the call's arguments as sorted-key JSON (the raw argument text
  when it was not a JSON object). Roo's ``params`` are the string-valued legacy view of
  the same arguments, so the equality is the same.
- **Counting.** Task-wide state: an identical call adds 1, any other call sets the count
  to 0 and becomes the new "previous". The check fails when the count reaches the limit,
  so with the default limit of 3 the **4th** consecutive identical call is the first one
  refused (its own spec: "Fourth identical call (counter = 3) reaches the default limit").
  On a hit both counters are cleared ("to allow recovery"), so the next identical call
  starts a new run at 0 and the 8th, 12th, … are refused too.
- **When.** For each complete tool-use block, in order, after the tool's validation and
  before it runs — so a hit refuses that one call; the earlier calls of the same reply ran.
  That is :meth:`refuse_call`. (In Roo, calls that fail validation — unknown tool, tool
  not allowed in the mode — never reach the detector; the benchmark does not know the tool
  set before a call runs, so here every call does.)
- **On a hit.** Roo asks the user ``mistake_limit_reached`` with "Roo appears to be stuck in
  a loop, …". In the VS Code extension that waits for a person; the CLI's non-interactive
  mode answers "yes" at once (``handleMistakeLimitReached``: "Auto-proceed in
  non-interactive mode"), after which the call is refused with the tool error below and
  the task goes on. An unattended benchmark is the CLI's non-interactive mode, so
  :class:`RooToolRepetition` refuses the call and never halts (the extension's ask, with
  nobody there, would be a halt: not run here).

Approximations:

- Roo's other guard, ``consecutiveMistakeCount`` (missing parameters, validation errors,
  replies without a tool use; limit 3, same ask), is left out: a reply without tool calls
  ends a benchmark prompt, per-tool failure bookkeeping differs tool by tool, and in
  non-interactive mode its ask is answered "yes" and the count reset, so it never stops a
  prompt unattended.
- The refusal text is Roo's ``formatResponse.toolError(...)`` JSON, verbatim, as the
  refused call's error outcome; the user-facing ask text is not sent to the model (with no
  user feedback, Roo adds nothing else to the conversation).
"""

from __future__ import annotations

import json

from bench.loop_peers.base import NoStopByDefault
from bench.tables import tables
from workflows.contracts import ToolCall

_T = tables(__file__)  # roo_code.yaml, each value with its source
ROO_REPETITION_LIMIT: int = _T["ROO_REPETITION_LIMIT"]


def roo_call_identity(call: ToolCall) -> str:
    """The stable JSON Roo compares: the tool name and its arguments, keys sorted."""
    params: object = call.arguments if call.arguments is not None else call.raw_arguments
    return json.dumps({"name": call.name, "params": params}, sort_keys=True, default=str)


def roo_refusal_text(tool_name: str) -> str:
    """What the model sees for a refused call: ``formatResponse.toolError`` of Roo's text."""
    error = _T["REFUSAL_ERROR"].format(tool_name=tool_name)
    body = {"status": "error", "message": _T["TOOL_ERROR_MESSAGE"], "error": error}
    return json.dumps(body, separators=(",", ":"))


class RooToolRepetition(NoStopByDefault):
    """Roo Code CLI, non-interactive: the 4th identical call in a row is refused, then recount."""

    name = "roo_code_repetition"
    title = "Roo Code: refuse 4th identical call in a row"

    def __init__(self, limit: int = ROO_REPETITION_LIMIT) -> None:
        self.limit = limit
        self.previous: str | None = None
        self.count = 0

    def refuse_call(self, call: ToolCall) -> str | None:
        """``ToolRepetitionDetector.check``, and Roo's refusal when the call may not run."""
        identity = roo_call_identity(call)
        if identity == self.previous:
            self.count += 1
        else:
            self.previous, self.count = identity, 0
        if self.limit > 0 and self.count >= self.limit:
            self.previous, self.count = None, 0
            return roo_refusal_text(call.name)
        return None
