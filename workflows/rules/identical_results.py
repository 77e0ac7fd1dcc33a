"""Identical results: the same call returning the same output again and again.

docs/protections.md, "Loop profiles", rule R3 (loop type ``repeated_identical_result``).
Every seed protection watches failures, so a model that succeeds at nothing new is
invisible to them: the same ``ls`` with the same listing fifty times, an edit that reports
success and changes nothing, an API query answering ``[]`` hundreds of times. This rule
watches successes: per call digest, a success whose output fingerprint
(``workflows.rules.evidence``) equals the one that call returned last time is a *repeat*.

Legitimate polling returns identical output too (a job still running), so the threshold is
high, and a repeat does not count when time passed since the call last returned (a waiting
call succeeded in between, or the call itself waited: by what it is, like ``sleep``, or by
taking at least ``evidence.LONG_CALL_SECONDS``, like a long poll or a status call that blocks
until the job moves; ``workflows.rules.evidence``, "Time as evidence") or when another call
changed the world since (a state-changing tool succeeded: re-running the suite after an edit
verifies the edit, even when the output is the same) or when another call has *observed*
a change since (with the progress rules: a call that returned something other than it
returned last time, like the page snapshot after each key press of a scroll, where the key
press itself answers the same every time). An output that changed is progress and returns
the call to the bottom; new user input resets every call. A batch counts once per call.
With the progress rules, the runner's refusal to start a call (``evidence.refused_unrun``:
a tool-call limit) is a result like a success: the same refusal again is a repeat. At
:data:`IDENTICAL_RESULT_THRESHOLD` repeats of one call the model gets the reminder below;
that call's next repeat stops the prompt. Failures are the failure-cycle rule's business.

The cases behind the exemptions: scrolling a feed (fak #5907) answers "Pressed PageDown" to
every key press while the snapshot after it shows the next month, so the press is doing its
work until every call of the loop answers the same again (the end of the feed); a model
ignoring "Tool call limit reached … Don't try to execute it again" (agno #8304) asks for the
same searches to the cap unless the refusal counts as a result. A shell command that only
looks (``workflows.rules.inspection``) changes nothing, so it does not exempt the next repeat.
Why the guard's count (the eighth identical result): a lower threshold halts a poll of a CI
job that answers "running" seven times before it succeeds (at 5 or below); the reminder tells
a polling model to wait between checks, which exempts it.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import Field

from workflows.rules.ladder import RuleCounter, RuleFinding, RuleReview, escalate
from workflows.seed.recency import remember_latest

# Batches in which one call returned its last result again, before the reminder: with the
# first result, the eighth identical one — the repeated-failure guard's count, so polling
# that the seed tolerates for failures is tolerated for successes too.
IDENTICAL_RESULT_THRESHOLD = 7
# Calls remembered; the one that returned longest ago is forgotten first.
REMEMBERED_CALLS = 256

IDENTICAL_RESULT_REMINDER = (
    "System: the same tool call keeps returning exactly the same result. Repeating it will "
    "not tell you anything new. Use the result you have, change the approach, wait before "
    "checking again if you are waiting for something, or explain what you are stuck on."
)
IDENTICAL_RESULT_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the same tool call kept returning the "
    "same result after a corrective reminder. New user input is required to continue."
)


class LastResult(NamedTuple):
    """What one call returned last, and the prompt's counters then (a tuple: one is made per
    success)."""

    fingerprint: str
    wait_epoch: int
    # The prompt's count of state-changing successes right after this call returned.
    changes: int
    # The prompt's count of observed changes before the batch this call returned in (a
    # change observed in the same batch, by the snapshot after a key press, comes after it).
    news: int = 0


class IdenticalResults(RuleCounter):
    """One prompt's last result per call digest and where each call stands on the ladder."""

    threshold: int = Field(default=IDENTICAL_RESULT_THRESHOLD, ge=1)
    last: dict[str, LastResult] = Field(default_factory=dict)
    # Successes so far whose output differed from the one their call returned last time
    # (read only with the progress rules).
    news: int = 0

    def review(self, review: RuleReview) -> list[RuleFinding]:
        """Remember one settled batch's successes and climb the calls that repeated.

        Decisions are keyed by call digest (private: callers report only the rule).
        """
        batch, wait_epoch = review.batch, review.wait_epoch
        repeats: dict[str, int] = {}
        news_before, observed = self.news, 0
        for call in batch:
            # With the progress rules, the runner's refusal to start a call (a tool-call
            # limit the model ignores) is a result like any other: the same refusal again
            # is a repeat.
            if not call.answered(refusals=review.progress_rules):
                continue
            previous = self.last.pop(call.digest, None)
            if previous is not None and previous.fingerprint != call.fingerprint:
                self.rungs.pop(call.digest, None)  # the output changed: progress
                repeats.pop(call.digest, None)
                observed += 1
            elif (
                previous is not None
                and previous.wait_epoch == wait_epoch
                and previous.changes == call.changes_before
                and not (review.progress_rules and previous.news != news_before)
                and not call.waits
            ):
                # One per batch: identical siblings were one decision.
                repeats[call.digest] = 1
            latest = LastResult(
                fingerprint=call.fingerprint,
                wait_epoch=wait_epoch,
                changes=call.changes_before + call.changes,
                news=news_before,
            )
            for forgotten in remember_latest(self.last, call.digest, latest, REMEMBERED_CALLS):
                self.rungs.pop(forgotten, None)
        self.news += observed
        if review.input_arrived:
            self.rungs.clear()
            return []
        return escalate(self.rungs, repeats, self.threshold, review.mode)
