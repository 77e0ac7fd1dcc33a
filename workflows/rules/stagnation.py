"""No new state: a long run of batches in which nothing happened that had not happened before.

docs/protections.md, "Loop profiles", rule R11 (loop type ``repeated_stagnation``). The
call-cycle rule (R5) looks for the last batches repeating with a period of up to five; a
sweep that pages through twenty results and wraps round to page one, a round of eight
diagnostics in a fixed order, a rotation over many tools inside one reply, or a cycle of
twelve steps is longer than that, and every call of it is new to R3 for as long as the
sequence is. What all of these have in common is the principle itself: nothing new is
learned. Every call of every batch asks something the prompt asked before and gets back
what it got then.

So the rule keeps, per prompt, the (tool, call digest, normalized fingerprint) of every
settled call (``workflows.rules.normalize``: a drifting time or id does not make a result
new), and counts *stale* batches in a row: batches in which every call is one the prompt
has seen with that same outcome and every call succeeded. A stale batch with a failure or a
denial neither counts nor resets: those loops are R2's, the guard's and R4's, whose loop
types name the cause. A batch with anything new — a call never asked, an answer
never given, a call that waited, a change that left the workspace in a state not seen
before — is progress and returns the count to zero; so does new user input. A change that
returns the workspace to a known state is not new (R7's evidence).

Since ``NOTHING_NEW_PATCH`` what is learned is what comes back, however it was asked: a
call that changes nothing and gets an answer the prompt already got is stale even when the
call itself is new — a ``git log --grep`` reworded twenty times that lists the same seven
commits, a listing run ten ways that prints the same screenful. Three kinds of call keep
their question in the key: one that changed the world (its success is the news, whatever it
printed: "file written" for every file of a refactor), one whose answer names what it asked
for (``normalize.read_whole_exchange``: the same words about another trace are another
answer), and one whose answer is too short to say anything (an "ok" or "Event created." for each of
eighteen calendar entries is an acknowledgement, not something learned twice).

Since ``MOVED_COUNTS_PATCH`` an answer that repeats one already seen except for a count is
not news either: a long listing whose every answer ends with the agent's own context size, a
page snapshot whose node count jitters, a thinking tool that reports its history length. Two
answers of one *shape* (``normalize``: the masked text without its numerals), each of at least
:data:`MIN_SHAPED_WORDS` distinct words, that share at least :data:`SAME_ANSWER_SIMILARITY`
of them, numbers included, are one answer. A short answer whose count moved is another one
(``completed: 3`` then ``completed: 7`` of a crawl whose status is all it says: its count is
most of its words), and so is a page of a listing whose every id and amount is new. A call
that changed something keeps its exact answer.

Since ``LOOKS_AND_IDS_PATCH`` a wait is news only if the world was looked at since the last
wait that was: a model that runs ``echo idle``, ``sleep 5; echo ok`` and ``echo "pending"``
for an hour (``inspection.looks_at_nothing``: commands whose answer is their own words) waits
for something it never looks at, so its waits learn nothing. A ``sleep 30`` then a status call,
or ``sleep 60; tail build.log``, looks after every wait and is news as before.

Since ``WORLD_IDS_PATCH`` an answer about what its call names is keyed by the values it names
(``CallEvidence.echoed``), not by the whole call: the same log lines of the same pod, fetched
with a limit one higher each time, are nothing new, while the same words about another pod
are. And a call that looks at nothing is never news at all (``CallEvidence.own_words``): what
an ``echo "Please reply yes to confirm"`` prints is the model's own words, not something the
world said, so a model asking for an answer through the shell, round after round, learns
nothing however it words the echo.

Since ``REFUSALS_PATCH`` the runner's refusal to start a call (a tool that does not exist, a
tool-call limit: ``evidence.refused_unrun``) is an answer like a success's, as it is to R3 and
R9: no failure rule counts a refusal, so a batch holding one used to neither count nor reset,
and a model calling a missing ``task_complete`` with three summaries in turn, re-running the
finished tests between them, ran to its request cap. The same refusal again is nothing new,
however the call was worded.

At :data:`STAGNATION_THRESHOLD` stale batches in a row — one more than the longest cycle the
rule is meant for (twelve batches), so a cycle is reminded in its second round at the
latest — the model gets the reminder below; the next stale batch stops the prompt. The key
is the prompt; decisions never name a tool.
"""

from __future__ import annotations

import hashlib

from pydantic import Field

from workflows.rules.evidence import CallEvidence, ResultKind
from workflows.rules.ladder import RuleCounter, RuleFinding, RuleReview, escalate
from workflows.rules.normalize import similarity
from workflows.rules.workspace_states import REMEMBERED_FILES, REMEMBERED_STATES, state_digest
from workflows.seed.recency import remember_latest

