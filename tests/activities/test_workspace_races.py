"""The file tools against a workspace that changes between their path check and their use.

A command running beside a file tool (another call of the same batch) can swap a directory
of a checked path for a symlink to somewhere outside, or a file for a hard link to one. Each
case here makes that swap exactly between the check (``resolve_in_workspace``) and the I/O
the tool then does (activities/tools/beneath.py), so the race is won every time: the tool
must refuse or stay inside, never read the secret or change the file outside.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from activities.tools import ToolFailure, files, resolve_in_workspace, search
from activities.tools.workspace import display_path
from workflows.contracts import ToolErrorType

SECRET = "TOPSECRET-race"


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """``ws/d/secret.txt`` (a decoy inside) and ``outside/secret.txt`` (the secret)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "secret.txt").write_text("decoy\n")
    return ws.resolve(), outside.resolve()


def checked(ws: Path, path: str) -> tuple[Path, str]:
    target = resolve_in_workspace(ws, path)
    return target, display_path(ws, target)


def swap_in_symlink(ws: Path, outside: Path) -> None:
    """What the racing command does once the path was checked: ``d`` becomes a symlink."""
    os.rename(ws / "d", ws / "d.real")
    (ws / "d").symlink_to(outside)


def test_a_directory_swapped_for_a_symlink_after_the_check_is_not_read(
    tree: tuple[Path, Path],
) -> None:
    ws, outside = tree
    target, shown = checked(ws, "d/secret.txt")
    swap_in_symlink(ws, outside)
    with pytest.raises(ToolFailure) as refused:
        files._read_text(ws, target, shown)
    assert refused.value.error_type == ToolErrorType.PATH_NOT_IN_WORKSPACE
    assert "changed while it was being used" in refused.value.message
    assert SECRET not in refused.value.message


def test_a_directory_swapped_for_a_symlink_after_the_check_is_not_written(
    tree: tuple[Path, Path],
) -> None:
    ws, outside = tree
    target, shown = checked(ws, "d/secret.txt")
    new, new_shown = checked(ws, "d/new.txt")
    swap_in_symlink(ws, outside)
    for path, name in ((target, shown), (new, new_shown)):
        with pytest.raises(ToolFailure) as refused:
            files._write_bytes(ws, path, name, b"pwned")
        assert refused.value.error_type == ToolErrorType.PATH_NOT_IN_WORKSPACE
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == f"{SECRET}\n"


def test_a_file_swapped_for_a_symlink_after_the_check_is_not_followed(
    tree: tuple[Path, Path],
) -> None:
    ws, outside = tree
    target, shown = checked(ws, "d/secret.txt")
    (ws / "d" / "secret.txt").unlink()
    (ws / "d" / "secret.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolFailure):
        files._read_text(ws, target, shown)
    with pytest.raises(ToolFailure):
        files._write_bytes(ws, target, shown, b"pwned")
    assert (outside / "secret.txt").read_text() == f"{SECRET}\n"


def test_a_file_swapped_for_a_hard_link_after_the_check_is_replaced_not_written_through(
    tree: tuple[Path, Path],
) -> None:
    ws, outside = tree
    target, shown = checked(ws, "d/secret.txt")
    (ws / "d" / "secret.txt").unlink()
    os.link(outside / "secret.txt", ws / "d" / "secret.txt")
    with pytest.raises(ToolFailure) as refused:
        files._read_text(ws, target, shown)
    assert SECRET not in refused.value.message
    files._write_bytes(ws, target, shown, b"mine\n")
    assert (ws / "d" / "secret.txt").read_text() == "mine\n"
    assert (ws / "d" / "secret.txt").stat().st_nlink == 1
    assert (outside / "secret.txt").read_text() == f"{SECRET}\n"


def test_grep_reads_nothing_through_a_directory_swapped_after_the_walk(
    tree: tuple[Path, Path],
) -> None:
    ws, outside = tree
    swap_in_symlink(ws, outside)
    hits, unreadable = search._grep_file(ws, "d/secret.txt", re.compile("SECRET"), 10)
    assert hits == [] and not unreadable


def test_list_directory_does_not_list_a_directory_swapped_after_the_check(
    tree: tuple[Path, Path],
) -> None:
    ws, outside = tree
    target, shown = checked(ws, "d")
    swap_in_symlink(ws, outside)
    with pytest.raises(ToolFailure) as refused:
        files._list(ws, target, shown)
    assert "secret.txt" not in refused.value.message
