"""The documents stay true to the tree: layout tables, relative links, a short README.

The rules and the table format are in tests/docs_check.py; the tables live in
docs/layout.md. docs/architecture.md stays a map: short, naming only paths that exist and
modules whose docstrings hold the detail. The second half runs the checker on small
synthetic trees, so a checker that stopped finding anything would fail here too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs_check import (
    anchors,
    check_citations,
    check_index,
    check_layout,
    check_links,
    check_map,
    check_patch_table,
    slug,
    tree_modules,
)

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 300


def test_every_layout_table_matches_the_tree() -> None:
    problems = check_layout(ROOT)

    assert not problems, "the layout tables disagree with the tree:\n" + "\n".join(problems)


def test_every_relative_link_of_the_documents_resolves() -> None:
    problems = check_links(ROOT)

    assert not problems, "broken links:\n" + "\n".join(problems)


def test_every_cited_section_exists() -> None:
    problems = check_citations(ROOT)

    assert not problems, "citations of sections that are gone:\n" + "\n".join(problems)


def test_the_architecture_page_stays_a_map() -> None:
    problems = check_map(ROOT)

    assert not problems, "docs/architecture.md:\n" + "\n".join(problems)


def test_the_versioning_table_lists_every_patch() -> None:
    assert check_patch_table(ROOT) == []


def test_every_page_of_docs_is_in_its_index() -> None:
    assert check_index(ROOT) == []


def test_the_readme_stays_a_front_page() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()

    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move the detail to a "
        "page in docs/ and link to it"
    )


def test_the_readme_keeps_the_commands_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")

    assert "make test" in ci.splitlines()[-1]
    assert "make test " in readme and "make run " in readme


# --- the checker itself, on synthetic trees ---------------------------------------------


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


TABLE = """# Architecture

## Where things live

<!-- layout: workflows/ -->
| module | holds |
|---|---|
| `workflows/a.py` | a |
| `workflows/b.py` | b |

<!-- layout: worker.py -->
| module | holds |
|---|---|
| `worker.py` | the root |
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write(
        tmp_path,
        {
            "README.md": "# Project\n\nSee [the map](docs/layout.md#where-things-live).\n",
            "docs/layout.md": TABLE,
            "worker.py": "x = 1\n",
            "workflows/__init__.py": '"""Only a docstring."""\n',
            "workflows/a.py": "A = 1\n",
            "workflows/b.py": "B = 1\n",
            "tests/test_x.py": "",
            "bench/corpus/data.yaml": "",
        },
    )
    return tmp_path


def test_a_tree_that_matches_its_tables_has_no_problems(tree: Path) -> None:
    assert check_layout(tree) == []
    assert check_links(tree) == []
    assert tree_modules(tree) == ["worker.py", "workflows/a.py", "workflows/b.py"]


def test_a_new_module_without_a_row_is_named_with_the_table_to_edit(tree: Path) -> None:
    write(tree, {"workflows/c.py": "C = 1\n", "workflows/rules/d.py": "D = 1\n"})

    problems = check_layout(tree)

    assert len(problems) == 2
    assert "`workflows/c.py` is not listed" in problems[0]
    assert "docs/layout.md:5" in problems[0]
    assert "`workflows/rules/d.py` is not listed" in problems[1]


def test_a_listed_path_that_is_gone_is_named_with_its_row(tree: Path) -> None:
    (tree / "workflows" / "b.py").unlink()

    problems = check_layout(tree)

    assert problems == [
        "docs/layout.md:9: `workflows/b.py` is listed but does not exist; edit its row in "
        "docs/layout.md:5 (the table under `<!-- layout: workflows/ -->`)"
    ]


def test_an_init_with_code_needs_its_row_and_a_package_row_counts(tree: Path) -> None:
    write(tree, {"workflows/__init__.py": "from .a import A\n"})

    assert ["`workflows/__init__.py` is not listed" in p for p in check_layout(tree)] == [True]

    text = TABLE.replace(
        "| `workflows/a.py` |", "| `workflows/` | the package |\n| `workflows/a.py` |"
    )
    write(tree, {"docs/layout.md": text})
    assert check_layout(tree) == []


def test_a_module_no_table_covers_says_where_to_add_one(tree: Path) -> None:
    write(tree, {"seawall/__init__.py": "", "seawall/runtime/x.py": "X = 1\n", "tool.py": ""})

    problems = check_layout(tree)

    assert any(
        "`seawall/runtime/x.py` is in no layout table: none covers `seawall/runtime/`" in p
        for p in problems
    )
    assert any("`tool.py` is in no layout table: none covers `.`" in p for p in problems)
    assert len(problems) == 2


def test_a_second_table_of_the_same_tree_and_an_unmarked_one_are_refused(tree: Path) -> None:
    write(
        tree,
        {
            "README.md": "# P\n\n<!-- layout: workflows/ -->\n| module | holds |\n|---|---|\n"
            "| `workflows/a.py` | a |\n\n| module | holds |\n|---|---|\n| `workflows/b.py` | b |\n"
        },
    )

    problems = check_layout(tree)

    assert any(
        "README.md:8: a layout table without a `<!-- layout: <dir>/ -->` marker" in p
        for p in problems
    )
    assert any("`workflows/` has two layout tables" in p for p in problems)
    # The README's table comes first, so the layout page's rows are the misplaced copy.
    assert any("`workflows/b.py` is listed in docs/layout.md:5" in p for p in problems)


