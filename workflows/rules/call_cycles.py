"""Call cycles: the same few batches coming round again and again, all succeeding, and nothing
moving.

docs/protections.md, "Loop profiles", rule R5 (loop type ``repeated_call_cycle``). The
identical-result rule (R3) sees one call returning its last result again, and forgets as soon
as anything changed the world. Real loops made of successful calls hide behind exactly that: a
model that goes round ``git status`` → ``read_file`` → ``ls`` → ``git status`` (two shell
commands, each a state-changing tool, so R3 resets on every turn), or that edits a line and
edits it back, or that runs the same three diagnostics in turn. Each step succeeds; the
sequence repeats.

So each batch is summarized by a private *signature* (the sorted call digests, result kinds
and output fingerprints of its calls, ``workflows.rules.evidence``), and the rule looks for
the last batches repeating with a period of 2 to :data:`MAX_PERIOD` batches: a batch that
repeats the one ``p`` batches before it extends a run, and once the run covers a whole period
(the cycle came round twice) every further whole period is one *repetition* of that cycle.
Only the smallest period counts, and the *calls* must cycle too: batches that are all the
same (period 1), or one call whose answer flaps between two values, are R3's business (a
repeat; a poll). A cycle made only of reads is also seen by R3, call by call, but only at each
call's eighth identical result: R5 reminds first and, in ``enforce``, stops first, so the
prompt records the cycle; with the stop off (``warn``) the model may read both reminders,
once each.

Progress breaks a cycle and returns the rule to zero: a call that waited succeeded (time
passed: a poll that waits is not a spin), a state-changing success led to a *new* state (its
file writes, where the tool reports them, left the workspace in a state it was not in before
in this prompt; a change that reports no writes is new the first time that call reports that
result), or new user input arrived. A write that returns the workspace to an earlier state is
not progress: an edit undone and made again is the cycle. A batch with a call that did not
succeed breaks the run without resetting (failure cycles are R2's business, denials R4's).

At :data:`CALL_CYCLE_THRESHOLD` repetitions of one cycle the model gets the reminder below;
that cycle's next repetition, after the model read it, stops the prompt. The key is a private
digest of the cycle (the same whatever batch of it the run started at); decisions never name
a tool.

Why three repetitions (the fourth time round): the first repetition is a model checking once
more, the second can be a model that doubted the first answer; a third identical round with
nothing new in between is the loop. Two reminds a model that re-runs a short diagnostic
twice; more lets a period-5 cycle run 25 batches before the reminder. A period-2 cycle stops
at its tenth batch, a period-5 one at its twenty-fifth. Not tuned to a corpus file: no
scenario of ``bench/corpus/`` had this shape when it was written.
"""

from __future__ import annotations

import hashlib

from pydantic import Field

from workflows.rules.evidence import CallEvidence, ResultKind
from workflows.rules.ladder import RuleCounter, RuleFinding, RuleReview, escalate
from workflows.seed.recency import remember_latest

# The longest cycle looked for, in batches. Longer sequences that repeat exactly are rare, and
# the longer the period the more a legitimate round of checks looks like one.
MAX_PERIOD = 5
# Repetitions of one cycle before the reminder: with the first time round, the fourth. The
# first repetition is a model checking once more; the second can be a model that doubted the
# first answer; a third identical round with nothing new in between is the loop. A legitimate
# round of polls that really waits never counts (it is progress), and one that spins gets the
# reminder, which tells it to wait. Lower (2) would remind a model that re-runs a short
# diagnostic twice; higher lets a period-5 cycle run 25 batches before the reminder. With the
# stop one repetition later, a period-2 cycle stops at its tenth batch, a period-5 one at its
# twenty-fifth.
CALL_CYCLE_THRESHOLD = 3
# Workspace states and state-changing results remembered; the oldest is forgotten first.
REMEMBERED_STATES = 256

CALL_CYCLE_REMINDER = (
    "System: the same sequence of tool calls keeps coming round with the same results, and "
    "nothing changed in between. Going round again will not tell you anything new. Use what "
    "you have, change the approach, wait before checking again if you are waiting for "
    "something, or explain what you are stuck on."
)
CALL_CYCLE_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the same sequence of tool calls kept "
    "coming round with the same results after a corrective reminder. New user input is "
    "required to continue."
)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def batch_signature(batch: list[CallEvidence]) -> str:
    """A private digest of what the batch asked and got back (order-free: the calls of a
    batch run concurrently)."""
    parts = sorted(f"{c.digest}:{c.kind.value}:{c.fingerprint}" for c in batch)
    return _digest("\n".join(parts))


