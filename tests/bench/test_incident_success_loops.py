"""The success-only incident loops keep their class: every call succeeds, every scenario cites
its report, and time is scripted (docs/benchmarks.md, "The corpus"; docs/scenarios.md "Time").

A guard that counts failures never sees these loops (issue 25's "loops made of successful
calls"); an edit that slipped a failure into one would quietly change what they measure.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from bench.corpus_loader import DEFAULT_CORPUS, load_labels
from seawall.scenario.format import load_scenario

SUCCESS_LOOPS = (
    "real-loop-opencode-same-grep",
    "real-loop-codex-plan-status-cycle",
    "real-loop-qwen-read-first-lines",
    "real-loop-hermes-skill-reread-windows",
    "real-loop-trusty-final-confirm-runs",
    "real-loop-prflow-zero-change-reruns",
    "real-loop-copilot-tests-without-stopping",
    "real-loop-hermes-web-search-spiral",
    "real-loop-gaia-same-search-twelve",
    "real-loop-shaft-subagent-reinvoked",
    "real-loop-opencode-orchestrator-restarts",
    "real-loop-ailice-researcher-redispatched",
    "real-loop-cline-write-replace-cycle",
    "real-loop-copilot-reformat-same-file",
    "real-loop-orchestkit-formatter-reverts",
    "real-loop-claudette-identical-edit",
    "real-loop-localharness-identical-csv",
    "real-loop-openclaw-refinement-rewrites",
    "real-loop-reasonix-bash-write-repeat",
    "real-loop-codex-git-status-fifty",
    "real-loop-conductor-status-while-asking",
    "real-loop-gemini-readfile-again",
    "real-loop-manus-reread-generated-file",
    "real-loop-gemini-waiting-for-instruction",
    "real-loop-claude-wasted-call-reread",
    "real-loop-omh-blocked-notice-ignored",
)
LABELS = load_labels(DEFAULT_CORPUS)


def _raw(name: str) -> dict[str, Any]:
    data = yaml.safe_load((DEFAULT_CORPUS / f"{name}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("name", SUCCESS_LOOPS)
def test_every_call_succeeds_and_takes_time(name: str) -> None:
    label = LABELS[f"{name}.yaml"]
    assert label.label == "loop" and label.loop_starts_at_batch is not None
    assert label.url and label.url.startswith("https://github.com/")
    raw = _raw(name)
    assert not raw.get("permissions") and not raw.get("events")
    for tool, spec in raw["tools"].items():
        for outcome in spec["outcomes"]:
            assert outcome["status"] == "success", tool
            assert outcome.get("duration_seconds", 0) > 0, tool
    scenario = load_scenario(DEFAULT_CORPUS / f"{name}.yaml")
    called = {c.name for turn in scenario.model.turns for c in turn.tool_calls}
    assert called <= set(scenario.tools)
    assert all(turn.latency_seconds > 0 for turn in scenario.model.turns)
    if {"write_file", "edit_file"} & set(scenario.tools):
        writes = [o.writes for t in scenario.tools.values() for o in t.outcomes if o.writes]
        assert writes, "a built-in file tool's outcome says what it wrote"


def test_names_and_urls_are_unique_in_the_corpus() -> None:
    urls = [label.url for label in LABELS.values() if label.url]
    assert len(urls) == len(set(urls))
    assert len(set(SUCCESS_LOOPS)) == len(SUCCESS_LOOPS)
