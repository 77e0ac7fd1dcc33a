"""Denied calls: remember what the user said no to, and notice a model that keeps asking.

docs/protections.md, "Loop profiles", rule R4 (loop type ``repeated_denied_call``). A
denial never counts as the model's failure (seed 000: a permission cancellation resets the
guard), which is right for one denial and wrong for a model that asks again and again: the
same command after every "No", or one workaround after another against the same boundary.

Two parts. *Memory*: a call the user denied (``ToolOutcome.denied``: the permission path, or
a tool's own permission layer) is remembered by its digest; an identical re-request is
answered as denied again without asking (in ``warn`` and ``enforce``; ``shadow`` only counts
it and asks). *Rounds*: a batch with a denial (a re-request answered included) and no
successful call is a denial round; a successful call or new user input ends the run of
rounds, and new user input also forgets the denials (the user may have changed their mind).
At :data:`DENIED_CALL_THRESHOLD` consecutive rounds the model gets the reminder below; the
next round stops the prompt. Rounds count batches, not calls: several calls denied together
were one request of the model.

Four rounds since ``seawall-progress-rules-v1`` (a prompt replaying from before keeps three):
a user reviewing a plan rejects three batches of writes in a row and the model then stops on
its own (``legit-permission-rejections``); at three every such session got a reminder it did
not need, at four every denial loop of the corpus is still stopped. A denial is explicit,
never guessed: refusals, resent ids and cap skips report the same statuses but are not
denials. The answered re-request is counted in ``tool_calls.denied_repeats``. The guard keeps
treating a denial as the user's doing (a cancellation resets its streak).
"""

from __future__ import annotations

from pydantic import Field

from workflows.rules.evidence import ResultKind
from workflows.rules.ladder import RuleCounter, RuleFinding, RuleReview, escalate
from workflows.seed.recency import remember_latest

# Consecutive denial rounds before the reminder. Four: a user reviewing a plan rejects three
# batches of writes in a row and the model stops on its own (the module docstring); a
# prompt replaying from before ``PROGRESS_RULES_PATCH`` keeps the three it started with.
DENIED_CALL_THRESHOLD = 4
PRE_PROGRESS_DENIED_CALL_THRESHOLD = 3
REMEMBERED_DENIALS = 64
_PROMPT = "prompt"

DENIED_CALL_REMINDER = (
    "System: the user has denied several tool calls in a row. Do not ask again for the same "
    "or an equivalent action, and do not route around the denial with other tools. Continue "
    "with what needs no permission, or ask the user how to proceed."
)
DENIED_CALL_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the model kept requesting calls the "
    "user denied after a corrective reminder. New user input is required to continue."
)


class DeniedCalls(RuleCounter):
    """The digests the user denied in this prompt (oldest first) and the run of rounds."""

    threshold: int = Field(default=DENIED_CALL_THRESHOLD, ge=1)
    denied: dict[str, None] = Field(default_factory=dict)

    def answers(self, digest: str) -> bool:
        """The memory: a call the user denied is answered as denied again, unasked."""
        return digest in self.denied

    def review(self, review: RuleReview) -> list[RuleFinding]:
        """Remember one settled batch's denials and climb the run of denial rounds (time
        passing changes nothing here: a denial does not expire, only new input lifts it)."""
        batch = review.batch
        denials = [call for call in batch if call.kind is ResultKind.DENIED]
        for call in denials:
            remember_latest(self.denied, call.digest, None, REMEMBERED_DENIALS)
        if review.input_arrived:
            self.denied.clear()
            self.rungs.clear()
            return []
        if any(call.kind is ResultKind.SUCCESS for call in batch):
            self.rungs.clear()
            return []
        if not denials:
            return []
        return escalate(self.rungs, {_PROMPT: 1}, self.threshold, review.mode)
