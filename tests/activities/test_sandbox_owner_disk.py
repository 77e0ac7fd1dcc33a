"""The disk quotas through the real supervisor, tool and sandbox (docs/security-sandbox.md,
"Disk per workspace", "Disk per owner"): all of one owner's workspaces together stay under
the owner's quota while another owner writes on, and a quota hit stops the sandbox that
wrote, not a call of the same batch that only read. Each hog has a control on the same
mechanism that must succeed; every write is a few MB.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from activities.sandbox import Sandbox, SandboxUnavailable
from activities.sandbox.owners import owner_group
from activities.tools.base import ToolFailure
from tests.activities.sandbox_helpers import owned_shell, real_sandbox
from workflows.contracts import ToolErrorType

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap")

ALICE = owner_group("alice@example.com", "test-key")
BOB = owner_group("bob@example.com", "test-key")
OWNER_QUOTA_MB = 12
WORKSPACE_QUOTA_MB = 64
# Files written one after another, each under what is left, so only the watch can stop them.
SPREAD = "for i in $(seq 1 8); do head -c 1m /dev/zero > part$i; sleep 0.3; done"


@pytest.fixture
def owners(tmp_path: Path) -> dict[str, Path]:
    """Three session workspaces (two of alice's, one of bob's) and the owners' index."""
    made = {name: tmp_path / name for name in ("alice-1", "alice-2", "bob-1", "index")}
    for path in made.values():
        path.mkdir()
    return {name: path.resolve() for name, path in made.items()}


def _sandbox(index: Path) -> Sandbox:
    return real_sandbox(
        owner_disk_index=index,
        workspace_disk_mb=WORKSPACE_QUOTA_MB,
        owner_disk_mb=OWNER_QUOTA_MB,
    )


async def test_the_owner_quota_binds_all_her_workspaces_and_not_another_owners(
    owners: dict[str, Path],
) -> None:
    sandbox = _sandbox(owners["index"])
    first, second, bobs = owners["alice-1"], owners["alice-2"], owners["bob-1"]
    # 8 MB in her first session's workspace, then a control just under what is left in her
    # second one (3 of 4 MB): both run.
    assert isinstance(await owned_shell(first, "head -c 8m /dev/zero > kept", sandbox, ALICE), str)
    control = await owned_shell(
        second, "head -c 3m /dev/zero > c && rm c && echo ok", sandbox, ALICE
    )
    assert isinstance(control, str) and "ok" in control, control
    # The same writes in her second workspace, past her quota over both: stopped, saying so.
    stopped = await owned_shell(second, SPREAD, sandbox, ALICE)
    assert isinstance(stopped, ToolFailure), stopped
    assert stopped.error_type is ToolErrorType.DISK_QUOTA_EXCEEDED
    assert f"the owner's disk quota of {OWNER_QUOTA_MB} MB" in stopped.message
    assert "other sessions' workspaces" in stopped.message
    assert len(list(second.glob("part*"))) < 8
    # One large file stops at what is left of her quota (4 MB), not of the workspace's.
    for part in second.glob("part*"):
        part.unlink()
    big = await owned_shell(second, "head -c 32m /dev/zero > big", sandbox, ALICE)
    assert isinstance(big, ToolFailure) and "File size limit exceeded" in big.message
    assert 3 * 1024 * 1024 < (second / "big").stat().st_size <= 4 * 1024 * 1024
    (second / "big").unlink()
    # bob writes as much as she could not, beside her, in his own workspace.
    bob, alice = await asyncio.gather(
        owned_shell(
            bobs, SPREAD.replace("sleep 0.3", "sleep 0.1") + " && echo bob-ok", sandbox, BOB
        ),
        owned_shell(second, SPREAD, sandbox, ALICE),
    )
    assert isinstance(bob, str) and "bob-ok" in bob, bob
    assert isinstance(alice, ToolFailure)
    assert alice.error_type is ToolErrorType.DISK_QUOTA_EXCEEDED


