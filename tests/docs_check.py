"""The documents checked against the tree: layout tables, relative links and citations.

A document that describes the tree drifts as the tree moves, so the layout is written as
tables that a test can read (tests/test_docs_layout.py), in one recognisable form:

    <!-- layout: workflows/ -->
    | module | holds |
    |---|---|
    | `workflows/prompt/workflow.py` | `PromptWorkflow`: the loop itself |

The marker comment (invisible on a rendered page) names the part of the tree the table
covers: a directory (`workflows/`, every module under it, unless a table with a longer root
covers a subdirectory), a file (`worker.py`), or `.` (the files at the top level). Every
backticked path in a row's first cell is a listed path. Three rules follow:

- every listed path exists;
- every Python module of the tree (``CHECKED_TREES``, the top-level ``*.py`` files, and any
  other top-level package) is listed in the one table that covers it, except an
  ``__init__.py`` that holds only a docstring (a package's ``pkg/`` row also lists its
  ``__init__.py``);
- each root has one table, and a table whose first column is ``module``, ``path`` or
  ``file`` has a marker, so no second, unchecked copy of a tree can appear.

The links rule: every relative markdown link in README.md and docs/*.md points to a file or
directory that exists and, for a ``#anchor`` into a markdown file, to one of its headings;
and every page in docs/ is linked from the index, docs/README.md.

The citations rule: code and documents cite a section as ``docs/<page>.md, "<section title>"``
(or ``README, "<title>"``); every such title is a heading or a bold paragraph title
(``**Title.**``) of that page, so a section that moves or is renamed takes its citations along.

The map rule: docs/architecture.md is a map, not a copy of the code. It stays within
``MAP_MAX_LINES`` lines, and every repository path it names in backticks exists; a module it
names has a docstring, since that docstring is where the module's detail lives. Its table of
patches lists every patch id of ``tests/replay/stable_names.json``: it is a contract.

Every problem is one line that names the document (and line) to edit and what to change.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

CHECKED_TREES = ("workflows", "activities", "gateway", "seawall", "bench", "scripts")
SKIPPED_DIRS = {"tests", "docs", "deploy", "scenarios", "__pycache__", "node_modules"}
LAYOUT_HEADERS = {"module", "modules", "path", "paths", "file", "files"}

_MARKER = re.compile(r"^\s*<!--\s*layout:\s*(.*?)\s*-->\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_BACKTICKED = re.compile(r"`([^`]+)`")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


@dataclass(frozen=True)
class Entry:
    path: str
    line: int


@dataclass(frozen=True)
class LayoutTable:
    doc: str
    line: int
    roots: tuple[str, ...]
    entries: tuple[Entry, ...]

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line} (the table under `<!-- layout: {' '.join(self.roots)} -->`)"


def documents(root: Path) -> list[Path]:
    """README.md and every page in docs/: the documents the checks read."""
    found = [root / "README.md"] if (root / "README.md").is_file() else []
    return found + sorted((root / "docs").glob("*.md"))


def _outside_fences(lines: list[str]) -> Iterable[tuple[int, str]]:
    fenced = False
    for number, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def layout_tables(root: Path, docs: Iterable[Path]) -> tuple[list[LayoutTable], list[str]]:
    """Every marked table, and a problem for each layout-like table without a marker."""
    tables: list[LayoutTable] = []
    problems: list[str] = []
    for doc in docs:
        name = doc.relative_to(root).as_posix()
        lines = doc.read_text(encoding="utf-8").splitlines()
        visible = list(_outside_fences(lines))
        index = 0
        while index < len(visible):
            number, line = visible[index]
            marker = _MARKER.match(line)
            if marker:
                roots = tuple(marker.group(1).split())
                index += 1
                while index < len(visible) and not visible[index][1].strip():
                    index += 1
                if index >= len(visible) or not visible[index][1].lstrip().startswith("|"):
                    problems.append(
                        f"{name}:{number}: the `<!-- layout: ... -->` marker must stand right "
                        "above its table; move it, or remove it"
                    )
                    continue
                rows: list[tuple[int, str]] = []
                while index < len(visible) and visible[index][1].lstrip().startswith("|"):
                    rows.append(visible[index])
                    index += 1
                entries = tuple(
                    Entry(path, row_number)
                    for row_number, row in rows[2:]
                    for path in _BACKTICKED.findall(_cells(row)[0])
                )
                tables.append(LayoutTable(name, number, roots, entries))
                continue
            if line.lstrip().startswith("|"):
                if _cells(line)[0].lower() in LAYOUT_HEADERS:
                    problems.append(
                        f"{name}:{number}: a layout table without a `<!-- layout: <dir>/ -->` "
                        "marker above it; add the marker naming the part of the tree it covers "
                        "(tests/docs_check.py)"
                    )
                while index < len(visible) and visible[index][1].lstrip().startswith("|"):
                    index += 1
                continue
            index += 1
    return tables, problems


def _only_a_docstring(path: Path) -> bool:
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) for node in body)


def tree_modules(root: Path) -> list[str]:
    """Every Python module a layout table must list, as repository paths."""
    top = [path for path in root.iterdir() if not path.name.startswith(".")]
    packages = [
        path
        for path in top
        if path.is_dir()
        and path.name not in SKIPPED_DIRS
        and (path.name in CHECKED_TREES or (path / "__init__.py").is_file())
    ]
    found = [path for path in top if path.is_file() and path.suffix == ".py"]
    for package in packages:
        found += [
            path
            for path in package.rglob("*.py")
            if not {"__pycache__", *SKIPPED_DIRS} & set(path.relative_to(root).parts[:-1])
            and not any(part.startswith(".") for part in path.relative_to(root).parts)
        ]
    return sorted(
        path.relative_to(root).as_posix()
        for path in found
        if not (path.name == "__init__.py" and _only_a_docstring(path))
    )


def _covers(root: str, path: str) -> int:
    """How specifically ``root`` covers ``path``: 0 not at all, else the root's length."""
    if root == ".":
        return 1 if "/" not in path else 0
    if root.endswith("/"):
        return len(root) if path.startswith(root) else 0
    return len(root) + 1 if path == root else 0


