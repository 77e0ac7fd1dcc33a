"""Editor-side file tools over ACP (docs/acp.md, "Editor-side tools"): with
``acp_client_tools: fs`` and an editor that offers ``fs/read_text_file`` and
``fs/write_text_file``, a session's ``read_file`` and ``write_file`` run in the editor (its
unsaved buffers, its diff), spoken to with the ACP SDK's own client side; an editor that does
not offer them gets the worker's tools. The hostile model's escapes are rows of the attack
table (tests/attack/table.py, ``acp-editor-fs-*``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.client.connection import ClientSideConnection
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    ToolCallProgress,
    WriteTextFileResponse,
)
from temporalio.testing import WorkflowEnvironment

from tests.e2e.test_acp import (
    Recorder,
    bridge_env,
    new_session,
    read,
    say,
    spawn_bridge,
    write,
)

FS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))


class Editor(Recorder):
    """An editor with buffers: a read answers a buffer's text (unsaved edits included) or
    the disk's, a write lands in its buffer (and on disk: it saves); every fs request is
    recorded. ``missing`` answers "resource not found"."""

    def __init__(self) -> None:
        super().__init__()
        self.buffers: dict[str, str] = {}
        self.fs_requests: list[tuple[str, str]] = []
        self.missing = False

    async def read_text_file(self, path: str, session_id: str, **kwargs: Any) -> Any:
        self.fs_requests.append(("read", path))
        if self.missing:
            raise RequestError.resource_not_found(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, content: str, path: str, session_id: str, **kwargs: Any) -> Any:
        self.fs_requests.append(("write", path))
        self.buffers[path] = content
        Path(path).write_text(content)
        return WriteTextFileResponse()


def settled_output(editor: Editor) -> list[str]:
    """The text of every settled call's output block."""
    return [
        block.content.text
        for update in editor.of(ToolCallProgress)
        if update.status in ("completed", "failed")
        for block in update.content or []
        if block.type == "content"
    ]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    (path / "notes.txt").write_text("remember the milk\n")
    return path


@pytest.fixture
async def editor_bridge(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path
) -> AsyncIterator[tuple[ClientSideConnection, Editor]]:
    env = {**bridge_env(temporal_env, task_queue, tmp_path), "SEAWALL_ACP_CLIENT_TOOLS": "fs"}
    editor = Editor()
    async with spawn_bridge(env, tmp_path / "acp.stderr", recorder=editor, capabilities=FS) as (
        conn,
        _,
        _,
    ):
        yield conn, editor


async def test_a_read_sees_the_editors_unsaved_buffer(
    editor_bridge: tuple[ClientSideConnection, Editor], workspace: Path
) -> None:
    conn, editor = editor_bridge
    notes = str(workspace / "notes.txt")
    editor.buffers[notes] = "an edit the user has not saved\n"
    session_id = await new_session(
        conn, workspace, [{"tool_calls": [read("notes.txt")]}, {"text": "read"}]
    )

    answer = await say(conn, session_id, "read notes.txt")

    assert answer.stop_reason == "end_turn"
    # The worker resolved the path; the editor was asked for the absolute one.
    assert editor.fs_requests == [("read", notes)]
    assert any("an edit the user has not saved" in text for text in settled_output(editor))
    assert [u.status for u in editor.of(ToolCallProgress)][-1] == "completed"


async def test_an_approved_write_goes_through_the_editor(
    editor_bridge: tuple[ClientSideConnection, Editor], workspace: Path
) -> None:
    conn, editor = editor_bridge
    session_id = await new_session(
        conn,
        workspace,
        [{"tool_calls": [write("sub/out.txt", "hello\n")]}, {"text": "written"}],
    )
    editor.answers.put_nowait("allow")

    answer = await say(conn, session_id, "write sub/out.txt")

    assert answer.stop_reason == "end_turn"
    target = str(workspace / "sub" / "out.txt")
    # Asked first (the approval mode still applies), then written by the editor only.
    assert len(editor.permissions) == 1
    assert editor.fs_requests == [("write", target)]
    assert editor.buffers[target] == "hello\n"
    assert any("Wrote 6 bytes to 'sub/out.txt'" in t for t in settled_output(editor))


async def test_a_rejected_write_never_reaches_the_editor(
    editor_bridge: tuple[ClientSideConnection, Editor], workspace: Path
) -> None:
    conn, editor = editor_bridge
    session_id = await new_session(
        conn, workspace, [{"tool_calls": [write("out.txt", "x")]}, {"text": "ok"}]
    )
    editor.answers.put_nowait("reject")

    await say(conn, session_id, "write out.txt")

    assert editor.fs_requests == []
    assert not (workspace / "out.txt").exists()


async def test_the_editors_not_found_is_the_models_file_not_found(
    editor_bridge: tuple[ClientSideConnection, Editor], workspace: Path
) -> None:
    conn, editor = editor_bridge
    editor.missing = True
    session_id = await new_session(
        conn, workspace, [{"tool_calls": [read("gone.txt")]}, {"text": "ok"}]
    )

    await say(conn, session_id, "read gone.txt")

    assert editor.fs_requests == [("read", str(workspace / "gone.txt"))]
    [failed] = [u for u in editor.of(ToolCallProgress) if u.status == "failed"]
    assert "'gone.txt' does not exist" in repr(failed.content)


async def test_a_path_outside_the_workspace_never_reaches_the_editor(
    editor_bridge: tuple[ClientSideConnection, Editor], workspace: Path, tmp_path: Path
) -> None:
    conn, editor = editor_bridge
    (tmp_path / "secret.txt").write_text("s3cr3t")
    (workspace / "link").symlink_to(tmp_path)
    calls = [read("../secret.txt"), read(str(tmp_path / "secret.txt")), read("link/secret.txt")]
    session_id = await new_session(conn, workspace, [{"tool_calls": calls}, {"text": "ok"}])

    await say(conn, session_id, "read the secret")

    assert editor.fs_requests == []
    assert [u.status for u in editor.of(ToolCallProgress)].count("failed") == 3
    assert "s3cr3t" not in repr(editor.updates)


async def test_an_editor_without_fs_gets_the_workers_tools(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, workspace: Path
) -> None:
    env = {**bridge_env(temporal_env, task_queue, tmp_path), "SEAWALL_ACP_CLIENT_TOOLS": "fs"}
    editor = Editor()
    async with spawn_bridge(env, tmp_path / "acp.stderr", recorder=editor) as (conn, _, _):
        session_id = await new_session(
            conn, workspace, [{"tool_calls": [read("notes.txt")]}, {"text": "read"}]
        )
        await say(conn, session_id, "read notes.txt")

    assert editor.fs_requests == []
    assert any("remember the milk" in text for text in settled_output(editor))


async def test_with_the_setting_off_an_editor_offering_fs_is_not_asked(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, workspace: Path
) -> None:
    env = bridge_env(temporal_env, task_queue, tmp_path)
    editor = Editor()
    async with spawn_bridge(env, tmp_path / "acp.stderr", recorder=editor, capabilities=FS) as (
        conn,
        _,
        _,
    ):
        session_id = await new_session(
            conn, workspace, [{"tool_calls": [read("notes.txt")]}, {"text": "read"}]
        )
        await say(conn, session_id, "read notes.txt")

    assert editor.fs_requests == []
