"""Rewrites that go nowhere: the same thing written again in other words.

docs/protections.md, "Loop profiles", rule R10 (loop type ``repeated_rewrite``). The
workspace-revisit rule (R7) sees a file written back to a state it was in, byte for byte. A
model can also loop by rewriting: the same file rewritten with drafts that shuffle the same
sections, a plan or to-do list rewritten every turn with the same items in other words, a
notes or memory tool called again and again with the same content reworded. Every write is
new to R7, and every state-changing success exempts the call from R3.

So each successful call of a state-changing tool is read as a *version* of what it writes
to: its key is the tool and the paths it names (the tool alone when it names none), its
body what it asked (``CallEvidence.call_sketch``: the tool and every argument string,
masked, through ``workflows.rules.normalize``). A version is a *rewrite* when it is similar
to an earlier version of the same key (:data:`REWRITE_SIMILARITY`), does not grow it (no
more than :data:`GROWTH` times the distinct words of the largest earlier version: a draft
that adds real sections grows), the call's own answer is alike that version's (a write
confirms the same way; a command whose output moved told something), both act on the same
items the world listed (``workflows.rules.world_ids``: twelve mutations on twelve listed
issues are no drafts of one another), the call did not wait,
and nothing new was learned since that earlier version: no
other call returned something the prompt had not seen before (a test that now fails
differently, a search that found something, a read of a new file), no call waited, and no
user input arrived. An edit-test cycle that converges learns something every round; a
rewrite loop learns nothing between its drafts.

At :data:`REWRITE_THRESHOLD` rewrites of one key in a row the model gets the reminder below;
the key's next rewrite stops the prompt. A version that is not a rewrite returns the key to
the bottom; new user input resets every key. Keys are private digests; decisions never name
a tool or a path.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from pydantic import Field

from workflows.rules.evidence import CallEvidence, ResultKind
from workflows.rules.inspection import SHELL_TOOL
from workflows.rules.ladder import RuleCounter, RuleFinding, RuleReview, escalate
from workflows.rules.normalize import Reading, similarity
from workflows.seed.recency import remember_latest

# Rewrites of one key in a row before the reminder: with the first version, the fifth.
REWRITE_THRESHOLD = 4
# How alike two versions must be to be the same content (estimated Jaccard similarity of
# their masked words), and how much a version may grow and still be a rewrite.
REWRITE_SIMILARITY = 0.6
GROWTH = 1.1
# How alike the answers to two versions must be (a write's confirmation).
ANSWER_SIMILARITY = 0.8
# Versions remembered per key, keys, and results seen (to tell what is new).
VERSIONS_PER_KEY = 8
REMEMBERED_KEYS = 256
REMEMBERED_RESULTS = 4096

REWRITE_REMINDER = (
    "System: you keep rewriting the same content in other words or another order, and "
    "nothing new was learned in between. Another rewrite will not move the task forward. "
    "Keep the version you have, find out what is actually missing, or explain what you are "
    "stuck on."
)
REWRITE_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the same content kept being rewritten "
    "after a corrective reminder. New user input is required to continue."
)


class Version(NamedTuple):
    """One version of a key: its sketch, its size, and the prompt's learning count then."""

    body: Reading
    answer: Reading
    learned: int
    named: str = ""
    acts_on: str = ""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _target(call: CallEvidence) -> str:
    return _digest("rewrite\n" + call.tool + "\n" + "\n".join(sorted(call.paths)))


def _writes_content(call: CallEvidence) -> bool:
    """Whether the call writes content the rule can compare: what it asks is long enough
    to compare (a note, a plan, a draft: ``normalize.LONG_TEXT_WORDS``), and it reports the
    files it wrote or is not a shell command (a command is an instruction, not content; its
    changes are R2's, R3's and R6's business)."""
    if call.asked is None or not call.asked.long:
        return False
    return bool(call.writes) or call.tool != SHELL_TOOL


class Rewrites(RuleCounter):
    """One prompt's versions per key, the results seen, and the ladder."""

    threshold: int = Field(default=REWRITE_THRESHOLD, ge=1)
    # NOTHING_NEW_PATCH: a version rewrites an earlier one only when it names the same things.
    by_names: bool = False
    versions: dict[str, list[Version]] = Field(default_factory=dict)
    seen: dict[str, None] = Field(default_factory=dict)
    # Calls so far that returned something the prompt had not seen (or waited).
    learned: int = 0

    def review(self, review: RuleReview) -> list[RuleFinding]:
        """Read the batch's versions against earlier ones; climb the keys rewritten."""
        learned_before = self.learned
        learned = 0  # added once, after the batch (a model's field costs to set)
        rewrites: dict[str, int] = {}
        for call in review.batch:
            body, answer = call.asked, call.answer
            if (
                call.kind is ResultKind.SUCCESS
                and call.changes
                and body is not None
                and answer is not None
                and _writes_content(call)
            ):
                key = _target(call)
                named = call.named if self.by_names else ""
                earlier = self.versions.get(key, [])
                largest = max((v.body.size for v in earlier), default=0)
                # Nothing learned: not since that version, not from this call's own answer
                # (a write confirms alike; a command whose output moved told something).
                rewrite = (
                    not call.waits
                    and body.size <= largest * GROWTH
                    and any(
                        v.learned == learned_before
                        and v.named == named
                        and v.acts_on == call.acts_on
                        and answer.alike(v.answer, ANSWER_SIMILARITY)
                        and similarity(body.sketch, v.body.sketch) >= REWRITE_SIMILARITY
                        for v in earlier
                    )
                )
                if rewrite:
                    rewrites[key] = 1
                else:
                    self.rungs.pop(key, None)
                version = Version(body, answer, learned_before, named, call.acts_on)
                kept = [*earlier, version][-VERSIONS_PER_KEY:]
                for forgotten in remember_latest(self.versions, key, kept, REMEMBERED_KEYS):
                    self.rungs.pop(forgotten, None)
            elif call.kind in (ResultKind.SUCCESS, ResultKind.FAILURE):
                if call.waits:
                    learned += 1
                result = f"{call.tool}\n{call.fingerprint}"
                if result not in self.seen:
                    learned += 1
                remember_latest(self.seen, result, None, REMEMBERED_RESULTS)
        if learned:
            self.learned += learned
        if review.input_arrived:
            self.rungs.clear()
            self.learned += 1
            return []
        return escalate(self.rungs, rewrites, self.threshold, review.mode)
