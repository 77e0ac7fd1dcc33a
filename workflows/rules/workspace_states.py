"""Workspace revisits: file changes that return the workspace to a state it was already in.

docs/protections.md, "Loop profiles", rule R7 (loop type ``repeated_workspace_state``). A
model can loop while every call succeeds and every result differs: the same file rewritten
with the same content forever, an edit that a formatter (or a ``git checkout``) undoes and
the model makes again, a revert-and-redo cycle between two versions. What these have in
common is that the *workspace* goes nowhere: after the batch it is in a state it was in
before. The built-in file tools and scenario fixtures say what each successful call wrote
(``ToolOutcome.writes``: a private digest of the path and of the content after the call),
so this rule keeps the part of the workspace the prompt knows — path digest to content
digest, as the writes left it — and the set of whole-state digests it has been in.

After each batch with writes, the known state is updated and digested. A state already
seen is a *revisit* (one per batch, whatever the number of writes); a state never seen is
progress and returns the rule to the bottom. Batches without writes change nothing either
way: reads, tests and commands the file tools cannot see are neither progress nor
offences. New user input resets the count (the user may have asked to revert), though the
states stay known.

Threshold: at :data:`WORKSPACE_REVISIT_THRESHOLD` revisits in a row — batches that wrote and
left the workspace only in states it had been in — the model gets the reminder below; the
next one stops the prompt. It is low on purpose: a known state is strong evidence, much
stronger than an identical output (R3), because no legitimate poll or wait produces it; a
session that deliberately reverts an experiment returns once and then writes something
new. Three in a row still lets a model revert a change and redo it once (two returns)
without a word; the reminder comes on the third, the stop on the fourth.

What it cannot see: changes made by shell commands or MCP tools (they report no writes), so
a formatter run through the shell is invisible and only the model's own rewrites count —
which is exactly the rewrite the loop repeats. Every digest stays in workflow state, never
logged or labelled.
"""

from __future__ import annotations

import hashlib

from pydantic import Field

from workflows.rules.evidence import ResultKind
from workflows.rules.ladder import RuleCounter, RuleFinding, RuleReview, escalate
from workflows.seed.recency import remember_latest

# Consecutive batches whose writes left the workspace in a state it had been in, before the
# reminder (the next one stops the prompt).
WORKSPACE_REVISIT_THRESHOLD = 3
# Whole-state digests remembered; the state visited longest ago is forgotten first.
REMEMBERED_STATES = 1024
# Files the known state tracks; past it the rule starts over (a new, smaller picture would
# otherwise look like a state seen before the extra files were written).
REMEMBERED_FILES = 4096

# The single key of the ladder: the workspace is the prompt's.
WORKSPACE_KEY = "workspace"

WORKSPACE_REVISIT_REMINDER = (
    "System: your file changes keep returning the workspace to a state it was already in "
    "(the same content written again, or changes undone and made again). Writing it once "
    "more will not move the task forward. Find out what undoes your changes, keep the "
    "version you want, or explain what you are stuck on."
)
WORKSPACE_REVISIT_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the file changes kept returning the "
    "workspace to a state it was already in after a corrective reminder. New user input is "
    "required to continue."
)


def state_digest(files: dict[str, str]) -> str:
    """A private digest of a known workspace state (path digest -> content digest)."""
    hasher = hashlib.sha256()
    for path, content in sorted(files.items()):
        hasher.update(f"{path}\x00{content}\n".encode())
    return hasher.hexdigest()[:32]


class WorkspaceRevisits(RuleCounter):
    """One prompt's known workspace state, the states it has been in, and the ladder."""

    threshold: int = Field(default=WORKSPACE_REVISIT_THRESHOLD, ge=1)
    files: dict[str, str] = Field(default_factory=dict)
    seen: dict[str, None] = Field(default_factory=dict)

    def review(self, review: RuleReview) -> list[RuleFinding]:
        """Apply one settled batch's writes and climb the ladder when the workspace came
        back to a known state."""
        writes = [
            write
            for call in review.batch
            if call.kind is ResultKind.SUCCESS
            for write in call.writes
        ]
        revisit = False
        if writes:
            for path, content in writes:
                self.files[path] = content
            if len(self.files) > REMEMBERED_FILES:
                self.files = dict(writes)
                self.seen.clear()
                self.rungs.clear()
            digest = state_digest(self.files)
            revisit = digest in self.seen
            remember_latest(self.seen, digest, None, REMEMBERED_STATES)
            if not revisit:
                self.rungs.clear()  # a new state: progress
        if review.input_arrived:
            self.rungs.clear()
            return []
        offences = {WORKSPACE_KEY: 1} if revisit else {}
        return escalate(self.rungs, offences, self.threshold, review.mode)
