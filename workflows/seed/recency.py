"""A bounded memory in which the latest entry wins: one rule for every per-prompt memory.

The failed-call log, the progress evidence and the recommended profile's rules all keep
"what happened to this key most recently", bounded so a long prompt's workflow state stays
small. Each writes the same way: an entry written again moves to the newest end, and the
oldest entries are forgotten past the limit. Plain dicts keep insertion order, so the order
is the dict's own and the state serializes as it is.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def remember_latest(memory: dict[K, V], key: K, value: V, limit: int) -> list[K]:
    """Store ``value`` under ``key`` as the newest entry and forget the oldest entries past
    ``limit``; returns the forgotten keys, oldest first."""
    memory.pop(key, None)
    memory[key] = value
    forgotten: list[K] = []
    while len(memory) > limit:
        oldest = next(iter(memory))
        del memory[oldest]
        forgotten.append(oldest)
    return forgotten
