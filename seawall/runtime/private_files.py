"""Seawall's data stays its user's: data directories 0700, the files in them 0600.

docs/security-gateway.md, "The data directory is private". The data dir (``seawall up``'s
``.data``, ``seawall acp``'s ``$XDG_DATA_HOME/seawall``) holds the dev server's database
(every owner's histories), logs, pids, the payload store and the workspaces root; the
tokens and the codec token reach these processes too. So the processes that create them
run with a ``077`` umask (what they and their children create is private from the start),
every directory is made 0700 where it is made, and a data dir left looser by an older
version is tightened when it starts: group and other bits are taken off every directory
and file in it, except inside the workspaces, whose files are the session's (their root
is made 0700, which already keeps them from other users).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

# Nothing Seawall creates is readable, writable or searchable by group or others.
PRIVATE_UMASK = 0o077
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def use_private_umask() -> None:
    """From here on, this process and its children create private files."""
    os.umask(PRIVATE_UMASK)


@contextlib.contextmanager
def private_umask() -> Iterator[None]:
    """A ``077`` umask for the block: a child process started in it (the dev server) keeps
    it for its lifetime."""
    previous = os.umask(PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(previous)


def private_file(path: Path) -> Path:
    """``path`` as a 0600 file: created empty if missing, tightened if looser."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, PRIVATE_FILE_MODE)
    os.close(fd)
    _tighten(path, os.lstat(path))
    return path


def write_private(path: Path, text: str) -> Path:
    """A new file at ``path``, 0600 from the moment it exists, holding ``text`` (a secret:
    a key, a credential-bearing endpoint). Fails if ``path`` exists, or is a symlink."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
    fd = os.open(path, flags, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    return path


def private_dir(path: Path) -> Path:
    """``path`` as a 0700 directory, and every parent it lacks too; an existing one is
    tightened (its existing parents are left as they are)."""
    missing: list[Path] = []
    here = path
    while not here.exists():
        missing.append(here)
        here = here.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process
            directory.mkdir(mode=PRIVATE_DIR_MODE)
    _tighten(path, os.lstat(path))
    return path


def tighten_tree(root: Path, *, skip: tuple[Path, ...] = ()) -> None:
    """Take group and other bits off ``root`` and everything under it (symlinks are not
    followed); a directory in ``skip`` is made 0700 but not entered."""
    skipped = {p.absolute() for p in skip}
    for directory, subdirs, files in os.walk(root):
        here = Path(directory)
        _tighten(here, os.lstat(here))
        for name in list(subdirs):
            child = here / name
            if child.absolute() in skipped:
                subdirs.remove(name)
                _tighten(child, os.lstat(child))
        for name in files:
            child = here / name
            _tighten(child, os.lstat(child))


def tighten(path: Path) -> None:
    """Take group and other bits off ``path`` if it exists (not a symlink's target)."""
    with contextlib.suppress(FileNotFoundError):
        _tighten(path, os.lstat(path))


def make_private_data_dir(data_dir: Path, workspaces: Path | None = None) -> Path:
    """The data dir as it must be before anything runs in it: 0700 throughout, its files
    0600, the workspaces root 0700 (its contents left as the sessions made them)."""
    private_dir(data_dir)
    skip: tuple[Path, ...] = ()
    if workspaces is not None:
        private_dir(workspaces)
        skip = (workspaces,)
    tighten_tree(data_dir, skip=skip)
    return data_dir


def _tighten(path: Path, info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        return
    mode = stat.S_IMODE(info.st_mode)
    wanted = mode & ~PRIVATE_UMASK
    if stat.S_ISDIR(info.st_mode):
        wanted |= 0o700
    if wanted != mode:
        os.chmod(path, wanted)
