"""Confinement of every tool path to the workspace root.

All file-touching tools go through :func:`resolve_in_workspace`, so there is one place that
decides what "inside the workspace" means: the fully resolved path (symlinks followed, ``..``
collapsed) must be the root or below it. Tools then operate on the resolved path, so a
symlink cannot redirect them after the check. A hard link passes every path check, so the
file tools also ask :func:`has_other_links` before reading or writing a file's content.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from workflows.contracts import ToolErrorType

from .base import ToolFailure


def has_other_links(st: os.stat_result) -> bool:
    """A regular file with more than one name: a hard link whose other names may be
    outside the workspace, which no path check can see. File tools never read it or write
    through it (they replace it instead)."""
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1


def is_within(root: Path, candidate: Path) -> bool:
    """True when the already-resolved ``candidate`` is ``root`` or below it."""
    return candidate == root or candidate.is_relative_to(root)


def resolve_in_workspace(root: Path, path: str) -> Path:
    """Resolve ``path`` (relative to ``root`` or absolute) and require it inside ``root``."""
    if "\x00" in path:
        raise ToolFailure(
            ToolErrorType.INVALID_TOOL_PARAMS, f"path {path!r} contains a NUL byte; remove it."
        )
    given = Path(path)
    candidate = given if given.is_absolute() else root / given
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError):
        # Python 3.11 reports symlink loops as RuntimeError; its text names absolute paths,
        # so it is not passed on.
        raise ToolFailure(
            ToolErrorType.FILE_NOT_FOUND,
            f"path {path!r} could not be resolved (symlink loop?); use a different path.",
        ) from None
    if not is_within(root, resolved):
        # The resolved target is deliberately not shown: it may reveal the host layout.
        raise ToolFailure(
            ToolErrorType.PATH_NOT_IN_WORKSPACE,
            f"path {path!r} is outside the workspace; use a path relative to the workspace "
            "root that stays inside it (symlinks pointing outside are not followed).",
        )
    return resolved


def display_path(root: Path, resolved: Path) -> str:
    """The workspace-relative form of a resolved path, for messages to the model."""
    if resolved == root:
        return "."
    return resolved.relative_to(root).as_posix()
