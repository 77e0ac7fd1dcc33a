"""Scenarios modelled on real public incidents with coding agents and agent frameworks.

The scenarios live in ``bench/incident_loops.py`` and ``bench/incident_legit.py``, one
function per report; this module gathers them (:func:`incidents`) with what each loop
profile does with them. Each scenario re-enacts one report from a public issue tracker (its
``url`` goes into ``labels.yaml``): the tool calls the agent made, in the shape the report
shows, with tool names mapped onto Seawall's (a shell is ``run_shell_command``, an edit
``edit_file``, an MCP tool ``mcp__<server>__<tool>``) and error text taken from or modelled
on the report. Where the report's output varied from call to call (a shrinking error list,
a changing timestamp, a job's progress), the fixture outcomes vary the same way, so a guard
that looks at results could tell progress from repetition. Where a report leaves a detail
open (how many rounds, what ran in between), the choice is the plain reading of the report,
written in the scenario's note; nothing is tuned to make any policy look good.

Labels follow the report, never Seawall: ``loop`` when the report (or its maintainers) calls
the session stuck, ``legit`` when the repetition was the work. ``known_gap`` and
``out_of_scope`` record what the recommended loop profile misses or halts, and why;
``seed_known_gap`` and ``seed_out_of_scope`` the same for the seed profile (the seeds' rules
verbatim), each text starting with "seed:" (docs/protections.md, "Loop profiles").

``bench/make_corpus.py`` calls :func:`incidents` and writes these files with the rest of the
corpus; ``tests/bench/test_corpus.py`` checks the files equal what it writes. What each loop
profile misses or halts among these scenarios is data, not code:
``bench/incident_verdicts.yaml``.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from bench.corpus_builders import Entry
from bench.incident_legit import real_legit
from bench.incident_loops import real_loops
from bench.incident_more import more_incidents
from bench.incident_success_loops import success_loops
from bench.incident_waiting_legit import waiting_legit

# --- what each loop profile does with them ------------------------------------------------

VERDICTS_FILE = Path(__file__).resolve().parent / "incident_verdicts.yaml"
VERDICT_KEYS = {
    "seed": ("seed_out_of_scope", "seed_known_gap"),
    "recommended": ("out_of_scope", "known_gap"),
}


def verdict_notes() -> dict[str, dict[str, str]]:
    """Each scenario's notes from ``incident_verdicts.yaml``, both profiles' merged, by name."""
    data = yaml.safe_load(VERDICTS_FILE.read_text(encoding="utf-8"))
    notes: dict[str, dict[str, str]] = {}
    for profile, keys in VERDICT_KEYS.items():
        for name, item in data[profile].items():
            unknown = set(item) - set(keys)
            if unknown:
                raise ValueError(f"{VERDICTS_FILE.name}: {profile}.{name}: unknown {unknown}")
            notes.setdefault(name, {}).update(item)
    return notes


def incidents() -> list[Entry]:
    """Every real-incident scenario, with both profiles' verdict notes applied."""
    entries = [*real_loops(), *real_legit()]
    entries += waiting_legit()
    entries += success_loops()
    entries += more_incidents()
    notes = verdict_notes()
    unknown = set(notes) - {entry.name for entry in entries}
    if unknown:
        raise ValueError(f"{VERDICTS_FILE.name} names no such scenario: {sorted(unknown)}")
    for entry in entries:
        note = notes.get(entry.name, {})
        entry.seed_out_of_scope = note.get("seed_out_of_scope")
        entry.seed_known_gap = note.get("seed_known_gap")
        entry.out_of_scope = note.get("out_of_scope")
        entry.known_gap = note.get("known_gap")
    return entries
