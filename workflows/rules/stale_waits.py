"""Stale waiting: a long wait in which nothing changed at all.

docs/protections.md, "Loop profiles", rule R12 (loop type ``repeated_stale_wait``). Time is
evidence for every other rule (``workflows.rules.evidence``, "Time as evidence"): a call that
waited may see a world that moved, so a poll that really waits is never a spin, and the
identical-result and no-new-state rules let it run. That is right for a poll of a job that
will end, and it is exactly what a wait on oneself exploits: ``sleep 30; pgrep -f "make
verify"`` whose ``pgrep`` matches its own shell, a ``tail`` of a log whose process died, a
watch of a PR already merged. Such a wait answers the same for ever, and each answer costs a
model request with the whole conversation.

What tells them apart without reading what the calls mean is how long nothing changed. A
poll waits *because* it expects a change; the longer every check comes back exactly as
before, the less waiting the same way will teach. So the rule keeps a *stale stretch* as the
progress judge does (``workflows.rules.judge``: settled batches in which every call was
already asked and answered the same, a call that waited included; here what a call asked is
read through the normalizer too, so a fresh time in its arguments asks nothing new) and
measures the time its
calls took: each batch's longest call (a batch's calls run together), from the batch after the
last one that brought anything new. Not the prompt's clock: the model's own time between calls
is not waiting, and a scenario's scripted durations then read the same in the simulator and in
the workflow, whose clock also holds the real time its activities took. After
:data:`STALE_WAIT_MINUTES` of it (and at least :data:`MIN_STALE_BATCHES` stale batches, so
that one long call repeated is not a stretch) the model gets the reminder, which says how a
wait can fail to see its end; a stale batch that ends a second such span stops the prompt.

Since ``NOTHING_NEW_PATCH`` the stretch is the waiting's own: only the calls that waited
(and failures) are its checks, keyed by what came back (a ``sleep 30; pgrep`` and a ``sleep
90; pgrep`` that answer alike are one check), and a batch of calls that neither waited nor
wrote anything — a ``git status`` between two waits — neither counts nor resets it: a watch
that never sees its end is no less stale for a look elsewhere in between. An answer that
names what its call asked for keeps the call in its key (``CallEvidence.echoes``), and a
write starts the stretch over.

What resets it: anything new (a call never asked, an answer never given, a write not made
before), and new user input. A stale batch with a failure
neither counts nor resets (failures are the guard's and R2's). The threshold is minutes
rather than batches because a poll's interval is the model's choice: six five-minute polls
and sixty thirty-second ones have waited the same. Thirty minutes is twice the longest
unchanged wait of a legitimate session in the corpus but one, a fifty-minute CI run, which is
reminded and ends before the stop (docs/benchmarks.md has the figures), and a real poll of a
job that runs longer usually sees something change in that time (a log line, a step
finishing). It is the operator's to change (``SEAWALL_STALE_WAIT_MINUTES``, which reaches the
prompt as ``LoopSettings.stale_wait_minutes``), or to set the rule to ``warn``. The key is the
prompt; decisions never name a tool.
"""

from __future__ import annotations

import hashlib

from pydantic import Field

from workflows.rules.evidence import CallEvidence, ResultKind
from workflows.rules.ladder import RuleCounter, RuleFinding, RuleReview, escalate
from workflows.seed.recency import remember_latest

# Minutes of unchanged waiting before the reminder; a second span of as many stops.
STALE_WAIT_MINUTES = 30
# Stale batches a stretch needs before its time counts.
MIN_STALE_BATCHES = 3
# Outcomes remembered; the oldest is forgotten first.
REMEMBERED_OUTCOMES = 8192
STALE_WAIT_KEY = "prompt"

STALE_WAIT_REMINDER = (
    "System: for a long time now every check has come back exactly as before, however long "
    "you waited between them; nothing has changed. Make sure what you are waiting for is "
    "still running and that your check can see it end (a check can match its own command "
    "line, or watch a process that already exited). If it cannot end, stop waiting: use "
    "what you have, try another way, or explain what you are waiting for."
)
STALE_WAIT_STOP_MESSAGE = (
    "System: Automatic continuation stopped because every check kept coming back unchanged "
    "through a long wait, after a corrective reminder. New user input is required to continue."
)


def outcome_key(call: CallEvidence, *, normalized_call: bool = False) -> str:
    """What one settled call asked and got back, including what it wrote, as a private
    digest: equal exactly when the call repeats an earlier one (a call that waited is not new
    by that alone). Its answer is read through the normalizer; so is what it asked with
    ``normalized_call`` (a poll whose arguments carry a fresh time asks the same thing; the
    progress judge keys on the call's exact digest, as it did when it was introduced)."""
    asked = call.asked.key if normalized_call and call.asked is not None else call.digest
    return _digest(f"{call.tool}\n{asked}\n", call)


def answer_key(call: CallEvidence) -> str:
    """What a check got back (and wrote), as a private digest; with what it asked when its
    answer names what it asked for (NOTHING_NEW_PATCH)."""
    if call.echoes:
        return outcome_key(call, normalized_call=True)
    return _digest("", call)


def _digest(asked: str, call: CallEvidence) -> str:
    """``asked`` (empty, or ending in a newline), then what came back and what it wrote."""
    writes = ";".join(f"{path}={content}" for path, content in call.writes)
    text = f"{asked}{call.kind.value}\n{call.fingerprint}\n{writes}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class StaleWaits(RuleCounter):
    """The outcomes the prompt has seen and the stale stretch: the seconds its calls took,
    its stale batches, and the spans of ``threshold`` minutes counted."""

    threshold: int = Field(default=STALE_WAIT_MINUTES, ge=1)
    # NOTHING_NEW_PATCH: the checks are the calls that waited, keyed by their answers.
    by_answer: bool = False
    outcomes: dict[str, None] = Field(default_factory=dict)
    waited: float = 0.0
    batches: int = 0
    spans: int = 0

    def review(self, review: RuleReview) -> list[RuleFinding]:
        """Stretch the stale run by one batch, or start it over."""
        if self.by_answer:
            checks = [c for c in review.batch if c.waits or c.kind is not ResultKind.SUCCESS]
            wrote = any(call.writes for call in review.batch)
            if review.batch and not (checks or wrote or review.input_arrived):
                return []  # a look elsewhere between two waits
            keys = [answer_key(call) for call in checks]
            stale = bool(keys) and not wrote and all(key in self.outcomes for key in keys)
        else:
            keys = [outcome_key(call, normalized_call=True) for call in review.batch]
            stale = bool(keys) and all(key in self.outcomes for key in keys)
        for key in keys:
            remember_latest(self.outcomes, key, None, REMEMBERED_OUTCOMES)
        if review.input_arrived or not stale:
            self.rungs.clear()
            self.waited, self.batches, self.spans = 0.0, 0, 0
            return []
        self.waited += max(call.duration for call in review.batch)
        if any(call.kind is not ResultKind.SUCCESS for call in review.batch):
            return []  # failures are the guard's and R2's business
        self.batches += 1
        if self.batches < MIN_STALE_BATCHES:
            return []
        # ``waited`` only grows within a stretch, so the spans counted never go back.
        spans = int(self.waited // (self.threshold * 60))
        offences, self.spans = spans - self.spans, spans
        if offences == 0:
            return []
        return escalate(self.rungs, {STALE_WAIT_KEY: offences}, 1, review.mode)
