"""The tool results a worker recorded lately, for the model requests that keep them.

Why it exists: since ``RESULTS_BY_REFERENCE_PATCH`` a model request keeps a tool message that is
exactly its call's ``seawall.run_tool`` result by the call's id (``KeptResult``,
``workflows/contracts/conversation_ref.py``) instead of recording the output a second time. The
model activity must put the output back before a provider sees it. The worker that ran the
batch's calls is usually the one that makes the next request (its calls start eagerly, in the
workflow task's reply, and the prompt's tasks stay on it), so :class:`RecordedResults` keeps, per
prompt, the contents of the results of its latest batch this worker returned; anything else
(another worker ran a call, a restart, an attempt whose result was not the one recorded) is read
from the prompt's history by ``activities/conversation_refs.py``, and the request's digest
decides: a stale entry fails the check and the history is read instead.

Bounded like the worker's other prompt caches (``activities/prompt_cache.py``), the least recently
recorded prompt dropped first; a batch's results replace the batch's before, which the requests
after it keep as ranges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from activities.prompt_cache import CACHED_CHARS, CACHED_PROMPTS, PromptCache
from activities.prompt_preamble import PromptRun


@dataclass
class _Batch:
    number: int
    contents: dict[str, str] = field(default_factory=dict)
    chars: int = 0


class RecordedResults:
    """Per prompt, the contents of its latest batch's results this worker returned."""

    def __init__(self, *, max_prompts: int = CACHED_PROMPTS, max_chars: int = CACHED_CHARS):
        self._batches: PromptCache[PromptRun, _Batch] = PromptCache(
            max_prompts=max_prompts, max_chars=max_chars
        )

    def record(self, prompt: PromptRun, batch: int, call_id: str, content: str) -> None:
        """``content`` is the result this worker returned for ``call_id`` of ``batch``."""
        kept = self._batches.pop(prompt)
        if kept is None or batch != kept.number:
            kept = _Batch(batch)
        kept.chars += len(content) - len(kept.contents.get(call_id, ""))
        kept.contents[call_id] = content
        self._batches.put(prompt, kept, kept.chars)

    def get(self, prompt: PromptRun, call_ids: Sequence[str]) -> dict[str, str] | None:
        """The contents of ``call_ids``' results, or None when this worker lacks any of them."""
        kept = self._batches.get(prompt)
        if kept is None or any(c not in kept.contents for c in call_ids):
            return None
        return {c: kept.contents[c] for c in call_ids}