def covering_table(tables: list[LayoutTable], path: str) -> LayoutTable | None:
    best = max(
        ((_covers(r, path), t) for t in tables for r in t.roots), key=lambda x: x[0], default=None
    )
    return best[1] if best and best[0] else None


def _lists(table: LayoutTable, module: str) -> bool:
    listed = {entry.path for entry in table.entries}
    package = module.removesuffix("__init__.py") if module.endswith("/__init__.py") else None
    return module in listed or (package is not None and package in listed)


def check_layout(root: Path, docs: Iterable[Path] | None = None) -> list[str]:
    """Every problem of the layout tables against the tree under ``root``."""
    tables, problems = layout_tables(root, documents(root) if docs is None else docs)
    owners: dict[str, LayoutTable] = {}
    for table in tables:
        for tree_root in table.roots:
            if tree_root in owners:
                problems.append(
                    f"`{tree_root}` has two layout tables, {owners[tree_root].where} and "
                    f"{table.where}; keep one and link to it from the other document"
                )
            owners.setdefault(tree_root, table)
            if tree_root != "." and not (root / tree_root).exists():
                problems.append(
                    f"{table.where}: its root `{tree_root}` does not exist; edit the marker"
                )
    modules = tree_modules(root)
    for table in tables:
        for entry in table.entries:
            target = root / entry.path
            if not target.exists() or (entry.path.endswith("/") and not target.is_dir()):
                problems.append(
                    f"{table.doc}:{entry.line}: `{entry.path}` is listed but does not exist; "
                    f"edit its row in {table.where}"
                )
            elif entry.path in modules:
                owner = covering_table(tables, entry.path)
                if owner is not None and owner is not table:
                    problems.append(
                        f"{table.doc}:{entry.line}: `{entry.path}` is listed in {table.where}, "
                        f"but the table that covers it is {owner.where}; move the row there"
                    )
    for module in modules:
        owner = covering_table(tables, module)
        if owner is None:
            folder = module.rsplit("/", 1)[0] + "/" if "/" in module else "."
            problems.append(
                f"`{module}` is in no layout table: none covers `{folder}`; add a row for it to "
                "the table of its parent package in docs/layout.md "
                f"(or a new table marked `<!-- layout: {folder} -->`)"
            )
        elif not _lists(owner, module):
            problems.append(
                f'`{module}` is not listed: add the row "| `{module}` | <what it holds> |" to '
                f"{owner.where}"
            )
    return problems


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    lines = doc.read_text(encoding="utf-8").splitlines()
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in _outside_fences(lines):
        heading = _HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        found.update(_HTML_ANCHOR.findall(line))
    return found


