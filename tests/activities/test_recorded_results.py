"""A worker keeps, per prompt, the results of the latest batch it ran, within its bounds
(activities/recorded_results.py)."""

from __future__ import annotations

from activities.prompt_preamble import PromptRun
from activities.recorded_results import RecordedResults

ALICE = PromptRun("alice-prompt-1", "r1")
BOB = PromptRun("bob-prompt-1", "r2")


def test_a_batch_replaces_the_one_before_and_prompts_are_apart() -> None:
    results = RecordedResults()
    results.record(ALICE, 1, "c0", "first")
    results.record(ALICE, 1, "c1", "second")
    results.record(BOB, 1, "c0", "bob's")
    assert results.get(ALICE, ["c0", "c1"]) == {"c0": "first", "c1": "second"}
    assert results.get(BOB, ["c0"]) == {"c0": "bob's"}
    results.record(ALICE, 2, "c0", "again")
    assert results.get(ALICE, ["c0"]) == {"c0": "again"}
    assert results.get(ALICE, ["c0", "c1"]) is None  # c1 was batch 1's: all or nothing


def test_the_least_recently_recorded_prompt_goes_first_past_the_bounds() -> None:
    results = RecordedResults(max_prompts=1)
    results.record(ALICE, 1, "c0", "a")
    results.record(BOB, 1, "c0", "b")
    assert results.get(ALICE, ["c0"]) is None and results.get(BOB, ["c0"]) == {"c0": "b"}

    by_size = RecordedResults(max_chars=10)
    by_size.record(ALICE, 1, "c0", "x" * 6)
    by_size.record(BOB, 1, "c0", "y" * 6)
    assert by_size.get(ALICE, ["c0"]) is None and by_size.get(BOB, ["c0"]) == {"c0": "y" * 6}
    by_size.record(BOB, 1, "c1", "z" * 6)  # the batch alone is past the bound: not kept
    assert by_size.get(BOB, ["c0"]) is None

    off = RecordedResults(max_prompts=0)
    off.record(ALICE, 1, "c0", "a")
    assert off.get(ALICE, ["c0"]) is None
