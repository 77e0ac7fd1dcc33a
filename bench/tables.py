"""A benchmark's tables as data: the YAML file beside its module, read once at import.

Why it exists: data is data, not code. A faithful peer's tool names, thresholds and message
texts (``bench/loop_peers/*.yaml``), the capacity model's assumptions, the peer benchmark's
peers and report columns, the loop report's titles, rule codes and sensitivity thresholds,
the guard step's words live as YAML, each value with a comment saying where it comes from;
the module names them as before (sets as frozensets, sequences as tuples).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def tables(module_file: str) -> dict[str, Any]:
    """The tables of the module at ``module_file``: ``hermes.py``'s are ``hermes.yaml``."""
    path = Path(module_file).with_suffix(".yaml")
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data
