"""What a call acts on: the ids the world listed.

docs/protections.md, "The rules" (R9, R10). The normalizer masks ids, so a status asked with
a fresh request id is the same question; the near-repeat (R9) and rewrite (R10) rules join
calls that ask alike. But an id can also name the thing a call acts on: twelve GraphQL
mutations, each linking one issue to its epic by the node id a query returned, all answered
with one static acknowledgement, are twelve pieces of work. Masked, they read as one call
repeated, and both rules stopped that session.

The principle: the world says two ids name two things when it lists them side by side. An id
a call's arguments hold, which an earlier answer listed beside another id the same tool
already acted on, names an item of its own. Since ``WORLD_IDS_PATCH`` those ids are what the
call acts on (``CallEvidence.acts_on``), and R9 and R10 join only calls that act on the same.
What stays masked:

- an id the model made up (a fresh request id, an idempotency key): no answer listed it;
- the same thing under a fresh id (a page snapshot whose element ids all changed, the model
  clicking the same button by its new id): the old id and the new one were never listed
  together, so the click is the same click again;
- the first item of a listing the tool acts on: nothing tells it from the call before it
  yet (the second item does, and every one after it).

Only digests are kept (``normalize.id_digests``): the ids each answer listed, by the answer's
number, and per tool and answer the first id acted on. Bounded, deterministic, never logged.
"""

from __future__ import annotations

import hashlib
from collections import deque

from workflows.rules.evidence import CallEvidence
from workflows.rules.normalize import ID_DIGEST_CHARS
from workflows.seed.recency import remember_latest

# Answers whose ids are remembered (the latest), and (tool, answer) pairs acted on.
REMEMBERED_ANSWERS = 256
REMEMBERED_ACTS = 1024


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


class WorldIds:
    """One prompt's ids the world listed, and which of each listing each tool acted on."""

    def __init__(self) -> None:
        # (answer number, the ids it listed) of the latest answers that listed any: reading an
        # answer only keeps what it carries, and a call that names an id looks it up.
        self.listings: deque[tuple[int, str]] = deque(maxlen=REMEMBERED_ANSWERS)
        # (tool, answer number) key -> the first id of that answer the tool acted on.
        self.acted: dict[str, str] = {}
        self.answers = 0

    def _listing(self, item: str) -> int | None:
        """The number of the latest remembered answer that listed ``item``."""
        for number, listed in reversed(self.listings):
            if _holds(listed, item):
                return number
        return None

    def acts_on(self, call: CallEvidence) -> str:
        """A private digest of the ids ``call`` acts on that an earlier answer listed beside
        another id this tool acted on (the module doc); ``""`` when there is none."""
        items: set[str] = set()
        asked = call.asked_ids
        for start in range(0, len(asked), ID_DIGEST_CHARS):
            item = asked[start : start + ID_DIGEST_CHARS]
            number = self._listing(item)
            if number is None:
                continue
            key = _digest(call.tool, str(number))
            first = self.acted.get(key)
            if first is None:
                remember_latest(self.acted, key, item, REMEMBERED_ACTS)
            elif first != item:
                items.add(item)
        return _digest(*sorted(items)) if items else ""

    def read(self, batch: list[CallEvidence]) -> None:
        """Remember the ids each answer of a settled batch listed (after the batch: its
        calls ran side by side, none read another's answer first)."""
        for call in batch:
            if call.answer_ids:
                self.answers += 1
                self.listings.append((self.answers, call.answer_ids))


def _holds(listed: str, item: str) -> bool:
    """Whether ``listed`` (digests one after the other) holds the digest ``item``: found at
    a digest's start, not across two."""
    at = listed.find(item)
    while at >= 0:
        if at % ID_DIGEST_CHARS == 0:
            return True
        at = listed.find(item, at + 1)
    return False
