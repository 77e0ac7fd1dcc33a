"""Each gate's input as the seed defines it (seawall/rollout/cohorts.py and gates.py; issue 26): the
data's own span against the seven days, no data is never a pass, every ended prompt in the
completion rate, the ten-minute bound of disconnect-or-retry, a concurrent control cohort,
every rule the cohort's mode governs, and the enforced share per cohort."""

from __future__ import annotations

import json
from datetime import timedelta

from seawall.rollout.cohorts import prompt_metrics, retried_prompts
from seawall.rollout.records import PromptRecord
from seawall.rollout.render import render_html, render_json, render_text
from seawall.rollout.report import build_report
from tests.seawall.rollout.test_analysis import T0, T1, cohort_split, entry, failed, record
from workflows.contracts.prompt import RuleEntry, StopReason


def gates(records: list[PromptRecord]) -> dict[str, str]:
    report = build_report(records, environment="internal", since=T0, until=T1, resamples=200)
    assert report.comparison is not None
    return {g.key: g.status for g in report.comparison.gates}


def test_fifteen_minutes_of_data_in_a_long_window_is_not_promoted() -> None:
    # Phase 1: two prompts 15 minutes apart, in a window of eight days.
    fresh = [
        record("a", start=T0 + timedelta(days=7)),
        record("b", start=T0 + timedelta(days=7, minutes=15)),
    ]
    report = build_report(fresh, environment="internal", since=T0, until=T1)
    assert report.verdict == "hold"
    assert any("the data spans 0.01 days" in r for r in report.reasons), report.reasons
    assert "data spans 0.01 days" in render_text(report)
    assert json.loads(render_json(report))["data_span"]["days"] == round(15 / 1440, 6)
    # The same evidence spread over eight days promotes (the window itself is unchanged).
    spread = [record("a", start=T0), record("b", start=T0 + timedelta(days=7, minutes=15))]
    assert build_report(spread, environment="internal", since=T0, until=T1).verdict == "promote"

    # Phase 3: every gate passes, but the cohorts ran together for under a day.
    compressed = []
    for r in cohort_split(enforce_tokens=100, enforce_completed=0.8):
        assert r.close is not None
        latency = r.close - r.start
        r.start = T0 + (r.start - T0) / 10
        r.close = r.start + latency
        compressed.append(r)
    report = build_report(compressed, environment="internal", since=T0, until=T1, resamples=200)
    assert report.comparison is not None
    assert {g.status for g in report.comparison.gates} == {"pass"}
    assert report.verdict == "hold"
    assert any("both cohorts running concurrently" in r for r in report.reasons)


def without_tokens(records: list[PromptRecord], *, unknown: bool) -> list[PromptRecord]:
    for r in records:
        assert r.result is not None
        # Unknown usage (None) or a server that sent none and left 0.
        value = None if unknown else 0
        r.result = r.result.model_copy(update={"input_tokens": value, "output_tokens": value})
    return records


def test_a_gate_without_data_is_no_data_and_never_promotes() -> None:
    for unknown in (True, False):
        records = without_tokens(cohort_split(100, 0.8), unknown=unknown)
        report = build_report(records, environment="internal", since=T0, until=T1, resamples=200)
        assert report.comparison is not None
        by_key = {g.key: g for g in report.comparison.gates}
        assert by_key["mean_tokens"].status == "no data"
        assert "no prompt with token counts" in by_key["mean_tokens"].note
        assert all(g.status == "pass" for k, g in by_key.items() if k != "mean_tokens")
        assert report.verdict == "hold"
        assert any(r.startswith("gate mean_tokens: no data") for r in report.reasons)
        assert "NO DATA" in render_text(report)
        assert 'data-gate="mean_tokens" data-status="no data"' in render_html(report)
    # Tokens in one arm only: still no data, not a ratio against nothing.
    records = cohort_split(100, 0.8)
    without_tokens([r for r in records if r.cohort == "warn"], unknown=True)
    assert gates(records)["mean_tokens"] == "no data"


