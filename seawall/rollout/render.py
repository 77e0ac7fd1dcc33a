"""The rollout report as an operator reads it: a terminal summary, and one self-contained
HTML page (inline SVG plots and styles; nothing loads from anywhere) with the verdict, the
invariants, the decision volumes over time and the gates with their intervals.

Only what :class:`~seawall.rollout.analysis.Report` holds is shown: counts, rates,
environment and version names, workflow ids. No owner id, prompt text, tool argument or
result is in a report, so none can be in its output.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

from seawall.rollout.analysis import VOLUME_DECISIONS, Gate, Report

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


def _fmt(value: float, unit: str = "") -> str:
    if not math.isfinite(value):
        return "n/a"
    if unit == "x":
        return f"{value:.3f}x"
    if unit == "pp":
        return f"{value:+.2f} pp"
    return f"{value:.2f}{(' ' + unit) if unit else ''}"


def _gate_line(gate: Gate) -> str:
    bound = {"max": "<=", "min": ">=", "match": "within"}[gate.rule]
    threshold = _fmt(gate.threshold, gate.unit)
    if gate.rule == "match":
        threshold = f"{threshold} +- {_fmt(gate.tolerance, gate.unit).lstrip('+')}"
    return (
        f"  {gate.status.upper():<12} {gate.title}: {_fmt(gate.estimate, gate.unit)} "
        f"[{_fmt(gate.low, gate.unit)}, {_fmt(gate.high, gate.unit)}]  (needs {bound} {threshold})"
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
        return "\n".join(lines)
    lines.append(
        f"prompts {report.prompts}, owners {report.owners}; modes {_counts(report.modes)}; "
        f"cohorts {_counts(report.cohorts)}; versions {_counts(report.versions)}"
    )
    lines.append("")
    lines.append("Phase 1 invariants (violations / checked):")
    for invariant in report.invariants:
        mark = "ok  " if invariant.violations == 0 else "FAIL"
        example = f"  e.g. {', '.join(invariant.examples[:3])}" if invariant.examples else ""
        counts = f"{invariant.violations:>5} / {invariant.checked:<6}"
        lines.append(f"  {mark} {counts} {invariant.title}{example}")
    volumes = report.volumes
    lines.append("")
    lines.append(
        f"Decisions on supported hosts ({volumes.prompts} prompts), by tool type and route:"
    )
    if not volumes.by_kind:
        lines.append("  none")
    for (decision, tool_type, route), count in volumes.by_kind.items():
        lines.append(f"  {decision:<11} {tool_type:<8} {route:<12} {count}")
    lines.append(
        f"Unreliable-input hosts, segmented out: {volumes.unreliable_prompts} prompts "
        f"{_counts(volumes.unreliable_decisions) if volumes.unreliable_decisions else ''}".rstrip()
    )
    lines.append("")
    lines.append(
        f"Manual review: {report.review_total} would-stop prompts; sample "
        f"({len(report.review_sample)}): {', '.join(report.review_sample) or 'none'}"
    )
    comparison = report.comparison
    lines.append("")
    if comparison is None:
        lines.append("Gates: no treatment/control pair in this window (Phase 1 only).")
    else:
        lines.append(
            f"Phase {comparison.phase} gates: {comparison.treatment} "
            f"({comparison.treatment_owners} owners, {comparison.treatment_stats.prompts} "
            f"prompts) vs {comparison.control} ({comparison.control_owners} owners, "
            f"{comparison.control_stats.prompts} prompts); 95% owner-level bootstrap, "
            f"{report.resamples} resamples, seed {report.seed}"
        )
        lines.extend(_gate_line(g) for g in comparison.gates)
    lines.append("")
    lines.append(f"VERDICT: {report.verdict}")
    lines.extend(f"  - {reason}" for reason in report.reasons)
    return "\n".join(lines)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def render_json(report: Report) -> str:
    return json.dumps(report.as_json(), indent=2, sort_keys=False)


# --- HTML ---------------------------------------------------------------------------------


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def volumes_svg(report: Report, width: int = 720, height: int = 220) -> str:
    """Stacked bars: the guard's decisions per time bucket."""
    buckets = list(report.volumes.over_time.items())
    left, bottom, top = 40, 30, 10
    plot_w, plot_h = width - left - 10, height - bottom - top
    totals = [sum(v.values()) for _, v in buckets] or [0]
    peak = max(max(totals), 1)
    bar_w = plot_w / max(len(buckets), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="volumes" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        "<title>Guard decisions over time</title>",
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="#444"/>',
        f'<text x="4" y="{top + 10}" font-size="10">{peak}</text>',
        f'<text x="4" y="{top + plot_h}" font-size="10">0</text>',
    ]
    for i, (start, counts) in enumerate(buckets):
        y = float(top + plot_h)
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
    if buckets:
        parts.append(
            f'<text x="{left}" y="{height - 8}" font-size="10">{_esc(buckets[0][0][:16])}</text>'
        )
        parts.append(
            f'<text x="{left + plot_w}" y="{height - 8}" font-size="10" text-anchor="end">'
            f"{_esc(buckets[-1][0][:16])}</text>"
        )
    for n, decision in enumerate(VOLUME_DECISIONS):
        x = left + 10 + n * 110
        parts.append(
            f'<rect x="{x}" y="{top}" width="10" height="10" fill="{COLOURS[decision]}"/>'
            f'<text x="{x + 14}" y="{top + 9}" font-size="10">{decision}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def gates_svg(gates: list[Gate], width: int = 720) -> str:
    """One row per gate: the estimate, its 95 % interval and the threshold, on the gate's
    own scale."""
    row, left, right = 46, 300, 20
    height = max(len(gates), 1) * row + 20
    plot_w = width - left - right
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="gates" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        "<title>Promotion gates with 95% owner-level bootstrap intervals</title>",
    ]
    for i, gate in enumerate(gates):
        y = 20 + i * row
        band = (gate.threshold - gate.tolerance, gate.threshold + gate.tolerance)
        values = [v for v in (gate.low, gate.high, gate.estimate, *band) if math.isfinite(v)]
        lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
        pad = (hi - lo) * 0.15 or 1.0
        lo, hi = lo - pad, hi + pad

        def x(value: float, lo: float = lo, hi: float = hi) -> float:
            return left + plot_w * (value - lo) / (hi - lo)

        colour = STATUS_COLOURS[gate.status]
        parts.append(
            f'<g class="gate" data-gate="{_esc(gate.key)}" data-status="{_esc(gate.status)}">'
            f'<text x="4" y="{y + 4}" font-size="11">{_esc(gate.title)}</text>'
            f'<text x="4" y="{y + 18}" font-size="10" fill="{colour}">{_esc(gate.status)}: '
            f"{_esc(_fmt(gate.estimate, gate.unit))} [{_esc(_fmt(gate.low, gate.unit))}, "
            f"{_esc(_fmt(gate.high, gate.unit))}]</text>"
            f'<line x1="{left}" y1="{y + 8}" x2="{left + plot_w}" y2="{y + 8}" stroke="#ddd"/>'
            f'<line class="threshold" x1="{x(gate.threshold):.1f}" y1="{y - 6}" '
            f'x2="{x(gate.threshold):.1f}" y2="{y + 22}" stroke="#222" stroke-dasharray="3,2"/>'
        )
        if gate.rule == "match":
            parts.extend(
                f'<line class="tolerance" x1="{x(edge):.1f}" y1="{y}" x2="{x(edge):.1f}" '
                f'y2="{y + 16}" stroke="#888" stroke-dasharray="1,2"/>'
                for edge in band
            )
        if math.isfinite(gate.low) and math.isfinite(gate.high):
            parts.append(
                f'<line class="interval" x1="{x(gate.low):.1f}" y1="{y + 8}" '
                f'x2="{x(gate.high):.1f}" y2="{y + 8}" stroke="{colour}" stroke-width="3"/>'
            )
        if math.isfinite(gate.estimate):
            parts.append(
                f'<circle class="estimate" cx="{x(gate.estimate):.1f}" cy="{y + 8}" r="5" '
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
            f"<p>{report.prompts} prompts from {report.owners} owners. Modes: "
            f"{esc(_counts(report.modes))}. Cohorts: {esc(_counts(report.cohorts))}. "
            f"Service versions: {esc(_counts(report.versions))}.</p>"
        )
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
        rows = "".join(
            f"<tr><td>{esc(d)}</td><td>{esc(t)}</td><td>{esc(r)}</td><td>{n}</td></tr>"
            for (d, t, r), n in report.volumes.by_kind.items()
        )
        body.append(
            "<table id='volumes-table'><tr><th>decision</th><th>tool type</th><th>route</th>"
            f"<th>count</th></tr>{rows}</table>"
        )
        body.append(
            f"<p>Unreliable-input hosts, segmented out: {report.volumes.unreliable_prompts} "
            f"prompts ({esc(_counts(report.volumes.unreliable_decisions))}).</p>"
        )
        body.append("<h2>Manual review sample</h2>")
        body.append(
            f"<p>{report.review_total} prompts with a would-stop; review these (workflow ids; "
            "open them with authorized trace access):</p>"
        )
        body.append(
            "<ul id='review'>"
            + "".join(f"<li><code>{esc(w)}</code></li>" for w in report.review_sample)
            + "</ul>"
        )
        comparison = report.comparison
        body.append("<h2>Promotion gates</h2>")
        if comparison is None:
            body.append("<p>No treatment/control pair in this window (Phase 1 only).</p>")
        else:
            body.append(
                f"<p>Phase {comparison.phase}: {esc(comparison.treatment)} "
                f"({comparison.treatment_owners} owners, {comparison.treatment_stats.prompts} "
                f"prompts) vs {esc(comparison.control)} ({comparison.control_owners} owners, "
                f"{comparison.control_stats.prompts} prompts). 95% intervals from an "
                f"owner-level blocked bootstrap ({report.resamples} resamples, seed "
                f"{report.seed}); dashed line: the threshold.</p>"
            )
            body.append(gates_svg(comparison.gates))
            t, c = comparison.treatment_stats, comparison.control_stats
            metric_rows = [
                ("completion rate", t.completion_rate, c.completion_rate),
                (
                    "disconnect-or-retry rate",
                    t.disconnect_or_retry_rate,
                    c.disconnect_or_retry_rate,
                ),
                ("p95 latency (s)", t.p95_latency, c.p95_latency),
                ("mean tokens", t.mean_tokens, c.mean_tokens),
                ("mean rounds", t.mean_rounds, c.mean_rounds),
                ("loop stop / would-stop rate", t.loop_rate, c.loop_rate),
                ("tool calls per prompt", t.executed, c.executed),
            ]
            rows = "".join(
                f"<tr><td>{esc(name)}</td><td>{_fmt(tv)}</td><td>{_fmt(cv)}</td></tr>"
                for name, tv, cv in metric_rows
            )
            body.append(
                f"<table id='cohorts'><tr><th></th><th>{esc(comparison.treatment)}</th>"
                f"<th>{esc(comparison.control)}</th></tr>{rows}</table>"
            )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>Seawall rollout report: {esc(report.environment)}</title>"
        f"<style>{STYLE}</style></head><body>{''.join(body)}</body></html>\n"
    )
