"""The rollout report's computations (seawall/rollout/: invariants, decisions, cohorts,
gates, verdict) over hand-built records: each invariant caught, volumes and the
unreliable-input segment, retries, the bootstrap's determinism, every gate verdict, and the
page and summary they render to."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from typing import Any

from seawall.rollout.cohorts import percentile, retried_prompts
from seawall.rollout.gates import GateSpec, judge
from seawall.rollout.invariants import check_invariants
from seawall.rollout.records import PromptRecord, ToolActivity
from seawall.rollout.render import render_html, render_json, render_text
from seawall.rollout.report import build_report
from workflows.contracts import ToolOutcome
from workflows.contracts.prompt import (
    GuardEntry,
    PromptResult,
    RuleEntry,
    StopReason,
    ToolCallCounts,
)

T0 = datetime(2026, 11, 1, tzinfo=UTC)
T1 = T0 + timedelta(days=8)


def entry(batch: int, decision: str, ordinal: int = 1, reason: str | None = None) -> GuardEntry:
    return GuardEntry(
        batch=batch,
        decision=decision,
        phase_before="idle",
        phase_after="tracking",
        reason=reason,
        failure_count=0,
        batch_count=0,
        candidate_ordinal=ordinal,
        mode="shadow",
    )


def failed(batch: int, call: str, **outcome: Any) -> ToolActivity:
    fields = {"status": "error", "execution_status": "error", "tool_type": "native", **outcome}
    return ToolActivity(
        batch=batch,
        call_id=call,
        outcome=ToolOutcome(call_id=call, tool_name="read_file", **fields),
    )


def record(
    wid: str,
    *,
    owner: str | None = "o1",
    cohort: str = "unassigned",
    mode: str = "shadow",
    guard: list[GuardEntry] | None = None,
    tools: list[ToolActivity] | None = None,
    stop: StopReason = StopReason.END_TURN,
    start: datetime = T0 + timedelta(hours=1),
    seconds: float = 10.0,
    tokens: int = 100,
    rounds: int = 3,
    text: str = "t",
    disconnects: int = 0,
    enforcement_disabled: bool = False,
    attributes: dict[str, str] | None = None,
    status: str = "completed",
    rules: list[RuleEntry] | None = None,
    governed: frozenset[str] | None = None,
) -> PromptRecord:
    tools = tools or []
    result = PromptResult(
        workflow_id=wid,
        stop_reason=stop,
        model_requests=rounds,
        tool_calls=ToolCallCounts(executed=len(tools)),
        guard_mode=mode,
        refusal_mode="enforce",
        enforcement_disabled=enforcement_disabled,
        input_tokens=tokens,
        output_tokens=0,
        guard=guard or [],
        messages=[],
        client_disconnects=disconnects,
        rules=rules or [],
    )
    close = start + timedelta(seconds=seconds)
    return PromptRecord(
        workflow_id=wid,
        block=f"owner:{owner}" if owner else f"session:{wid}",
        owned=owner is not None,
        session_id=None,
        environment="internal",
        service_version="1.0",
        cohort=cohort,
        guard_mode=mode,
        route="interactive",
        start=start,
        close=close,
        status=status,
        text_digest=text,
        max_tool_calls=None,
        result=result if status == "completed" else None,
        tools=tools,
        attributes=attributes
        or {
            "SeawallRolloutCohort": cohort,
            "SeawallGuardMode": mode,
            "SeawallEnvironment": "internal",
        },
        disconnects=[close - timedelta(seconds=1)] * disconnects,
        governed_rules=governed,
    )


def violations(records: list[PromptRecord]) -> dict[str, int]:
    return {i.key: i.violations for i in check_invariants(records)}


def test_clean_shadow_evidence_has_zero_violations_and_a_review_list() -> None:
    loop = record(
        "p-loop",
        guard=[entry(1, "tracked"), entry(2, "would_warn"), entry(3, "would_stop")],
        tools=[failed(b, f"c{b}") for b in (1, 2, 3)],
    )
    late = record("p-ok", start=T0 + timedelta(days=7, hours=2))
    report = build_report([loop, late], environment="internal", since=T0, until=T1)
    assert all(i.violations == 0 for i in report.invariants)
    assert report.review_total == 1 and report.review_sample == ["p-loop"]
    assert report.volumes.by_kind == {
        ("would_stop", "native", "interactive"): 1,
        ("would_warn", "native", "interactive"): 1,
    }
    assert report.comparison is None
    assert report.verdict == "promote"
    assert "manual review" in report.reasons[0]


def test_each_invariant_is_caught() -> None:
    bad = [
        record("cancel", guard=[entry(1, "tracked")], tools=[failed(1, "a", status="cancelled")]),
        record(
            "not-started",
            guard=[entry(1, "tracked")],
            tools=[failed(1, "a", execution_status="not_started")],
        ),
        record(
            "incomplete",
            guard=[entry(1, "tracked")],
            tools=[ToolActivity(batch=1, call_id="a", ended="timed_out")],
        ),
        record(
            "unreliable",
            guard=[
                entry(1, "warn"),
                entry(2, "reset", reason="unreliable_input"),
                entry(3, "stop"),
            ],
        ),
        record("raw", attributes={"SeawallLastDecision": "read /home/alice/secret"}),
        record("unwarned", guard=[entry(1, "would_warn", 1), entry(2, "would_stop", 2)]),
        record("dup", tools=[failed(1, "same"), failed(2, "same")]),
    ]
    assert violations(bad) == {
        "cancelled_counted": 1,
        "ineligible_counted": 1,
        "incomplete_batch_decision": 1,
        "enforced_after_unreliable_input": 1,
        "raw_fields_in_telemetry": 1,
        "stop_without_prior_warning": 1,
        "protections_changed": 1,
    }
    report = build_report(bad, environment="internal", since=T0, until=T1)
    assert report.verdict == "return to shadow"
    # A reset (not a counting decision) on a batch with a cancelled call is fine.
    fine = record(
        "ok",
        guard=[entry(1, "reset", reason="cancelled")],
        tools=[failed(1, "a", status="cancelled")],
    )
    assert sum(violations([fine]).values()) == 0


def test_unreliable_input_hosts_are_segmented_out() -> None:
    host = record(
        "old-host",
        guard=[entry(1, "reset", reason="unreliable_input"), entry(2, "would_warn")],
        enforcement_disabled=True,
    )
    report = build_report([host, record("ok")], environment="internal", since=T0, until=T1)
    assert report.volumes.unreliable_prompts == 1
    assert report.volumes.unreliable_decisions == {"would_warn": 1}
    assert report.volumes.by_kind == {} and report.volumes.prompts == 1
    said = "Unreliable-input hosts, segmented out: 1 prompt (would_warn 1)"
    assert said in render_text(report) and f"<p>{said}.</p>" in render_html(report)


def test_a_retry_is_the_same_owner_and_text_within_ten_minutes() -> None:
    first = record("a", text="x", start=T0)
    again = record("b", text="x", start=T0 + timedelta(minutes=9))
    late = record("c", text="x", start=T0 + timedelta(minutes=30))
    other_owner = record("d", owner="o2", text="x", start=T0 + timedelta(minutes=1))
    assert retried_prompts([first, again, late, other_owner]) == {"a"}


def cohort_split(enforce_tokens: int, enforce_completed: float) -> list[PromptRecord]:
    """40 owners, every other one enforced, five prompts each, over eight days."""
    records = []
    for n in range(40):
        enforce = n % 2 == 0
        owner = f"ownr{n}x"
        for k in range(5):
            done = (k / 5) < (enforce_completed if enforce else 0.8)
            records.append(
                record(
                    f"p-{n}-{k}",
                    owner=owner,
                    cohort="enforce" if enforce else "warn",
                    mode="enforce" if enforce else "warn",
                    stop=StopReason.END_TURN if done else StopReason.MAX_TURN_REQUESTS,
                    tokens=enforce_tokens if enforce else 100,
                    seconds=10 + k,
                    start=T0 + timedelta(hours=(n // 2) * 9.8, minutes=k * 20),
                    text=f"{n}-{k}",
                )
            )
    return records


def test_phase_3_gates_side_by_side_with_deterministic_intervals() -> None:
    records = cohort_split(enforce_tokens=100, enforce_completed=0.8)
    report = build_report(records, environment="internal", since=T0, until=T1, resamples=300)
    comparison = report.comparison
    assert comparison is not None and comparison.phase == 3
    assert (comparison.treatment_owners, comparison.control_owners) == (20, 20)
    gates = {g.key: g for g in comparison.gates}
    assert set(gates) == {
        "completion_rate",
        "disconnect_or_retry",
        "p95_latency",
        "mean_tokens",
        "mean_rounds",
        "stopped_loop_rate",
        "saved_calls",
    }
    assert all(g.status == "pass" for g in gates.values()), {k: g.status for k, g in gates.items()}
    assert report.verdict == "promote"
    again = build_report(records, environment="internal", since=T0, until=T1, resamples=300)
    assert render_json(again) == render_json(report)


def test_a_clear_regression_fails_its_gate_and_holds() -> None:
    records = cohort_split(enforce_tokens=150, enforce_completed=0.4)
    report = build_report(records, environment="internal", since=T0, until=T1, resamples=300)
    assert report.comparison is not None
    gates = {g.key: g for g in report.comparison.gates}
    assert gates["mean_tokens"].status == "fail"
    assert math.isclose(gates["mean_tokens"].estimate, 1.5)
    assert gates["completion_rate"].status == "fail"
    assert report.verdict == "hold"
    assert "gate mean_tokens: fail" in report.reasons


def test_an_empty_window_says_so_everywhere() -> None:
    report = build_report([], environment="public", since=T0, until=T1)
    assert report.empty and report.verdict == "hold"
    assert "No prompts in environment 'public'" in render_text(report)
    assert json.loads(render_json(report))["empty"] is True
    assert 'id="empty"' in render_html(report)


def test_percentile_matches_linear_interpolation() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 95) == 5
    assert math.isnan(percentile([], 95))


class Page(HTMLParser):
    """What the page is made of: tags, ids, external references."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self.external: list[str] = []
        self.gates: dict[str, str] = {}
        self.bars = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        for name in ("src", "href"):
            if values.get(name):
                self.external.append(str(values[name]))
        if tag == "g" and values.get("data-gate"):
            self.gates[str(values["data-gate"])] = str(values["data-status"])
        if tag == "rect" and values.get("class") == "bar":
            self.bars += 1


