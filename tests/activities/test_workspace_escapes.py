"""No path a model gives a built-in tool reaches outside the workspace.

A table of escape attempts — absolute paths, ``..``, symlinks (to a file, to a directory,
absolute, chained, looping), a hard link, glob patterns, grep paths, shell working
directories — each run through the real tool against a real directory tree with a secret
next to the workspace. An attempt may fail (it should, with a clear error) or succeed inside
the workspace; it must never show the secret, change anything outside, or create a file
outside.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from activities.tools import BUILTIN_TOOLS, ToolContext, ToolFailure

SECRET = "TOPSECRET-7f3a"


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """``ws/`` (the workspace) beside ``outside/`` (a secret), with links between them."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (outside / "sub").mkdir()
    (outside / "sub" / "deep.txt").write_text(f"{SECRET} deep\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "inside.txt").write_text("hello\n")
    (ws / "dir").mkdir()
    (ws / "link-dir").symlink_to("../outside")
    (ws / "link-file").symlink_to("../outside/secret.txt")
    (ws / "link-abs").symlink_to(outside / "secret.txt")
    (ws / "link-chain").symlink_to("link-file")
    (ws / "dir" / "link-up").symlink_to("../../outside")
    (ws / "loop-a").symlink_to("loop-b")
    (ws / "loop-b").symlink_to("loop-a")
    os.link(outside / "secret.txt", ws / "hard-link")
    return ws.resolve(), outside.resolve()


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


R, W, E, L, G, S, SH = (
    "read_file",
    "write_file",
    "edit_file",
    "list_directory",
    "glob",
    "grep_search",
    "run_shell_command",
)
ATTEMPTS: list[tuple[str, str, dict[str, Any]]] = [
    ("absolute path", R, {"path": "{outside}/secret.txt"}),
    ("absolute system file", R, {"path": "/etc/passwd"}),
    ("dot-dot", R, {"path": "../outside/secret.txt"}),
    ("dot-dot after a real dir", R, {"path": "dir/../../outside/secret.txt"}),
    ("many dot-dots", R, {"path": "../../../../../../etc/passwd"}),
    ("home tilde is not expanded", R, {"path": "~/../../etc/passwd"}),
    ("symlink to a file", R, {"path": "link-file"}),
    ("absolute symlink", R, {"path": "link-abs"}),
    ("symlink chain", R, {"path": "link-chain"}),
    ("through a symlinked directory", R, {"path": "link-dir/secret.txt"}),
    ("nested symlinked directory", R, {"path": "dir/link-up/sub/deep.txt"}),
    ("symlink loop", R, {"path": "loop-a"}),
    ("NUL byte", R, {"path": "inside.txt\x00../../outside/secret.txt"}),
    ("read a hard link", R, {"path": "hard-link"}),
    ("write absolute", W, {"path": "{outside}/new.txt", "content": "x"}),
    ("write dot-dot", W, {"path": "../outside/new.txt", "content": "x"}),
    ("write through a symlink", W, {"path": "link-file", "content": "pwned"}),
    ("write into a symlinked dir", W, {"path": "link-dir/new.txt", "content": "x"}),
    ("write through a hard link", W, {"path": "hard-link", "content": "pwned"}),
    ("edit through a symlink", E, {"path": "link-abs", "old_string": SECRET, "new_string": "x"}),
    ("edit through a hard link", E, {"path": "hard-link", "old_string": SECRET, "new_string": "x"}),
    ("list the parent", L, {"path": ".."}),
    ("list an absolute dir", L, {"path": "{outside}"}),
    ("list a symlinked dir", L, {"path": "link-dir"}),
    ("glob with dot-dot", G, {"pattern": "../outside/*"}),
    ("glob absolute pattern", G, {"pattern": "{outside}/*"}),
    ("glob recursing through links", G, {"pattern": "**/*.txt"}),
    ("glob from a dot-dot path", G, {"pattern": "*", "path": ".."}),
    ("glob from a symlinked dir", G, {"pattern": "*", "path": "link-dir"}),
    ("glob pattern climbing in the middle", G, {"pattern": "dir/../../outside/*.txt"}),
    ("grep the parent", S, {"pattern": "TOPSECRET", "path": ".."}),
    ("grep an absolute file", S, {"pattern": "TOPSECRET", "path": "{outside}/secret.txt"}),
    ("grep through symlinks", S, {"pattern": "TOPSECRET", "path": "."}),
    ("grep a symlinked dir", S, {"pattern": "TOPSECRET", "path": "link-dir"}),
    ("grep include climbing", S, {"pattern": "TOPSECRET", "include": "../outside/*"}),
    ("shell in the parent", SH, {"command": "cat secret.txt", "directory": "../outside"}),
    ("shell in an absolute dir", SH, {"command": "ls", "directory": "{outside}"}),
    ("shell in a symlinked dir", SH, {"command": "cat secret.txt", "directory": "link-dir"}),
]


def test_the_table_is_large_and_covers_every_path_taking_tool() -> None:
    assert len(ATTEMPTS) >= 30
    assert {tool for _, tool, _ in ATTEMPTS} == {R, W, E, L, G, S, SH}


@pytest.mark.parametrize(("what", "tool", "raw"), ATTEMPTS, ids=[a[0] for a in ATTEMPTS])
async def test_no_escape(
    tree: tuple[Path, Path], what: str, tool: str, raw: dict[str, Any]
) -> None:
    ws, outside = tree
    before = snapshot(outside)
    args = {
        k: v.replace("{outside}", str(outside)) if isinstance(v, str) else v for k, v in raw.items()
    }
    impl = BUILTIN_TOOLS[tool]
    try:
        shown = await impl.run(impl.args_model.model_validate(args), ToolContext(workspace_root=ws))
    except ToolFailure as failure:
        shown = failure.message
        assert "outside the workspace" in shown or failure.error_type.value in {
            "file_not_found",
            "invalid_tool_params",
            "glob_execution_error",
            "grep_execution_error",
        }, f"{what}: {failure.error_type}: {shown}"
    assert SECRET not in shown, f"{what}: the secret was shown"
    if not any(str(outside) in str(v) for v in args.values()):
        # Echoing the path the model gave is fine; revealing where a link leads is not.
        assert str(outside) not in shown, f"{what}: the outside path was named"
    assert snapshot(outside) == before, f"{what}: something outside changed"


async def test_writing_a_hard_linked_file_replaces_it_and_leaves_the_other_name_alone(
    tree: tuple[Path, Path],
) -> None:
    ws, outside = tree
    tool = BUILTIN_TOOLS[W]
    args = tool.args_model.model_validate({"path": "hard-link", "content": "mine\n"})
    await tool.run(args, ToolContext(workspace_root=ws))
    assert (ws / "hard-link").read_text() == "mine\n"
    assert (outside / "secret.txt").read_text() == f"{SECRET}\n"
    assert (ws / "hard-link").stat().st_nlink == 1
    assert sorted(p.name for p in ws.iterdir() if p.name.startswith(".")) == []