def _without_code(text: str) -> str:
    """The text with fenced blocks and code spans blanked, line numbers kept."""
    lines = text.splitlines()
    fenced = False
    kept: list[str] = []
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
            kept.append("")
            continue
        kept.append("" if fenced else re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line))
    return "\n".join(kept)


def check_links(root: Path, docs: Iterable[Path] | None = None) -> list[str]:
    """Every relative link of the documents that points nowhere."""
    problems: list[str] = []
    for doc in documents(root) if docs is None else docs:
        name = doc.relative_to(root).as_posix()
        text = _without_code(doc.read_text(encoding="utf-8"))
        for link in _LINK.finditer(text):
            target = link.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            line = text.count("\n", 0, link.start(1)) + 1
            path_part, _, anchor = target.partition("#")
            resolved = (doc.parent / path_part).resolve() if path_part else doc
            if not resolved.exists():
                problems.append(
                    f"{name}:{line}: the link `{target}` points to a missing file; fix it in {name}"
                )
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                problems.append(
                    f"{name}:{line}: the link `{target}` names no heading of "
                    f"{resolved.relative_to(root.resolve()).as_posix()}; fix the anchor in {name}"
                )
    return problems


def check_index(root: Path) -> list[str]:
    """Every page of docs/ that its index, docs/README.md, does not link to."""
    index = root / "docs" / "README.md"
    linked = {
        (index.parent / link.group(1).partition("#")[0]).resolve()
        for link in _LINK.finditer(_without_code(index.read_text(encoding="utf-8")))
    }
    return [
        f"docs/{page.name} is not in the index: add a row for it to docs/README.md"
        for page in sorted((root / "docs").glob("*.md"))
        if page.name != "README.md" and page.resolve() not in linked
    ]


CITING_SUFFIXES = {".py", ".md", ".yml", ".yaml", ".toml", ".sh", ".cfg", ".ini"}
CITING_NAMES = {"Makefile", "Dockerfile", "run"}
NOT_CITING = {"histories", "corpus", "results", "__pycache__", "node_modules"}
# The checker's own tests cite made-up sections on purpose.
NOT_CITING_FILES = {"tests/test_docs_layout.py"}
_CITATION = re.compile(
    r"\b(README(?:\.md)?|docs/[\w.-]+\.md)(?:,|\s\(|:)[ \t]*(?:\n[ \t]*(?:#+|//)?[ \t]*)?"
    r"((?:\"[^\"\n]+(?:\n[^\"\n]+){0,2}\"(?:,? and |, |; |,?\s+(?:#+\s*)?and\s+)?)+)"
)
_COMMENT_BREAK = re.compile(r"\s*\n\s*(?:#+|//|\*(?=\s))?\s*")


def _normal_title(title: str) -> str:
    return re.sub(r"\s+", " ", _COMMENT_BREAK.sub(" ", title).replace("`", "")).strip(" .:").lower()