def test_the_html_page_is_self_contained_with_both_plots() -> None:
    records = cohort_split(enforce_tokens=150, enforce_completed=0.8)
    records.append(
        record(
            "p-loop",
            guard=[entry(1, "tracked"), entry(2, "warn"), entry(3, "would_stop")],
            tools=[failed(b, f"c{b}") for b in (1, 2, 3)],
            cohort="warn",
            mode="warn",
        )
    )
    report = build_report(records, environment="internal", since=T0, until=T1, resamples=200)
    page = Page()
    page.feed(render_html(report))
    assert {"script", "link", "img", "iframe"}.isdisjoint(page.tags)
    assert page.external == []
    assert {"verdict", "volumes", "gates", "invariants", "review", "cohorts"} <= page.ids
    assert page.tags.count("svg") == 2 and page.bars >= 2
    assert page.gates["mean_tokens"] == "fail"
    text = render_text(report)
    assert "VERDICT: hold" in text and "p-loop" in text
    # Nothing of the owners reaches any output.
    for output in (render_html(report), text, render_json(report)):
        assert "ownr" not in output


def few_enforced(enforce_tokens: int) -> list[PromptRecord]:
    """Five enforce-cohort owners against twenty warn-cohort owners."""
    few = {f"owner:ownr{n}x" for n in range(0, 10, 2)}
    return [r for r in cohort_split(enforce_tokens, 0.8) if r.cohort == "warn" or r.block in few]