def test_a_row_in_the_wrong_table_is_moved(tree: Path) -> None:
    write(tree, {"docs/layout.md": TABLE + "| `workflows/a.py` | again |\n"})

    problems = check_layout(tree)

    assert problems == [
        "docs/layout.md:15: `workflows/a.py` is listed in docs/layout.md:11 (the "
        "table under `<!-- layout: worker.py -->`), but the table that covers it is "
        "docs/layout.md:5 (the table under `<!-- layout: workflows/ -->`); move the row there"
    ]


def test_links_to_missing_files_and_headings_are_named(tree: Path) -> None:
    write(
        tree,
        {
            "docs/guide.md": "# Guide\n\n## `seawall config` — settings\n\n"
            "[ok](#seawall-config--settings) [ok](../README.md) [ok](../bench/corpus/)\n"
            "[gone](old.md) [no heading](layout.md#layers)\n"
            "[web](https://example.com) `[code](not-a-link.md)`\n\n```\n[fenced](nope.md)\n```\n"
        },
    )

    assert check_links(tree) == [
        "docs/guide.md:6: the link `old.md` points to a missing file; fix it in docs/guide.md",
        "docs/guide.md:6: the link `layout.md#layers` names no heading of "
        "docs/layout.md; fix the anchor in docs/guide.md",
    ]


def test_a_page_missing_from_the_index_is_named(tree: Path) -> None:
    write(tree, {"docs/README.md": "| [layout.md](layout.md#layers) | the design |\n"})
    assert check_index(tree) == []

    write(tree, {"docs/guide.md": "# Guide\n"})
    assert check_index(tree) == [
        "docs/guide.md is not in the index: add a row for it to docs/README.md"
    ]


def test_a_citation_of_a_moved_section_is_named(tree: Path) -> None:
    write(
        tree,
        {
            "docs/guide.md": "# Guide\n\n## Long prompts and stored payloads\n\n**Owners.** text\n",
            "workflows/a.py": '"""See docs/guide.md, "Long prompts and\nstored payloads".\n\n'
            'And docs/guide.md, "Owners" and "Cohorts"."""\n'
            '# docs/layout.md, "Where things\n# live"; README, "Layout"\n'
            '# docs/guide.md, "<section title>"\n',
        },
    )

    assert check_citations(tree) == [
        'workflows/a.py:4: cites docs/guide.md, "Cohorts", which docs/guide.md has as no heading '
        "or bold paragraph title; point the citation at the section's current title and page",
        'workflows/a.py:6: cites README.md, "Layout", which README.md has as no heading or bold '
        "paragraph title; point the citation at the section's current title and page",
    ]


def test_anchors_follow_github_slugs(tmp_path: Path) -> None:
    write(
        tmp_path, {"a.md": "# Top\n\n## R2 — failure cycles (`repeated_failure_cycle`)\n\n## Top\n"}
    )

    assert slug("What `make run` does NOT protect") == "what-make-run-does-not-protect"
    assert anchors(tmp_path / "a.md") == {
        "top",
        "r2--failure-cycles-repeated_failure_cycle",
        "top-1",
    }


def test_the_map_names_only_paths_that_exist_and_modules_with_docstrings(tree: Path) -> None:
    write(
        tree,
        {
            "docs/architecture.md": "# Map\n\n`workflows/a.py` decides; `workflows/b.py` "
            "too; `workflows/gone.py` and `workflows/` and `.data/payloads/` and `x/y`.\n"
            "```\n`workflows/fenced.py`\n```\n",
            "workflows/a.py": '"""Why a exists."""\nA = 1\n',
        },
    )

    assert check_map(tree) == [
        "docs/architecture.md:3: `workflows/b.py` has no module docstring, which the map points "
        "to; add one saying why the module exists",
        "docs/architecture.md:3: `workflows/gone.py` does not exist; fix the path",
    ]

    write(tree, {"docs/architecture.md": "line\n" * 801})
    assert check_map(tree) == [
        "docs/architecture.md has 801 lines (at most 800): it is the map; move the detail into "
        "the docstring of the module it describes, or the page a user reads"
    ]


def test_a_patch_without_its_row_is_named(tree: Path) -> None:
    write(
        tree,
        {
            "tests/replay/stable_names.json": '{"patch": ["seawall-a-v1", "seawall-b-v1"]}',
            "docs/architecture.md": "# Map\n\n| patch id | does |\n|---|---|\n"
            "| `seawall-a-v1` | a |\n",
        },
    )

    assert check_patch_table(tree) == [
        "docs/architecture.md: the patch `seawall-b-v1` has no row in the table of patches; add "
        "one saying what a prompt started after it does and what older histories do"
    ]
