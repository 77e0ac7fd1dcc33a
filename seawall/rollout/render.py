"""The rollout report as an operator reads it: a terminal summary, and one self-contained
HTML page (inline SVG plots and styles; nothing loads from anywhere) with the verdict, the
invariants, the decision volumes over time and per loop rule, the gates with their intervals
and one-sentence explanations, and last, what to do next.

Only what :class:`~seawall.rollout.report.Report` holds is shown: counts, rates,
environment and version names, workflow ids. No owner id, prompt text, tool argument or
result is in a report, so none can be in its output.
"""

from __future__ import annotations

import html
import json
import math
import textwrap
from typing import Any

from seawall.rollout.cohorts import STOPS
from seawall.rollout.decisions import VOLUME_DECISIONS, Volumes, in_stop_rate
from seawall.rollout.gates import Comparison, Gate
from seawall.rollout.report import Report
from seawall.rollout.wording import in_unit, percent, plural

COLOURS = {
    "would_warn": "#f2c14e",
    "would_stop": "#f78154",
    "warn": "#4d9de0",
    "stop": "#7768ae",
}
STATUS_COLOURS = {
    "pass": "#2e7d32",
    "fail": "#c62828",
    "inconclusive": "#ef6c00",
    "no data": "#757575",
}
VERDICT_COLOURS = {"promote": "#2e7d32", "hold": "#ef6c00", "return to shadow": "#c62828"}


def _needs(gate: Gate) -> str:
    bound = {"max": "<=", "min": ">=", "match": "within"}[gate.rule]
    threshold = in_unit(gate.threshold, gate.unit)
    if gate.rule == "match":
        threshold = f"{threshold} +- {in_unit(gate.tolerance, gate.unit).lstrip('+')}"
    return f"needs {bound} {threshold}"


def _gate_line(gate: Gate) -> list[str]:
    """The gate's status and figure, then its explanation, wrapped beneath it."""
    if gate.status == "no data":
        head = f"  {'NO DATA':<12} {gate.title}: {gate.note}  ({_needs(gate)})"
    else:
        head = (
            f"  {gate.status.upper():<12} {gate.title}: {in_unit(gate.estimate, gate.unit)} "
            f"[{in_unit(gate.low, gate.unit)}, {in_unit(gate.high, gate.unit)}]  "
            f"({_needs(gate)})"
        )
    indent = " " * 15
    return [
        head,
        *textwrap.wrap(gate.explanation, 100, initial_indent=indent, subsequent_indent=indent),
    ]


def _span_line(report: Report) -> str:
    first = report.first_start.isoformat() if report.first_start else "n/a"
    last = report.last_start.isoformat() if report.last_start else "n/a"
    return (
        f"data spans {report.span_days:.2f} days (first prompt {first}, last {last}); "
        f"promotion needs {report.min_days:g}"
    )


def _owners_line(report: Report) -> str:
    return (
        f"owners per cohort: {_counts(report.cohort_owners)}; enforced owners "
        f"{report.enforced_owners} of {report.owners} ({percent(report.enforced_share)})"
    )


def _comparison_lines(report: Report) -> list[str]:
    comparison = report.comparison
    if comparison is None:
        return ["Gates: no treatment/control pair in this window (Phase 1 only)."]
    lines = [f"Phase {comparison.phase} gates: {_arms(report, comparison)}"]
    if comparison.concurrent_since is not None and comparison.concurrent_until is not None:
        lines.append(
            f"  concurrent period {comparison.concurrent_since.isoformat()} .. "
            f"{comparison.concurrent_until.isoformat()} ({comparison.span_days:.2f} days); "
            f"{plural(comparison.not_concurrent, 'prompt')} outside it left out"
        )
    if comparison.missing_arm:
        lines.append(f"  {comparison.missing_arm}")
    for gate in comparison.gates:
        lines.extend(_gate_line(gate))
    return lines


def _arms(report: Report, comparison: Comparison) -> str:
    """The two arms with their owners and prompts, and how the intervals were drawn."""
    return (
        f"{comparison.treatment} ({plural(comparison.treatment_owners, 'owner')}, "
        f"{plural(comparison.treatment_stats.prompts, 'prompt')}) vs {comparison.control} "
        f"({plural(comparison.control_owners, 'owner')}, "
        f"{plural(comparison.control_stats.prompts, 'prompt')}); 95% owner-level bootstrap, "
        f"{report.resamples} resamples, seed {report.seed}"
    )


