"""The provisioned Grafana dashboard (deploy/grafana/dashboards/seawall.json) charts the
rollout gates' quantities — completion, latency, tokens, rounds — beside the guard's volumes,
with labelled axes and the seed's thresholds, and every query names a metric the worker
exports with labels it carries (the live names: tests/test_prompt_metrics.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from workflows.prompt import telemetry

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "seawall.json"
HISTOGRAMS = {telemetry.PROMPT_LATENCY, telemetry.PROMPT_TOKENS, telemetry.PROMPT_ROUNDS}
EXPORTED = {
    value
    for name, value in vars(telemetry).items()
    if name.isupper() and isinstance(value, str) and value.startswith("seawall_")
}
# The labels of the finished-prompt metrics (workflows/prompt/telemetry.py prompt_finished),
# plus the operator's resource attributes and a histogram's bucket bound.
PROMPT_LABELS = {"route", "cohort", "mode", "deployment_environment", "service_version"}
METRIC = re.compile(r"\b(seawall_[a-z_]+)\b")


def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def expressions(panel: dict[str, Any]) -> list[str]:
    return [str(t["expr"]) for t in panel.get("targets", [])]


def base_metric(name: str) -> str:
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and name.removesuffix(suffix) in HISTOGRAMS:
            return name.removesuffix(suffix)
    return name


def test_every_query_names_an_exported_metric_with_its_labels() -> None:
    data = dashboard()
    assert {telemetry.PROMPTS_FINISHED, *HISTOGRAMS, telemetry.LOOP_STOPS} <= EXPORTED
    variables = {v["name"] for v in data["templating"]["list"]}
    for panel in data["panels"]:
        for expr in expressions(panel):
            assert expr.count("(") == expr.count(")"), expr
            names = METRIC.findall(expr)
            assert names, expr
            for name in names:
                metric = base_metric(name)
                assert metric in EXPORTED, (panel["title"], name)
                if metric in HISTOGRAMS and not name.endswith("_bucket"):
                    assert name != metric, f"{name}: a histogram is read as _sum/_count/_bucket"
            for used in re.findall(r"\$([a-z]+)", expr):
                assert used in variables | {"__rate_interval", "__range", "__interval"}, used
            if any(base_metric(n) in {telemetry.PROMPTS_FINISHED, *HISTOGRAMS} for n in names):
                labels = set(re.findall(r"([a-z_]+)\s*=~?\s*\"", expr))
                labels |= {
                    label.strip()
                    for group in re.findall(r"by \(([^)]*)\)", expr)
                    for label in group.split(",")
                }
                allowed = PROMPT_LABELS | {"le", "stop_reason"}
                assert labels <= allowed, (panel["title"], labels - allowed)


def panels_reading(data: dict[str, Any], pattern: str) -> list[dict[str, Any]]:
    return [p for p in data["panels"] if any(re.search(pattern, e) for e in expressions(p))]


def test_the_gates_quantities_are_charted_with_labelled_axes_and_thresholds() -> None:
    data = dashboard()
    finished = telemetry.PROMPTS_FINISHED
    completion = panels_reading(data, rf'{finished}\{{[^}}]*stop_reason="end_turn"')
    latency = panels_reading(
        data, rf"histogram_quantile\(0\.95, .*{telemetry.PROMPT_LATENCY}_bucket"
    )
    tokens = panels_reading(
        data, rf"{telemetry.PROMPT_TOKENS}_sum.*{telemetry.PROMPT_TOKENS}_count"
    )
    rounds = panels_reading(
        data, rf"{telemetry.PROMPT_ROUNDS}_sum.*{telemetry.PROMPT_ROUNDS}_count"
    )
    assert completion and latency and tokens and rounds
    for panel in data["panels"]:
        if panel["type"] != "timeseries":
            continue
        defaults = panel["fieldConfig"]["defaults"]
        assert defaults["custom"].get("axisLabel"), panel["title"]
        assert defaults.get("unit"), panel["title"]

    def thresholds(panel: dict[str, Any]) -> list[float]:
        defaults = panel["fieldConfig"]["defaults"]
        assert defaults["custom"]["thresholdsStyle"]["mode"] in {"line", "dashed", "area"}
        return [s["value"] for s in defaults["thresholds"]["steps"] if s["value"] is not None]

    # The seed's gates, treatment against control: completion not worse than 1 pp, latency,
    # tokens and rounds at most 1.10 times control.
    (completion_gate,) = [p for p in completion if "$treatment" in "".join(expressions(p))]
    assert thresholds(completion_gate) == [-1]
    assert "percentage points" in completion_gate["fieldConfig"]["defaults"]["custom"]["axisLabel"]
    (ratios,) = [p for p in latency if "$treatment" in "".join(expressions(p))]
    assert thresholds(ratios) == [1.1]
    assert ratios in tokens and ratios in rounds
    treatment = next(v for v in data["templating"]["list"] if v["name"] == "treatment")
    control = next(v for v in data["templating"]["list"] if v["name"] == "control")
    assert (treatment["current"]["value"], control["current"]["value"]) == ("enforce", "warn")


def test_panels_have_unique_ids_and_do_not_overlap() -> None:
    panels = dashboard()["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    cells: set[tuple[int, int]] = set()
    for panel in panels:
        g = panel["gridPos"]
        area = {
            (x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])
        }
        assert not area & cells, panel["title"]
        assert g["x"] + g["w"] <= 24
        cells |= area
