"""File tools: read, write, exact-string edit and directory listing inside the workspace.

Each failure maps to the most specific :class:`ToolErrorType` so the repeated-failure guard
can tell, say, "file missing" from "no space left". Messages name paths relative to the
workspace and carry only ``strerror`` text, never an ``OSError``'s absolute file names.
Blocking I/O runs in a worker thread so the event loop (and activity heartbeats) keep going.
Every file and directory is opened from the workspace root without following a symlink and
judged on the open descriptor (beneath.py), so a workspace changed by a command running
beside the tool cannot redirect it after its path was checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from workflows.contracts import ToolErrorType
from workflows.contracts.editor_calls import DEFAULT_READ_LINES, read_window, wrote_message

from .base import BuiltinTool, ToolArgs, ToolContext, ToolFailure, expect_args
from .beneath import (
    FILE_FLAGS,
    changed,
    open_directory,
    open_file,
    parent_of,
    read_all,
    write_all,
)
from .workspace import display_path, has_other_links, is_within, resolve_in_workspace

MAX_READ_BYTES = 10 * 1024 * 1024
MAX_LIST_ENTRIES = 1000


def map_write_error(exc: OSError, shown: str) -> ToolFailure:
    """Classify an ``OSError`` raised while writing ``shown``."""
    reason = exc.strerror or type(exc).__name__
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return ToolFailure(
            ToolErrorType.NO_SPACE_LEFT,
            f"cannot write {shown!r}: no space left on the device ({reason}); free space or "
            "write less data.",
        )
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return ToolFailure(
            ToolErrorType.PERMISSION_DENIED,
            f"cannot write {shown!r}: permission denied ({reason}); choose a writable path.",
        )
    if exc.errno == errno.EISDIR:
        return ToolFailure(
            ToolErrorType.TARGET_IS_DIRECTORY,
            f"cannot write {shown!r}: it is a directory; give a file path.",
        )
    return ToolFailure(ToolErrorType.FILE_WRITE_FAILURE, f"cannot write {shown!r}: {reason}.")


def map_read_error(exc: OSError, shown: str) -> ToolFailure:
    """Classify an ``OSError`` raised while reading ``shown``."""
    reason = exc.strerror or type(exc).__name__
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ToolFailure(
            ToolErrorType.PERMISSION_DENIED,
            f"cannot read {shown!r}: permission denied ({reason}).",
        )
    if exc.errno == errno.ENOENT:
        return ToolFailure(ToolErrorType.FILE_NOT_FOUND, f"file {shown!r} does not exist.")
    if exc.errno == errno.EISDIR:
        return ToolFailure(
            ToolErrorType.TARGET_IS_DIRECTORY,
            f"{shown!r} is a directory; use list_directory to see its contents.",
        )
    return ToolFailure(ToolErrorType.READ_CONTENT_FAILURE, f"cannot read {shown!r}: {reason}.")


def _lstat_in(dir_fd: int, name: str, shown: str) -> os.stat_result | None:
    """``lstat`` of ``name`` in ``dir_fd``, ``None`` when it does not exist. The checked
    path has no symlinks, so one found here appeared after the check."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise map_read_error(exc, shown) from None
    if stat.S_ISLNK(st.st_mode):
        raise changed(shown)
    return st


def _stat(root: Path, target: Path, shown: str) -> os.stat_result | None:
    """``lstat`` of the checked ``target``, reached from ``root`` without following any
    symlink (activities/tools/beneath.py); ``None`` when it does not exist."""
    try:
        if target == root:
            return os.stat(root)
        with parent_of(root, target, shown) as dir_fd:
            return _lstat_in(dir_fd, target.name, shown)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise map_read_error(exc, shown) from None


def _check_readable(st: os.stat_result, shown: str) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise ToolFailure(
            ToolErrorType.TARGET_IS_DIRECTORY,
            f"{shown!r} is a directory; use list_directory to see its contents.",
        )
    if not stat.S_ISREG(st.st_mode):
        # Reading a FIFO or device could block forever or never end.
        raise ToolFailure(ToolErrorType.READ_CONTENT_FAILURE, f"{shown!r} is not a regular file.")
    if has_other_links(st):
        raise ToolFailure(
            ToolErrorType.PATH_NOT_IN_WORKSPACE,
            f"file {shown!r} has other hard links, so its content may be a file outside the "
            "workspace; it is not read. Copy what you need into a file of your own.",
        )
    if st.st_size > MAX_READ_BYTES:
        raise _too_large(shown, st.st_size)