def _rule_note(decision: str, governed: bool) -> str:
    """Whether a loop rule's decision is in the cohorts' stopped-loop rate."""
    if in_stop_rate(decision, governed):
        return "in the stopped-loop rate"
    return "its own mode: not in the stopped-loop rate" if decision in STOPS else ""


def _guard_heading(volumes: Volumes) -> str:
    heading = (
        f"Guard decisions on supported hosts ({plural(volumes.prompts, 'prompt')}), "
        "by tool type and route"
    )
    if volumes.by_kind:
        return heading + ":"
    counted = any(in_stop_rate(d, governed) for d, _, governed in volumes.by_rule)
    return heading + (
        ": none (the stopped-loop rate's stops come from the loop rules below)"
        if counted
        else ": none"
    )


def _unreliable(volumes: Volumes) -> str:
    said = "none"
    if volumes.unreliable_prompts:
        decisions = _counts(volumes.unreliable_decisions)
        said = f"{plural(volumes.unreliable_prompts, 'prompt')} ({decisions})"
    return f"Unreliable-input hosts, segmented out: {said}"


def _review_line(report: Report) -> str:
    if not report.review_total:
        return "none needed: no prompt on a supported host had a would-stop"
    shown = len(report.review_sample)
    if shown < report.review_total:
        which = f"a sample of {shown}"
    else:
        which = "it" if shown == 1 else "all of them"
    return (
        f"{plural(report.review_total, 'prompt')} with a would-stop; review {which}: "
        + ", ".join(report.review_sample)
    )


def render_text(report: Report) -> str:
    """The terminal summary."""
    window = f"{report.since.isoformat()} .. {report.until.isoformat()}"
    lines = [f"Seawall rollout report: environment {report.environment}, {window}"]
    if report.empty:
        lines.append(
            f"No prompts in environment {report.environment!r} in this window: nothing to "
            "report. (Prompts are selected by the SeawallEnvironment search attribute, set "
            "when the worker has a deployment environment.)"
        )
        lines.append(f"VERDICT: {report.verdict}")
        return "\n".join([*lines, "", *_next_lines(report)])
    lines.append(
        f"prompts {report.prompts}, owners {report.owners}; modes {_counts(report.modes)}; "
        f"cohorts {_counts(report.cohorts)}; versions {_counts(report.versions)}"
    )
    lines.append(_owners_line(report))
    lines.append(_span_line(report))
    lines.append("")
    lines.append("Phase 1 invariants (violations / checked):")
    for invariant in report.invariants:
        mark = "ok  " if invariant.violations == 0 else "FAIL"
        example = f"  e.g. {', '.join(invariant.examples[:3])}" if invariant.examples else ""
        counts = f"{invariant.violations:>5} / {invariant.checked:<6}"
        lines.append(f"  {mark} {counts} {invariant.title}{example}")
    volumes = report.volumes
    lines.append("")
    lines.append(_guard_heading(volumes))
    for (decision, tool_type, route), count in volumes.by_kind.items():
        lines.append(f"  {decision:<11} {tool_type:<8} {route:<12} {count}")
    lines.append(
        "Loop-rule decisions on supported hosts, by rule:" + ("" if volumes.by_rule else " none")
    )
    for (decision, rule, governed), count in volumes.by_rule.items():
        note = _rule_note(decision, governed)
        lines.append(f"  {decision:<12} {rule:<27} {count:>5}  {note}".rstrip())
    lines.append(_unreliable(volumes))
    lines.append("")
    lines.append(f"Manual review: {_review_line(report)}")
    lines.append("")
    lines.extend(_comparison_lines(report))
    lines.append("")
    lines.append(f"VERDICT: {report.verdict}")
    lines.extend(f"  - {reason}" for reason in report.reasons)
    return "\n".join([*lines, "", *_next_lines(report)])


