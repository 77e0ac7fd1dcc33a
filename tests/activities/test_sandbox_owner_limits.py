"""One owner's sandboxes bound together (docs/security-sandbox.md, "Resource limits"): every
sandbox of an owner sits in that owner's group, named by a pseudonym, whose CPU cap and
memory limit bind all of them at once, while another owner's sandboxes are in a group of
their own. Tried through the real supervisor and the real tool in the real sandbox, each
with a control on the same mechanism that must succeed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from activities.mcp.pool import McpPool
from activities.sandbox import Sandbox
from activities.sandbox.cgroup import sandbox_cgroup_roots
from activities.sandbox.owners import is_owner_group, owner_group
from activities.tool_runner import ToolActivities
from activities.tools import BUILTIN_TOOLS
from activities.tools.base import ToolFailure
from tests.activities.sandbox_helpers import owned_shell, real_sandbox
from tests.activities.test_sandbox_limits import SPIN, _limits, hog, needs
from tests.process_secrets import descendants_of
from tests.trust_helpers import TEST_SIGNING_KEY, harness_trust
from workflows.contracts import ToolErrorType
from workflows.contracts.activity import RunToolInput
from workflows.contracts.outcome import ToolCall

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap")

ALICE = owner_group("alice@example.com", "test-key")
BOB = owner_group("bob@example.com", "test-key")


def test_the_pseudonym_names_no_owner_and_depends_on_the_key() -> None:
    assert ALICE is not None and BOB is not None and ALICE != BOB
    assert "alice" not in ALICE and is_owner_group(ALICE)
    assert owner_group("alice@example.com", "test-key") == ALICE
    assert owner_group("alice@example.com", "another-key") != ALICE
    assert owner_group(None, "test-key") is None
    assert not is_owner_group("123-abcdef01") and not is_owner_group("o-alice")


def test_an_owners_sandboxes_share_one_group_holding_the_owner_limits(ws: Path) -> None:
    """alice's two sandboxes and bob's one, run by the supervisor on waiting commands:
    alice's share her group, bob's is in his, each group holds the owner-wide values and
    each sandbox its own (its cap never above its owner's); all are gone afterwards."""
    sandbox = real_sandbox(
        memory_max_mb=48, cpu_max_percent=150, owner_cpu_max_percent=80, owner_memory_max_mb=96
    )
    needs(sandbox, "memory")
    needs(sandbox, "cpu")
    launches = [(ALICE, ws / "a1"), (ALICE, ws / "a2"), (BOB, ws / "b")]
    processes = []
    for owner, workspace in launches:
        workspace.mkdir()
        launch = sandbox.launch(
            ["/bin/sleep", "30"], workspace=workspace, cwd=workspace, owner=owner
        )
        processes.append(subprocess.Popen(launch.argv, env=launch.env))
    try:
        groups = [_cgroups_of(sandbox, p.pid) for p in processes]
        read = {
            c: [_limits(c, sandbox.cgroups[c][0], g[c]) for g in groups] for c in sandbox.cgroups
        }
        owners = {c: [g[c].parent.name for g in groups] for c in sandbox.cgroups}
        owner_values = {
            c: _limits(c, sandbox.cgroups[c][0], groups[0][c].parent) for c in ("memory", "cpu")
        }
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)
    for controller in sandbox.cgroups:
        assert owners[controller] == [ALICE, ALICE, BOB]
    assert owner_values["memory"] == 96 * 1024 * 1024
    assert owner_values["cpu"] in (
        {"shares": 1024, "quota": 80_000},
        {"weight": 100, "max": 80_000},
    )
    assert read["memory"] == [48 * 1024 * 1024] * 3
    # 150 % asked per sandbox, 80 % for the owner: the sandbox's cap is the owner's.
    assert all(
        v in ({"shares": 1024, "quota": 80_000}, {"weight": 100, "max": 80_000})
        for v in read["cpu"]
    )
    for controller, (_v, root) in sandbox.cgroups.items():
        assert not (root / ALICE).exists() and not (root / BOB).exists(), controller


async def test_the_owner_memory_limit_binds_an_owners_sandboxes_and_not_another_owners(
    ws: Path,
) -> None:
    """Each of alice's two commands holds 48 MB, under the sandbox's 64 MB; together they
    pass her 80 MB, so one is stopped at the owner's limit. Alone, one runs (the control),
    and bob's 48 MB beside them runs too."""
    sandbox = real_sandbox(memory_max_mb=64, owner_memory_max_mb=80)
    needs(sandbox, "memory")
    alice, bob = ws / "alice", ws / "bob"
    alice.mkdir()
    bob.mkdir()
    control = await owned_shell(alice, hog(48), sandbox, ALICE)
    assert isinstance(control, str) and "held 48 MB" in control, control
    # Each holds its 48 MB until the other does too, so they overlap whatever the timing.
    results = await asyncio.gather(
        owned_shell(alice, _holding(48, "one"), sandbox, ALICE),
        owned_shell(alice, _holding(48, "two"), sandbox, ALICE),
        owned_shell(bob, hog(48), sandbox, BOB),
    )
    stopped = [r for r in results[:2] if isinstance(r, ToolFailure)]
    assert stopped, results
    for failure in stopped:
        assert failure.error_type is ToolErrorType.OUT_OF_MEMORY
        assert "the owner's memory limit of 80 MB" in failure.message, failure.message
    assert isinstance(results[2], str) and "held 48 MB" in results[2], results[2]