def test_with_few_owners_in_an_arm_no_gate_passes() -> None:
    report = build_report(
        few_enforced(100), environment="internal", since=T0, until=T1, resamples=100
    )
    assert report.comparison is not None
    assert report.comparison.treatment_owners == 5
    assert {g.status for g in report.comparison.gates} == {"inconclusive"}
    assert all(g.note.startswith("few owners: 5 owners") for g in report.comparison.gates)
    assert report.verdict == "hold"
    assert any("a gate passes only with 10 per arm" in reason for reason in report.reasons)


def test_with_few_owners_a_whole_interval_breach_still_fails() -> None:
    # Every enforce prompt uses 1.5x the tokens: the whole interval is above 1.10.
    report = build_report(
        few_enforced(150), environment="internal", since=T0, until=T1, resamples=100
    )
    assert report.comparison is not None
    gates = {g.key: g for g in report.comparison.gates}
    tokens = gates["mean_tokens"]
    assert tokens.low > 1.10 and tokens.status == "fail"
    assert tokens.note == "few owners: 5 owners in the smaller arm, 10 needed"
    # The gates whose interval meets the threshold are still not a pass on five owners.
    assert gates["mean_rounds"].status == "inconclusive"
    assert "gate mean_tokens: fail" in report.reasons
    assert "FAIL         mean tokens" in render_text(report)


