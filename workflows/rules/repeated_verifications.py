"""Repeated verifications: a check that passed, run again and again while nothing changed.

docs/protections.md, "Loop profiles", rule R6 (loop type ``repeated_verification``). A green
test suite re-run "to confirm", then with ``-v``, then on ``tests/``, then once more: every
run succeeds, and each differs a little from the last (other flags, another selection, so
another digest and another output), so the identical-result rule (R3) never sees a repeat, and
a test run through the shell is a state-changing call, so R3 would reset on it anyway.

A *verification* is a call that checks without changing anything: a test run, a linter, a
type checker, a build, recognized conservatively by its shell command or its tool's name
(``workflows.rules.evidence.verification_key``; a command that also fixes, writes or does
anything else is not one). Its key is the checks it runs whatever their flags or selection, so
``pytest -q``, ``pytest -v`` and ``pytest tests/`` are one check. A passing verification whose
check already passed since the last change is a *re-run*; a batch counts once, whatever it
re-ran.

What resets the count (the verification is worth running again): a state-changing success
that is not itself a verification or a read-only inspection (``git status``, ``ls``, ``cat``
through the shell), any file write, a call that waited succeeding (time passed: a check
against a service may answer differently now), and new user input. So fix-then-recheck (an
edit between runs) and TDD's red-green never count, however long. A check that *fails* with
nothing changed shows its result varies (a flaky test being reproduced): its next pass starts
over. Siblings in one batch with a change (an edit run together with the suite) count as the
change.

At :data:`REPEATED_VERIFICATION_THRESHOLD` re-runs the model gets the reminder below; the
next re-run stops the prompt. The rule keys on the prompt (one count, one reminder), never on
a tool: decisions name none.

Why three re-runs (the fourth passing run of an unchanged workspace): a second run can add a
view (``-v`` for the names, one test's output, the whole suite after a subset), a third can
still be a doubt; by the fourth nothing new can come of it. Two reminds a model that ran a
subset, the suite and the suite verbosely once each. Since a re-run after any change never
counts, the threshold only bounds how often a green check is confirmed. R6 is consulted
before R5 (``workflows.rules.registry``): a cycle of checks (``pytest``, ``ruff check``,
``pytest`` …) is re-run checks first, and R6 reminds at its fourth batch where R5 would at
its eighth. R5 and R6 are progress rules (``RuleSpec.progress``): a prompt from before
``seawall-progress-rules-v1`` replays with both off.
"""

from __future__ import annotations

from pydantic import Field

from workflows.rules.evidence import CallEvidence, ResultKind
from workflows.rules.ladder import RuleCounter, RuleFinding, RuleReview, escalate

# Re-runs with nothing changed before the reminder: with the first pass, the fourth passing run
# of an unchanged workspace. A second run can add a view (``-v`` for the names, one test's
# output, the whole suite after a subset), a third can still be a doubt; by the fourth
# nothing new can come of it. Lower (2) reminds a model that ran a subset, the suite and the
# suite verbosely once each; a re-run after any edit never counts, so the threshold only
# bounds how often a green check is confirmed.
REPEATED_VERIFICATION_THRESHOLD = 3
_PROMPT = "prompt"

REPEATED_VERIFICATION_REMINDER = (
    "System: this check already passed and nothing has changed since, yet it keeps being run "
    "again. Running it again will not tell you anything new. Take the passing result as "
    "settled, continue with the next step, or finish and report."
)
REPEATED_VERIFICATION_STOP_MESSAGE = (
    "System: Automatic continuation stopped because a check that already passed kept being "
    "run again with nothing changed, after a corrective reminder. New user input is required "
    "to continue."
)


def _changes(call: CallEvidence) -> bool:
    """Whether the call may have changed what a check checks."""
    if call.kind is not ResultKind.SUCCESS:
        return False
    if call.writes:
        return True
    if call.verifies:
        return False  # a check's own run (and its own duration) is not a change
    return call.waits or (call.changes and not call.inspects)


class RepeatedVerifications(RuleCounter):
    """The checks that passed since the last change, and where the prompt stands on the
    ladder."""

    threshold: int = Field(default=REPEATED_VERIFICATION_THRESHOLD, ge=1)
    passed: dict[str, None] = Field(default_factory=dict)

    def review(self, review: RuleReview) -> list[RuleFinding]:
        """Remember one settled batch's checks and climb on a re-run of a passed one."""
        batch = review.batch
        checks = [call for call in batch if call.verifies]
        if review.input_arrived or any(_changes(call) for call in batch):
            self.passed.clear()
            self.rungs.clear()
            if not review.input_arrived:
                # A pass in the batch of the change is the first after it.
                self.passed.update(
                    (c.verifies, None) for c in checks if c.kind is ResultKind.SUCCESS
                )
            return []
        before = set(self.passed)
        rerun = False
        for call in checks:
            if call.kind is ResultKind.SUCCESS:
                rerun = rerun or call.verifies in before
                self.passed[call.verifies] = None
            elif call.kind is ResultKind.FAILURE:
                self.passed.pop(call.verifies, None)  # its result varies: a new baseline
        if not rerun:
            return []
        return escalate(self.rungs, {_PROMPT: 1}, self.threshold, review.mode)
