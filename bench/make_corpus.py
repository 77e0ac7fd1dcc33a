"""Writes the labeled loop corpus ``bench/corpus/`` (scenario files and ``labels.yaml``).

The YAML files are the corpus; this script is how they are made, kept so a shape can be
changed in one place and the files regenerated (``python bench/make_corpus.py``).
``tests/bench/test_corpus.py`` checks that the files on disk are what it writes.

The generated scenarios come from three modules, each a list of small builders: the
synthetic loops (``bench/synthetic_loops.py``) and legitimate work (``bench/synthetic_legit.py``),
and the scenarios modelled on real public incidents (``bench/make_incidents.py``, each with its
``url`` in ``labels.yaml``). All three build from ``bench/corpus_builders.py``; this module
only renders and writes them.

Scenarios written by hand are data, not code: their YAML files sit in ``bench/corpus/`` beside
the generated ones, and their labels in ``bench/corpus_labels/*.yaml`` (one file per family of
loop, the same keys as ``labels.yaml``). This script keeps those files and merges their labels
into ``labels.yaml``, so the corpus stays one folder that ``bench/loops.py`` reads.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from bench.corpus_builders import LOOP_MAX_MODEL_REQUESTS, Entry, Json
from bench.make_incidents import incidents
from bench.synthetic_legit import legit
from bench.synthetic_loops import loops

CORPUS = Path(__file__).resolve().parent / "corpus"
HANDWRITTEN_LABELS = Path(__file__).resolve().parent / "corpus_labels"


# --- writing ------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as double-quoted scalars, so each item stays on one line."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _flow(value: Any) -> str:
    text = yaml.dump(value, Dumper=_Dumper, default_flow_style=True, width=10_000, sort_keys=False)
    text = text.strip()
    # A lone scalar is dumped as a document with an explicit end marker.
    return text.removesuffix("...").strip()


def _block(key: str, items: Iterable[Any], indent: str = "  ") -> list[str]:
    lines = [f"{indent}{key}:"]
    lines.extend(f"{indent}  - {_flow(item)}" for item in items)
    return lines


def render(entry: Entry) -> str:
    lines = [f"# {line}" for line in _wrap(entry.description)]
    lines.append(f"name: {entry.name}")
    lines.append("mode: enforce")
    if entry.max_model_requests is not None:
        lines.append(f"max_model_requests: {entry.max_model_requests}")
    elif entry.label == "loop":
        lines.append(f"max_model_requests: {LOOP_MAX_MODEL_REQUESTS}")
    if entry.workspace:
        lines.append(f"workspace: {_flow(entry.workspace)}")
    if entry.permissions:
        lines.append(f"permissions: {_flow(entry.permissions)}")
    lines.append("tools:")
    for name, spec in entry.tools.items():
        lines.append(f"  {name}:")
        for key in ("tool_type", "mutating"):
            if key in spec:
                lines.append(f"    {key}: {_flow(spec[key])}")
        lines.extend(_block("outcomes", spec["outcomes"], indent="    "))
    lines.append("model:")
    lines.extend(_block("turns", entry.turns))
    if entry.after_reminder is not None:
        lines.extend(_block("after_reminder", entry.after_reminder))
    if entry.events:
        lines.extend(_block("events", entry.events, indent=""))
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int = 88) -> list[str]:
    out: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        out.append(line)
    return out


def handwritten_labels() -> dict[str, Json]:
    """The labels of the hand-written scenarios, by file name (``bench/corpus_labels/``)."""
    merged: dict[str, Json] = {}
    for path in sorted(HANDWRITTEN_LABELS.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise SystemExit(f"{path}: must map scenario file names to labels")
        for name, label in data.items():
            if name in merged:
                raise SystemExit(f"{path}: {name} is labeled twice")
            merged[name] = label
    return merged


def labels(entries: list[Entry], handwritten: dict[str, Json] | None = None) -> str:
    header = (
        "# Labels for the benchmark corpus: file name -> label (loop | legit), where a loop\n"
        "# starts (the first batch that is part of it), the shape, and why Seawall's\n"
        "# recommended loop profile is not expected to stop it (out_of_scope) or why it halts a\n"
        "# legit one (known_gap), the same for the seed profile (seed_out_of_scope,\n"
        "# seed_known_gap), and for scenarios modelled on a real public incident, its url.\n"
        "# Written by bench/make_corpus.py (hand-written labels: bench/corpus_labels/).\n"
    )
    data: dict[str, Json] = {}
    for entry in entries:
        item: Json = {"label": entry.label}
        if entry.loop_starts_at_batch is not None:
            item["loop_starts_at_batch"] = entry.loop_starts_at_batch
        item["shape"] = entry.shape
        if entry.out_of_scope:
            item["out_of_scope"] = entry.out_of_scope
        if entry.known_gap:
            item["known_gap"] = entry.known_gap
        if entry.seed_out_of_scope:
            item["seed_out_of_scope"] = entry.seed_out_of_scope
        if entry.seed_known_gap:
            item["seed_known_gap"] = entry.seed_known_gap
        item["note"] = entry.note or entry.description
        if entry.url:
            item["url"] = entry.url
        data[entry.file_name] = item
    for name, label in (handwritten or {}).items():
        if name in data:
            raise SystemExit(f"bench/corpus_labels: {name} is also a generated scenario")
        data[name] = label
    return header + yaml.safe_dump(data, sort_keys=True, width=100, allow_unicode=True)


def corpus_files() -> dict[str, str]:
    """Every file of the corpus, by name, as this script writes it (the hand-written
    scenarios as they are on disk)."""
    entries = [*loops(), *legit(), *incidents()]
    files = {entry.file_name: render(entry) for entry in entries}
    handwritten = handwritten_labels()
    for name in handwritten:
        path = CORPUS / name
        if not path.is_file():
            raise SystemExit(f"bench/corpus_labels: {name}: no such scenario in {CORPUS}")
        files[name] = path.read_text(encoding="utf-8")
    files["labels.yaml"] = labels(entries, handwritten)
    return files


def main() -> int:
    CORPUS.mkdir(parents=True, exist_ok=True)
    files = corpus_files()
    for stale in CORPUS.glob("*.yaml"):
        if stale.name not in files:
            stale.unlink()
    for name, text in files.items():
        (CORPUS / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files) - 1} scenarios and labels.yaml to {CORPUS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
