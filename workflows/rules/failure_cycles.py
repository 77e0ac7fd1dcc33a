"""Failure cycles: the same failure of a tool coming back, whatever succeeded in between.

docs/protections.md, "Loop profiles", rule R2 (loop type ``repeated_failure_cycle``). The
seed's protections forget a failure as soon as something succeeds: the guard resets its
streak on a success of the same tool, the failed-call log forgets after any state-changing
success. Real loops hide behind exactly that: fail, delete the generated file (success),
regenerate, fail the same way; Ctrl-C the hung dev server (success), start it, time out the
same way; a browser navigation (a mutating success) between identical read failures.

So, per tool, a failure whose output fingerprint (``workflows.rules.evidence``, the call's own
argument values masked) was already seen for that tool in an earlier batch of this prompt is
a *recurrence*, and recurrences count across successes of other calls. A batch counts once
per tool, however many of its calls failed that way (siblings that failed together were one
decision, as the guard's two-batch rule says). A recurrence does not count when time passed
since the same failure last came back (a waiting call succeeded in between — a ``sleep``, or
any call that succeeded after taking long — or the failing call itself waits by what it is):
polling a status that fails until the world changes is waiting, not looping. A failure's
own duration is no excuse (``workflows.rules.evidence``, "Time as evidence"): the same slow
failure again is the cycle. A tool's count resets when a call of that tool that failed
earlier now succeeds unchanged (the failing thing works now), and every count resets on new
user input. At :data:`FAILURE_CYCLE_THRESHOLD` recurrences the model gets the reminder
below; the tool's next recurrence stops the prompt.

Why the guard's count (a reminder at the seventh recurrence, with the first failure the
eighth batch with the same failure): on a streak the guard itself can see (the same tool
failing, reads in between) R2 never reminds earlier than the guard; it only keeps counting
where the guard was reset. A lower threshold stops legitimate retries the seed lets through:
at 4 it halts a real session that re-read a file and retried an edit until it matched on the
seventh attempt (``real-legit-gemini-remove-debug-logs``), which no count can tell from an
edit that never matches (docs/benchmarks.md, "Loop profiles, measured", sensitivity).

What counts as a failure here is what the model reads as one: terminal ``error``, not
answered by Seawall (a refusal, a resent id, the cap), and not ``not_started`` or cancelled.
Unlike the guard, that includes post-execution failures and missing execution statuses (the
output is the evidence); an untrusted contract still disables enforcement for the prompt.
Decisions name the failing tool by its safe label in the ``loop_rule_decision`` log line
(``RuleSpec.names_tool``).
"""

from __future__ import annotations

from pydantic import Field

from workflows.rules.evidence import ResultKind
from workflows.rules.ladder import RuleCounter, RuleFinding, RuleReview, escalate
from workflows.seed.recency import remember_latest

# Batches in which one tool's failure came back, before the reminder: with the batch that
# first failed, the eighth same failure, the repeated-failure guard's own count (seed 000's
# REPEATED_TOOL_FAILURE_THRESHOLD), so this rule never reminds earlier than the guard would
# on evidence the guard sees; it only keeps counting where the guard was reset.
FAILURE_CYCLE_THRESHOLD = 7
# Fingerprints (and failed digests) kept per tool; the oldest is forgotten first.
REMEMBERED_PER_TOOL = 64

FAILURE_CYCLE_REMINDER = (
    "System: the same tool failure keeps coming back, even after other steps in between "
    "succeeded. Repeating the cycle will not change the result. Change the approach, fix "
    "the cause first, or explain the blocker."
)
FAILURE_CYCLE_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the same tool failure kept coming back "
    "after a corrective reminder. New user input is required to continue."
)


class FailureCycles(RuleCounter):
    """One prompt's failure memory per tool: fingerprint → the wait epoch it last came back
    in, the digests that failed, and where the tool stands on the reminder ladder (keyed by
    the tool's policy name, which telemetry reports as its safe label)."""

    threshold: int = Field(default=FAILURE_CYCLE_THRESHOLD, ge=1)
    seen: dict[str, dict[str, int]] = Field(default_factory=dict)
    failed_digests: dict[str, dict[str, int]] = Field(default_factory=dict)

    def review(self, review: RuleReview) -> list[RuleFinding]:
        """Remember one settled batch and climb the tools whose failures came back.

        A recurrence counts only if no waiting call succeeded since the failure last came
        back (``review.wait_epoch`` is unchanged). A batch that arrived with user input
        resets every tool instead of counting.
        """
        batch, wait_epoch = review.batch, review.wait_epoch
        recurrences: dict[str, int] = {}
        # Fingerprints first seen in this batch: a sibling failing the same way is not a
        # recurrence (it did not come back; it happened once, in parallel).
        fresh: set[tuple[str, str]] = set()
        for call in batch:
            if call.kind is ResultKind.SUCCESS:
                failed = self.failed_digests.get(call.tool, {})
                if call.digest in failed:
                    # The call that failed works now: the tool starts over.
                    del failed[call.digest]
                    self.rungs.pop(call.tool, None)
                    recurrences.pop(call.tool, None)
                continue
            if call.kind is not ResultKind.FAILURE:
                continue
            seen = self.seen.setdefault(call.tool, {})
            last_epoch = (
                seen.get(call.fingerprint) if (call.tool, call.fingerprint) not in fresh else None
            )
            if last_epoch is not None and last_epoch == wait_epoch and not call.waits:
                # One per batch: several calls that failed together were one decision.
                recurrences[call.tool] = 1
            if call.fingerprint not in seen:
                fresh.add((call.tool, call.fingerprint))
            remember_latest(seen, call.fingerprint, wait_epoch, REMEMBERED_PER_TOOL)
            remember_latest(
                self.failed_digests.setdefault(call.tool, {}),
                call.digest,
                wait_epoch,
                REMEMBERED_PER_TOOL,
            )
        if review.input_arrived:
            self.rungs.clear()
            return []
        return escalate(self.rungs, recurrences, self.threshold, review.mode)
