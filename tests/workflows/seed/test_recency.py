"""The bounded latest-wins memory every per-prompt memory uses (``workflows/seed/recency.py``)."""

from __future__ import annotations

from workflows.seed.recency import remember_latest


def test_oldest_entries_are_forgotten_past_the_limit() -> None:
    memory: dict[str, int] = {}
    assert remember_latest(memory, "a", 1, 2) == []
    assert remember_latest(memory, "b", 2, 2) == []
    assert remember_latest(memory, "c", 3, 2) == ["a"]
    assert memory == {"b": 2, "c": 3}


def test_writing_a_key_again_makes_it_the_newest() -> None:
    memory = {"a": 1, "b": 2}
    assert remember_latest(memory, "a", 10, 2) == []
    assert list(memory) == ["b", "a"] and memory["a"] == 10
    assert remember_latest(memory, "c", 3, 2) == ["b"]
    assert list(memory) == ["a", "c"]