def _too_large(shown: str, size: int) -> ToolFailure:
    return ToolFailure(
        ToolErrorType.FILE_TOO_LARGE,
        f"file {shown!r} is {size} bytes, over the {MAX_READ_BYTES}-byte limit; "
        "use grep_search to find the relevant part or run_shell_command with head/tail.",
    )


def _read_bytes(root: Path, target: Path, shown: str) -> bytes:
    """The content of the regular file ``target``, judged on the open descriptor."""
    missing = ToolFailure(
        ToolErrorType.FILE_NOT_FOUND,
        f"file {shown!r} does not exist; check the path with list_directory or glob.",
    )
    if target == root:
        _check_readable(os.stat(root), shown)
    try:
        with parent_of(root, target, shown) as dir_fd:
            st = _lstat_in(dir_fd, target.name, shown)
            if st is None:
                raise missing
            # Judged before opening too: opening a device may itself do something.
            _check_readable(st, shown)
            fd = open_file(dir_fd, target.name, os.O_RDONLY, shown)
            try:
                _check_readable(os.fstat(fd), shown)
                data = read_all(fd, MAX_READ_BYTES)
            finally:
                os.close(fd)
    except (FileNotFoundError, NotADirectoryError):
        raise missing from None
    except OSError as exc:
        raise map_read_error(exc, shown) from None
    if len(data) > MAX_READ_BYTES:
        raise _too_large(shown, len(data))
    return data


