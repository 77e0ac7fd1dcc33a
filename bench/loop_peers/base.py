"""The one interface a faithful peer loop detector implements for the loop benchmark.

Why it exists: ``bench/simulate.py`` plays every scenario under each peer exactly as the
peer's own agent would run it, warnings included, and ``bench/loops.py`` reports them beside
Seawall. Each peer module in ``bench/loop_peers/`` holds one class written to this protocol; a
peer keeps its state in the instance, so the benchmark makes a fresh one per scenario.

The simulator's order, per model reply:

1. ``observe_model(text, calls)`` — when the peer has it: the reply's text (what the peer's
   agent would see streamed), before its calls are looked at.
2. ``refuse_call(call)`` — when the peer has it (:class:`RefusesCalls`): for each call of
   the batch in order; a non-``None`` text refuses that one call, which does not run and
   gets an ``error`` outcome carrying that text (a peer that denies a single call, not the
   whole prompt).
3. ``before_batch(calls)`` — a stop name halts the prompt before the batch runs (the batch
   is skipped), like a detector that checks calls as they stream in.
4. ``warning()`` — when present; a text is appended to the conversation and counted.
5. The batch runs; its outcomes settle.
6. ``observe_user(texts)`` — when present (:class:`ObservesUser`) and the user sent input
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

from typing import Protocol, runtime_checkable

from workflows.contracts import ToolCall, ToolOutcome


class PeerRule(Protocol):
    """A peer's loop detector, as the benchmark runs it (see the module doc for the order).

    ``observe_model`` and ``warning`` are optional: the simulator calls them when present
    (``getattr``), so a peer without them may leave them out.
    """

    name: str  # the policy's key in reports and JSON, e.g. "openhands_stuck"
    title: str  # one human line for the report's table

    def before_batch(self, calls: list[ToolCall]) -> str | None:
        """Before the batch runs: a stop name halts the prompt (the batch is skipped)."""
        ...

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        """After the batch settled (``outcomes`` in call order): a stop name halts."""
        ...

    def observe_model(self, text: str, calls: list[ToolCall]) -> None:
        """Optional: each model reply's text, before its calls are checked."""
        ...

    def warning(self) -> str | None:
        """Optional: the text the peer injects now, if any; returned once, then forgotten."""
        ...


class NoStopByDefault:
    """What a rule that checks at one point only (before a batch, or after it), or at
    neither (the cap alone), inherits for the other: no stop."""

    def before_batch(self, calls: list[ToolCall]) -> str | None:
        return None

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        return None


@runtime_checkable
class RefusesCalls(Protocol):
    """Optional extension: a peer that refuses single calls instead of halting the prompt.

    ``refuse_call`` is asked for each call of a batch, in order, after ``observe_model`` and
    before ``before_batch``; a text means the call does not run and the model gets an
    ``error`` outcome with that text (the peer's own refusal message).
    """

    def refuse_call(self, call: ToolCall) -> str | None: ...


@runtime_checkable
class ObservesUser(Protocol):
    """Optional extension: a peer whose window depends on the user's messages (OpenHands
    restarts its scan after the last one). Called with the user's mid-turn input, after
    the batch it arrived during, before ``after_batch``."""

    def observe_user(self, texts: list[str]) -> None: ...
