"""Planning a file call the editor runs: the worker's checks before a path leaves it.

docs/acp.md, "Editor-side tools". A ``read_file`` or ``write_file`` routed to an ACP editor
(workflows/contracts/editor_calls.py) is still confined on the worker: its arguments are
parsed by the tool's own model, its path resolved (symlinks followed) and required inside
the workspace (:func:`~activities.tools.workspace.resolve_in_workspace`, the rule every file
tool applies), and what the worker's own tools refuse to touch is refused here too (a
directory, a device or FIFO, a file with other hard links). Only the resolved absolute path
is sent, so the editor never follows a link the model planted; a write's missing parent
directories are created here, without following a symlink, as ``write_file`` creates them.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pydantic import BaseModel

from workflows.contracts import ToolErrorType
from workflows.contracts.editor_calls import (
    EDITOR_FS_TOOLS,
    EditorCallPlan,
    EditorOperation,
)

from .base import ToolFailure
from .beneath import parent_of
from .files import ReadFileArgs, WriteFileArgs, map_read_error
from .workspace import display_path, has_other_links, resolve_in_workspace


def plan_editor_call(tool_name: str, args: BaseModel, root: Path) -> EditorCallPlan:
    """The request for the editor, from a call's parsed ``args``, inside the checked
    workspace ``root``; raises :class:`ToolFailure` for a call it must not make."""
    operation = EDITOR_FS_TOOLS.get(tool_name)
    if operation is None or not isinstance(args, ReadFileArgs | WriteFileArgs):
        raise ToolFailure(
            ToolErrorType.TOOL_NOT_REGISTERED, f"{tool_name!r} does not run in the editor."
        )
    target = resolve_in_workspace(root, args.path)
    shown = display_path(root, target)
    _check_target(target, shown)
    if isinstance(args, WriteFileArgs):
        if target != root:
            with parent_of(root, target, shown, create=True):
                pass
        return EditorCallPlan(
            operation=EditorOperation.WRITE, path=str(target), shown=shown, content=args.content
        )
    return EditorCallPlan(
        operation=EditorOperation.READ,
        path=str(target),
        shown=shown,
        offset=args.offset,
        limit=args.limit,
    )


def _check_target(target: Path, shown: str) -> None:
    """Refuse what the worker's file tools never read or write through."""
    try:
        st = os.lstat(target)
    except (FileNotFoundError, NotADirectoryError):
        return  # a new file (a read of it: the editor may hold an unsaved buffer)
    except OSError as exc:
        raise map_read_error(exc, shown) from None
    if stat.S_ISDIR(st.st_mode):
        raise ToolFailure(
            ToolErrorType.TARGET_IS_DIRECTORY, f"{shown!r} is a directory; give a file path."
        )
    if not stat.S_ISREG(st.st_mode):
        raise ToolFailure(ToolErrorType.READ_CONTENT_FAILURE, f"{shown!r} is not a regular file.")
    if has_other_links(st):
        raise ToolFailure(
            ToolErrorType.PATH_NOT_IN_WORKSPACE,
            f"file {shown!r} has other hard links, so its content may be a file outside the "
            "workspace; it is not used. Copy what you need into a file of your own.",
        )
