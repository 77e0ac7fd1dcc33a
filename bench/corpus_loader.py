"""The labeled corpus as ``bench/loops.py`` reads it: scenario files and their ``labels.yaml``.

Why it exists: the corpus is data (``bench/corpus/``, one YAML scenario per file, and one
``labels.yaml`` beside them, both written by hand), and so is any folder of recorded
incidents a user points the benchmark at. This module is the one boundary where that data is
checked: every scenario through ``seawall.scenario.format``, every label through
:class:`Label`, so a misspelt key or a loop without its first batch is one clear error
instead of a silently different figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from seawall.scenario.format import Scenario, ScenarioError, load_scenario

DEFAULT_CORPUS = Path(__file__).resolve().parent / "corpus"
LABELS_FILE = "labels.yaml"


class LabelError(Exception):
    pass


class Label(BaseModel):
    """One scenario's entry in ``labels.yaml`` (the keys are an interface: the header of
    ``bench/corpus/labels.yaml`` says what each means)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: Literal["loop", "legit"]
    loop_starts_at_batch: int | None = Field(default=None, ge=1)
    shape: str | None = None
    note: str | None = None
    url: str | None = None
    out_of_scope: str | None = None
    known_gap: str | None = None
    seed_out_of_scope: str | None = None
    seed_known_gap: str | None = None
    family: str | None = None

    @model_validator(mode="after")
    def _a_loop_says_where_it_starts(self) -> Label:
        if self.label == "loop" and self.loop_starts_at_batch is None:
            raise ValueError("a loop needs loop_starts_at_batch >= 1")
        return self

    def reason(self, key: str) -> str | None:
        """The text under one of the verdict keys (``out_of_scope``, ``known_gap``, ...)."""
        value = getattr(self, key)
        return value if isinstance(value, str) else None


@dataclass
class Entry:
    path: Path
    scenario: Scenario
    label: Label | None

    @property
    def key(self) -> str:
        return self.path.name

    @property
    def kind(self) -> str:
        return self.label.label if self.label else "unlabeled"

    @property
    def loop_start(self) -> int:
        return (self.label.loop_starts_at_batch or 1) if self.label else 1

    @property
    def real(self) -> bool:
        """Modelled on a real public incident (its label has a ``url``)."""
        return bool(self.label and self.label.url)

    def reason(self, key: str) -> str | None:
        """The label's text under one of the verdict keys (``out_of_scope``, ...)."""
        return self.label.reason(key) if self.label else None


def load_labels(folder: Path) -> dict[str, Label]:
    """``folder/labels.yaml`` by scenario file name (empty without one)."""
    path = folder / LABELS_FILE
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as err:
        raise LabelError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(data, dict):
        raise LabelError(f"{path}: must map file names to labels")
    labels: dict[str, Label] = {}
    for name, item in data.items():
        if not isinstance(item, dict) or item.get("label") not in ("loop", "legit"):
            raise LabelError(f"{path}: {name}: label must be loop or legit")
        try:
            labels[name] = Label.model_validate(item)
        except ValidationError as err:
            first = err.errors()[0]
            where = "".join(f"{part}: " for part in first["loc"])
            message = str(first["msg"]).removeprefix("Value error, ")
            raise LabelError(f"{path}: {name}: {where}{message}") from None
        if not (folder / name).is_file():
            raise LabelError(f"{path}: {name}: no such scenario file")
    return labels


def load_corpus(sources: list[Path]) -> list[Entry]:
    """Scenarios from folders (every ``*.yaml``/``*.yml`` but the labels) or single files."""
    entries: list[Entry] = []
    for source in sources:
        if source.is_dir():
            labels = load_labels(source)
            files = sorted(
                p
                for p in source.iterdir()
                if p.suffix in (".yaml", ".yml") and p.name != LABELS_FILE
            )
        elif source.is_file():
            labels = load_labels(source.parent)
            files = [source]
        else:
            raise ScenarioError(f"{source}: no such file or folder")
        for path in files:
            entries.append(Entry(path, load_scenario(path), labels.get(path.name)))
    return entries