# Stale batches in a row before the reminder (the next stale batch stops).
STAGNATION_THRESHOLD = 12
# Outcomes remembered; the oldest is forgotten first (workspace states and files: R7's
# bounds, ``workflows.rules.workspace_states``).
REMEMBERED_OUTCOMES = 8192
# Answer shapes remembered, each with the answer that stands for it (MOVED_COUNTS_PATCH).
REMEMBERED_SHAPES = 1024
# Two answers of one shape are one answer when each has at least MIN_SHAPED_WORDS distinct
# words and they share SAME_ANSWER_SIMILARITY of them, numbers included (the sketch's
# estimate): a number or two moved in an answer that says much more than its numbers (one in
# fifteen words, two in twenty-five). A status whose count is most of what it says (``"Progress:
# 6.9% (Preparing and scanning files...)"``, ``{"completed": 7, "total": 40}``) leaves less in
# common: its moving count is its news.
MIN_SHAPED_WORDS = 16
SAME_ANSWER_SIMILARITY = 0.85
STAGNATION_KEY = "prompt"

STAGNATION_REMINDER = (
    "System: for many steps in a row every tool call has asked something you already asked "
    "and got back what it got before; nothing new has been learned. Going round again will "
    "not change that. Use what you already have, try a different approach, or explain what "
    "you are stuck on."
)
STAGNATION_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the tool calls kept repeating what was "
    "already asked and answered, with nothing new learned, after a corrective reminder. New "
    "user input is required to continue."
)


def short(call: CallEvidence) -> bool:
    """Whether what came back is too short to say what was learned ("ok", "Event created."):
    the same acknowledgement of another call is no evidence that nothing is new."""
    return call.answer is None or not call.answer.long


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class Stagnation(RuleCounter):
    """The outcomes the prompt has seen, the workspace states, and the stale run."""

    threshold: int = Field(default=STAGNATION_THRESHOLD, ge=1)
    # NOTHING_NEW_PATCH: a call that changes nothing is keyed by its answer alone.
    by_answer: bool = False
    # MOVED_COUNTS_PATCH: answers of one shape that differ in a count or two are one answer.
    by_shape: bool = False
    # LOOKS_AND_IDS_PATCH: a wait is news only when something looked at the world since the
    # last wait that was (or the wait itself looks); ``looked`` is whether something has.
    by_looks: bool = False
    looked: bool = True
    # REFUSALS_PATCH: the runner's refusal to start a call is an answer like a success's.
    by_refusals: bool = False
    outcomes: dict[str, None] = Field(default_factory=dict)
    # Per answer shape, the fingerprint and sketch of the answer that stands for it.
    shapes: dict[str, tuple[str, frozenset[int]]] = Field(default_factory=dict)
    workspace: dict[str, str] = Field(default_factory=dict)
    states: dict[str, None] = Field(default_factory=dict)

    def _answer(self, call: CallEvidence) -> str:
        """The fingerprint of what came back, as the rule remembers it: an earlier answer's
        when this one differs from it only in a count or two (``by_shape``)."""
        answer = call.answer
        if not self.by_shape or call.changes or answer is None or answer.shape is None:
            return call.fingerprint
        if answer.size < MIN_SHAPED_WORDS:  # its counts are most of what it says
            return call.fingerprint
        seen = self.shapes.get(answer.shape)
        if seen is not None and (
            seen[0] == call.fingerprint  # the same answer again: nothing to compare
            or similarity(seen[1], answer.sketch) >= SAME_ANSWER_SIMILARITY
        ):
            return seen[0]
        remember_latest(
            self.shapes, answer.shape, (call.fingerprint, answer.sketch), REMEMBERED_SHAPES
        )
        return call.fingerprint

    def _new(self, batch: list[CallEvidence]) -> bool:
        """Remember the batch; whether anything in it was new."""
        new = False
        wrote = False
        for call in batch:
            if call.waits and call.kind is ResultKind.SUCCESS:
                if not self.by_looks or self.looked or not call.sees_nothing:
                    new = True
                if self.by_looks:
                    self.looked = not call.sees_nothing
            elif self.by_looks and not call.sees_nothing:
                self.looked = True
            answer = self._answer(call)
            if self.by_answer and not (call.changes or call.echoes or short(call)):
                outcome = _digest(f"{call.kind.value}\n{answer}")
            elif call.echoed and not (call.changes or short(call)):
                # About what it names, however else it was asked (WORLD_IDS_PATCH).
                outcome = _digest(f"{call.tool}\n{call.echoed}\n{call.kind.value}\n{answer}")
            else:
                outcome = _digest(f"{call.tool}\n{call.digest}\n{call.kind.value}\n{answer}")
            # An answer in the model's own words (an echo) is nothing the world said.
            if outcome not in self.outcomes and not call.own_words:
                new = True
            remember_latest(self.outcomes, outcome, None, REMEMBERED_OUTCOMES)
            for path, content in call.writes:
                self.workspace.pop(path, None)
                self.workspace[path] = content
                wrote = True
        if len(self.workspace) > REMEMBERED_FILES:
            self.workspace.clear()
            self.states.clear()
        if wrote:
            state = state_digest(self.workspace)
            if state not in self.states:
                new = True
            remember_latest(self.states, state, None, REMEMBERED_STATES)
        return new

    def review(self, review: RuleReview) -> list[RuleFinding]:
        """Count one more stale batch, or start over."""
        new = self._new(review.batch)
        if review.input_arrived or new or not review.batch:
            self.rungs.clear()
            return []
        if not all(call.answered(refusals=self.by_refusals) for call in review.batch):
            return []  # failures are R2's and the guard's business, denials R4's
        return escalate(self.rungs, {STAGNATION_KEY: 1}, self.threshold, review.mode)
