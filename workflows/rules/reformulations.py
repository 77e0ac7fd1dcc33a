"""Reformulations: a search rephrased again and again while nothing uses what it found.

docs/protections.md, "Loop profiles", rule R8 (loop type ``repeated_reformulation``). The
other rules need something to come back — a failure (R2), the same output (R3), the same
state (R7) — and a search that is reworded every time returns something new every time: a
security audit issuing sixty ``search_code`` queries, each a little different, until the
turn budget runs out; ``grep`` after ``grep`` for a symbol under ever new spellings. What
tells that apart from exploring is what happens *between* the searches: exploring reads
what a search found, edits, runs something; churning only searches again.

So the rule counts, per run of batches that contain nothing but search calls
(``workflows.rules.searches`` classifies them, conservatively, by tool name and shell
command), the batches that asked for something new: at least one successful search whose
signature (what it searched for, paging arguments left out) the run had not seen. The first
search batch of a run is the search itself, not a reformulation, and counts nothing.
Repeating a search, or paging through its results (the same signature), counts nothing
either: an identical repeat is R3's business, and the next page is using the results.
Failed searches neither count nor end the run (a ``grep`` that found nothing exits 1).
Anything else in a batch — a read of a found path, an edit, a command, any tool that is
not a search, whatever its outcome — ends the run: the results may have been used, so the
count returns to the bottom. New user input ends it too.

Budget: at :data:`REFORMULATION_BUDGET` reformulations in one run (the eleventh distinct
search in a row with nothing done in between) the model gets the reminder below; the next
one stops the prompt (the twelfth: "a search reformulated a dozen times and never used").
Why ten: legitimate sessions do search several times in a row before they read — guessing a
symbol's spelling, narrowing a pattern, a web search refined by its results — but on the
project's corpus no legitimate session asks more than a handful of new searches before it
reads or runs something, and searches that are paged, repeated or sent together in one
batch (a fan-out of parallel searches is one decision) do not add up. Ten keeps a wide
margin above that, and a batch counts once however many searches it sends, so a model that
explores broadly is not rushed. The count is per prompt (one key), never names a tool, and
keeps only private signatures.
"""

from __future__ import annotations

from pydantic import Field

from workflows.rules.evidence import ResultKind
from workflows.rules.ladder import RuleCounter, RuleFinding, RuleReview, escalate
from workflows.seed.recency import remember_latest

# Reformulation batches in one run of search-only batches before the reminder; the next
# one stops the prompt.
REFORMULATION_BUDGET = 10
# Signatures remembered per run; the one asked longest ago is forgotten first.
REMEMBERED_SIGNATURES = 256

# The single key of the ladder: a run of searches is the prompt's.
RUN_KEY = "searches"

REFORMULATION_REMINDER = (
    "System: you have rephrased the search many times in a row without using any of the "
    "results. Another variation is unlikely to find more. Work with what the searches "
    "already found (read it, or act on it), try a different approach, or explain what you "
    "are looking for and why it cannot be found."
)
REFORMULATION_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the search kept being reformulated "
    "without its results being used, after a corrective reminder. New user input is "
    "required to continue."
)


class Reformulations(RuleCounter):
    """One prompt's current run of search-only batches: the signatures it asked for, and
    where the run stands on the ladder."""

    threshold: int = Field(default=REFORMULATION_BUDGET, ge=1)
    signatures: dict[str, None] = Field(default_factory=dict)

    def _end_run(self) -> None:
        self.signatures.clear()
        self.rungs.clear()

    def review(self, review: RuleReview) -> list[RuleFinding]:
        """Extend or end the run of searches with one settled batch; climb the ladder when
        the batch reformulated."""
        batch = review.batch
        if review.input_arrived or any(call.search is None for call in batch):
            self._end_run()
            return []
        asked = [
            call.search
            for call in batch
            if call.kind is ResultKind.SUCCESS and call.search is not None
        ]
        new = [signature for signature in asked if signature not in self.signatures]
        started = bool(self.signatures)
        for signature in new:
            remember_latest(self.signatures, signature, None, REMEMBERED_SIGNATURES)
        offences = {RUN_KEY: 1} if new and started else {}
        return escalate(self.rungs, offences, self.threshold, review.mode)
