"""``bench/`` and ``scripts/`` are installed packages whose programs run from anywhere.

``pyproject.toml`` installs ``bench`` and ``scripts`` beside ``seawall`` (``make install``,
editable), so ``python bench/loops.py`` imports ``bench.*``, ``scripts.*`` and the rest of
Seawall without editing ``sys.path``. Three checks, each on the source (AST), plus a run:
no module edits ``sys.path`` (not even in code it hands to a child process), none imports
``tests`` (not installed), and the imports among bench and scripts modules form no cycle
(a lazy import inside a function counts: it only hides one). Then two entry points run
from an unrelated directory.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bench", "scripts")
# The fixture recorder replays the test suite's own scenarios (a silent MCP server from
# tests/activities/mcp_helpers.py), so it runs from a checkout (``python -m
# scripts.record_histories``) and may import ``tests``; it edits no sys.path either.
MAY_IMPORT_TESTS = {"scripts/record_histories.py"}


def sources() -> dict[str, Path]:
    """Every module of bench/ and scripts/, by dotted name."""
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = sources()
CHECKED = MODULES


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def path_edits(tree: ast.Module) -> list[int]:
    """Lines that touch ``sys.path`` (or call ``site.addsitedir``), also in a string of code
    for a child process (``python -c``), in order."""
    lines: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            on_sys = isinstance(node.value, ast.Name) and node.value.id == "sys"
            if (node.attr == "path" and on_sys) or node.attr == "addsitedir":
                lines.append(node.lineno)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for needle in ("sys.path.insert", "sys.path.append", "sys.path[", "sys.path ="):
                if needle in node.value:
                    lines.append(node.lineno)
    return sorted(set(lines))


def imported(name: str, tree: ast.Module) -> set[str]:
    """Every module ``name``'s source imports, anywhere in it, by absolute dotted name."""
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            # ``from bench import loops`` imports the module bench.loops.
            out.update(f"{base}.{alias.name}" for alias in node.names)
    return out


def test_no_module_edits_sys_path() -> None:
    found = {n: lines for n, p in CHECKED.items() if (lines := path_edits(parse(p)))}
    assert found == {}, f"sys.path edits (module: lines): {found}"


def test_the_checker_sees_a_path_edit() -> None:
    edit = ast.parse('import sys\nsys.path.insert(0, ".")\nCHILD = "sys.path.append(1)"\n')
    assert path_edits(edit) == [2, 3]


def test_no_module_imports_tests() -> None:
    found = {
        n: sorted(m for m in imported(n, parse(p)) if m == "tests" or m.startswith("tests."))
        for n, p in CHECKED.items()
        if str(p.relative_to(ROOT)) not in MAY_IMPORT_TESTS
    }
    assert {n: ms for n, ms in found.items() if ms} == {}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected part of ``graph`` with more than one
    module (or a module importing itself)."""
    found: list[list[str]] = []
    done: set[str] = set()

    def walk(node: str, trail: list[str]) -> None:
        if node in trail:
            found.append([*trail[trail.index(node) :], node])
            return
        if node in done:
            return
        for nxt in sorted(graph[node]):
            walk(nxt, [*trail, node])
        done.add(node)

    for node in sorted(graph):
        walk(node, [])
    return found


def test_no_import_cycles_among_bench_and_scripts_modules() -> None:
    graph = {n: imported(n, parse(p)) & set(MODULES) - {n} for n, p in MODULES.items()}
    assert cycles(graph) == []


def test_the_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("program", ["bench/loops.py", "scripts/chaos.py"])
def test_an_entry_point_runs_from_another_directory(tmp_path: Path, program: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(ROOT / program), "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
