"""Peer loop rules, re-implemented from their published descriptions.

Each rule runs on top of the same per-prompt tool-call cap as Seawall (100 by default), with
none of Seawall's protections: every call the model asks for runs unless the rule stops
first. A rule's state lives in the instance, so make a fresh one per scenario
(:func:`fresh_baselines`).

- ``cap_100`` — a per-turn cap of 100 tool calls and nothing else (the default cap of most
  agent CLIs; the batch that would pass it is not run).
- ``identical_calls_5`` — stop after 5 consecutive identical calls, same tool and same
  arguments (Gemini CLI's ``LoopDetectionService``: ``TOOL_CALL_LOOP_THRESHOLD = 5`` over a
  hash of the name and the JSON arguments; the check runs as calls stream in, before any
  of the turn's calls are scheduled, so the batch holding the 5th repeat does not run).
- ``same_error_3`` — stop after 3 consecutive identical (tool, error) fingerprints (the
  "same action ends in the same error three times" pattern of OpenHands' stuck detector).
  The fingerprint is the tool name and the error text the model saw; any call that did
  not end in an error breaks the run. Checked once the batch settled.
- ``tool_budget_10`` — a per-tool retry budget: a tool may fail 10 times per prompt; its
  11th failure ends the prompt (pydantic-ai's per-tool ``max_retries``, raised to 10, with
  the counter kept for the whole prompt). Checked once the batch settled.

Errors are terminal ``error`` outcomes: peers have one status axis, so a cancelled call
(a user rejection or abort) is not an error and a call that never ran but answered with an
error (invalid arguments, unknown tool) is.
"""

from __future__ import annotations

from bench.loop_peers.base import NoStopByDefault
from workflows.contracts import TerminalStatus, ToolCall, ToolOutcome
from workflows.seed.failed_call_refusal import argument_digest

IDENTICAL_CALLS_THRESHOLD = 5
SAME_ERROR_THRESHOLD = 3
TOOL_FAILURE_BUDGET = 10


def _call_key(call: ToolCall) -> str:
    arguments = call.arguments if call.arguments is not None else {"<raw>": call.raw_arguments}
    return argument_digest(call.name, arguments)


class CapOnly(NoStopByDefault):
    """(a) The tool-call cap alone; the simulator applies the cap to every policy."""

    name = "cap_100"
    title = "cap of 100 calls only"


class IdenticalCalls(NoStopByDefault):
    """(b) 5 consecutive identical calls (same tool, same arguments)."""

    name = "identical_calls_5"
    title = "5 identical calls in a row"

    def __init__(self, threshold: int = IDENTICAL_CALLS_THRESHOLD) -> None:
        self.threshold = threshold
        self.last: str | None = None
        self.count = 0

    def before_batch(self, calls: list[ToolCall]) -> str | None:
        for call in calls:
            key = _call_key(call)
            if key == self.last:
                self.count += 1
            else:
                self.last, self.count = key, 1
            if self.count >= self.threshold:
                return self.name
        return None


class SameError(NoStopByDefault):
    """(c) 3 consecutive identical (tool, error text) fingerprints."""

    name = "same_error_3"
    title = "3 identical (tool, error) in a row"

    def __init__(self, threshold: int = SAME_ERROR_THRESHOLD) -> None:
        self.threshold = threshold
        self.last: tuple[str, str] | None = None
        self.count = 0

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        stop = False
        for outcome in outcomes:
            if outcome.status != TerminalStatus.ERROR:
                self.last, self.count = None, 0
                continue
            fingerprint = (outcome.tool_name, outcome.error_message or outcome.content)
            if fingerprint == self.last:
                self.count += 1
            else:
                self.last, self.count = fingerprint, 1
            stop = stop or self.count >= self.threshold
        return self.name if stop else None


class ToolBudget(NoStopByDefault):
    """(d) A per-tool failure budget for the whole prompt."""

    name = "tool_budget_10"
    title = "per-tool budget of 10 failures"

    def __init__(self, budget: int = TOOL_FAILURE_BUDGET) -> None:
        self.budget = budget
        self.failures: dict[str, int] = {}

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        for outcome in outcomes:
            if outcome.status == TerminalStatus.ERROR:
                self.failures[outcome.tool_name] = self.failures.get(outcome.tool_name, 0) + 1
        if any(count > self.budget for count in self.failures.values()):
            return self.name
        return None


Baseline = CapOnly | IdenticalCalls | SameError | ToolBudget


def fresh_baselines() -> list[Baseline]:
    """One new instance of every baseline, in report order."""
    return [CapOnly(), IdenticalCalls(), SameError(), ToolBudget()]
