"""Which calls are searches, and what they search for (``workflows/rules/searches.py``; R8 in
docs/protections.md, "Loop profiles"): conservative, and blind to paging."""

from __future__ import annotations

from typing import Any

import pytest

from workflows.contracts import ToolCall
from workflows.rules.searches import search_signature


def signature(name: str, **arguments: Any) -> str | None:
    return search_signature(ToolCall(call_id="c", name=name, arguments=arguments))


def shell(command: str, **more: Any) -> str | None:
    return signature("run_shell_command", command=command, **more)


@pytest.mark.parametrize(
    "name",
    [
        "grep_search",
        "glob",
        "web_search",
        "search_issues",
        "mcp__github__search_code",
        "mcp__brave__brave_web_search",
        "mcp__files__findFiles",
        "mcp__code__ripgrep",
    ],
)
def test_tools_named_for_searching_are_searches(name: str) -> None:
    assert signature(name, query="x") is not None


@pytest.mark.parametrize(
    "name",
    [
        "read_file",
        "list_directory",
        "edit_file",
        "write_file",
        "find_and_replace",
        "mcp__db__query",
        "mcp__search__update_index",
        "job_status",
        "mcp__github__get_file_contents",
    ],
)
def test_other_tools_are_not(name: str) -> None:
    assert signature(name, query="x") is None


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn 'display_plot' src/",
        "rg -n 'a|b' . 2>/dev/null | head -20",
        "cd src && git grep -n TODO",
        "find . -name '*.py' -newer setup.cfg | sort | head",
        "fd config; locate settings.yaml",
        "grep -c x f 2>&1 | sort -n | uniq",
    ],
)
def test_shell_commands_made_only_of_searches_are_searches(command: str) -> None:
    assert shell(command) is not None


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cd src",
        "grep -rn x . > hits.txt",
        "find . -name '*.pyc' -delete",
        "find . -name '*.py' -exec sed -i s/a/b/ {} +",
        "grep -l x $(cat files.txt)",
        "grep x f | xargs rm",
        "grep x f; pytest -q",
        "pytest -q -k grep",
        "cat f | grep x",
        "grep 'unterminated",
        "(grep x f)",
    ],
)
def test_anything_else_in_a_shell_command_makes_it_something_else(command: str) -> None:
    assert shell(command) is None


def test_a_page_of_a_search_is_the_same_search_and_a_new_query_is_not() -> None:
    first = signature("search_issues", query="label:bug", page=1, per_page=50)
    assert first == signature("search_issues", query="label:bug", page=7, per_page=50)
    assert first == signature("search_issues", query="label:bug", pageToken="abc", limit=10)
    assert first != signature("search_issues", query="label:crash", page=1)
    assert first != signature("search_code", query="label:bug", page=1)
    assert shell("rg TODO src | head -n 50") == shell("rg TODO src | tail -n +51 | head -n 50")
    assert shell("rg TODO src") != shell("rg FIXME src")
    assert shell("rg TODO", directory="a") != shell("rg TODO", directory="b")


def test_a_signature_is_a_private_digest() -> None:
    value = signature("grep_search", pattern="SecretSymbolName")
    assert value is not None and len(value) == 32 and "Secret" not in value
