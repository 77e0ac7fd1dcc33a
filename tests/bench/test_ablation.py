"""The loop benchmark's ablation table: each part of the recommended profile off in turn.

Three corpus scenarios with known stoppers: an identical-output loop only the
identical-result rule (R3) stops, a failure loop the repeated-failure guard stops, and a
legit paging session nothing stops. Turning a part off must lose exactly the loops that
part stopped, and the whole profile's row must equal the main report's figures.
"""

from __future__ import annotations

from typing import Any

from bench.corpus_loader import DEFAULT_CORPUS, load_corpus
from bench.loops import ablation, evaluate
from bench.simulate import SEAWALL
from workflows.rules import RULES, LoopRule, rule_spec

SCENARIOS = ("real-loop-pi-repeated-ls.yaml", "loop-ignores-reminder.yaml", "legit-paging.yaml")


def _rows() -> dict[str, dict[str, Any]]:
    entries = load_corpus([DEFAULT_CORPUS / name for name in SCENARIOS])
    return {row["variant"]: row for row in ablation(entries)}


def test_every_rule_and_both_seed_protections_get_a_row() -> None:
    variants = list(_rows())
    assert variants[0] == "recommended profile, every part on"
    assert len(variants) == 1 + len(RULES) + 2
    for spec in RULES:
        assert any(spec.setting in v for v in variants)


def test_the_whole_profile_row_equals_the_main_report() -> None:
    entries = load_corpus([DEFAULT_CORPUS / name for name in SCENARIOS])
    whole = _rows()["recommended profile, every part on"]["all"]
    main = evaluate(entries)["summary"][SEAWALL]
    assert whole == main
    assert whole["loops_stopped"] == 2 and whole["false_halts"] == 0


def test_turning_a_part_off_loses_the_loops_only_it_stops() -> None:
    rows = _rows()
    same = rule_spec(LoopRule.IDENTICAL_RESULT)
    without_same = rows[f"without {same.docs_id} {same.title} ({same.setting})"]["all"]
    whole = rows["recommended profile, every part on"]["all"]
    # Without R3 the same `ls` loop is still stopped, later, by R11 (nothing new learned
    # for twelve batches): the part's share is the calls it saves.
    assert without_same["loops_stopped"] == 2
    assert without_same["wasted_calls_median"] > whole["wasted_calls_median"]
    # With the guard off and every rule enforcing, the rules still stop the failure loop
    # (the failure-cycle rule overlaps the guard): the guard's row loses nothing here.
    without_guard = rows["without the repeated-failure guard"]["all"]
    assert without_guard["loops_stopped"] == 2 and without_guard["false_halts"] == 0
