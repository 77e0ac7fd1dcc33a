"""The rollout package's shape (issue 38): every module at most 900 lines with a docstring
that says what it is for, and the modules' imports of one another form no cycle (an import
inside a function counts: it only hides one)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_layers import ROOT, imports_in

PACKAGE = ROOT / "seawall" / "rollout"
MAX_LINES = 900


def modules() -> dict[str, Path]:
    return {
        f"seawall.rollout.{path.stem}": path
        for path in sorted(PACKAGE.glob("*.py"))
        if path.stem != "__init__"
    }


def test_every_module_is_short_and_says_why_it_exists() -> None:
    found = modules()
    assert {
        "seawall.rollout.gates",
        "seawall.rollout.cohorts",
        "seawall.rollout.invariants",
    } <= set(found)
    for name, path in found.items():
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= MAX_LINES, name
        docstring = ast.get_docstring(ast.parse(text))
        assert docstring and len(docstring.split()) >= 15, name


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` (module -> modules it imports), or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_modules_import_one_another_without_a_cycle() -> None:
    found = modules()
    graph = {
        name: {imp.module for imp in imports_in(path) if imp.module in found}
        for name, path in found.items()
    }
    assert cycle(graph) == []
    # The checker finds one when there is one.
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