def _next_lines(report: Report) -> list[str]:
    """The page's last section: what to do next, numbered, most urgent first."""
    lines = ["What to do next:"]
    for n, step in enumerate(report.next_steps, 1):
        lines.extend(textwrap.wrap(step, 100, initial_indent=f"  {n}. ", subsequent_indent="     "))
    return lines


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def render_json(report: Report) -> str:
    return json.dumps(report.as_json(), indent=2, sort_keys=False)


# --- HTML ---------------------------------------------------------------------------------


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values in [lo, hi] (1, 2 or 5 times a power of ten apart): the widest
    such step that still gives at least three ticks, up to about ``count``."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return []
    power = 10 ** math.floor(math.log10((hi - lo) / max(count - 1, 1)))
    steps = [m * power for m in (10, 5, 2, 1, 0.5, 0.2, 0.1)]
    ticks: list[float] = []
    for step in steps:
        first = math.ceil(lo / step - 1e-9)
        ticks = [round(n * step, 10) + 0.0 for n in range(first, math.floor(hi / step + 1e-9) + 1)]
        if len(ticks) >= 3:
            break
    return ticks


def _tick_label(value: float, unit: str) -> str:
    text = f"{value:g}"
    return {"pp": f"{text} pp", "x": f"{text}x"}.get(unit, text)


def _bucket_label(moment: str) -> str:
    return moment[:16].replace("T", " ")


