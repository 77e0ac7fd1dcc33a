"""The bubblewrap command line of one sandbox: what is visible, writable and shared.

Built from a policy and one workspace, never from model input beyond the command itself:

- the workspace is bound read-write at its own absolute path (so paths match what the file
  tools report) and is the only writable place besides the private ``/tmp``;
- the system is bound read-only directory by directory (``/usr``, ``/etc`` and the
  ``/bin``/``/lib*`` links or directories), never ``/`` wholesale, so the worker's checkout,
  its data and config directories, the tokens file, other workspaces and ``/root`` simply
  do not exist inside; operator-listed read-only paths (an MCP server's install prefix) are
  added on top;
- root-only secret files of ``/etc`` are masked (a worker that runs as root would otherwise
  read them: its uid maps to the owner of those files), and so are the operator's own
  files (tokens file, data, config and workspaces directories) wherever a read-only bind
  would show them;
- new user, pid, ipc, uts, cgroup and network namespaces; a fresh ``/proc`` of the new pid
  namespace (no other process is visible), a minimal ``/dev``;
- no environment of its own: bubblewrap passes the command the allowlisted one
  (:mod:`activities.sandbox.environment`) the supervisor starts it with, so no value of it
  (an MCP server's token) is in a command line every local user can read; a new session (no
  terminal to inject into), and death with its parent.

docs/security-sandbox.md explains each choice.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

# Top-level system directories bound read-only when they exist (symlinks are recreated).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Readable by their owner only; the owner is root, which a root worker's sandbox maps to.
MASKED_FILES = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
)
MASKED_DIRS = ("/etc/ssl/private", "/etc/sudoers.d")
HOSTNAME = "seawall-sandbox"


def _system_binds(root: Path) -> list[str]:
    args: list[str] = []
    for name in SYSTEM_DIRS:
        host = root / name.lstrip("/")
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), name]
        elif host.is_dir():
            args += ["--ro-bind", str(host), name]
    for name in MASKED_FILES:
        if (root / name.lstrip("/")).exists():
            args += ["--ro-bind", "/dev/null", name]
    for name in MASKED_DIRS:
        if (root / name.lstrip("/")).is_dir():
            args += ["--tmpfs", name, "--remount-ro", name]
    return args


def _visible(path: Path, bound: Sequence[Path]) -> bool:
    return any(path == top or top in path.parents for top in bound)


def _masks(hidden: Sequence[Path], bound: Sequence[Path]) -> list[str]:
    """Cover each hidden path that a bind above would show: a file with /dev/null, a
    directory with an empty tmpfs (left writable, so the workspace can be bound inside it)."""
    args: list[str] = []
    for path in hidden:
        if not _visible(path, bound):
            continue
        if path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    return args


def bwrap_options(
    workspace: Path,
    *,
    cwd: Path,
    read_only_paths: Sequence[Path] = (),
    hidden_paths: Sequence[Path] = (),
    tmp_size: int | None = None,
    root: Path = Path("/"),
) -> list[str]:
    """The options (everything before ``--`` and the command) of a sandbox around
    ``workspace``, starting in ``cwd`` (with bubblewrap's own environment, which the
    supervisor makes exactly the allowlisted one); ``hidden_paths`` (the operator's files)
    are masked wherever a bind would show them; ``tmp_size`` bounds the private ``/tmp`` (a
    tmpfs: memory) in bytes. ``root`` is for tests."""
    args = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",
        "--unshare-cgroup-try",
        "--hostname",
        HOSTNAME,
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        *_system_binds(root),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        *(["--size", str(tmp_size)] if tmp_size is not None else []),
        "--tmpfs",
        "/tmp",
    ]
    for extra in read_only_paths:
        args += ["--ro-bind-try", str(extra), str(extra)]
    bound = [Path(name) for name in SYSTEM_DIRS] + list(read_only_paths)
    args += _masks(hidden_paths, bound)
    # Last, so nothing bound above can shadow the workspace.
    args += ["--bind", str(workspace), str(workspace), "--chdir", str(cwd)]
    return args


def command_line(bwrap: str, options: Iterable[str], command: Sequence[str]) -> list[str]:
    """``bwrap OPTIONS -- COMMAND``, for tests and the probe (the supervisor adds its own
    file-descriptor options between the two)."""
    return [bwrap, *options, "--", *command]