def _holding(megabytes: int, name: str) -> str:
    """Allocate ``megabytes``, mark ``name`` ready in the workspace, and hold the memory
    until the other of the pair is ready too (or 20 s pass: the other was stopped)."""
    return (
        "python3 -c '\n"
        "import os, time\n"
        f"held = [bytearray({megabytes} << 20)]\n"
        'held[0][::4096] = b"x" * len(held[0][::4096])\n'
        f'open("ready-{name}", "w").close()\n'
        "end = time.monotonic() + 20\n"
        'while len([n for n in os.listdir(".") if n.startswith("ready-")]) < 2:\n'
        "    if time.monotonic() > end:\n"
        "        break\n"
        "    time.sleep(0.05)\n"
        f'print("held", {megabytes}, "MB")\n'
        "'"
    )


async def test_the_owner_cpu_cap_bounds_all_of_an_owners_sandboxes_together(ws: Path) -> None:
    """Two of alice's commands, each spinning three processes for 2 s with no cap of their
    own, use together at most about half a core under her cap of 50 %."""
    sandbox = real_sandbox(owner_cpu_max_percent=50)
    needs(sandbox, "cpu")
    started = asyncio.get_running_loop().time()
    results = await asyncio.gather(
        owned_shell(ws, SPIN.format(seconds=2), sandbox, ALICE),
        owned_shell(ws, SPIN.format(seconds=2), sandbox, ALICE),
    )
    wall = asyncio.get_running_loop().time() - started
    assert all(isinstance(r, str) for r in results), results
    used = sum(float(str(r).split("cpu")[1].split()[0]) for r in results)
    assert used <= 0.5 * wall + 0.4, (used, wall)


def test_empty_owner_groups_are_removed_at_start() -> None:
    """What a SIGKILLed supervisor leaves (an owner's group holding an empty sandbox
    group) is removed when the worker makes its cgroups, on a subtree of this test's own."""
    subtree = f"seawall-sandbox-test-{os.getpid()}"
    roots = sandbox_cgroup_roots(subtree=subtree)
    try:
        if not roots:
            pytest.skip("no writable cgroup here (docs/security-sandbox.md)")
        for _version, root in roots.values():
            assert ALICE is not None
            (root / ALICE / "123-deadbeef").mkdir(parents=True)
        sandbox_cgroup_roots(subtree=subtree)
        for _version, root in roots.values():
            assert not (root / ALICE).exists()
    finally:
        for _version, root in roots.values():
            with contextlib.suppress(OSError):
                (root / ALICE / "123-deadbeef").rmdir()
            with contextlib.suppress(OSError):
                (root / ALICE).rmdir()
            with contextlib.suppress(OSError):
                root.rmdir()


def _cgroups_of(sandbox: Sandbox, launcher: int) -> dict[str, Path]:
    """Each controller's cgroup of the sandbox the supervisor ``launcher`` started, read from
    /proc (a process of its tree in a cgroup below the sandboxes' root)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found: dict[str, Path] = {}
        for pid in (launcher, *descendants_of(launcher)):
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
                    _id, controllers, path = line.split(":", 2)
                    for controller, (_v, root) in sandbox.cgroups.items():
                        if controller in controllers.split(",") and "/seawall-sandbox/" in path:
                            found[controller] = root / path.split("/seawall-sandbox/", 1)[1]
        if len(found) == len(sandbox.cgroups):
            return found
        time.sleep(0.05)
    raise AssertionError("the sandbox's cgroups did not appear")


async def test_the_tool_runner_puts_a_call_in_its_prompts_owners_group(ws: Path) -> None:
    """``RunToolInput.owner_id`` (the prompt's owner) reaches the sandbox as the pseudonym
    under the worker's key; a call without an owner sits directly under the sandboxes'
    root. The sandbox sees its own cgroup path (its cgroup namespace starts above it)."""
    sandbox = real_sandbox()
    if not sandbox.cgroups:
        pytest.skip("no writable cgroup here (docs/security-sandbox.md)")
    tools = ToolActivities(BUILTIN_TOOLS, McpPool(), sandbox=sandbox, trust=harness_trust())
    call = ToolCall(
        call_id="c1", name="run_shell_command", arguments={"command": "cat /proc/self/cgroup"}
    )
    owned = await tools.execute(
        RunToolInput(call=call, workspace_root=str(ws), owner_id="alice@example.com")
    )
    unowned = await tools.execute(RunToolInput(call=call, workspace_root=str(ws)))
    pseudonym = owner_group("alice@example.com", TEST_SIGNING_KEY)
    assert f"/seawall-sandbox/{pseudonym}/" in owned.content, owned.content
    assert "alice" not in owned.content
    assert "/seawall-sandbox/o-" not in unowned.content and "/seawall-sandbox/" in unowned.content
