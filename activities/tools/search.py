"""Search tools: ``glob`` for file names and ``grep_search`` for file contents.

Both walk the workspace in worker-thread chunks and heartbeat between chunks, so a large tree
neither blocks the event loop nor lets the activity's heartbeat timeout fire. Every match is
re-checked against the workspace root after resolving symlinks, because a pattern or a link
inside the tree could otherwise lead the walk outside it; grep walks and opens from
descriptors without following symlinks (beneath.py), so a tree changed during the search
cannot lead it outside either. glob returns names only and reads no content.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import stat
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import ClassVar, TypeVar

from pydantic import BaseModel, Field

from workflows.contracts import ToolErrorType

from .base import BuiltinTool, ToolArgs, ToolContext, ToolFailure, expect_args
from .beneath import open_directory, open_file, parent_of, read_all
from .files import MAX_READ_BYTES
from .workspace import display_path, has_other_links, is_within, resolve_in_workspace

MAX_GLOB_RESULTS = 1000
MAX_GREP_MATCHES = 500
MAX_GREP_LINE_CHARS = 500
GREP_FILES_PER_HEARTBEAT = 200
WALK_CHUNK = 1000
# Version-control internals are large, binary-ish and never what the model is looking for.
SKIPPED_DIR_NAMES = frozenset({".git"})

T = TypeVar("T")


def _take(it: Iterator[T], n: int) -> list[T]:
    return list(islice(it, n))


async def _drain(it: Iterator[T], heartbeat: Callable[[], None]) -> list[T]:
    """Consume ``it`` in a worker thread, a chunk at a time, heartbeating between chunks."""
    out: list[T] = []
    while True:
        part = await asyncio.to_thread(_take, it, WALK_CHUNK)
        out.extend(part)
        if len(part) < WALK_CHUNK:
            return out
        heartbeat()


def _search_base(root: Path, path: str) -> tuple[Path, str]:
    base = resolve_in_workspace(root, path)
    shown = display_path(root, base)
    if not base.exists():
        raise ToolFailure(
            ToolErrorType.SEARCH_PATH_NOT_FOUND,
            f"search path {shown!r} does not exist; use list_directory to find the right one.",
        )
    return base, shown


def _shown_match(root: Path, match: Path) -> str | None:
    """Workspace-relative name of a match, or ``None`` when it resolves outside the root."""
    try:
        resolved = match.resolve(strict=False)
    except (OSError, RuntimeError):
        return None
    if not is_within(root, resolved):
        return None
    # Prefer the name as the tree spells it; fall back to the target when ``..`` or a link
    # makes the spelling leave the root.
    lexical = Path(os.path.normpath(match))
    shown = display_path(root, lexical if is_within(root, lexical) else resolved)
    return shown + "/" if resolved.is_dir() else shown


def _glob_matches(root: Path, base: Path, pattern: str) -> Iterator[str]:
    for match in base.glob(pattern):
        shown = _shown_match(root, match)
        if shown is not None:
            yield shown


class GlobArgs(ToolArgs):
    pattern: str = Field(description="Glob pattern, e.g. '**/*.py' or 'src/*.ts'.")
    path: str = Field(default=".", description="Directory to search, relative to the root.")


class GlobTool(BuiltinTool):
    name: ClassVar[str] = "glob"
    description: ClassVar[str] = (
        "Find files and directories matching a glob pattern ('**' recurses), returned sorted "
        "and relative to the workspace root."
    )
    args_model: ClassVar[type[BaseModel]] = GlobArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        a = expect_args(args, GlobArgs)
        root = ctx.workspace_root
        base, shown = _search_base(root, a.path)
        if not base.is_dir():
            raise ToolFailure(
                ToolErrorType.GLOB_EXECUTION_ERROR,
                f"search path {shown!r} is not a directory; give a directory as path.",
            )
        if not a.pattern or Path(a.pattern).is_absolute():
            raise ToolFailure(
                ToolErrorType.GLOB_EXECUTION_ERROR,
                "the pattern must be non-empty and relative; choose the directory with path.",
            )
        try:
            found = await _drain(_glob_matches(root, base, a.pattern), ctx.heartbeat)
        except (OSError, ValueError, NotImplementedError) as exc:
            detail = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise ToolFailure(
                ToolErrorType.GLOB_EXECUTION_ERROR,
                f"glob {a.pattern!r} failed in {shown!r}: {detail}.",
            ) from None
        results = sorted(set(found))
        if not results:
            return f"No files match {a.pattern!r} in {shown!r}."
        out = "\n".join(results[:MAX_GLOB_RESULTS])
        if len(results) > MAX_GLOB_RESULTS:
            out += (
                f"\n[{len(results) - MAX_GLOB_RESULTS} more matches not shown; use a narrower "
                "pattern or path.]"
            )
        return out


_BRACES = re.compile(r"\{([^{}]*)\}")


def expand_braces(pattern: str) -> list[str]:
    """``*.{ts,tsx}`` → ``['*.ts', '*.tsx']``; models write include globs this way."""
    m = _BRACES.search(pattern)
    if m is None:
        return [pattern]
    out: list[str] = []
    for alt in m.group(1).split(","):
        out.extend(expand_braces(pattern[: m.start()] + alt + pattern[m.end() :]))
    return out


def _grep_candidates(root: Path, base: Path, includes: list[str] | None) -> Iterator[str]:
    """Workspace-relative names of the files under ``base`` that the include globs admit."""

    def admitted(rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        return includes is None or any(
            fnmatch.fnmatchcase(name, g) or fnmatch.fnmatchcase(rel, g) for g in includes
        )

    if not base.is_dir():
        rel = display_path(root, base)
        if admitted(rel):
            yield rel
        return
    # fwalk from a descriptor of the base (opened without following a symlink) descends
    # into no symlinked directory, even one swapped in during the walk; symlinked files
    # are checked below, and every file is opened safely again when it is read.
    base_fd = open_directory(root, base, display_path(root, base))
    try:
        yield from _walk_names(root, base, base_fd, admitted)
    finally:
        os.close(base_fd)


def _walk_names(
    root: Path, base: Path, base_fd: int, admitted: Callable[[str], bool]
) -> Iterator[str]:
    for dirpath, dirnames, filenames, _ in os.fwalk(".", dir_fd=base_fd):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIR_NAMES)
        for name in sorted(filenames):
            path = Path(os.path.normpath(base / dirpath / name))
            if path.is_symlink():
                shown = _shown_match(root, path)
                if shown is None or shown.endswith("/"):
                    continue
            rel = display_path(root, path)
            if admitted(rel):
                yield rel


def _grep_file(root: Path, rel: str, regex: re.Pattern[str], budget: int) -> tuple[list[str], bool]:
    """Matches in one file (at most ``budget``), and whether the file was unreadable."""
    try:
        # Re-checked at read time: the tree may have changed since the walk listed it.
        resolved = (root / rel).resolve(strict=False)
        if resolved == root or not is_within(root, resolved):
            return [], False
        # Opened from the root without following a symlink, judged on the descriptor.
        with parent_of(root, resolved, rel) as dir_fd:
            fd = open_file(dir_fd, resolved.name, os.O_RDONLY, rel)
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or has_other_links(st):
                    return [], False
                if st.st_size > MAX_READ_BYTES:
                    return [], True
                data = read_all(fd, MAX_READ_BYTES)
            finally:
                os.close(fd)
    except ToolFailure:
        # The path changed under the search (beneath.py): not read.
        return [], False
    except (OSError, RuntimeError):
        return [], True
    if len(data) > MAX_READ_BYTES:
        return [], True
    if b"\x00" in data[:8192]:
        return [], False
    hits: list[str] = []
    for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if regex.search(line):
            hits.append(f"{rel}:{lineno}:{line[:MAX_GREP_LINE_CHARS]}")
            if len(hits) >= budget:
                break
    return hits, False


def _grep_batch(
    root: Path, rels: list[str], regex: re.Pattern[str], budget: int
) -> tuple[list[str], int]:
    hits: list[str] = []
    skipped = 0
    for rel in rels:
        found, unreadable = _grep_file(root, rel, regex, budget - len(hits))
        hits.extend(found)
        skipped += unreadable
        if len(hits) >= budget:
            break
    return hits, skipped


class GrepSearchArgs(ToolArgs):
    pattern: str = Field(description="Python regular expression searched for in each line.")
    path: str = Field(default=".", description="File or directory to search, relative.")
    include: str | None = Field(
        default=None, description="Only files whose name or path match this glob, e.g. '*.py'."
    )


class GrepSearchTool(BuiltinTool):
    name: ClassVar[str] = "grep_search"
    description: ClassVar[str] = (
        "Search text files in the workspace for a Python regular expression, returning "
        "'path:line:text' lines sorted by path and line number."
    )
    args_model: ClassVar[type[BaseModel]] = GrepSearchArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        a = expect_args(args, GrepSearchArgs)
        root = ctx.workspace_root
        try:
            regex = re.compile(a.pattern)
        except re.error as exc:
            raise ToolFailure(
                ToolErrorType.GREP_EXECUTION_ERROR,
                f"invalid regular expression {a.pattern!r}: {exc}; fix or escape it "
                "(e.g. re.escape special characters).",
            ) from None
        base, shown = _search_base(root, a.path)
        includes = expand_braces(a.include) if a.include else None
        try:
            rels = await _drain(_grep_candidates(root, base, includes), ctx.heartbeat)
        except OSError as exc:
            raise ToolFailure(
                ToolErrorType.GREP_EXECUTION_ERROR,
                f"cannot search {shown!r}: {exc.strerror or type(exc).__name__}.",
            ) from None
        rels.sort()
        # One more than the cap, so we know whether anything was left out.
        budget = MAX_GREP_MATCHES + 1
        hits: list[str] = []
        skipped = 0
        for i in range(0, len(rels), GREP_FILES_PER_HEARTBEAT):
            ctx.heartbeat()
            batch = rels[i : i + GREP_FILES_PER_HEARTBEAT]
            found, unreadable = await asyncio.to_thread(
                _grep_batch, root, batch, regex, budget - len(hits)
            )
            hits.extend(found)
            skipped += unreadable
            if len(hits) >= budget:
                break
        notes: list[str] = []
        if len(hits) > MAX_GREP_MATCHES:
            hits = hits[:MAX_GREP_MATCHES]
            notes.append(
                f"[Stopped after {MAX_GREP_MATCHES} matches; narrow the pattern, path or include.]"
            )
        if skipped:
            notes.append(f"[{skipped} file(s) skipped: unreadable or over {MAX_READ_BYTES} bytes.]")
        if not hits:
            return "\n".join([f"No matches for {a.pattern!r} in {shown!r}.", *notes])
        return "\n".join([*hits, *notes])