def volumes_svg(report: Report, width: int = 720, height: int = 250) -> str:
    """Stacked bars: the guard's decisions per time bucket, with a labelled count axis and a
    time axis from the window's start to its end."""
    buckets = list(report.volumes.over_time.items())
    left, right, bottom, top = 56, 14, 52, 24
    plot_w, plot_h = width - left - right, height - bottom - top
    totals = [sum(v.values()) for _, v in buckets] or [0]
    ticks = nice_ticks(0, max(max(totals), 1), 4)
    peak = max(ticks[-1] if ticks else 1, max(totals), 1)
    bar_w = plot_w / max(len(buckets), 1)
    base = top + plot_h
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="volumes" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        "<title>Guard decisions over time</title>",
        f'<line class="axis" x1="{left}" y1="{base}" x2="{left + plot_w}" y2="{base}" '
        'stroke="#444"/>',
        f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{base}" stroke="#444"/>',
        f'<text class="axis-label" id="volumes-y-label" x="14" y="{top + plot_h / 2:.0f}" '
        f'font-size="11" text-anchor="middle" transform="rotate(-90 14 {top + plot_h / 2:.0f})">'
        "decisions per bucket</text>",
    ]
    for tick in ticks:
        y = base - plot_h * tick / peak
        parts.append(
            f'<line class="tick" x1="{left - 4}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" '
            f'stroke="#444"/><line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
            f'stroke="#eee"/><text class="tick-label" x="{left - 6}" y="{y + 3:.1f}" '
            f'font-size="10" text-anchor="end">{tick:g}</text>'
        )
    for i, (start, counts) in enumerate(buckets):
        y = float(base)
        for decision in VOLUME_DECISIONS:
            count = counts.get(decision, 0)
            if not count:
                continue
            h = plot_h * count / peak
            y -= h
            parts.append(
                f'<rect class="bar" data-decision="{decision}" data-count="{count}" '
                f'x="{left + i * bar_w + 1:.1f}" y="{y:.1f}" width="{max(bar_w - 2, 1):.1f}" '
                f'height="{h:.1f}" fill="{COLOURS[decision]}"><title>{_esc(start)}: '
                f"{count} {decision}</title></rect>"
            )
    # The time axis runs from the window's start to its end: the right-hand label is the
    # window's end, not the start of the last bucket.
    since, until = report.since, report.until
    middle = since + (until - since) / 2
    for x, moment, anchor, key in (
        (left, since, "start", "start"),
        (left + plot_w / 2, middle, "middle", "middle"),
        (left + plot_w, until, "end", "end"),
    ):
        parts.append(
            f'<line class="tick" x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}" '
            f'stroke="#444"/><text class="time-label" data-edge="{key}" x="{x:.1f}" '
            f'y="{base + 16}" font-size="10" text-anchor="{anchor}">'
            f"{_esc(_bucket_label(moment.isoformat()))}</text>"
        )
    width_minutes = (until - since).total_seconds() / 60 / max(len(buckets), 1)
    parts.append(
        f'<text class="axis-label" id="volumes-x-label" x="{left + plot_w / 2:.0f}" '
        f'y="{height - 8}" font-size="11" text-anchor="middle">prompt start time (UTC); '
        f"one bar per {_esc(_duration(width_minutes))}</text>"
    )
    for n, decision in enumerate(VOLUME_DECISIONS):
        x = left + 10 + n * 110
        parts.append(
            f'<rect x="{x}" y="4" width="10" height="10" fill="{COLOURS[decision]}"/>'
            f'<text x="{x + 14}" y="13" font-size="10">{decision}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _duration(minutes: float) -> str:
    if minutes >= 120 * 24:
        return f"{minutes / 1440:.0f} days"
    if minutes >= 120:
        return f"{minutes / 60:.1f} h"
    if minutes >= 2:
        return f"{minutes:.0f} min"
    return f"{minutes * 60:.0f} s"


AXIS_NAMES = {"pp": "percentage points", "x": "times control", "calls": "calls per prompt"}


def _threshold_label(gate: Gate) -> str:
    bound = {"max": "\u2264", "min": "\u2265", "match": "\u00b1"}[gate.rule]
    if gate.rule == "match":
        return f"match {in_unit(gate.threshold, gate.unit)} {bound} {gate.tolerance:g}"
    return f"threshold {bound} {in_unit(gate.threshold, gate.unit)}"


# Characters a line of a gate's title (11 px) and of its status (10 px) may take in the
# 300 px left column of the gates' plot.
TITLE_CHARS, STATUS_CHARS = 46, 50


def _wrapped(text: str, width: int, most: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at words; past ``most``
    lines the last one ends with an ellipsis."""
    lines = textwrap.wrap(text, width) or [""]
    if len(lines) > most:
        lines = [
            *lines[: most - 1],
            textwrap.shorten(" ".join(lines[most - 1 :]), width, placeholder=" …"),
        ]
    return lines


def gates_svg(gates: list[Gate], width: int = 760) -> str:
    """One row per gate on the gate's own scale: an axis with ticks and its unit, the
    threshold (and a match gate's tolerance band) drawn and labelled, the 95 % interval and
    the estimate; a gate without data says so on its row."""
    row, left, right = 84, 300, 24
    height = max(len(gates), 1) * row + 10
    plot_w = width - left - right
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="gates" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        "<title>Promotion gates with 95% owner-level bootstrap intervals</title>",
    ]
    for i, gate in enumerate(gates):
        top = 8 + i * row
        axis_y = top + 44
        band = (gate.threshold - gate.tolerance, gate.threshold + gate.tolerance)
        values = [v for v in (gate.low, gate.high, gate.estimate, *band) if math.isfinite(v)]
        lo, hi = min(values), max(values)
        pad = (hi - lo) * 0.2 or max(abs(gate.threshold) * 0.1, 1.0)
        ticks = nice_ticks(lo - pad, hi + pad, 5)
        lo, hi = min([*ticks, lo - pad]), max([*ticks, hi + pad])

        def x(value: float, lo: float = lo, hi: float = hi) -> float:
            return left + plot_w * (value - lo) / (hi - lo)

        colour = STATUS_COLOURS[gate.status]
        if gate.status == "no data":
            summary = f"no data: {gate.note}"
        else:
            summary = (
                f"{gate.status}: {in_unit(gate.estimate, gate.unit)} "
                f"[{in_unit(gate.low, gate.unit)}, {in_unit(gate.high, gate.unit)}]"
            )
        # The title and the status in the left column, wrapped at words to stay clear of
        # the scale (the explanation under the plot says the whole of it).
        parts.append(
            f'<g class="gate" data-gate="{_esc(gate.key)}" data-status="{_esc(gate.status)}">'
        )
        y = top + 16
        for line in _wrapped(gate.title, TITLE_CHARS, 2):
            parts.append(
                f'<text class="gate-title" x="4" y="{y}" font-size="11">{_esc(line)}</text>'
            )
            y += 13
        y += 2
        for line in _wrapped(summary, STATUS_CHARS, 3):
            parts.append(
                f'<text class="gate-status" x="4" y="{y}" font-size="10" fill="{colour}">'
                f"{_esc(line)}</text>"
            )
            y += 12
        parts.append(
            f'<line class="axis" x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" '
            'stroke="#444"/>'
        )
        for tick in ticks:
            parts.append(
                f'<line class="tick" x1="{x(tick):.1f}" y1="{axis_y}" x2="{x(tick):.1f}" '
                f'y2="{axis_y + 4}" stroke="#444"/><text class="tick-label" x="{x(tick):.1f}" '
                f'y="{axis_y + 15}" font-size="9" text-anchor="middle">'
                f"{_esc(_tick_label(tick, gate.unit))}</text>"
            )
        parts.append(
            f'<text class="axis-label" x="{left + plot_w}" y="{axis_y + 28}" font-size="9" '
            f'text-anchor="end" fill="#555">{_esc(AXIS_NAMES.get(gate.unit, gate.unit))}</text>'
        )
        if gate.rule == "match":
            parts.append(
                f'<rect class="tolerance" x="{x(band[0]):.1f}" y="{axis_y - 14}" '
                f'width="{x(band[1]) - x(band[0]):.1f}" height="22" fill="#2e7d32" '
                'fill-opacity="0.12"/>'
            )
        parts.append(
            f'<line class="threshold" x1="{x(gate.threshold):.1f}" y1="{axis_y - 22}" '
            f'x2="{x(gate.threshold):.1f}" y2="{axis_y + 6}" stroke="#222" '
            'stroke-dasharray="3,2"/>'
            f'<text class="threshold-label" x="{x(gate.threshold):.1f}" y="{axis_y - 25}" '
            f'font-size="10" text-anchor="middle">{_esc(_threshold_label(gate))}</text>'
        )
        if gate.status == "no data":
            parts.append(
                f'<text class="no-data" x="{left + plot_w / 2:.1f}" y="{axis_y - 4}" '
                f'font-size="11" text-anchor="middle" fill="{colour}">no data</text>'
            )
        if math.isfinite(gate.low) and math.isfinite(gate.high):
            parts.append(
                f'<line class="interval" x1="{x(gate.low):.1f}" y1="{axis_y - 6}" '
                f'x2="{x(gate.high):.1f}" y2="{axis_y - 6}" stroke="{colour}" stroke-width="4"/>'
            )
        if math.isfinite(gate.estimate):
            parts.append(
                f'<circle class="estimate" cx="{x(gate.estimate):.1f}" cy="{axis_y - 6}" r="5" '
                f'fill="{colour}"/>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;
max-width:980px}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #ccc;padding:3px 8px;
font-size:.9em;text-align:left}th{background:#f4f4f4}
.verdict{display:inline-block;padding:6px 14px;border-radius:4px;color:#fff;font-weight:600}
.ok{color:#2e7d32}.bad{color:#c62828;font-weight:600}code{font-size:.9em}
"""


def _cohort_table(comparison: Comparison) -> str:
    """The arms side by side: rates in %, so the difference is in pp as on the gates."""
    t, c = comparison.treatment_stats, comparison.control_stats

    def pp(a: float, b: float) -> str:
        return in_unit(100 * (a - b), "pp")

    def times(a: float, b: float) -> str:
        return in_unit(a / b, "x") if math.isfinite(a) and math.isfinite(b) and b > 0 else "n/a"

    rows = [
        (
            "completion rate",
            percent(t.completion_rate, 2),
            percent(c.completion_rate, 2),
            pp(t.completion_rate, c.completion_rate),
        ),
        (
            "cancellation rate",
            percent(t.cancellation_rate, 2),
            percent(c.cancellation_rate, 2),
            pp(t.cancellation_rate, c.cancellation_rate),
        ),
        (
            "disconnect-or-retry within 10 min",
            percent(t.disconnect_or_retry_rate, 2),
            percent(c.disconnect_or_retry_rate, 2),
            pp(t.disconnect_or_retry_rate, c.disconnect_or_retry_rate),
        ),
        (
            "p95 latency",
            in_unit(t.p95_latency, "s"),
            in_unit(c.p95_latency, "s"),
            times(t.p95_latency, c.p95_latency),
        ),
        (
            "mean tokens",
            in_unit(t.mean_tokens),
            in_unit(c.mean_tokens),
            times(t.mean_tokens, c.mean_tokens),
        ),
        (
            "mean rounds",
            in_unit(t.mean_rounds),
            in_unit(c.mean_rounds),
            times(t.mean_rounds, c.mean_rounds),
        ),
        (
            "stopped-loop / would-stop rate",
            percent(t.loop_rate, 2),
            percent(c.loop_rate, 2),
            pp(t.loop_rate, c.loop_rate),
        ),
        ("tool calls per prompt", in_unit(t.executed), in_unit(c.executed), ""),
        (
            "prompts (with a result; with token counts)",
            f"{t.prompts} ({t.with_result}; {t.with_tokens})",
            f"{c.prompts} ({c.with_result}; {c.with_tokens})",
            "",
        ),
    ]
    cells = "".join(
        f"<tr><td>{_esc(name)}</td><td>{_esc(tv)}</td><td>{_esc(cv)}</td><td>{_esc(d)}</td></tr>"
        for name, tv, cv, d in rows
    )
    return (
        f"<table id='cohorts'><tr><th></th><th>{_esc(comparison.treatment)}</th>"
        f"<th>{_esc(comparison.control)}</th><th>treatment vs control</th></tr>{cells}</table>"
    )


def _owners_table(report: Report) -> str:
    rows = "".join(
        f"<tr data-cohort='{_esc(k)}'><td>{_esc(k)}</td><td>{report.cohorts.get(k, 0)}</td>"
        f"<td>{n}</td></tr>"
        for k, n in report.cohort_owners.items()
    )
    return (
        "<table id='cohort-owners'><tr><th>cohort</th><th>prompts</th><th>owners</th></tr>"
        f"{rows}</table><p id='enforced-share'>Enforced owners: {report.enforced_owners} of "
        f"{report.owners} ({_esc(percent(report.enforced_share))}; the seed allows at most 5 %)."
        "</p>"
    )


def _decision_tables(volumes: Volumes) -> list[str]:
    """The guard's decisions by tool type and route, the loop rules' by rule, and the
    unreliable-input hosts: a table each, or a sentence where there is nothing to list."""
    esc = _esc
    parts = []
    if volumes.by_kind:
        rows = "".join(
            f"<tr><td>{esc(d)}</td><td>{esc(t)}</td><td>{esc(r)}</td><td>{n}</td></tr>"
            for (d, t, r), n in volumes.by_kind.items()
        )
        parts.append(
            "<table id='volumes-table'><tr><th>decision</th><th>tool type</th><th>route</th>"
            f"<th>count</th></tr>{rows}</table>"
        )
    else:
        parts.append(f"<p id='volumes-table'>{esc(_guard_heading(volumes))}.</p>")
    parts.append("<h2>Loop-rule decisions (supported hosts)</h2>")
    if volumes.by_rule:
        rows = "".join(
            f"<tr><td>{esc(d)}</td><td>{esc(rule)}</td><td>{n}</td>"
            f"<td>{esc(_rule_note(d, governed))}</td></tr>"
            for (d, rule, governed), n in volumes.by_rule.items()
        )
        parts.append(
            "<table id='rules-table'><tr><th>decision</th><th>rule</th><th>count</th>"
            f"<th>stopped-loop rate</th></tr>{rows}</table>"
        )
    else:
        parts.append("<p id='rules-table'>None.</p>")
    parts.append(f"<p>{esc(_unreliable(volumes))}.</p>")
    return parts


def render_html(report: Report) -> str:
    """One self-contained page: no script, no external stylesheet, font or image."""
    esc = _esc
    verdict_colour = VERDICT_COLOURS[report.verdict]
    body = [
        f"<h1>Seawall rollout report: {esc(report.environment)}</h1>",
        f"<p>{esc(report.since.isoformat())} &ndash; {esc(report.until.isoformat())}</p>",
        f'<p><span class="verdict" id="verdict" data-verdict="{esc(report.verdict)}" '
        f'style="background:{verdict_colour}">{esc(report.verdict)}</span></p>',
        "<ul>" + "".join(f"<li>{esc(r)}</li>" for r in report.reasons) + "</ul>",
    ]
    if report.empty:
        body.append(
            f'<p id="empty">No prompts in environment {esc(report.environment)} in this '
            "window: nothing to report.</p>"
        )
    else:
        body.append(
            f"<p>{plural(report.prompts, 'prompt')} from {plural(report.owners, 'owner')}. Modes: "
            f"{esc(_counts(report.modes))}. Cohorts: {esc(_counts(report.cohorts))}. "
            f"Service versions: {esc(_counts(report.versions))}.</p>"
        )
        body.append(f"<p id='data-span'>{esc(_span_line(report))}.</p>")
        body.append("<h2>Cohorts and owners</h2>")
        body.append(_owners_table(report))
        body.append("<h2>Phase 1 invariants</h2>")
        rows = "".join(
            f'<tr data-invariant="{esc(i.key)}"><td>{esc(i.title)}</td>'
            f'<td class="{"ok" if i.violations == 0 else "bad"}">{i.violations}</td>'
            f"<td>{i.checked}</td><td>{esc(', '.join(i.examples[:5]))}</td></tr>"
            for i in report.invariants
        )
        body.append(
            "<table id='invariants'><tr><th>invariant</th><th>violations</th><th>checked</th>"
            f"<th>example workflow ids</th></tr>{rows}</table>"
        )
        body.append("<h2>Guard decisions over time (supported hosts)</h2>")
        body.append(volumes_svg(report))
        body.extend(_decision_tables(report.volumes))
        body.append("<h2>Manual review</h2>")
        if report.review_sample:
            body.append(
                f"<p>{esc(plural(report.review_total, 'prompt'))} with a would-stop; review "
                + (
                    "it (its workflow id; open it"
                    if len(report.review_sample) == 1
                    else "these (workflow ids; open them"
                )
                + " with authorized trace access):</p>"
            )
            body.append(
                "<ul id='review'>"
                + "".join(f"<li><code>{esc(w)}</code></li>" for w in report.review_sample)
                + "</ul>"
            )
        else:
            said = _review_line(report)
            body.append(f"<p id='review'>{esc(said[:1].upper() + said[1:])}.</p>")
        comparison = report.comparison
        body.append("<h2>Promotion gates</h2>")
        if comparison is None:
            body.append("<p>No treatment/control pair in this window (Phase 1 only).</p>")
        else:
            body.append(
                f"<p>Phase {comparison.phase}: {esc(_arms(report, comparison))}. Dashed line: "
                "the threshold; each row on its gate's own scale.</p>"
            )
            if comparison.concurrent_since is not None and comparison.concurrent_until is not None:
                body.append(
                    f"<p id='concurrent'>Concurrent period: "
                    f"{esc(comparison.concurrent_since.isoformat())} &ndash; "
                    f"{esc(comparison.concurrent_until.isoformat())} "
                    f"({comparison.span_days:.2f} days); "
                    f"{plural(comparison.not_concurrent, 'prompt')} outside it left out.</p>"
                )
            if comparison.missing_arm:
                body.append(f"<p id='missing-arm' class='bad'>{esc(comparison.missing_arm)}</p>")
            body.append(gates_svg(comparison.gates))
            body.append(
                "<ul id='gate-explanations'>"
                + "".join(
                    f"<li data-gate='{esc(g.key)}'><b style='color:{STATUS_COLOURS[g.status]}'>"
                    f"{esc(g.status)}</b> {esc(g.title)}: {esc(g.explanation)}</li>"
                    for g in comparison.gates
                )
                + "</ul>"
            )
            body.append(_cohort_table(comparison))
    body.append("<h2 id='next'>What to do next</h2>")
    body.append(
        "<ol id='next-steps'>"
        + "".join(f"<li>{esc(step)}</li>" for step in report.next_steps)
        + "</ol>"
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>Seawall rollout report: {esc(report.environment)}</title>"
        f"<style>{STYLE}</style></head><body>{''.join(body)}</body></html>\n"
    )
