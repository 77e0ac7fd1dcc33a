"""The one interface a faithful peer loop detector implements for the loop benchmark.

Why it exists: ``bench/simulate.py`` plays every scenario under each peer exactly as the
peer's own agent would run it, warnings included, and ``bench/loops.py`` reports them beside
Seawall. Each peer module in ``bench/loop_peers/`` holds one class written to this protocol; a
peer keeps its state in the instance, so the benchmark makes a fresh one per scenario.

The simulator's order, per model reply:

1. ``observe_model(text, calls)`` — when the peer has it: the reply's text (what the peer's
   agent would see streamed), before its calls are looked at.
2. ``refuse_call(call)`` — when the peer has it: for each call of
   the batch in order; a non-``None`` text refuses that one call, which does not run and
   gets an ``error`` outcome carrying that text (a peer that denies a single call, not the
   whole prompt).
3. ``before_batch(calls)`` — a stop name halts the prompt before the batch runs (the batch
   is skipped), like a detector that checks calls as they stream in.
4. ``warning()`` — when present; a text is appended to the conversation and counted.
5. The batch runs; its outcomes settle.
6. ``observe_user(texts)`` — when present and the user sent input
   during the batch: those messages, which the conversation now holds after the batch's
   results.
7. ``after_batch(calls, outcomes)`` — a stop name halts the prompt after the batch.
8. ``warning()`` again.

``warning()`` returns the exact text the real peer injects into the conversation (a "you
seem to be repeating yourself" nudge), then forgets it, so each warning is returned once.
It is appended as a ``user`` message unless the peer sets ``warning_role = Role.SYSTEM``
(each peer's docstring says which its agent uses). Scripted models do not react to peer
warnings (they react to Seawall's reminder only), so a warning changes what is counted,
never the script's course.

The tool-call cap (100 calls per prompt by default) applies to every peer, as it does to
the simplified baselines in ``bench/baselines.py``, which predate this protocol and
implement only its required part.
"""

from __future__ import annotations

from typing import Protocol

from workflows.contracts import ToolCall, ToolOutcome


class PeerRule(Protocol):
    """A peer's loop rule as the simulator runs it, its required part (the simplified
    baselines of ``bench/baselines.py`` have only that). The optional hooks of the module doc
    (``observe_model``, ``refuse_call``, ``observe_user``, ``warning``, and the attribute
    ``warning_role``) are called when present (``getattr``)."""

    name: str  # the policy's key in reports and JSON, e.g. "openhands_stuck"
    title: str  # one human line for the report's table

    def before_batch(self, calls: list[ToolCall]) -> str | None:
        """Before the batch runs: a stop name halts the prompt (the batch is skipped)."""
        ...

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        """After the batch settled (``outcomes`` in call order): a stop name halts."""
        ...


class NoStopByDefault:
    """What a rule that checks at one point only (before a batch, or after it), or at
    neither (the cap alone), inherits for the other: no stop."""

    def before_batch(self, calls: list[ToolCall]) -> str | None:
        return None

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        return None
