"""The rollout report's HTML page as headless Chromium (Debian's ``chromium``, installed by
``make install``/``make test``: the Makefile's ``browser-tools``) renders it: each gate row on
a scale with ticks and a labelled threshold, rates in % beside differences in pp, labelled
axes, the window's end as the right-hand time label; and a screenshot that is not blank.

The page has no script of its own; the test renders a copy with one measuring script added,
so what is asserted is the laid-out page (boxes, text), read back through ``--dump-dom``.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from seawall.rollout.render import render_html
from seawall.rollout.report import Report, build_report
from tests.seawall.rollout.test_analysis import T0, T1, cohort_split, entry, failed, record

# Reads the rendered layout and writes it into the DOM for --dump-dom.
MEASURE = """
<script>
function box(e){const r=e.getBoundingClientRect();return {x:r.left,y:r.top,w:r.width,h:r.height,
  right:r.right,text:e.textContent};}
window.addEventListener('load',()=>{
  const svg=document.getElementById('gates').getBoundingClientRect();
  const out={gates:[],svg:{left:svg.left,right:svg.right},volumes:{}};
  for(const g of document.querySelectorAll('#gates g.gate')){
    out.gates.push({key:g.dataset.gate,status:g.dataset.status,
      ticks:[...g.querySelectorAll('.tick-label')].map(box),
      threshold:[...g.querySelectorAll('.threshold-label')].map(box),
      axis:[...g.querySelectorAll('.axis-label')].map(box),
      interval:[...g.querySelectorAll('.interval')].map(box),
      labels:[...g.querySelectorAll('.gate-title,.gate-status')].map(box),
      plotLeft:Math.min(...[...g.querySelectorAll('line.axis,.tick-label,.threshold-label,.tolerance')]
        .map(e=>e.getBoundingClientRect().left))});
  }
  const v=document.getElementById('volumes');
  out.volumes={right:v.getBoundingClientRect().right,
    time:[...v.querySelectorAll('.time-label')].map(e=>({edge:e.dataset.edge,...box(e)})),
    axes:[...v.querySelectorAll('.axis-label')].map(box),
    ticks:[...v.querySelectorAll('.tick-label')].map(box)};
  out.cohorts=[...document.querySelectorAll('#cohorts tr')].map(
    r=>[...r.children].map(c=>c.textContent));
  out.gatesBottom=svg.bottom;
  out.explanations=[...document.querySelectorAll('#gate-explanations li')].map(
    e=>({gate:e.dataset.gate,...box(e)}));
  const headings=[...document.querySelectorAll('h2')];
  out.lastHeading=box(headings[headings.length-1]);
  out.next=[...document.querySelectorAll('#next-steps li')].map(box);
  out.pageBottom=document.documentElement.scrollHeight;
  const pre=document.createElement('pre');pre.id='measured';
  pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
});
</script>
"""


def chromium() -> str:
    binary = shutil.which("chromium")
    if binary is None:
        pytest.skip(
            "headless Chromium is not installed (make install installs Debian's chromium; "
            "or: sudo apt-get install -y chromium)"
        )
    return binary


def run_chromium(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",  # root in CI containers; the page is our own file
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1100,3000",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


def report() -> Report:
    # A Phase 3 window with a loop and a failing gate (tokens 1.5x).
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
    return build_report(records, environment="internal", since=T0, until=T1, resamples=200)


def measured(page: Path) -> dict[str, Any]:
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    done = run_chromium("--virtual-time-budget=5000", "--dump-dom", probe.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="measured">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2000:]
    text = found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
    result: dict[str, Any] = json.loads(text.replace("&amp;", "&"))
    return result


def png_pixels(path: Path) -> tuple[int, int, list[tuple[int, int, int]]]:
    """Width, height and RGB pixels of an 8-bit RGB or RGBA PNG (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), (depth, colour)
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append(line)
        previous = line
    pixels = [
        (row[x * channels], row[x * channels + 1], row[x * channels + 2])
        for row in rows[:: max(height // 400, 1)]
        for x in range(0, width, 2)
    ]
    return width, height, pixels


def test_the_page_renders_gate_scales_labelled_axes_and_the_windows_end(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(report()))
    layout = measured(page)

    svg_left, svg_right = layout["svg"]["left"], layout["svg"]["right"]
    assert {g["key"] for g in layout["gates"]} >= {"completion_rate", "mean_tokens", "saved_calls"}
    for gate in layout["gates"]:
        ticks = gate["ticks"]
        assert len(ticks) >= 3, gate["key"]
        assert all(t["w"] > 0 and svg_left <= t["x"] and t["right"] <= svg_right + 1 for t in ticks)
        # Ticks are laid out left to right without overlapping.
        for a, b in itertools.pairwise(ticks):
            assert a["right"] <= b["x"] + 0.5, (gate["key"], a["text"], b["text"])
        (threshold,) = gate["threshold"]
        assert threshold["w"] > 0 and threshold["right"] <= svg_right + 1
        assert re.search(r"threshold [≤≥] |match ", threshold["text"]), threshold["text"]
        assert gate["axis"] and gate["axis"][0]["w"] > 0
        unit = {"completion_rate": "pp", "mean_tokens": "x", "saved_calls": ""}.get(gate["key"])
        if unit:
            assert all(t["text"].endswith(unit) for t in ticks), gate
    by_key = {g["key"]: g for g in layout["gates"]}
    assert "≥ -1.00 pp" in by_key["completion_rate"]["threshold"][0]["text"]
    assert "≤ 1.100x" in by_key["mean_tokens"]["threshold"][0]["text"]
    assert by_key["mean_tokens"]["status"] == "fail" and by_key["mean_tokens"]["interval"]

    volumes = layout["volumes"]
    assert {a["text"] for a in volumes["axes"]} >= {"decisions per bucket"}
    assert any(a["text"].startswith("prompt start time (UTC)") for a in volumes["axes"])
    assert len(volumes["ticks"]) >= 2
    edges = {t["edge"]: t for t in volumes["time"]}
    assert edges["start"]["text"] == T0.isoformat()[:16].replace("T", " ")
    assert edges["end"]["text"] == T1.isoformat()[:16].replace("T", " ")
    assert edges["end"]["right"] <= volumes["right"] + 1 and edges["start"]["x"] < edges["end"]["x"]

    # Each gate's sentence is laid out under the plot, and the page ends with the next steps.
    explained = {e["gate"]: e for e in layout["explanations"]}
    assert set(explained) == {g["key"] for g in layout["gates"]}
    assert all(
        e["w"] > 0 and e["h"] > 0 and e["y"] >= layout["gatesBottom"] for e in explained.values()
    )
    assert "the whole interval is beyond it" in explained["mean_tokens"]["text"]
    assert layout["lastHeading"]["text"] == "What to do next"
    assert layout["lastHeading"]["y"] > max(e["y"] for e in explained.values())
    steps = layout["next"]
    assert steps and all(s["w"] > 0 and s["h"] > 0 for s in steps)
    assert steps[0]["text"].startswith("Roll back the enforce cohort: mean_tokens fails")
    assert steps[-1]["y"] + steps[-1]["h"] <= layout["pageBottom"]

    # Rates in %, their differences in pp: the gates' unit.
    rows = {row[0]: row[1:] for row in layout["cohorts"]}
    completion = rows["completion rate"]
    assert completion[0].endswith(" %") and completion[1].endswith(" %")
    assert completion[2].endswith(" pp")


@pytest.mark.parametrize("data", ["with data", "without a control"])
def test_each_gates_title_and_status_stay_clear_of_its_scale(tmp_path: Path, data: str) -> None:
    """A gate's name and its status (a gate without data says why, at length) are laid out
    whole, left of the gate's scale, one line under the other."""
    built = report()
    if data == "without a control":
        only = [r for r in cohort_split(150, 0.8) if r.cohort == "enforce"]
        built = build_report(only, environment="internal", since=T0, until=T1, resamples=50)
        assert all(g.status == "no data" for g in built.comparison.gates)
    page = tmp_path / "report.html"
    page.write_text(render_html(built))
    for gate in measured(page)["gates"]:
        labels = gate["labels"]
        assert labels, gate["key"]
        for label in labels:
            assert label["w"] > 0 and label["right"] <= gate["plotLeft"] - 4, (gate["key"], label)
        for upper, lower in itertools.pairwise(labels):
            assert upper["y"] + upper["h"] <= lower["y"] + 0.5, (gate["key"], upper, lower)
        shown = " ".join(label["text"] for label in labels)
        (built_gate,) = [g for g in built.comparison.gates if g.key == gate["key"]]
        assert shown.startswith(built_gate.title + " "), shown
        if data == "without a control":
            # Said whole: the reason it has no data, not a cut-off piece of it.
            assert shown.endswith(f"no data: {built_gate.note}"), shown


def test_a_screenshot_of_the_page_is_not_blank(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(report()))
    shot = tmp_path / "report.png"
    done = run_chromium(f"--screenshot={shot}", page.as_uri())
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    width, height, pixels = png_pixels(shot)
    assert (width, height) == (1100, 3000)
    ink = [p for p in pixels if p != (255, 255, 255)]
    assert len(ink) > len(pixels) // 100
    # The verdict badge (hold: orange) and the failing gate (red) are painted.
    assert any(r > 200 and 80 < g < 130 and b < 40 for r, g, b in ink)  # #ef6c00
    assert any(r > 170 and g < 60 and b < 60 for r, g, b in ink)  # #c62828