def section_titles(doc: Path) -> set[str]:
    """A page's citable titles: its headings and its bold paragraph titles."""
    found: set[str] = set()
    for _, line in _outside_fences(doc.read_text(encoding="utf-8").splitlines()):
        heading = _HEADING.match(line)
        if heading:
            found.add(heading.group(2))
        found.update(re.findall(r"\*\*([^*]+?)\*\*", line))
    return {_normal_title(title) for title in found}


def citing_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if any(part.startswith(".") and part != ".ci" for part in parts) or NOT_CITING & set(parts):
            continue
        if any(part.endswith(".egg-info") for part in parts) or "/".join(parts) in NOT_CITING_FILES:
            continue
        if path.is_file() and (path.suffix in CITING_SUFFIXES or path.name in CITING_NAMES):
            found.append(path)
    return found


def check_citations(root: Path) -> list[str]:
    """Every cited section title that its page does not have."""
    titles: dict[str, set[str]] = {}
    problems: list[str] = []
    for path in citing_files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        name = path.relative_to(root).as_posix()
        for citation in _CITATION.finditer(text):
            page = "README.md" if citation.group(1).startswith("README") else citation.group(1)
            if page not in titles:
                titles[page] = section_titles(root / page) if (root / page).is_file() else set()
            for quoted in re.finditer(r'"([^"]+)"', citation.group(2)):
                title = _normal_title(quoted.group(1))
                if "<" in title or any(
                    known == title or known.startswith((title + " ", title + ":"))
                    for known in titles[page]
                ):
                    continue
                line = text.count("\n", 0, citation.start(2) + quoted.start()) + 1
                problems.append(
                    f'{name}:{line}: cites {page}, "{quoted.group(1)}", which {page} has as no '
                    "heading or bold paragraph title; point the citation at the section's "
                    "current title and page"
                )
    return problems


MAP = "docs/architecture.md"
MAP_MAX_LINES = 800
_REPO_PATH = re.compile(r"^(?:[\w.-]+/)+[\w.-]*$|^[\w.-]+\.py$")


def _has_docstring(path: Path) -> bool:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) is not None


def check_map(root: Path) -> list[str]:
    """docs/architecture.md: short, and every path it names exists (a module with a docstring)."""
    page = root / MAP
    if not page.is_file():
        return []
    lines = page.read_text(encoding="utf-8").splitlines()
    problems: list[str] = []
    if len(lines) > MAP_MAX_LINES:
        problems.append(
            f"{MAP} has {len(lines)} lines (at most {MAP_MAX_LINES}): it is the map; move the "
            "detail into the docstring of the module it describes, or the page a user reads"
        )
    for number, line in _outside_fences(lines):
        for quoted in _BACKTICKED.findall(line):
            name = quoted.split("::")[0].rstrip(":,.")
            if not _REPO_PATH.match(name) or name.startswith(("/", ".", "~")):
                continue
            top = name.split("/")[0]
            if "/" in name and not (root / top).exists():
                continue  # a path inside a workspace or the data directory, not the repository's
            target = root / name
            if not target.exists():
                problems.append(f"{MAP}:{number}: `{name}` does not exist; fix the path")
            elif target.suffix == ".py" and not _has_docstring(target):
                problems.append(
                    f"{MAP}:{number}: `{name}` has no module docstring, which the map points to; "
                    "add one saying why the module exists"
                )
    return problems


def check_patch_table(root: Path) -> list[str]:
    """Every patch id of the stable-name manifest has its row in docs/architecture.md."""
    manifest = root / "tests" / "replay" / "stable_names.json"
    page = root / MAP
    if not manifest.is_file() or not page.is_file():
        return []
    patches = json.loads(manifest.read_text(encoding="utf-8")).get("patch", [])
    rows = {
        cells[0].strip("`")
        for _, line in _outside_fences(page.read_text(encoding="utf-8").splitlines())
        if line.lstrip().startswith("|") and (cells := _cells(line))
    }
    return [
        f"{MAP}: the patch `{patch}` has no row in the table of patches; add one saying what a "
        "prompt started after it does and what older histories do"
        for patch in patches
        if patch not in rows
    ]
