"""The data dir is its user's (seawall/runtime/private_files.py): after ``seawall up``'s
startup code, a data dir an older version left 0755 with 0644 files is 0700 throughout with
0600 files, the logs and pid files it writes are 0600, the dev server's database is 0600,
the payload store writes 0600 files in 0700 directories, and a workspace's own files are
left as the session made them inside a 0700 workspaces root."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

from temporalio.api.common.v1 import Payload
from temporalio.converter import StorageDriverStoreContext, StorageDriverWorkflowInfo

from seawall.cli.stack import Stack, StackConfig
from seawall.runtime.devserver import start_dev_server
from seawall.runtime.storage import FilesystemStorageDriver


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def loose_data_dir(root: Path) -> Path:
    """A data dir as an older version left it: 0755 directories, 0644 files."""
    data = root / ".data"
    for relative in ("temporal.db", "logs/worker.log", "run/worker.pid", "payloads/ab/cd"):
        (data / relative).parent.mkdir(parents=True, exist_ok=True)
        (data / relative).write_text("x")
    (data / "workspaces" / "s1").mkdir(parents=True)
    (data / "workspaces" / "s1" / "notes.txt").write_text("the user's")
    for path in [data, *data.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return data


def test_seawall_up_makes_the_data_dir_private_and_writes_private_logs_and_pids(
    tmp_path: Path,
) -> None:
    data = loose_data_dir(tmp_path)
    stack = Stack(StackConfig(data_dir=data), {})
    stack.prepare()
    process = stack._spawn("probe", [sys.executable, "-c", "pass"])
    process.wait()

    workspace_file = data / "workspaces" / "s1" / "notes.txt"
    for path in [data, *data.rglob("*")]:
        if path == workspace_file or path.parent == data / "workspaces":
            continue
        assert mode(path) == (0o700 if path.is_dir() else 0o600), path
    assert mode(data / "workspaces") == 0o700
    assert mode(data / "logs" / "probe.log") == 0o600
    assert mode(data / "run" / "probe.pid") == 0o600
    # A session's own files stay usable as it made them; the 0700 root keeps others out.
    assert mode(workspace_file) == 0o644


async def test_the_dev_server_database_is_private(tmp_path: Path) -> None:
    database = tmp_path / "temporal.db"
    env = await start_dev_server(database_file=str(database))
    await env.shutdown()
    assert database.exists()
    assert mode(database) == 0o600
    # One left looser by an older version is tightened when the server starts again.
    database.chmod(0o644)
    env = await start_dev_server(database_file=str(database))
    await env.shutdown()
    assert mode(database) == 0o600


async def test_the_payload_store_writes_private_files(tmp_path: Path) -> None:
    driver = FilesystemStorageDriver(tmp_path / "payloads")
    # A small payload (stored whole) and a long one (stored as chunks and their manifest).
    long = json.dumps({"messages": [{"content": f"{n} " * 5_000} for n in range(3)]})
    context = StorageDriverStoreContext(
        target=StorageDriverWorkflowInfo(namespace="default", id="wf-1", type="PromptWorkflow")
    )
    await driver.store(context, [Payload(data=b'"a payload"'), Payload(data=long.encode())])
    written = list((tmp_path / "payloads").rglob("*"))
    assert driver.chunks() and written
    for path in written:
        assert mode(path) == (0o700 if path.is_dir() else 0o600), path
