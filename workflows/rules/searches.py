"""Search calls: which calls look something up, and what they look up.

docs/protections.md, "Loop profiles", rule R8 (``workflows.rules.reformulations``). The
reformulation rule counts searches that are rephrased again and again while nothing uses
what they found, so it needs to know, of each call, whether it is a search and, if so, a
*search signature*: a private digest of what it asks for, equal for two pages of the same
search. This module is that classification, kept apart from the rule so the evidence
(``workflows.rules.evidence``) can carry it without importing a rule.

The classification is deliberately conservative, because a call wrongly taken for a
search is what could make the rule fire on legitimate work, while a search taken for
something else only ends a run early:

- a tool is a search by its name alone: a word of it is ``search``, ``grep``, ``glob``,
  ``find``, ``rg`` or ``ripgrep`` (``grep_search``, ``glob``, ``web_search``,
  ``mcp__github__search_code``, ``find_files``), and no word of it says it changes
  something (``find_and_replace`` is not a search);
- a shell command is a search when every part of it is one: ``grep``/``egrep``/``fgrep``,
  ``rg``, ``ag``, ``ack``, ``git grep``, ``find`` (without ``-exec``, ``-delete`` and
  friends), ``fd``, ``locate``, each optionally piped into output filters (``head``,
  ``tail``, ``wc``, ``sort``, ``uniq``, ``cut``, ``grep`` …) and preceded by ``cd``; any
  other program, a command substitution, or a redirection other than to ``/dev/null``
  makes it something else.

Paging is not reformulating: a signature leaves out the arguments that only choose a page
(``page``, ``offset``, ``cursor``, ``limit`` …) and, for a shell search, the output filters
after the first pipe, so the next page of a search, or more of its lines, is the same
search. Pure and deterministic; signatures are private like every digest here.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shlex
from typing import Any

from workflows.contracts.outcome import ToolCall
from workflows.rules.inspection import SHELL_TOOL

_SEARCH_WORDS = frozenset({"search", "grep", "glob", "find", "rg", "ripgrep"})
# Words that say a tool changes something, whatever else its name says.
_CHANGING_WORDS = frozenset(
    {"replace", "edit", "write", "delete", "remove", "update", "create", "set", "rename", "move"}
)
# Top-level arguments that only choose which part of the same search's results comes back,
# compared without case, "_" and "-".
_PAGING_KEYS = frozenset(
    {
        "page",
        "pagenumber",
        "pagesize",
        "perpage",
        "offset",
        "cursor",
        "after",
        "before",
        "start",
        "startindex",
        "skip",
        "limit",
        "maxresults",
        "numresults",
        "headlimit",
        "pagetoken",
        "nextpagetoken",
        "nexttoken",
        "continuationtoken",
    }
)
_SEARCH_PROGRAMS = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "fdfind", "locate"}
)
# Programs that only filter a search's output when it is piped into them.
_FILTER_PROGRAMS = frozenset(
    {"head", "tail", "wc", "sort", "uniq", "cut", "tr", "nl", "column", "grep", "egrep", "rg"}
)
# ``find`` predicates that act on what was found instead of listing it.
_FIND_ACTIONS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
_SEPARATORS = frozenset({"&&", "||", ";", "&"})
_HARMLESS_REDIRECT_TARGETS = frozenset({"/dev/null", "1", "2", "&1", "&2"})
_OPERATOR_CHARS = frozenset("();<>|&")
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _name_words(name: str) -> set[str]:
    tail = name.rsplit("__", 1)[-1]
    return {word.lower() for word in _WORD.findall(tail)}


@functools.lru_cache(maxsize=256)
def _searches_by_name(name: str) -> bool:
    """Whether a tool of this name searches (a word of its name says so, and none says it
    changes anything). Cached: a prompt calls few tools, each many times."""
    words = _name_words(name)
    return bool(words & _SEARCH_WORDS) and not words & _CHANGING_WORDS


def _paging_key(key: str) -> bool:
    return key.lower().replace("_", "").replace("-", "") in _PAGING_KEYS


def _digest(kind: str, value: Any) -> str:
    text = json.dumps([kind, value], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _tokens(line: str) -> list[str] | None:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return None


def _operator(token: str) -> bool:
    """Whether a token is shell punctuation (``|``, ``&&``, ``>``): quoted text never is,
    unless it is made of punctuation only, which is then taken for an operator (the
    conservative side: not a search)."""
    return bool(token) and set(token) <= _OPERATOR_CHARS


def _program(stage: list[str]) -> str:
    return stage[0].rsplit("/", 1)[-1] if stage else ""


def _search_stage(stage: list[str]) -> bool:
    program = _program(stage)
    if program == "git":
        return len(stage) > 1 and stage[1] == "grep"
    if program == "find" and any(token in _FIND_ACTIONS for token in stage):
        return False
    return program in _SEARCH_PROGRAMS


def _without_harmless_redirects(stage: list[str]) -> list[str] | None:
    """The stage without ``2>/dev/null``-style redirections; ``None`` when it redirects
    anywhere else (a search that writes a file is not only a search)."""
    out: list[str] = []
    skip = False
    for index, token in enumerate(stage):
        if skip:
            skip = False
            continue
        if _operator(token) and ("<" in token or ">" in token):
            target = stage[index + 1] if index + 1 < len(stage) else ""
            if target not in _HARMLESS_REDIRECT_TARGETS:
                return None
            if out and out[-1].isdigit():
                out.pop()  # the "2" of "2>/dev/null"
            skip = True
            continue
        out.append(token)
    return out


def _shell_signature(command: str) -> list[list[str]] | None:
    """What a shell command searches for, segment by segment (``cd`` segments included,
    output filters left out); ``None`` when any part of it is not a search."""
    if "$(" in command or "`" in command or "<(" in command:
        return None
    signature: list[list[str]] = []
    searched = False
    for line in command.splitlines():
        tokens = _tokens(line)
        if tokens is None:
            return None
        segments: list[list[str]] = [[]]
        for token in tokens:
            if token in _SEPARATORS:
                segments.append([])
            else:
                segments[-1].append(token)
        for segment in segments:
            if not segment:
                continue
            stages: list[list[str]] = [[]]
            for token in segment:
                if token == "|":
                    stages.append([])
                elif _operator(token) and not ("<" in token or ">" in token):
                    return None  # "|&", subshells: not a plain pipeline
                else:
                    stages[-1].append(token)
            cleaned = [_without_harmless_redirects(stage) for stage in stages]
            if any(stage is None or not stage for stage in cleaned):
                return None
            first, *filters = [stage for stage in cleaned if stage is not None]
            if _program(first) == "cd" and not filters:
                signature.append(first)
                continue
            if not _search_stage(first) or any(
                _program(f) not in _FILTER_PROGRAMS for f in filters
            ):
                return None
            signature.append(first)
            searched = True
    return signature if searched else None


def search_signature(call: ToolCall) -> str | None:
    """A private digest of what ``call`` searches for, equal for every page of the same
    search; ``None`` when the call is not a search."""
    arguments = call.arguments or {}
    if call.name == SHELL_TOOL:
        command = arguments.get("command")
        if not isinstance(command, str):
            return None
        shell = _shell_signature(command)
        if shell is None:
            return None
        directory = arguments.get("directory") or arguments.get("cwd")
        return _digest("shell", [directory, shell])
    if not _searches_by_name(call.name):
        return None
    asked = {key: value for key, value in arguments.items() if not _paging_key(key)}
    return _digest(call.name, asked)