def calls_signature(batch: list[CallEvidence]) -> str:
    """A private digest of what the batch asked, whatever came back."""
    return _digest("\n".join(sorted(c.digest for c in batch)))


def _primitive(window: list[str]) -> bool:
    """Whether ``window`` is not a shorter sequence repeated (``ABAB`` is ``AB`` twice)."""
    size = len(window)
    return not any(size % q == 0 and window == window[:q] * (size // q) for q in range(1, size))


def _cycle_key(window: list[str]) -> str:
    """The cycle's key: the same for every rotation (whichever batch the run began at)."""
    rotations = [window[i:] + window[:i] for i in range(len(window))]
    return _digest("cycle\n" + "\n".join(min(rotations)))


class CallCycles(RuleCounter):
    """One prompt's recent batch signatures, the run of each period, what the workspace is
    known to hold, and where each cycle stands on the ladder."""

    threshold: int = Field(default=CALL_CYCLE_THRESHOLD, ge=1)
    # The last MAX_PERIOD signatures since the run was last broken, oldest first, and what
    # those batches asked (their calls only).
    recent: list[str] = Field(default_factory=list)
    recent_calls: list[str] = Field(default_factory=list)
    # Per period: how many batches in a row repeated the one that many batches before.
    runs: dict[int, int] = Field(default_factory=dict)
    # The files written so far (path → content digest) and the workspace states seen.
    workspace: dict[str, str] = Field(default_factory=dict)
    states: dict[str, None] = Field(default_factory=dict)
    # State-changing results without writes already seen (call digest and fingerprint).
    changes_seen: dict[str, None] = Field(default_factory=dict)

    def _restart(self) -> None:
        self.recent.clear()
        self.recent_calls.clear()
        self.runs.clear()

    def _remember(self, batch: list[CallEvidence], signature: str | None = None) -> None:
        """``signature``: the batch's :func:`batch_signature`, when already worked out."""
        if signature is None:
            signature = batch_signature(batch)
        self.recent = [*self.recent, signature][-MAX_PERIOD:]
        self.recent_calls = [*self.recent_calls, calls_signature(batch)][-MAX_PERIOD:]

    def _progress(self, batch: list[CallEvidence]) -> bool:
        """Whether the batch moved anything: a waiting success, or a change to a new state."""
        progress = False
        wrote = False
        for call in batch:
            if call.kind is not ResultKind.SUCCESS:
                continue
            if call.waits:
                progress = True
            for path, content in call.writes:
                self.workspace[path] = content
                wrote = True
            if call.changes and not call.writes:
                seen = f"{call.digest}:{call.fingerprint}"
                if seen not in self.changes_seen:
                    progress = True
                remember_latest(self.changes_seen, seen, None, REMEMBERED_STATES)
        if wrote:
            state = _digest("\n".join(f"{p}\0{c}" for p, c in sorted(self.workspace.items())))
            if state not in self.states:
                progress = True
            remember_latest(self.states, state, None, REMEMBERED_STATES)
        return progress

    def review(self, review: RuleReview) -> list[RuleFinding]:
        """Add one settled batch to the recent signatures and climb the cycle it repeats."""
        batch = review.batch
        progress = self._progress(batch)
        if review.input_arrived or progress:
            self._restart()
            self.rungs.clear()
            if not review.input_arrived:
                self._remember(batch)
            return []
        if not batch or any(call.kind is not ResultKind.SUCCESS for call in batch):
            self._restart()  # failures are R2's business, denials R4's
            return []
        signature = batch_signature(batch)
        for period in range(2, MAX_PERIOD + 1):
            repeats = len(self.recent) >= period and self.recent[-period] == signature
            self.runs[period] = self.runs.get(period, 0) + 1 if repeats else 0
        self._remember(batch, signature)
        for period in range(2, MAX_PERIOD + 1):
            run = self.runs[period]
            window = self.recent[-period:]
            # The calls must cycle too: one call whose answer flaps is a poll (R3's business).
            if (
                run < period
                or not _primitive(window)
                or not _primitive(self.recent_calls[-period:])
            ):
                continue
            if run % period:
                return []  # inside a repetition of the shortest cycle
            return escalate(self.rungs, {_cycle_key(window): 1}, self.threshold, review.mode)
        return []
