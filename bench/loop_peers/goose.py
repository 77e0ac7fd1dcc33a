"""goose's RepetitionInspector, re-implemented for the loop benchmark.

Source: aaif-goose/goose (goose's home since it left block/goose), ``crates/goose/src/
tool_monitor.rs`` at commit 37c043b9; the text a denied call gets is ``DECLINED_RESPONSE``
of ``crates/goose/src/agents/tool_execution.rs``; in the state-machine agent
(``agents/state_machine/ops_tool_approval.rs`` at a8040f7b) the inspection manager's
``Deny`` marks the request not executable and ``ops_toolcalling.rs`` answers it with that
text. Where the agent calls ``record_error``/``record_success`` (REP-002's input) was not
found in the stored copy; here every settled result feeds them.

What it does there, and here: it is a tool inspector, run on each reply's tool requests
before they execute, and it never ends the session — it *denies single calls*
(``InspectionAction::Deny``), which the agent answers with ``DECLINED_RESPONSE`` instead of
running them; the model goes on. So this peer stops no loop itself: the prompt runs until
the script ends or the tool-call cap does, and what it saves is the calls it refused.

- REP-001: a call equal to the previous call (same name, ``serde_json::Value``-equal
  arguments, so key order does not matter) whose repeat count would pass
  ``max_repetitions`` is denied. goose leaves ``max_repetitions`` unset by default (the
  agent installs ``RepetitionInspector::new(None)``, and ``None`` allows every repeat); it
  is set per session (``--max-tool-repetitions``, a recipe's
  ``session.max_tool_repetitions``). The benchmark runs it at 5, the value public recipes
  use — with the default, REP-001 never fires.
- REP-002: a tool whose last results were the same error (the first 100 characters)
  ``MAX_CONSECUTIVE_ERROR_FINGERPRINTS = 3`` times in a row has its calls denied in the
  next reply's batch, whatever their arguments; then the count restarts from 0. Any success
  resets it. No setting.
- The inspector checks a batch against a snapshot of its state; here calls are checked in
  order and an allowed call updates the state before the next one is checked (the agent
  records each call it dispatches), which only matters for identical calls in one reply.
- A denied call never runs; its outcome carries ``DECLINED_RESPONSE``. No warning is
  injected (the later staged "soft warning" exists only in forks).
"""

from __future__ import annotations

import json

from bench.loop_peers.base import NoStopByDefault
from bench.tables import tables
from workflows.contracts import TerminalStatus, ToolCall, ToolOutcome

_T = tables(__file__)  # goose.yaml, each value with its source
MAX_REPETITIONS: int = _T["MAX_REPETITIONS"]
MAX_CONSECUTIVE_ERROR_FINGERPRINTS: int = _T["MAX_CONSECUTIVE_ERROR_FINGERPRINTS"]
ERROR_FINGERPRINT_CHARS: int = _T["ERROR_FINGERPRINT_CHARS"]
DECLINED_RESPONSE: str = _T["DECLINED_RESPONSE"]


def _parameters(call: ToolCall) -> str:
    arguments = call.arguments  # None: not a JSON object, serde's Value::Null
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"))


class GooseRepetitionInspector(NoStopByDefault):
    """goose's ``RepetitionInspector`` (REP-001 at 5 repeats, REP-002 at 3 same errors)."""

    name = "goose_repetition"
    title = "goose RepetitionInspector"

    def __init__(self, max_repetitions: int | None = MAX_REPETITIONS) -> None:
        self.max_repetitions = max_repetitions
        self.last_call: tuple[str, str] | None = None
        self.repeat_count = 0
        self.error_tool: str | None = None
        self.error_text: str | None = None
        self.error_count = 0
        self.denied_tool: str | None = None

    def observe_model(self, text: str, calls: list[ToolCall]) -> None:
        """REP-002 is decided once per reply's batch, then its count restarts."""
        self.denied_tool = None
        if self.error_count >= MAX_CONSECUTIVE_ERROR_FINGERPRINTS and self.error_tool:
            self.denied_tool = self.error_tool
            self.error_count = 0

    def refuse_call(self, call: ToolCall) -> str | None:
        key = (call.name, _parameters(call))
        repeat = self.last_call == key
        limit = self.max_repetitions
        if repeat and limit is not None and self.repeat_count + 1 > limit:
            return DECLINED_RESPONSE
        if call.name == self.denied_tool:
            return DECLINED_RESPONSE
        self.repeat_count = self.repeat_count + 1 if repeat else 1
        self.last_call = key
        return None

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        for outcome in outcomes:
            if outcome.content == DECLINED_RESPONSE and outcome.error_message == DECLINED_RESPONSE:
                continue  # its own refusal is not a tool result
            if outcome.status == TerminalStatus.ERROR:
                text = (outcome.error_message or outcome.content)[:ERROR_FINGERPRINT_CHARS]
                if outcome.tool_name == self.error_tool and text == self.error_text:
                    self.error_count += 1
                else:
                    self.error_tool, self.error_text, self.error_count = outcome.tool_name, text, 1
            else:
                self.error_tool, self.error_text, self.error_count = None, None, 0
        return None
