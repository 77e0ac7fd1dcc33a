"""The success-only incident loops keep their class: every call succeeds, every scenario cites
its report, and time is scripted (bench/incident_success_loops.py, docs/scenarios.md "Time")."""

from __future__ import annotations

import pytest
import yaml

from bench.corpus_builders import Entry
from bench.incident_success_loops import success_loops
from bench.make_corpus import corpus_files
from seawall.scenario.format import Scenario

ENTRIES = success_loops()
FILES = corpus_files()


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_every_call_succeeds_and_takes_time(entry: Entry) -> None:
    assert entry.label == "loop"
    assert entry.url and entry.url.startswith("https://github.com/")
    assert entry.loop_starts_at_batch is not None
    assert not entry.permissions and not entry.events
    for name, spec in entry.tools.items():
        for outcome in spec["outcomes"]:
            assert outcome["status"] == "success", name
            assert outcome.get("duration_seconds", 0) > 0, name
    called = {c["name"] for turn in entry.turns for c in turn.get("tool_calls", [])}
    assert called <= set(entry.tools)
    assert all(turn.get("latency_seconds", 0) > 0 for turn in entry.turns)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_written_file_parses_as_a_scenario(entry: Entry) -> None:
    scenario = Scenario.model_validate(yaml.safe_load(FILES[entry.file_name]))
    writes = [o.writes for t in scenario.tools.values() for o in t.outcomes if o.writes]
    if entry.tools.get("write_file") or entry.tools.get("edit_file"):
        assert writes, "a built-in file tool's outcome says what it wrote"


def test_names_and_urls_are_unique_in_the_corpus() -> None:
    labels = yaml.safe_load(FILES["labels.yaml"])
    urls = [item["url"] for item in labels.values() if "url" in item]
    assert len(urls) == len(set(urls))
    assert len({e.name for e in ENTRIES}) == len(ENTRIES)
