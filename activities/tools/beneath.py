"""Opening a checked workspace path without a race against a changing workspace.

:func:`~activities.tools.workspace.resolve_in_workspace` checks a path once, symlinks
resolved. A command running beside the file tool (another call of the same batch) can then
swap a directory of that path for a symlink to somewhere outside before the tool opens it,
and a path-based open would follow it. So the tools never open the checked path by name:
:func:`open_directory` walks the *resolved* path from the workspace root one component at
a time, each opened with ``O_NOFOLLOW`` relative to the directory opened before it
(``dir_fd``), and the file itself is opened the same way and judged by ``fstat`` on the
open descriptor. The resolved path has no symlinks, so a symlink met on the walk means the
workspace changed after the check: the call is refused (docs/security.md, "The file tools").

What a descriptor was opened on cannot change under it; what remains is a name that is
swapped after the open, which then names another file the tool no longer uses.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from workflows.contracts import ToolErrorType

from .base import ToolFailure

# Directories are opened for walking only; O_PATH would do, but scandir needs a readable fd.
DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# A FIFO opened without O_NONBLOCK would block the open until a writer appears.
FILE_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def changed(shown: str) -> ToolFailure:
    return ToolFailure(
        ToolErrorType.PATH_NOT_IN_WORKSPACE,
        f"path {shown!r} changed while it was being used (a directory or file of it became a "
        "symlink); it is not followed. Try again once nothing else changes it.",
    )


def is_symlink_at(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def components(root: Path, resolved: Path) -> list[str]:
    """The names from ``root`` down to ``resolved`` (already checked to be inside it)."""
    return [] if resolved == root else list(resolved.relative_to(root).parts)


def _open_root(root: Path, shown: str) -> int:
    try:
        return os.open(root, DIRECTORY_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise changed(shown) from None
        raise


def _step(dir_fd: int, name: str, shown: str, create: bool) -> int:
    """Open the directory ``name`` in ``dir_fd`` (made first when ``create`` and missing)."""
    for _ in range(2):
        try:
            return os.open(name, DIRECTORY_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP or is_symlink_at(dir_fd, name):
                raise changed(shown) from None
            raise
    return os.open(name, DIRECTORY_FLAGS, dir_fd=dir_fd)


def open_directory(root: Path, resolved: Path, shown: str, create: bool = False) -> int:
    """A descriptor of the directory ``resolved`` (inside ``root``), every component opened
    with ``O_NOFOLLOW``; ``create`` makes the missing ones. Raises ``OSError`` as ``open``
    does (``ENOENT``, ``ENOTDIR``, ...) or the "changed" :class:`ToolFailure`."""
    fd = _open_root(root, shown)
    try:
        for name in components(root, resolved):
            child = _step(fd, name, shown, create)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def parent_of(root: Path, resolved: Path, shown: str, create: bool = False) -> Iterator[int]:
    """The open parent directory of ``resolved`` (not ``root`` itself), closed after."""
    fd = open_directory(root, resolved.parent, shown, create)
    try:
        yield fd
    finally:
        os.close(fd)


def open_file(dir_fd: int, name: str, flags: int, shown: str, mode: int = 0o666) -> int:
    """Open ``name`` in ``dir_fd`` without following a symlink there."""
    try:
        return os.open(name, flags | FILE_FLAGS, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENXIO and is_symlink_at(dir_fd, name)):
            raise changed(shown) from None
        raise


def read_all(fd: int, limit: int) -> bytes:
    """Up to ``limit`` + 1 bytes of ``fd`` (one more tells the caller it grew past it)."""
    chunks = []
    left = limit + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