def test_completion_counts_failed_terminated_and_timed_out_prompts() -> None:
    records = cohort_split(100, 0.8)
    # One enforce prompt in five more ends without a result; the rest as before.
    for r in records:
        if r.cohort == "enforce" and r.workflow_id.endswith("-1"):
            r.status = ("failed", "terminated", "timed_out")[int(r.workflow_id.split("-")[1]) % 3]
            r.result = None
    ended = [prompt_metrics(r, set()) for r in records]
    assert all(m is not None for m in ended)
    report = build_report(records, environment="internal", since=T0, until=T1, resamples=200)
    comparison = report.comparison
    assert comparison is not None
    assert comparison.treatment_stats.prompts == 100  # none dropped from the denominator
    assert abs(comparison.treatment_stats.completion_rate - 0.6) < 1e-9
    assert {g.key: g.status for g in comparison.gates}["completion_rate"] == "fail"
    # Still running: no outcome yet, so in no denominator.
    running = record("r")
    running.close, running.status, running.result = None, "running", None
    assert prompt_metrics(running, set()) is None


def test_disconnect_or_retry_is_bounded_by_ten_minutes_after_the_prompt() -> None:
    long = record("long", text="x", start=T0, seconds=20 * 60)
    soon = record("soon", text="x", start=T0 + timedelta(minutes=29))  # 9 min after its end
    assert retried_prompts([long, soon]) == {"long"}
    late = record("late", text="x", start=T0 + timedelta(minutes=31))  # 11 min after
    assert retried_prompts([long, late]) == set()

    dropped = record("d", start=T0, seconds=60)
    assert dropped.close is not None
    dropped.disconnects = [dropped.close - timedelta(seconds=30)]
    metrics = prompt_metrics(dropped, set())
    assert metrics is not None and metrics.disconnect_or_retry
    dropped.disconnects = [dropped.close + timedelta(minutes=11)]
    metrics = prompt_metrics(dropped, set())
    assert metrics is not None and not metrics.disconnect_or_retry


