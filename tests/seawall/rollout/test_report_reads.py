"""The rollout report as an operator reads it (issue 36): every gate's figure explained in one
sentence, the loop rules' decisions beside the guard's so a stop rate never stands
unexplained, a negative saving said in words, counts with their noun in the singular and the
plural, and no heading over nothing. Checked on the rendered text and page."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from datetime import timedelta

import pytest

from seawall.rollout.records import PromptRecord
from seawall.rollout.render import render_html, render_json, render_text
from seawall.rollout.report import Report, build_report
from seawall.rollout.wording import plural
from tests.seawall.rollout.test_analysis import T0, T1, cohort_split, entry, failed, record
from workflows.contracts.prompt import RuleEntry, StopReason, ToolCallCounts


def flat(text: str) -> str:
    """The text with its wrapping undone: one space between words."""
    return " ".join(text.split())


def build(records: list[PromptRecord], resamples: int = 200) -> Report:
    return build_report(records, environment="internal", since=T0, until=T1, resamples=resamples)


def test_every_gate_explains_its_figure_in_one_sentence() -> None:
    report = build(cohort_split(enforce_tokens=150, enforce_completed=0.8))
    assert report.comparison is not None
    gates = {g.key: g for g in report.comparison.gates}
    text = flat(render_text(report))
    for gate in gates.values():
        sentence = gate.explanation
        # One sentence, naming both arms, the threshold and what the status means.
        assert sentence.endswith(".") and sentence.count(". ") == 0, sentence
        assert "enforce cohort" in sentence and "warn cohort" in sentence, sentence
        assert "95 % interval" in sentence and "against" in sentence, sentence
        assert flat(sentence) in text
    tokens = gates["mean_tokens"].explanation
    assert "enforce cohort 150 tokens, warn cohort 100 tokens" in tokens
    assert "a ratio of 1.500x" in tokens and "against at most 1.100x" in tokens
    assert tokens.endswith(
        "the whole interval is beyond it: prompts of the enforce cohort spend more than 10 % "
        "more tokens."
    )
    assert gates["mean_rounds"].explanation.endswith("the whole interval meets it: no regression.")
    assert gates["stopped_loop_rate"].explanation.endswith(
        "the whole interval meets it: it matches warn mode."
    )
    assert "against at least -1.00 pp" in gates["completion_rate"].explanation
    assert "against a band of +0.00 pp ± 2.00 pp" in gates["stopped_loop_rate"].explanation
    page = render_html(report)
    assert "prompts of the enforce cohort spend more than 10 % more tokens." in page
    data = json.loads(render_json(report))
    assert [g["explanation"] for g in data["comparison"]["gates"]] == [
        g.explanation for g in report.comparison.gates
    ]


def test_a_straddling_gate_says_the_data_cannot_tell_yet() -> None:
    # Two of twenty enforce owners lose one completed prompt each: -2 pp [-5, 0] across -1.
    records = cohort_split(enforce_tokens=100, enforce_completed=0.8)
    for r in records:
        if r.workflow_id in ("p-0-0", "p-20-0"):
            assert r.result is not None
            r.result = r.result.model_copy(update={"stop_reason": StopReason.MAX_TURN_REQUESTS})
    report = build(records)
    assert report.comparison is not None
    gate = {g.key: g for g in report.comparison.gates}["completion_rate"]
    assert gate.status == "inconclusive" and gate.low < -1 < gate.high
    assert gate.explanation.endswith(
        "against at least -1.00 pp: the interval straddles it, so the data cannot tell yet."
    )
    # One enforce owner: an interval that meets the threshold still cannot pass, and says so.
    one = [r for r in cohort_split(100, 0.8) if r.cohort == "warn" or r.block == "owner:ownr0x"]
    single = build(one)
    assert single.comparison is not None and single.comparison.treatment_owners == 1
    rounds = {g.key: g for g in single.comparison.gates}["mean_rounds"]
    assert rounds.status == "inconclusive"
    assert rounds.explanation.endswith(
        "the whole interval meets it, but with only 1 owner in the smaller arm it cannot pass "
        "(10 needed)."
    )


def wasteful_enforcement() -> list[PromptRecord]:
    """Warn prompts that would have stopped at their first batch and ran ten calls; enforce
    prompts that ran the same ten calls and never stopped: nothing saved of nine predicted."""
    records = cohort_split(enforce_tokens=100, enforce_completed=0.8)
    for r in records:
        assert r.result is not None
        r.tools = [failed(b, f"c{b}") for b in range(1, 11)]
        update: dict[str, object] = {"tool_calls": ToolCallCounts(executed=10)}
        if r.cohort == "warn":
            update["guard"] = [entry(1, "would_warn"), entry(1, "would_stop")]
        r.result = r.result.model_copy(update=update)
    return records


def test_a_negative_saving_is_said_in_words() -> None:
    report = build(wasteful_enforcement())
    assert report.comparison is not None
    gate = {g.key: g for g in report.comparison.gates}["saved_calls"]
    assert gate.status == "fail" and gate.estimate == -9.0
    assert gate.explanation.startswith(
        "Tool calls per prompt: enforce cohort 10.0 calls, warn cohort 10.0 calls, a saving of "
        "0.0 calls, where the warn cohort's calls after a would-stop predicted a saving of "
        "9.0 calls; a difference of -9.00 calls"
    )
    assert (
        "(observed minus predicted is negative: enforcement saved fewer calls than warn mode "
        "predicted)" in gate.explanation
    )
    # The enforce cohort running more calls than warn is a negative saving, said so.
    more = build(more_enforced_calls())
    assert more.comparison is not None
    saved = {g.key: g for g in more.comparison.gates}["saved_calls"]
    assert "a saving of -2.0 calls (negative: the enforce cohort ran more calls)" in (
        saved.explanation
    )


def more_enforced_calls() -> list[PromptRecord]:
    records = cohort_split(enforce_tokens=100, enforce_completed=0.8)
    for r in records:
        assert r.result is not None
        calls = 3 if r.cohort == "enforce" else 1
        r.tools = [failed(b, f"c{b}") for b in range(1, calls + 1)]
        r.result = r.result.model_copy(update={"tool_calls": ToolCallCounts(executed=calls)})
    return records


def stopped_by_a_rule() -> list[PromptRecord]:
    """A Phase 3 window whose only stops come from a loop rule, not from the guard."""
    records = cohort_split(enforce_tokens=100, enforce_completed=0.8)
    governed = frozenset({"repeated_call_cycle"})
    for n in range(0, 8, 2):
        records.append(
            record(
                f"by-rule-{n}",
                owner=f"ownr{n}x",
                cohort="enforce",
                mode="enforce",
                stop=StopReason.LOOP_DETECTED,
                rules=[
                    RuleEntry(
                        batch=2,
                        rule="repeated_call_cycle",
                        decision="stop",
                        mode="enforce",
                        count=3,
                    ),
                    RuleEntry(
                        batch=1,
                        rule="progress_judge",
                        decision="would_stop",
                        mode="shadow",
                        count=1,
                    ),
                ],
                governed=governed,
            )
        )
    return records


def test_the_stop_rate_is_explained_by_the_loop_rules_when_the_guard_decided_nothing() -> None:
    report = build(stopped_by_a_rule())
    assert report.comparison is not None
    assert report.comparison.treatment_stats.loop_rate > 0
    assert report.volumes.by_kind == {}
    assert report.volumes.by_rule == {
        ("stop", "repeated_call_cycle", True): 4,
        ("would_stop", "progress_judge", False): 4,
    }
    text = render_text(report)
    assert (
        "Guard decisions on supported hosts (204 prompts), by tool type and route: none (the "
        "stopped-loop rate's stops come from the loop rules below)" in text
    )
    lines = text.splitlines()
    rules = lines.index("Loop-rule decisions on supported hosts, by rule:")
    assert re.fullmatch(
        r"  stop +repeated_call_cycle +4  in the stopped-loop rate", lines[rules + 1]
    )
    assert re.fullmatch(
        r"  would_stop +progress_judge +4  its own mode: not in the stopped-loop rate",
        lines[rules + 2],
    )
    page = render_html(report)
    assert "<table id='rules-table'>" in page and "<td>repeated_call_cycle</td><td>4</td>" in page
    data = json.loads(render_json(report))
    assert {"decision": "stop", "rule": "repeated_call_cycle", "in_stopped_loop_rate": True,
            "count": 4} in data["volumes"]["loop_rules"]  # fmt: skip


def test_counts_take_their_noun_in_the_singular_and_no_heading_stands_over_nothing() -> None:
    assert plural(1, "owner") == "1 owner" and plural(0, "owner") == "0 owners"
    assert plural(2, "prompt") == "2 prompts"
    one = [r for r in cohort_split(100, 0.8) if r.cohort == "warn" or r.block == "owner:ownr0x"]
    report = build(one)
    text, page = render_text(report), render_html(report)
    for output in (text, page):
        assert not re.search(r"\b1 (owners|prompts)\b", output), output
    assert "enforce cohort (1 owner, 5 prompts)" in text
    assert "1 owner in the smaller arm" in " ".join(report.reasons)
    # No would-stop anywhere: the review says so instead of heading an empty list.
    assert "Manual review: none needed: no prompt on a supported host had a would-stop" in text
    assert "<ul id='review'>" not in page and "<ul></ul>" not in page
    assert "None needed: no prompt on a supported host had a would-stop." in page
    assert "Unreliable-input hosts, segmented out: none" in text
    assert "Loop-rule decisions on supported hosts, by rule: none" in text
    assert "<p id='rules-table'>None.</p>" in page
    assert "<table id='volumes-table'>" not in page


# --- what to do next ------------------------------------------------------------------------


def as_phase2(records: list[PromptRecord]) -> list[PromptRecord]:
    """The same evidence one phase earlier: enforce -> warn, warn -> shadow."""
    earlier = {"enforce": "warn", "warn": "shadow"}
    for r in records:
        assert r.cohort is not None and r.result is not None
        r.cohort = r.guard_mode = earlier[r.cohort]
        r.result = r.result.model_copy(update={"guard_mode": r.cohort})
    return records


def violated() -> list[PromptRecord]:
    return [record("unwarned", guard=[entry(1, "would_warn", 1), entry(2, "would_stop", 2)])]


def straddling() -> list[PromptRecord]:
    records = cohort_split(enforce_tokens=100, enforce_completed=0.8)
    for r in records:
        if r.workflow_id in ("p-0-0", "p-20-0"):
            assert r.result is not None
            r.result = r.result.model_copy(update={"stop_reason": StopReason.MAX_TURN_REQUESTS})
    return records


def without_tokens() -> list[PromptRecord]:
    records = cohort_split(100, 0.8)
    for r in records:
        assert r.result is not None
        r.result = r.result.model_copy(update={"input_tokens": None, "output_tokens": None})
    return records


def one_day() -> list[PromptRecord]:
    return [record("a", start=T0), record("b", start=T0 + timedelta(days=1))]


FEW = {f"owner:ownr{n}x" for n in range(0, 10, 2)}
# What the window holds -> its verdict and words of its next steps, in order.
CASES: dict[str, tuple[Callable[[], list[PromptRecord]], str, list[str]]] = {
    "a clear regression": (
        lambda: cohort_split(enforce_tokens=150, enforce_completed=0.4),
        "hold",
        [
            "1. Roll back the enforce cohort: completion_rate, mean_tokens fail with the whole "
            "interval beyond the threshold. Set SEAWALL_GUARD_ROLLOUT='internal=warn:rest' on "
            "the internal workers,",
            "keep any other environment's part after a ';'",
        ],
    ),
    "a regression on few owners": (
        lambda: [r for r in cohort_split(150, 0.8) if r.cohort == "warn" or r.block in FEW],
        "hold",
        [
            "1. Do not widen the enforce cohort: mean_tokens fails with the whole interval "
            "beyond the threshold, but on only 5 owners in the smaller arm.",
            "roll back with SEAWALL_GUARD_ROLLOUT='internal=warn:rest'",
            "2. Wait for more owners: the enforce cohort has 5 owners (5 more) and the warn "
            "cohort has 5 owners (5 more); each arm needs 10 owners with prompts in the "
            "concurrent period. At this window's split (5 of 10 owners in the enforce cohort) "
            "that takes about 20 active owners; with fewer owners, widen the enforce cohort",
        ],
    ),
    "passing gates on few owners": (
        lambda: [r for r in cohort_split(100, 0.8) if r.cohort == "warn" or r.block in FEW],
        "hold",
        ["1. Wait for more owners: the enforce cohort has 5 owners (5 more)"],
    ),
    "an interval across its threshold": (
        straddling,
        "hold",
        [
            "1. Keep Phase 3 running: completion_rate straddles its threshold; more owners and "
            "days narrow the intervals."
        ],
    ),
    "no token counts": (
        without_tokens,
        "hold",
        [
            "1. mean_tokens has no data (no prompt with token counts in the treatment and the "
            "control): use a model endpoint that reports token usage"
        ],
    ),
    "every Phase 3 gate passing for eight days": (
        lambda: cohort_split(100, 0.8),
        "promote",
        [
            "1. Promote: widen enforcement one step, after checking treatment saturation",
            "SEAWALL_GUARD_ROLLOUT='internal=enforce:10%,warn:rest' on the internal workers; "
            "report it again after 7 days.",
        ],
    ),
    "every Phase 2 gate passing for eight days": (
        lambda: as_phase2(cohort_split(100, 0.8)),
        "promote",
        [
            "1. Promote: start Phase 3, 5 % of owners enforced with the rest in warn as the "
            "control: SEAWALL_GUARD_ROLLOUT='internal=enforce:5%,warn:rest'"
        ],
    ),
    "an invariant violated": (
        violated,
        "return to shadow",
        ["1. Roll back now: set SEAWALL_GUARD_ROLLOUT='internal=shadow:rest'"],
    ),
    "a day of shadow": (
        one_day,
        "hold",
        [
            "1. Keep shadow running until 2026-11-08T00:00+00:00 (the data spans 1.00 of 7 "
            "days), then report again.",
            "2. Nothing to review yet",
            "3. Then start Phase 2, warn with a concurrent shadow control: "
            "SEAWALL_GUARD_ROLLOUT='internal=warn:95%,shadow:rest'",
        ],
    ),
    "an empty window": (
        lambda: [],
        "hold",
        ["1. Check the environment and the window"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_report_ends_with_what_to_do_next(case: str) -> None:
    make, verdict, expected = CASES[case]
    report = build(make())
    assert report.verdict == verdict, report.reasons
    text = render_text(report)
    # The last section of the text, numbered, is what to do next.
    head, _, steps = text.rpartition("\n\nWhat to do next:\n")
    assert head and "VERDICT:" in head and "\n\n" not in steps, text[-1500:]
    said = flat(steps)
    for words in expected:
        assert words in said, said
    # The page ends with the same steps, after everything else.
    page = render_html(report)
    last = page.rindex("<h2")
    assert page[last:].startswith("<h2 id='next'>What to do next</h2><ol id='next-steps'><li>")
    assert page.endswith("</ol></body></html>\n")
    for step in report.next_steps:
        assert f"<li>{html.escape(step, quote=True)}</li>" in page
    assert json.loads(render_json(report))["next_steps"] == report.next_steps


def test_the_review_lists_the_loop_rules_would_stops_beside_the_guards() -> None:
    governed = frozenset({"repeated_identical_result"})

    def would_stop(wid: str, rule: str) -> PromptRecord:
        decision = RuleEntry(batch=1, rule=rule, decision="would_stop", mode="shadow", count=2)
        return record(wid, rules=[decision], governed=governed)

    records = [
        would_stop("by-a-rule", "repeated_identical_result"),
        # The progress judge runs in a mode of its own: never the cohort's stop.
        would_stop("by-the-judge", "progress_judge"),
        record("by-the-guard", guard=[entry(1, "would_warn"), entry(2, "would_stop")]),
        record("quiet"),
    ]
    report = build(records)
    assert (report.review_total, report.review_sample) == (2, ["by-a-rule", "by-the-guard"])
    assert (
        "Manual review: 2 prompts with a would-stop; review all of them: by-a-rule, by-the-guard"
        in render_text(report)
    )
    # One prompt to review is "it", not "all of them".
    one = build(records[2:])
    assert "Manual review: 1 prompt with a would-stop; review it: by-the-guard" in render_text(one)
    assert "<p>1 prompt with a would-stop; review it (its workflow id; open it with" in (
        render_html(one)
    )


def test_few_owners_in_the_warn_cohort_say_to_lower_the_enforce_share() -> None:
    # Three warn-cohort owners, the first and last of the eight days among them.
    few = {f"owner:ownr{n}x" for n in (1, 21, 39)}
    report = build([r for r in cohort_split(100, 0.8) if r.cohort == "enforce" or r.block in few])
    assert report.comparison is not None
    assert (report.comparison.treatment_owners, report.comparison.control_owners) == (20, 3)
    steps = " ".join(report.next_steps)
    assert "the warn cohort has 3 owners (7 more)" in steps
    assert (
        "widen the warn cohort: a smaller enforce share, the warn cohort being the rest (such "
        "as enforce:5%,warn:rest)." in steps
    )
