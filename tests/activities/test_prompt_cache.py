"""A worker's bounded memory of its prompts (``activities/prompt_cache.py``): the least recently
used prompt is forgotten first, past either bound; a value too large for the whole bound, or a
cache bounded to no prompt, keeps nothing; a replaced value keeps its size and place."""

from __future__ import annotations

from activities.prompt_cache import PromptCache


def test_past_the_prompt_bound_the_least_recently_used_is_forgotten() -> None:
    cache: PromptCache[str, str] = PromptCache(max_prompts=2)
    cache.put("a", "A")
    cache.put("b", "B")
    assert cache.get("a") == "A"
    cache.touch("a")  # "b" is now the least recently used
    cache.touch("x")  # not kept: nothing happens
    cache.put("c", "C")
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ("A", None, "C")
    assert cache.get("x") is None


def test_past_the_character_bound_the_oldest_go_until_it_fits() -> None:
    cache: PromptCache[str, str] = PromptCache(max_prompts=10, max_chars=100)
    cache.put("a", "A", 40)
    cache.put("b", "B", 40)
    cache.put("c", "C", 40)  # 120: "a" goes
    assert [cache.get(p) for p in "abc"] == [None, "B", "C"]
    cache.put("b", "B2", 90)  # replacing "b" frees its 40 first; 130: "c" goes
    assert [cache.get(p) for p in "abc"] == [None, "B2", None]
    assert len(cache) == 1


def test_what_is_too_large_or_unbounded_to_no_prompt_is_not_kept() -> None:
    cache: PromptCache[str, str] = PromptCache(max_prompts=4, max_chars=10)
    cache.put("a", "A", 5)
    cache.put("a", "huge", 11)  # too large: not kept, and the old value is gone too
    assert cache.get("a") is None and len(cache) == 0
    none: PromptCache[str, str] = PromptCache(max_prompts=0)
    none.put("a", "A")
    assert none.get("a") is None


def test_pop_and_replace() -> None:
    cache: PromptCache[str, str] = PromptCache(max_prompts=2, max_chars=100)
    cache.put("a", "A", 60)
    cache.put("b", "B", 30)
    cache.replace("a", "A2")  # same size and place: still the least recently used
    cache.replace("z", "Z")  # not kept: nothing happens
    assert cache.get("z") is None
    assert cache.pop("a") == "A2" and cache.pop("a") is None
    cache.put("c", "C", 70)  # fits only because popping "a" gave back its 60
    assert (cache.get("b"), cache.get("c")) == ("B", "C")
