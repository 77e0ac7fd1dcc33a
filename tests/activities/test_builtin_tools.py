"""Built-in tools against real files and real subprocesses, confined to a workspace.

The workspace is ``tmp_path/ws``; ``tmp_path/outside`` holds what must stay unreachable, so
every escape test can also check that nothing outside was read, written or named.
"""

from __future__ import annotations

import asyncio
import errno
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from activities.tools import BUILTIN_TOOLS, ToolContext, ToolFailure, resolve_in_workspace
from activities.tools.files import MAX_READ_BYTES, map_read_error, map_write_error
from activities.tools.search import expand_braces
from tests.activities.escape_targets import SECRET
from workflows.contracts import ToolErrorType as E


def _permissions_enforced() -> bool:
    """False when file modes do not bind us (root, CAP_DAC_OVERRIDE), so EACCES can't occur."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp, "probe")
        probe.write_text("x")
        probe.chmod(0)
        try:
            probe.read_text()
        except PermissionError:
            return True
        return False


PERMISSIONS_IGNORED = not _permissions_enforced()


def make_ctx(root: Path, **kw: Any) -> ToolContext:
    return ToolContext(workspace_root=root, **kw)


async def call(name: str, root: Path, ctx: ToolContext | None = None, **args: Any) -> str:
    tool = BUILTIN_TOOLS[name]
    return await tool.run(tool.parse_args(args), ctx or make_ctx(root))


async def fail(name: str, root: Path, ctx: ToolContext | None = None, **args: Any) -> ToolFailure:
    with pytest.raises(ToolFailure) as info:
        await call(name, root, ctx, **args)
    return info.value


def assert_no_leak(failure: ToolFailure, outside: Path) -> None:
    assert str(outside) not in failure.message
    assert SECRET not in failure.message


# --- process helpers (Linux /proc) -----------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is parenthesised and may contain spaces; fields follow the last ')'.
    return text.rsplit(")", 1)[1].split()


def pid_alive(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def group_alive(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields is not None and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                return True
    return False


async def eventually(pred: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Bounded poll: SIGKILL delivery and file creation by a child are asynchronous."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


# --- registry and argument models --------------------------------------------------------

MINIMAL_ARGS: dict[str, dict[str, Any]] = {
    "read_file": {"path": "a"},
    "write_file": {"path": "a", "content": ""},
    "edit_file": {"path": "a", "old_string": "x", "new_string": "y"},
    "list_directory": {},
    "glob": {"pattern": "*"},
    "grep_search": {"pattern": "x"},
    "run_shell_command": {"command": "true"},
}


def test_registry_names_and_mutating_flags() -> None:
    assert set(BUILTIN_TOOLS) == set(MINIMAL_ARGS)
    mutating = {name for name, tool in BUILTIN_TOOLS.items() if tool.mutating}
    assert mutating == {"write_file", "edit_file", "run_shell_command"}
    for name, tool in BUILTIN_TOOLS.items():
        assert tool.name == name
        assert tool.description
        assert tool.parameters_schema()["additionalProperties"] is False


@pytest.mark.parametrize("name", sorted(MINIMAL_ARGS))
def test_args_models_reject_unknown_fields(name: str) -> None:
    tool = BUILTIN_TOOLS[name]
    tool.parse_args(MINIMAL_ARGS[name])
    with pytest.raises(ValidationError):
        tool.parse_args({**MINIMAL_ARGS[name], "bogus": 1})


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("read_file", {}),
        ("read_file", {"path": "a", "offset": -1}),
        ("read_file", {"path": "a", "limit": 0}),
        (
            "edit_file",
            {"path": "a", "old_string": "x", "new_string": "y", "expected_replacements": 0},
        ),
        ("run_shell_command", {"command": ""}),
        ("run_shell_command", {"command": "true", "timeout_seconds": 0}),
    ],
)
def test_args_models_reject_invalid_values(name: str, args: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        BUILTIN_TOOLS[name].parse_args(args)


# --- workspace confinement -------------------------------------------------------------


def test_resolve_accepts_relative_absolute_and_root(ws: Path) -> None:
    assert resolve_in_workspace(ws, "a/b.txt") == ws / "a" / "b.txt"
    assert resolve_in_workspace(ws, str(ws / "c")) == ws / "c"
    assert resolve_in_workspace(ws, ".") == ws
    assert resolve_in_workspace(ws, "a/../b") == ws / "b"


@pytest.mark.parametrize("path", ["..", "../outside/secret.txt", "a/../../outside"])
def test_resolve_rejects_dotdot_escape(ws: Path, outside: Path, path: str) -> None:
    with pytest.raises(ToolFailure) as info:
        resolve_in_workspace(ws, path)
    assert info.value.error_type is E.PATH_NOT_IN_WORKSPACE
    assert "outside the workspace" in info.value.message
    assert repr(path) in info.value.message
    assert_no_leak(info.value, outside)


def test_resolve_rejects_absolute_outside(ws: Path, outside: Path) -> None:
    with pytest.raises(ToolFailure) as info:
        resolve_in_workspace(ws, "/etc/passwd")
    assert info.value.error_type is E.PATH_NOT_IN_WORKSPACE


def test_resolve_rejects_symlink_pointing_outside(ws: Path, outside: Path) -> None:
    (ws / "link").symlink_to(outside)
    with pytest.raises(ToolFailure) as info:
        resolve_in_workspace(ws, "link/secret.txt")
    assert info.value.error_type is E.PATH_NOT_IN_WORKSPACE
    assert_no_leak(info.value, outside)


def test_resolve_rejects_prefix_sibling(tmp_path: Path, ws: Path) -> None:
    # "/x/ws-evil" starts with "/x/ws" as a string but is not inside it.
    (tmp_path / "ws-evil").mkdir()
    with pytest.raises(ToolFailure) as info:
        resolve_in_workspace(ws, "../ws-evil")
    assert info.value.error_type is E.PATH_NOT_IN_WORKSPACE


def test_resolve_rejects_nul_and_symlink_loop(ws: Path) -> None:
    with pytest.raises(ToolFailure) as info:
        resolve_in_workspace(ws, "a\x00b")
    assert info.value.error_type is E.INVALID_TOOL_PARAMS
    (ws / "a").symlink_to(ws / "b")
    (ws / "b").symlink_to(ws / "a")
    with pytest.raises(ToolFailure) as info:
        resolve_in_workspace(ws, "a")
    assert info.value.error_type is E.FILE_NOT_FOUND
    assert str(ws) not in info.value.message


# --- read_file -------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_read_file_success_and_window(ws: Path) -> None:
    (ws / "f.txt").write_text("".join(f"line{i}\n" for i in range(1, 11)))
    assert await call("read_file", ws, path="f.txt") == (ws / "f.txt").read_text()
    out = await call("read_file", ws, path=str(ws / "f.txt"), offset=2, limit=3)
    assert out.splitlines() == [
        "[Showing lines 3-5 of 10 in 'f.txt'. Use offset=5 to read more.]",
        "line3",
        "line4",
        "line5",
    ]
    past = await call("read_file", ws, path="f.txt", offset=50)
    assert "past the end" in past


@pytest.mark.asyncio
async def test_read_file_follows_symlink_inside(ws: Path) -> None:
    (ws / "real.txt").write_text("hello")
    (ws / "alias.txt").symlink_to(ws / "real.txt")
    assert await call("read_file", ws, path="alias.txt") == "hello"


@pytest.mark.asyncio
async def test_read_file_errors(ws: Path) -> None:
    assert (await fail("read_file", ws, path="nope.txt")).error_type is E.FILE_NOT_FOUND
    (ws / "d").mkdir()
    assert (await fail("read_file", ws, path="d")).error_type is E.TARGET_IS_DIRECTORY
    with (ws / "big").open("wb") as fh:
        fh.truncate(MAX_READ_BYTES + 1)
    big = await fail("read_file", ws, path="big")
    assert big.error_type is E.FILE_TOO_LARGE
    assert "grep_search" in big.message
    (ws / "latin1.txt").write_bytes(b"caf\xe9\n")
    assert (await fail("read_file", ws, path="latin1.txt")).error_type is E.READ_CONTENT_FAILURE
    (ws / "bin").write_bytes(b"\x7fELF\x00\x00\x01")
    assert (await fail("read_file", ws, path="bin")).error_type is E.READ_CONTENT_FAILURE
    os.mkfifo(ws / "fifo")
    assert (await fail("read_file", ws, path="fifo")).error_type is E.READ_CONTENT_FAILURE


@pytest.mark.asyncio
async def test_read_file_escapes(ws: Path, outside: Path) -> None:
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    for path in ["link.txt", "../outside/secret.txt", str(outside / "secret.txt")]:
        failure = await fail("read_file", ws, path=path)
        assert failure.error_type is E.PATH_NOT_IN_WORKSPACE
        assert SECRET not in failure.message


@pytest.mark.skipif(PERMISSIONS_IGNORED, reason="file modes not enforced (root?)")
@pytest.mark.asyncio
async def test_read_file_permission_denied(ws: Path) -> None:
    (ws / "locked.txt").write_text("x")
    (ws / "locked.txt").chmod(0)
    assert (await fail("read_file", ws, path="locked.txt")).error_type is E.PERMISSION_DENIED


def test_read_error_mapping_hides_os_filenames(outside: Path) -> None:
    exc = OSError(errno.EACCES, "Permission denied", str(outside / "secret.txt"))
    failure = map_read_error(exc, "x.txt")
    assert failure.error_type is E.PERMISSION_DENIED
    assert_no_leak(failure, outside)
    assert map_read_error(OSError(errno.EIO, "I/O error"), "x").error_type is (
        E.READ_CONTENT_FAILURE
    )


# --- write_file ------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_write_file_creates_parents_and_counts_bytes(ws: Path) -> None:
    out = await call("write_file", ws, path="a/b/c.txt", content="héllo")
    assert out == "Wrote 6 bytes to 'a/b/c.txt'."
    assert (ws / "a/b/c.txt").read_text() == "héllo"
    await call("write_file", ws, path="a/b/c.txt", content="new\r\n")
    assert (ws / "a/b/c.txt").read_bytes() == b"new\r\n"


@pytest.mark.asyncio
async def test_write_file_errors(ws: Path) -> None:
    (ws / "d").mkdir()
    assert (await fail("write_file", ws, path="d", content="x")).error_type is (
        E.TARGET_IS_DIRECTORY
    )
    (ws / "file").write_text("x")
    parent_is_file = await fail("write_file", ws, path="file/child.txt", content="x")
    assert parent_is_file.error_type is E.FILE_WRITE_FAILURE
    os.mkfifo(ws / "fifo")
    assert (await fail("write_file", ws, path="fifo", content="x")).error_type is (
        E.FILE_WRITE_FAILURE
    )


@pytest.mark.asyncio
async def test_write_file_escapes(ws: Path, outside: Path) -> None:
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    (ws / "dangling").symlink_to(outside / "new.txt")
    (ws / "dirlink").symlink_to(outside)
    for path in ["link.txt", "dangling", "dirlink/x.txt", "../outside/x.txt", "/tmp/x.txt"]:
        failure = await fail("write_file", ws, path=path, content="pwned")
        assert failure.error_type is E.PATH_NOT_IN_WORKSPACE
        assert_no_leak(failure, outside)
    assert (outside / "secret.txt").read_text() == SECRET + "\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


@pytest.mark.skipif(PERMISSIONS_IGNORED, reason="file modes not enforced (root?)")
@pytest.mark.asyncio
async def test_write_file_permission_denied(ws: Path) -> None:
    (ws / "ro").mkdir()
    (ws / "ro").chmod(0o500)
    try:
        failure = await fail("write_file", ws, path="ro/x.txt", content="x")
    finally:
        (ws / "ro").chmod(0o700)
    assert failure.error_type is E.PERMISSION_DENIED


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (errno.ENOSPC, E.NO_SPACE_LEFT),
        (errno.EACCES, E.PERMISSION_DENIED),
        (errno.EPERM, E.PERMISSION_DENIED),
        (errno.EISDIR, E.TARGET_IS_DIRECTORY),
        (errno.EIO, E.FILE_WRITE_FAILURE),
    ],
)
def test_write_error_mapping(outside: Path, code: int, expected: E) -> None:
    # ENOSPC and EACCES cannot be provoked portably (tests may run as root, on any disk),
    # so the classification is checked on real OSError values.
    exc = OSError(code, os.strerror(code), str(outside / "secret.txt"))
    failure = map_write_error(exc, "x.txt")
    assert failure.error_type is expected
    assert "'x.txt'" in failure.message
    assert_no_leak(failure, outside)


# --- edit_file -------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_edit_file_success(ws: Path) -> None:
    (ws / "f.py").write_text("a = 1\nb = 1\n")
    out = await call("edit_file", ws, path="f.py", old_string="a = 1", new_string="a = 2")
    assert out == "Replaced 1 occurrence(s) in 'f.py'."
    assert (ws / "f.py").read_text() == "a = 2\nb = 1\n"
    await call(
        "edit_file", ws, path="f.py", old_string="= ", new_string="=", expected_replacements=2
    )
    assert (ws / "f.py").read_text() == "a =2\nb =1\n"


@pytest.mark.asyncio
async def test_edit_file_create_with_empty_old_string(ws: Path) -> None:
    out = await call("edit_file", ws, path="new/f.txt", old_string="", new_string="hi")
    assert "Created" in out
    assert (ws / "new/f.txt").read_text() == "hi"
    again = await fail("edit_file", ws, path="new/f.txt", old_string="", new_string="x")
    assert again.error_type is E.ATTEMPT_TO_CREATE_EXISTING_FILE


@pytest.mark.asyncio
async def test_edit_file_errors(ws: Path) -> None:
    missing = await fail("edit_file", ws, path="nope", old_string="a", new_string="b")
    assert missing.error_type is E.FILE_NOT_FOUND
    (ws / "d").mkdir()
    is_dir = await fail("edit_file", ws, path="d", old_string="a", new_string="b")
    assert is_dir.error_type is E.TARGET_IS_DIRECTORY
    (ws / "f.txt").write_text("x x y\n")
    none = await fail("edit_file", ws, path="f.txt", old_string="z", new_string="b")
    assert none.error_type is E.EDIT_NO_OCCURRENCE_FOUND
    mismatch = await fail("edit_file", ws, path="f.txt", old_string="x", new_string="b")
    assert mismatch.error_type is E.EDIT_EXPECTED_OCCURRENCE_MISMATCH
    assert "expected 1" in mismatch.message
    assert "found 2" in mismatch.message
    same = await fail("edit_file", ws, path="f.txt", old_string="y", new_string="y")
    assert same.error_type is E.EDIT_NO_CHANGE
    assert (ws / "f.txt").read_text() == "x x y\n"


@pytest.mark.asyncio
async def test_edit_file_escapes(ws: Path, outside: Path) -> None:
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    for path in ["link.txt", "../outside/secret.txt"]:
        failure = await fail("edit_file", ws, path=path, old_string="top", new_string="x")
        assert failure.error_type is E.PATH_NOT_IN_WORKSPACE
    assert (outside / "secret.txt").read_text() == SECRET + "\n"


# --- list_directory --------------------------------------------------------------------


@pytest.mark.asyncio
async def test_list_directory_success(ws: Path, outside: Path) -> None:
    (ws / "b.txt").write_text("")
    (ws / "a").mkdir()
    (ws / "c").mkdir()
    (ws / "c" / "inner.txt").write_text("")
    (ws / "alias").symlink_to(ws / "c")
    (ws / "escape").symlink_to(outside)
    out = await call("list_directory", ws)
    assert out.splitlines() == [
        "a/",
        "alias/",
        "b.txt",
        "c/",
        "escape (symlink outside the workspace)",
    ]
    assert str(outside) not in out
    assert await call("list_directory", ws, path="c") == "inner.txt"
    assert "empty" in await call("list_directory", ws, path="a")


@pytest.mark.asyncio
async def test_list_directory_caps_entries(ws: Path) -> None:
    for i in range(1005):
        (ws / f"f{i:04}").touch()
    lines = (await call("list_directory", ws)).splitlines()
    assert len(lines) == 1001
    assert lines[0] == "f0000"
    assert "5 more entries" in lines[-1]


@pytest.mark.asyncio
async def test_list_directory_errors(ws: Path, outside: Path) -> None:
    assert (await fail("list_directory", ws, path="nope")).error_type is E.FILE_NOT_FOUND
    (ws / "f.txt").write_text("")
    assert (await fail("list_directory", ws, path="f.txt")).error_type is E.LS_EXECUTION_ERROR
    (ws / "escape").symlink_to(outside)
    for path in ["escape", "..", str(outside)]:
        failure = await fail("list_directory", ws, path=path)
        assert failure.error_type is E.PATH_NOT_IN_WORKSPACE
        assert "secret" not in failure.message


@pytest.mark.skipif(PERMISSIONS_IGNORED, reason="file modes not enforced (root?)")
@pytest.mark.asyncio
async def test_list_directory_permission_denied(ws: Path) -> None:
    (ws / "locked").mkdir()
    (ws / "locked").chmod(0)
    try:
        failure = await fail("list_directory", ws, path="locked")
    finally:
        (ws / "locked").chmod(0o700)
    assert failure.error_type is E.PERMISSION_DENIED


# --- glob ------------------------------------------------------------------------------


@pytest.fixture
def tree(ws: Path) -> Path:
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "b.py").write_text("import os\nvalue = 1\n")
    (ws / "src" / "pkg" / "a.py").write_text("value = 2\n")
    (ws / "src" / "notes.txt").write_text("value in text\n")
    (ws / "top.py").write_text("print('value')\n")
    return ws


@pytest.mark.asyncio
async def test_glob_success(tree: Path) -> None:
    out = await call("glob", tree, pattern="**/*.py")
    assert out.splitlines() == ["src/b.py", "src/pkg/a.py", "top.py"]
    sub = await call("glob", tree, pattern="*", path="src")
    assert sub.splitlines() == ["src/b.py", "src/notes.txt", "src/pkg/"]
    assert "No files match" in await call("glob", tree, pattern="*.rs")


@pytest.mark.asyncio
async def test_glob_caps_results(ws: Path) -> None:
    for i in range(1005):
        (ws / f"f{i:04}.txt").touch()
    lines = (await call("glob", ws, pattern="*.txt")).splitlines()
    assert len(lines) == 1001
    assert "5 more matches" in lines[-1]


@pytest.mark.asyncio
async def test_glob_errors(tree: Path) -> None:
    missing = await fail("glob", tree, pattern="*", path="nope")
    assert missing.error_type is E.SEARCH_PATH_NOT_FOUND
    not_dir = await fail("glob", tree, pattern="*", path="top.py")
    assert not_dir.error_type is E.GLOB_EXECUTION_ERROR
    for pattern in ["", "/etc/*"]:
        failure = await fail("glob", tree, pattern=pattern)
        assert failure.error_type is E.GLOB_EXECUTION_ERROR


@pytest.mark.asyncio
async def test_glob_never_leaves_the_workspace(ws: Path, outside: Path) -> None:
    (ws / "in.txt").write_text("")
    (ws / "escape").symlink_to(outside)
    (ws / "file-link.txt").symlink_to(outside / "secret.txt")
    for pattern in ["*", "**/*", "escape/*", "../outside/*", "../*/*"]:
        out = await call("glob", ws, pattern=pattern)
        assert "secret" not in out
        assert str(outside) not in out
        if not out.startswith("No files match"):
            assert set(out.splitlines()) <= {"in.txt"}
    escaped = await fail("glob", ws, pattern="*", path="escape")
    assert escaped.error_type is E.PATH_NOT_IN_WORKSPACE
    assert_no_leak(escaped, outside)


# --- grep_search -----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_grep_success_sorted(tree: Path) -> None:
    out = await call("grep_search", tree, pattern=r"value")
    assert out.splitlines() == [
        "src/b.py:2:value = 1",
        "src/notes.txt:1:value in text",
        "src/pkg/a.py:1:value = 2",
        "top.py:1:print('value')",
    ]
    only_py = await call("grep_search", tree, pattern=r"^value", path="src", include="*.py")
    assert only_py.splitlines() == ["src/b.py:2:value = 1", "src/pkg/a.py:1:value = 2"]
    braces = await call("grep_search", tree, pattern="value", include="*.{txt,py}", path="src")
    assert len(braces.splitlines()) == 3
    one_file = await call("grep_search", tree, pattern="import", path="src/b.py")
    assert one_file == "src/b.py:1:import os"
    assert "No matches" in await call("grep_search", tree, pattern="zzz")


def test_expand_braces() -> None:
    assert expand_braces("*.{ts,tsx}") == ["*.ts", "*.tsx"]
    assert expand_braces("{a,b}/{c,d}") == ["a/c", "a/d", "b/c", "b/d"]
    assert expand_braces("*.py") == ["*.py"]


@pytest.mark.asyncio
async def test_grep_skips_binary_and_git(ws: Path) -> None:
    (ws / "bin.dat").write_bytes(b"needle\x00\x01")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("needle\n")
    (ws / "text.txt").write_text("needle\n")
    assert await call("grep_search", ws, pattern="needle") == "text.txt:1:needle"


@pytest.mark.asyncio
async def test_grep_caps_matches(ws: Path) -> None:
    (ws / "many.txt").write_text("hit\n" * 600)
    lines = (await call("grep_search", ws, pattern="hit")).splitlines()
    assert len(lines) == 501
    assert lines[499] == "many.txt:500:hit"
    assert "Stopped after 500 matches" in lines[-1]


@pytest.mark.asyncio
async def test_grep_heartbeats_while_scanning(ws: Path) -> None:
    for i in range(450):
        (ws / f"f{i:03}.txt").write_text("x\n")
    beats: list[None] = []
    ctx = make_ctx(ws, heartbeat=lambda: beats.append(None))
    out = await call("grep_search", ws, ctx, pattern="x")
    assert len(out.splitlines()) == 450
    assert len(beats) >= 3


@pytest.mark.asyncio
async def test_grep_errors(tree: Path) -> None:
    bad = await fail("grep_search", tree, pattern="(unclosed")
    assert bad.error_type is E.GREP_EXECUTION_ERROR
    missing = await fail("grep_search", tree, pattern="x", path="nope")
    assert missing.error_type is E.SEARCH_PATH_NOT_FOUND


@pytest.mark.asyncio
async def test_grep_never_reads_outside(ws: Path, outside: Path) -> None:
    (ws / "escape").symlink_to(outside)
    (ws / "file-link.txt").symlink_to(outside / "secret.txt")
    (ws / "real.txt").write_text("top-secret-inside\n")
    (ws / "inside-link.txt").symlink_to(ws / "real.txt")
    out = await call("grep_search", ws, pattern="top-secret")
    assert out.splitlines() == [
        "inside-link.txt:1:top-secret-inside",
        "real.txt:1:top-secret-inside",
    ]
    for path in ["escape", "file-link.txt", "../outside"]:
        failure = await fail("grep_search", ws, pattern="top", path=path)
        assert failure.error_type is E.PATH_NOT_IN_WORKSPACE
        assert_no_leak(failure, outside)


# --- run_shell_command -----------------------------------------------------------------


@pytest.mark.asyncio
async def test_shell_success_merges_output_in_directory(ws: Path) -> None:
    (ws / "sub").mkdir()
    out = await call(
        "run_shell_command", ws, command="pwd; echo err >&2; cat; echo done", directory="sub"
    )
    assert out.splitlines() == [str(ws / "sub"), "err", "done", "Exit code: 0"]
    assert await call("run_shell_command", ws, command="true") == "(no output)\nExit code: 0"


@pytest.mark.asyncio
async def test_shell_nonzero_exit(ws: Path) -> None:
    failure = await fail("run_shell_command", ws, command="echo oops; exit 3")
    assert failure.error_type is E.SHELL_EXECUTE_ERROR
    assert "Exit code: 3" in failure.message
    assert "oops" in failure.message
    signalled = await fail("run_shell_command", ws, command="kill -TERM $$")
    assert "killed by SIGTERM" in signalled.message


@pytest.mark.asyncio
async def test_shell_timeout_kills_process_group(ws: Path) -> None:
    failure = await fail(
        "run_shell_command",
        ws,
        command="echo $$ > pgid; echo started; sleep 30 & sleep 30",
        timeout_seconds=0.5,
    )
    assert failure.error_type is E.EXECUTION_TIMEOUT
    assert "started" in failure.message
    pgid = int((ws / "pgid").read_text())
    assert await eventually(lambda: not group_alive(pgid))


@pytest.mark.asyncio
async def test_shell_timeout_is_capped_by_context(ws: Path) -> None:
    ctx = make_ctx(ws, shell_timeout_seconds=0.5)
    started = time.monotonic()
    failure = await fail("run_shell_command", ws, ctx, command="sleep 30", timeout_seconds=100)
    assert failure.error_type is E.EXECUTION_TIMEOUT
    assert time.monotonic() - started < 10


@pytest.mark.asyncio
async def test_shell_cancellation_kills_child(ws: Path) -> None:
    tool = BUILTIN_TOOLS["run_shell_command"]
    args = tool.parse_args({"command": "sleep 30 & echo $! > child.pid; wait"})
    task = asyncio.create_task(tool.run(args, make_ctx(ws)))
    pid_file = ws / "child.pid"
    assert await eventually(lambda: pid_file.exists() and pid_file.read_text().endswith("\n"))
    child = int(pid_file.read_text())
    assert pid_alive(child)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await eventually(lambda: not pid_alive(child))


@pytest.mark.asyncio
async def test_shell_background_processes_do_not_outlive_call(ws: Path) -> None:
    out = await call("run_shell_command", ws, command="sleep 30 & echo $! > bg.pid")
    assert out.endswith("Exit code: 0")
    bg = int((ws / "bg.pid").read_text())
    assert await eventually(lambda: not pid_alive(bg))


@pytest.mark.asyncio
async def test_shell_heartbeats_while_waiting(ws: Path) -> None:
    beats: list[None] = []
    ctx = make_ctx(ws, heartbeat=lambda: beats.append(None))
    await call("run_shell_command", ws, ctx, command="sleep 1.5")
    assert len(beats) >= 1


@pytest.mark.asyncio
async def test_shell_keeps_tail_of_long_output(ws: Path) -> None:
    out = await call(
        "run_shell_command", ws, command="head -c 300000 /dev/zero | tr '\\0' a; echo; echo END"
    )
    assert "bytes of output omitted" in out
    assert out.endswith("END\nExit code: 0")


@pytest.mark.asyncio
async def test_shell_directory_errors(ws: Path, outside: Path) -> None:
    missing = await fail("run_shell_command", ws, command="true", directory="nope")
    assert missing.error_type is E.FILE_NOT_FOUND
    (ws / "f").write_text("")
    not_dir = await fail("run_shell_command", ws, command="true", directory="f")
    assert not_dir.error_type is E.SHELL_EXECUTE_ERROR
    (ws / "escape").symlink_to(outside)
    for directory in ["..", "escape", str(outside)]:
        failure = await fail("run_shell_command", ws, command="true", directory=directory)
        assert failure.error_type is E.PATH_NOT_IN_WORKSPACE


async def test_shell_commands_see_only_allowlisted_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment is an allowlist (activities/sandbox/environment.py), even bare: a
    secret whose name no denylist guessed (``MY_DB_PASSWD``) stays with the worker."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-SENTINEL-1")
    monkeypatch.setenv("SEAWALL_GATEWAY_TOKEN", "tok-SENTINEL-2")
    monkeypatch.setenv("SOME_DB_PASSWORD", "pw-SENTINEL-3")
    monkeypatch.setenv("MY_DB_PASSWD", "pw-SENTINEL-4")
    monkeypatch.setenv("HARMLESS_SETTING", "SENTINEL-5")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    tool = BUILTIN_TOOLS["run_shell_command"]

    output = await tool.run(
        tool.args_model.model_validate({"command": "env"}), ToolContext(workspace_root=tmp_path)
    )

    assert "SENTINEL" not in output
    assert "LC_ALL=C.UTF-8" in output
    assert "PATH=" in output
