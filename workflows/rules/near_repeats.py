"""Near repeats: the same thing asked again and answered the same, though the bytes differ.

docs/protections.md, "Loop profiles", rule R9 (loop type ``repeated_near_result``). The
identical-result rule (R3) keys on the call's exact digest, so a call whose arguments carry
a fresh timestamp or request id, a question to the user asked again in other words, or a
status query re-phrased each time is a new call to it every time. This rule reads calls and
results through the normalizer (``workflows.rules.normalize``): per tool it keeps a few
*clusters*, each the latest call that asked something and what came back, and a successful
call (or the runner's refusal) that names the same paths as a cluster's call, asks something
alike (the same masked text, or for texts long enough to compare, a similarity of at least
:data:`CALL_SIMILARITY`) and gets back something alike (:data:`RESULT_SIMILARITY`) is a
*near repeat* of it.

The exemptions are R3's, for the same reasons: a repeat does not count when the call waited
or time passed since the cluster last answered, when a state-changing call succeeded since,
or when another call *observed a change* since (a call similar to a cluster's that got a
different answer: the world moved). A similar call with a different answer is that change,
and it returns its cluster to the bottom. An exact repeat (the same digest and fingerprint
as the cluster's latest) is R3's business and changes nothing here. New user input resets
every cluster. A batch counts once per cluster. At :data:`NEAR_REPEAT_THRESHOLD` near
repeats the model gets the reminder below; the cluster's next one stops the prompt. Keys
are private digests; decisions never name a tool.

Two departures from R3's exemptions, both from what a question asked again is: a *reworded*
call is no poll, so waiting does not excuse it (the user's thirty seconds to answer "yes"
again are not the world changing); and a short answer to a reworded question ("yes", "ok, go
ahead") cannot be told from another by its words, so the question is the evidence. A near
repeat compares with the cluster's last :data:`ANSWERS_PER_CLUSTER` answers, so a subagent that
rotates between three phrasings of one answer is caught too.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from pydantic import Field

from workflows.rules.evidence import CallEvidence
from workflows.rules.ladder import RuleCounter, RuleFinding, RuleReview, escalate
from workflows.rules.normalize import Reading

# Near repeats of one cluster before the reminder: with the first answer, the sixth. Lower
# than R3's seven because its evidence is stronger (the model changed the wording or the
# ids and still got the same answer); docs/benchmarks.md, "Loop profiles, measured", has
# the measurements.
NEAR_REPEAT_THRESHOLD = 5
# How alike two calls must be to ask the same thing, and two answers to say the same thing
# (estimated Jaccard similarity of their masked words; ``workflows.rules.normalize``).
CALL_SIMILARITY = 0.5
RESULT_SIMILARITY = 0.8
# Answers remembered per cluster: an answer alike any of them is not new (a subagent that
# rotates between three phrasings of one answer says nothing new on the fourth call).
ANSWERS_PER_CLUSTER = 4
# Clusters remembered per tool, and tools; the least recently matched is forgotten first.
CLUSTERS_PER_TOOL = 12
REMEMBERED_TOOLS = 64

NEAR_REPEAT_REMINDER = (
    "System: you keep asking for the same thing in slightly different forms and getting the "
    "same answer back. Asking again will not tell you anything new. Use the answer you have, "
    "change the approach, wait before checking again if you are waiting for something, or "
    "explain what you are stuck on."
)
NEAR_REPEAT_STOP_MESSAGE = (
    "System: Automatic continuation stopped because the same request kept coming back in "
    "slightly different forms with the same answer after a corrective reminder. New user "
    "input is required to continue."
)


class Cluster(NamedTuple):
    """One cluster: its latest call (what it named and asked, its digest and fingerprint),
    the answers it got (the latest few), and the prompt's counters when it last answered.
    Immutable (a tuple: one is made per answered call)."""

    key: str
    paths: frozenset[str]
    named: str
    acts_on: str
    asked: Reading
    answers: tuple[Reading, ...]
    digest: str
    fingerprint: str
    wait_epoch: int
    changes: int
    news: int


def _key(call: CallEvidence) -> str:
    text = f"near\n{call.tool}\n{call.digest}\n{call.fingerprint}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class NearRepeats(RuleCounter):
    """One prompt's clusters per tool and where each stands on the ladder."""

    threshold: int = Field(default=NEAR_REPEAT_THRESHOLD, ge=1)
    # NOTHING_NEW_PATCH: a call is alike a cluster's only when it names the same things.
    by_names: bool = False
    clusters: dict[str, list[Cluster]] = Field(default_factory=dict)
    # Calls so far that asked what a cluster asked and got an answer it never got.
    news: int = 0

    def _closest(self, call: CallEvidence, asked: Reading, answer: Reading) -> int | None:
        """The newest cluster whose call named the same paths, acted on the same listed
        items (``CallEvidence.acts_on``, ``workflows.rules.world_ids``: empty before
        WORLD_IDS_PATCH) and asked alike; since NOTHING_NEW_PATCH, when the answer is short,
        one that also named the same things (eighteen events, each with its own title, all
        answered "Event created.", are not one question: a short answer cannot tell them
        apart, so the names must)."""
        entries = self.clusters.get(call.tool, [])
        named = call.named if self.by_names and not answer.long else None
        if not asked.long:
            # A short question is alike only one asked in the same words (``Reading.alike``):
            # its key alone decides, without a comparison per cluster.
            key = asked.key
            for index in range(len(entries) - 1, -1, -1):
                entry = entries[index]
                if (
                    entry.asked.key == key
                    and entry.paths == call.paths
                    and named in (None, entry.named)
                    and entry.acts_on == call.acts_on
                ):
                    return index
            return None
        for index in range(len(entries) - 1, -1, -1):
            entry = entries[index]
            if (
                entry.paths == call.paths
                and named in (None, entry.named)
                and entry.acts_on == call.acts_on
                and asked.alike(entry.asked, CALL_SIMILARITY)
            ):
                return index
        return None

    def review(self, review: RuleReview) -> list[RuleFinding]:
        """Match each answered call of the batch to its cluster and climb the repeats."""
        repeats: dict[str, int] = {}
        news_before, observed = self.news, 0
        for call in review.batch:
            if not call.answered():
                continue
            if call.asked is None or call.answer is None:
                continue  # read before the normalizer: nothing to compare
            asked, answer = call.asked, call.answer
            entries = self.clusters.pop(call.tool, [])
            self.clusters[call.tool] = entries  # the tool used last is forgotten last
            index = self._closest(call, asked, answer)
            answers: tuple[Reading, ...] = (answer,)
            if index is None:
                key = _key(call)
            else:
                cluster = entries.pop(index)
                key = cluster.key
                reworded = asked.key != cluster.asked.key
                known = any(answer.alike(seen, RESULT_SIMILARITY) for seen in cluster.answers)
                # A short answer to a reworded question ("yes", "ok, go ahead") cannot be
                # told from another by its words; the question is the evidence.
                if not known and reworded and not answer.long:
                    known = True
                exact = cluster.digest == call.digest and cluster.fingerprint == call.fingerprint
                if not known:
                    observed += 1  # asked the same, heard something new: the world moved
                    self.rungs.pop(key, None)
                    repeats.pop(key, None)
                elif (
                    not exact
                    and cluster.changes == call.changes_before
                    and cluster.news == news_before
                    # Waiting excuses a poll, which asks in the same words; a question asked
                    # again in other words is no poll, however long its answer took.
                    and (reworded or (cluster.wait_epoch == review.wait_epoch and not call.waits))
                ):
                    repeats[key] = 1
                answers = (*[seen for seen in cluster.answers if seen.key != answer.key], answer)
            entries.append(
                Cluster(
                    key=key,
                    paths=call.paths,
                    named=call.named,
                    acts_on=call.acts_on,
                    asked=asked,
                    answers=answers[-ANSWERS_PER_CLUSTER:],
                    digest=call.digest,
                    fingerprint=call.fingerprint,
                    wait_epoch=review.wait_epoch,
                    changes=call.changes_before + call.changes,
                    news=news_before,
                )
            )
            for forgotten in entries[:-CLUSTERS_PER_TOOL]:
                self.rungs.pop(forgotten.key, None)
            del entries[:-CLUSTERS_PER_TOOL]
        while len(self.clusters) > REMEMBERED_TOOLS:
            for forgotten in self.clusters.pop(next(iter(self.clusters))):
                self.rungs.pop(forgotten.key, None)
        self.news += observed
        if review.input_arrived:
            self.rungs.clear()
            return []
        return escalate(self.rungs, repeats, self.threshold, review.mode)