def _read_text(root: Path, target: Path, shown: str) -> str:
    """Read a regular UTF-8 text file within the size limit."""
    data = _read_bytes(root, target, shown)
    if b"\x00" in data[:8192]:
        raise ToolFailure(
            ToolErrorType.READ_CONTENT_FAILURE,
            f"file {shown!r} looks binary; this tool only reads UTF-8 text.",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolFailure(
            ToolErrorType.READ_CONTENT_FAILURE,
            f"file {shown!r} is not valid UTF-8 (byte offset {exc.start}); this tool only "
            "reads UTF-8 text.",
        ) from None


def _check_writable(st: os.stat_result, shown: str) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise ToolFailure(
            ToolErrorType.TARGET_IS_DIRECTORY,
            f"cannot write {shown!r}: it is a directory; give a file path.",
        )
    if not stat.S_ISREG(st.st_mode):
        # Writing into a FIFO with no reader would block forever.
        raise ToolFailure(
            ToolErrorType.FILE_WRITE_FAILURE,
            f"cannot write {shown!r}: it is not a regular file.",
        )


def _write_bytes(root: Path, target: Path, shown: str, data: bytes) -> None:
    """Write ``data`` to a regular (or new) file, creating parent directories, every
    directory and the file reached without following a symlink (beneath.py).

    A file with other hard links is replaced, not written through: its other names (which
    may be outside the workspace) keep their content. That is judged on the open file, so
    a name swapped for a hard link after the check is not written through either."""
    if target == root:
        _check_writable(os.stat(root), shown)
    try:
        with parent_of(root, target, shown, create=True) as dir_fd:
            name = target.name
            st = _lstat_in(dir_fd, name, shown)
            if st is not None:
                _check_writable(st, shown)
            if st is not None and has_other_links(st):
                _replace(dir_fd, name, data, stat.S_IMODE(st.st_mode))
                return
            fd = open_file(dir_fd, name, os.O_WRONLY | os.O_CREAT, shown)
            try:
                opened = os.fstat(fd)
                _check_writable(opened, shown)
                if has_other_links(opened):
                    os.close(fd)
                    fd = -1
                    _replace(dir_fd, name, data, stat.S_IMODE(opened.st_mode))
                    return
                os.ftruncate(fd, 0)
                write_all(fd, data)
            finally:
                if fd >= 0:
                    os.close(fd)
    except (FileExistsError, NotADirectoryError):
        raise ToolFailure(
            ToolErrorType.FILE_WRITE_FAILURE,
            f"cannot write {shown!r}: a parent of it exists and is not a directory.",
        ) from None
    except OSError as exc:
        raise map_write_error(exc, shown) from None


def _replace(dir_fd: int, name: str, data: bytes, mode: int) -> None:
    """Give ``name`` in ``dir_fd`` new content under a new inode (a temporary file renamed
    over it)."""
    temporary = f".{name}.{secrets.token_hex(6)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | FILE_FLAGS, 0o600, dir_fd=dir_fd)
    try:
        try:
            write_all(fd, data)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.replace(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=dir_fd)
        raise


class ReadFileArgs(ToolArgs):
    path: str = Field(description="File path, relative to the workspace root.")
    offset: int | None = Field(
        default=None, ge=0, description="0-based line number to start reading from."
    )
    limit: int | None = Field(default=None, ge=1, description="Maximum number of lines.")


class ReadFileTool(BuiltinTool):
    name: ClassVar[str] = "read_file"
    description: ClassVar[str] = (
        "Read a UTF-8 text file in the workspace, optionally a window of lines "
        f"(offset/limit; at most {DEFAULT_READ_LINES} lines when no limit is given)."
    )
    args_model: ClassVar[type[BaseModel]] = ReadFileArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        a = expect_args(args, ReadFileArgs)
        target = resolve_in_workspace(ctx.workspace_root, a.path)
        shown = display_path(ctx.workspace_root, target)
        text = await asyncio.to_thread(_read_text, ctx.workspace_root, target, shown)
        return read_window(text, shown, a.offset, a.limit)


class WriteFileArgs(ToolArgs):
    path: str = Field(description="File path, relative to the workspace root.")
    content: str = Field(description="The complete new content of the file.")


class WriteFileTool(BuiltinTool):
    name: ClassVar[str] = "write_file"
    description: ClassVar[str] = (
        "Write the given content to a file in the workspace, replacing it if it exists and "
        "creating missing parent directories."
    )
    args_model: ClassVar[type[BaseModel]] = WriteFileArgs
    mutating: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        a = expect_args(args, WriteFileArgs)
        target = resolve_in_workspace(ctx.workspace_root, a.path)
        shown = display_path(ctx.workspace_root, target)
        data = a.content.encode("utf-8")
        await asyncio.to_thread(_write_bytes, ctx.workspace_root, target, shown, data)
        ctx.record_write(shown, data)
        return wrote_message(shown, data)


class EditFileArgs(ToolArgs):
    path: str = Field(description="File path, relative to the workspace root.")
    old_string: str = Field(
        description="Exact text to replace; empty means create a new file with new_string."
    )
    new_string: str = Field(description="Replacement text.")
    expected_replacements: int = Field(
        default=1, ge=1, description="How many occurrences of old_string must be replaced."
    )


def _edit(root: Path, target: Path, shown: str, a: EditFileArgs) -> tuple[str, bytes]:
    """Apply the edit; the message for the model and the file's new content."""
    st = _stat(root, target, shown)
    if st is None:
        if a.old_string == "":
            data = a.new_string.encode("utf-8")
            _write_bytes(root, target, shown, data)
            return f"Created new file {shown!r}.", data
        raise ToolFailure(
            ToolErrorType.FILE_NOT_FOUND,
            f"file {shown!r} does not exist; to create it pass an empty old_string, or use "
            "write_file.",
        )
    if stat.S_ISDIR(st.st_mode):
        raise ToolFailure(
            ToolErrorType.TARGET_IS_DIRECTORY, f"{shown!r} is a directory; give a file path."
        )
    if a.old_string == "":
        raise ToolFailure(
            ToolErrorType.ATTEMPT_TO_CREATE_EXISTING_FILE,
            f"file {shown!r} already exists, so an empty old_string (create) is not allowed; "
            "give the exact text to replace, or use write_file to overwrite it.",
        )
    text = _read_text(root, target, shown)
    found = text.count(a.old_string)
    if found == 0:
        raise ToolFailure(
            ToolErrorType.EDIT_NO_OCCURRENCE_FOUND,
            f"old_string was not found in {shown!r}; read the file again and copy the exact "
            "text, including whitespace and indentation.",
        )
    if found != a.expected_replacements:
        raise ToolFailure(
            ToolErrorType.EDIT_EXPECTED_OCCURRENCE_MISMATCH,
            f"expected {a.expected_replacements} occurrence(s) of old_string in {shown!r} but "
            f"found {found}; include more surrounding context to make it unique, or set "
            f"expected_replacements={found}.",
        )
    if a.old_string == a.new_string:
        raise ToolFailure(
            ToolErrorType.EDIT_NO_CHANGE,
            f"old_string and new_string are identical, so {shown!r} would not change.",
        )
    data = text.replace(a.old_string, a.new_string).encode("utf-8")
    _write_bytes(root, target, shown, data)
    return f"Replaced {found} occurrence(s) in {shown!r}.", data


class EditFileTool(BuiltinTool):
    name: ClassVar[str] = "edit_file"
    description: ClassVar[str] = (
        "Replace exact occurrences of old_string with new_string in a workspace file "
        "(an empty old_string creates a new file)."
    )
    args_model: ClassVar[type[BaseModel]] = EditFileArgs
    mutating: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        a = expect_args(args, EditFileArgs)
        target = resolve_in_workspace(ctx.workspace_root, a.path)
        shown = display_path(ctx.workspace_root, target)
        message, data = await asyncio.to_thread(_edit, ctx.workspace_root, target, shown, a)
        ctx.record_write(shown, data)
        return message


class ListDirectoryArgs(ToolArgs):
    path: str = Field(default=".", description="Directory, relative to the workspace root.")


def _list(root: Path, target: Path, shown: str) -> str:
    st = _stat(root, target, shown)
    if st is None:
        raise ToolFailure(
            ToolErrorType.FILE_NOT_FOUND,
            f"directory {shown!r} does not exist; list its parent to see what is there.",
        )
    if not stat.S_ISDIR(st.st_mode):
        raise ToolFailure(
            ToolErrorType.LS_EXECUTION_ERROR,
            f"{shown!r} is not a directory; use read_file for files.",
        )
    try:
        fd = open_directory(root, target, shown)
        try:
            with os.scandir(fd) as it:
                entries = list(it)
        finally:
            os.close(fd)
    except PermissionError:
        raise ToolFailure(
            ToolErrorType.PERMISSION_DENIED, f"cannot list {shown!r}: permission denied."
        ) from None
    except OSError as exc:
        raise ToolFailure(
            ToolErrorType.LS_EXECUTION_ERROR,
            f"cannot list {shown!r}: {exc.strerror or type(exc).__name__}.",
        ) from None
    names: list[str] = []
    for entry in entries:
        if entry.is_symlink():
            # Only say what a link is when it stays inside; outside targets are not described.
            resolved = (target / entry.name).resolve(strict=False)
            if not is_within(root, resolved):
                names.append(f"{entry.name} (symlink outside the workspace)")
                continue
            names.append(entry.name + "/" if resolved.is_dir() else entry.name)
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        names.append(entry.name + "/" if is_dir else entry.name)
    if not names:
        return f"(directory {shown!r} is empty)"
    names.sort()
    out = "\n".join(names[:MAX_LIST_ENTRIES])
    if len(names) > MAX_LIST_ENTRIES:
        out += (
            f"\n[{len(names) - MAX_LIST_ENTRIES} more entries not shown; use glob with a "
            "narrower pattern.]"
        )
    return out


class ListDirectoryTool(BuiltinTool):
    name: ClassVar[str] = "list_directory"
    description: ClassVar[str] = (
        "List the entries of a workspace directory, sorted, with a trailing '/' on directories."
    )
    args_model: ClassVar[type[BaseModel]] = ListDirectoryArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        a = expect_args(args, ListDirectoryArgs)
        root = ctx.workspace_root
        target = resolve_in_workspace(root, a.path)
        return await asyncio.to_thread(_list, root, target, display_path(root, target))