async def test_an_owner_over_her_quota_writes_nothing_until_a_workspace_goes(
    owners: dict[str, Path],
) -> None:
    sandbox = _sandbox(owners["index"])
    first, second = owners["alice-1"], owners["alice-2"]
    # Her first workspace holds more than her quota (written before it was set); a call there
    # that writes nothing lists it in the index.
    (first / "kept").write_bytes(b"\0" * (OWNER_QUOTA_MB + 1) * 1024 * 1024)
    assert isinstance(await owned_shell(first, "ls", sandbox, ALICE), str)
    full = await owned_shell(second, "echo more > more.txt", sandbox, ALICE)
    assert isinstance(full, ToolFailure), full
    assert full.error_type is ToolErrorType.DISK_QUOTA_EXCEEDED
    assert "already at the owner's disk quota" in full.message
    # The index names the workspace, never the owner, and lives where no sandbox looks.
    (entries,) = [list(d.iterdir()) for d in owners["index"].iterdir()]
    assert all(json.loads(e.read_text())["path"] in (str(first), str(second)) for e in entries)
    assert "alice" not in str(entries)
    assert {oct(e.stat().st_mode & 0o777) for e in entries} == {"0o600"}
    assert oct(owners["index"].joinpath(ALICE or "").stat().st_mode & 0o777) == "0o700"
    # The operator removes her first (closed) session's workspace: she writes again.
    for path in first.iterdir():
        path.unlink()
    first.rmdir()
    assert isinstance(await owned_shell(second, "echo more > more.txt", sandbox, ALICE), str)


async def test_a_quota_hit_stops_the_writer_not_a_reader_of_the_same_batch(ws: Path) -> None:
    """Two calls of one batch in one workspace: the one that writes past the quota is
    stopped; the one that only reads (while the workspace is over) finishes with its
    output. Without cgroups the watch cannot tell them apart and stops both."""
    sandbox = real_sandbox(workspace_disk_mb=6)
    if not sandbox.cgroups:
        pytest.skip("no cgroup lists a sandbox's processes here (docs/security-sandbox.md)")
    (ws / "notes.txt").write_text("read me\n")
    writer, reader = await asyncio.gather(
        owned_shell(ws, SPREAD, sandbox, None),
        owned_shell(
            ws,
            "for i in $(seq 1 12); do cat notes.txt > /dev/null; sleep 0.25; done; echo reader-ok",
            sandbox,
            None,
        ),
    )
    assert isinstance(writer, ToolFailure), writer
    assert writer.error_type is ToolErrorType.DISK_QUOTA_EXCEEDED
    assert isinstance(reader, str) and "reader-ok" in reader, reader


async def test_space_taken_without_a_write_is_stopped_too(ws: Path) -> None:
    """``fallocate`` takes blocks without writing a byte, so the kernel counts no write: the
    watch stops growth that no sandbox owns up to at its second look."""
    sandbox = real_sandbox(workspace_disk_mb=8)
    control = await owned_shell(ws, "fallocate -l 4M f0 && rm f0 && echo ok", sandbox, None)
    assert isinstance(control, str) and "ok" in control, control
    hog = "for i in $(seq 1 16); do fallocate -l 2M f$i; sleep 0.3; done"
    stopped = await owned_shell(ws, hog, sandbox, None)
    assert isinstance(stopped, ToolFailure), stopped
    assert stopped.error_type is ToolErrorType.DISK_QUOTA_EXCEEDED
    # 8 MB is four files; stopped within two looks past the fifth, not when it ends.
    assert len(list(ws.glob("f*"))) <= 7


def test_a_workspace_inside_the_owners_index_is_refused(owners: dict[str, Path]) -> None:
    sandbox = _sandbox(owners["index"])
    inside = owners["index"] / "o-0123456789abcdef"
    inside.mkdir()
    with pytest.raises(SandboxUnavailable):
        sandbox.launch(["/bin/true"], workspace=inside, cwd=inside, owner=ALICE)