def spec(rule: str, threshold: float, tolerance: float = 0.0) -> GateSpec:
    return GateSpec("g", "g", "pp", lambda t, c: 0.0, rule, threshold, tolerance)  # type: ignore[arg-type]


def test_a_gate_fails_only_when_its_whole_interval_breaches_the_threshold() -> None:
    at_most = spec("max", 0.5)
    assert judge(at_most, 50.0, 50.0) == "fail"  # the observed +50 pp [+50, +50]
    assert judge(at_most, 0.51, 3.0) == "fail"
    assert judge(at_most, 0.5, 3.0) == "inconclusive"  # touches it: not wholly beyond
    assert judge(at_most, -1.0, 0.6) == "inconclusive"  # straddles
    assert judge(at_most, -1.0, 0.5) == "pass"  # the bound itself meets it
    assert judge(at_most, math.nan, 1.0) == "no data"
    at_least = spec("min", -1.0)
    assert judge(at_least, -3.0, -1.01) == "fail"
    assert judge(at_least, -3.0, -1.0) == "inconclusive"
    assert judge(at_least, -1.0, 2.0) == "pass"
    # A match gate's threshold is its band: 0 +- 2.
    band = spec("match", 0.0, 2.0)
    assert judge(band, -2.0, 2.0) == "pass"
    assert judge(band, 0.1, 0.3) == "pass"  # excludes 0, well inside the band
    assert judge(band, -1.0, 2.5) == "inconclusive"
    assert judge(band, 2.0, 4.0) == "inconclusive"  # touches the band's edge
    assert judge(band, 2.01, 4.0) == "fail"
    assert judge(band, -40.0, -31.0) == "fail"


def test_enforcement_disabled_by_a_contract_violation_is_not_an_unreliable_host() -> None:
    violated = record("contract", guard=[entry(1, "reset", reason="contract_violation")])
    violated.result = violated.result.model_copy(update={"enforcement_disabled": True})  # type: ignore[union-attr]
    report = build_report([violated], environment="internal", since=T0, until=T1)
    assert report.volumes.unreliable_prompts == 0
