"""A worker's memory of its prompts, bounded: the least recently used prompt is forgotten first.

Why it exists: three caches keep something per prompt run for the activities that follow on the
same worker — the preamble a request names (``activities/prompt_preamble.py``), the last request
resolved (``activities/conversation_refs.py``) and the latest batch's results
(``activities/recorded_results.py``). Each only saves a read of the prompt's history, which
supplies whatever a cache lacks, so each must stay bounded on a worker that runs thousands of
prompts: at most :data:`CACHED_PROMPTS` prompts and :data:`CACHED_CHARS` characters of what they
keep. :class:`PromptCache` is that eviction, written once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

# Prompts a cache keeps, and characters of what it keeps for them.
CACHED_PROMPTS = 1_024
CACHED_CHARS = 64_000_000

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class PromptCache(Generic[K, V]):
    """Per prompt, one value and its size in characters, within both bounds. A value larger
    than the whole character bound is not kept (``max_prompts`` of 0 keeps nothing)."""

    def __init__(self, *, max_prompts: int = CACHED_PROMPTS, max_chars: int = CACHED_CHARS):
        self._max_prompts = max_prompts
        self._max_chars = max_chars
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._chars = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, prompt: K) -> V | None:
        """The prompt's value (its recency unchanged: :meth:`touch` once it served)."""
        entry = self._entries.get(prompt)
        return None if entry is None else entry[0]

    def touch(self, prompt: K) -> None:
        """A kept prompt becomes the most recently used."""
        if prompt in self._entries:
            self._entries.move_to_end(prompt)

    def pop(self, prompt: K) -> V | None:
        entry = self._entries.pop(prompt, None)
        if entry is None:
            return None
        self._chars -= entry[1]
        return entry[0]

    def put(self, prompt: K, value: V, chars: int = 0) -> None:
        """Keep ``value`` (``chars`` characters) as the prompt's most recent, forgetting the
        least recently used prompts past either bound."""
        self.pop(prompt)
        if chars > self._max_chars or self._max_prompts < 1:
            return
        self._entries[prompt] = (value, chars)
        self._chars += chars
        while len(self._entries) > self._max_prompts or self._chars > self._max_chars:
            _, (_, dropped) = self._entries.popitem(last=False)
            self._chars -= dropped

    def replace(self, prompt: K, value: V) -> None:
        """Change a kept prompt's value in place (its size and recency unchanged)."""
        entry = self._entries.get(prompt)
        if entry is not None:
            self._entries[prompt] = (value, entry[1])