def phase2(shadow_start: timedelta) -> list[PromptRecord]:
    """20 warn-cohort owners over eight days, 20 shadow-cohort owners from ``shadow_start``."""
    records = []
    for n in range(40):
        warn = n % 2 == 0
        base = T0 + timedelta(hours=(n // 2) * 9.8) + (timedelta(0) if warn else shadow_start)
        for k in range(5):
            records.append(
                record(
                    f"p-{n}-{k}",
                    owner=f"ownr{n}x",
                    cohort="warn" if warn else "shadow",
                    mode="warn" if warn else "shadow",
                    start=base + timedelta(minutes=20 * k),
                    stop=StopReason.CANCELLED
                    if warn and k == 0 and n < 12
                    else StopReason.END_TURN,
                    text=f"{n}-{k}",
                )
            )
    return records


def test_phase_2_compares_the_warn_cohort_with_a_concurrent_shadow_cohort() -> None:
    concurrent = phase2(timedelta(0))
    report = build_report(concurrent, environment="internal", since=T0, until=T1, resamples=200)
    comparison = report.comparison
    assert comparison is not None and comparison.phase == 2
    assert (comparison.treatment, comparison.control) == ("warn cohort", "shadow cohort")
    statuses = {g.key: g.status for g in comparison.gates}
    assert list(statuses) == [
        "cancellation_rate",
        "disconnect_or_retry",
        "p95_latency",
        "mean_tokens",
        "mean_rounds",
    ]
    # 6 of 100 warn prompts cancelled, none of shadow's: the seed's cancellation regression.
    assert statuses["cancellation_rate"] == "fail"
    assert abs(comparison.treatment_stats.cancellation_rate - 0.06) < 1e-9

    # The shadow cohort only before the warn cohort began: an earlier period, not a control.
    earlier = [r for r in phase2(timedelta(days=-9)) if r.cohort == "shadow"]
    later = [r for r in concurrent if r.cohort == "warn"]
    report = build_report(earlier + later, environment="internal", since=T0, until=T1)
    assert report.comparison is not None
    assert {g.status for g in report.comparison.gates} == {"no data"}
    assert report.verdict == "hold"
    assert any("never ran at the same time" in r for r in report.reasons)

    # Half-overlapping: only the prompts of the shared period are compared.
    shifted = phase2(timedelta(days=4))
    report = build_report(shifted, environment="internal", since=T0, until=T1, resamples=50)
    assert report.comparison is not None
    assert report.comparison.not_concurrent > 0
    assert report.comparison.span_days < 4.5

    # Warn for everybody (no rollout policy): no concurrent shadow cohort exists.
    everybody = [record(f"w{n}", owner=f"o{n}", mode="warn") for n in range(12)]
    report = build_report(everybody, environment="internal", since=T0, until=T1)
    assert report.verdict == "hold"
    assert any("warn:95%,shadow:rest" in r for r in report.reasons), report.reasons


def test_stopped_loops_count_every_rule_the_cohorts_mode_governs() -> None:
    records = cohort_split(100, 0.8)
    governed = frozenset({"repeated_failure_cycle"})
    stopped = record(
        "by-rule",
        owner="ownr0x",
        cohort="enforce",
        mode="enforce",
        stop=StopReason.LOOP_DETECTED,
        rules=[
            RuleEntry(
                batch=2, rule="repeated_failure_cycle", decision="stop", mode="enforce", count=3
            )
        ],
        tools=[failed(b, f"c{b}") for b in (1, 2, 3)],
        governed=governed,
    )
    metrics = prompt_metrics(stopped, set())
    assert metrics is not None and metrics.loop_event and metrics.calls_after_stop == 1
    # A rule with its own mode (an operator override) is not the cohort's.
    own = record(
        "own-mode",
        cohort="enforce",
        mode="enforce",
        rules=[
            RuleEntry(batch=1, rule="repeated_call_cycle", decision="stop", mode="enforce", count=3)
        ],
        governed=governed,
    )
    metrics = prompt_metrics(own, set())
    assert metrics is not None and not metrics.loop_event
    # Without the input's settings, a rule decision in the guard's mode counts.
    unknown = record(
        "unknown",
        cohort="warn",
        mode="warn",
        rules=[
            RuleEntry(
                batch=1, rule="repeated_call_cycle", decision="would_stop", mode="warn", count=3
            )
        ],
    )
    metrics = prompt_metrics(unknown, set())
    assert metrics is not None and metrics.loop_event
    # The guard's own stop still counts.
    guard = record("guard", guard=[entry(1, "warn"), entry(2, "stop")], mode="enforce")
    metrics = prompt_metrics(guard, set())
    assert metrics is not None and metrics.loop_event
    report = build_report([*records, stopped], environment="internal", since=T0, until=T1)
    assert report.comparison is not None
    assert report.comparison.treatment_stats.loop_rate > 0


def test_the_enforced_share_and_owners_per_cohort_are_shown() -> None:
    records = cohort_split(100, 0.8)
    records.append(record("stranger", owner=None, cohort="unowned", mode="warn"))
    report = build_report(records, environment="internal", since=T0, until=T1, resamples=100)
    assert report.cohort_owners == {"enforce": 20, "unowned": 1, "warn": 20}
    assert report.enforced_owners == 20 and report.owners == 40
    assert report.enforced_share == 0.5
    assert "enforced owners 20 of 40 (50.0 %)" in render_text(report)
    assert any("above the seed's 5 %" in r for r in report.reasons)
    data = json.loads(render_json(report))
    assert data["enforced"] == {"owners": 20, "share": 0.5}
    assert data["cohort_owners"]["warn"] == 20
    page = render_html(report)
    assert "id='cohort-owners'" in page and "50.0 %" in page
