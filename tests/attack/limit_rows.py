"""The attack table's ``limits`` rows: alice's hostile model tries to take the worker's memory,
CPU and disk from everyone, while bob's ordinary prompt runs alongside (docs/security.md,
"The attack suite"; docs/security-sandbox.md, "Resource limits").

Each row is one prompt of alice's (the owner's disk quota: two, in two sessions of hers):
first a control just under the limit, on the same mechanism (a smaller allocation, a
smaller write, a light command), which must succeed; then the hog (for the owner-wide cap,
two calls of one batch), which must settle with its classified reason (read from the event
stream's ``reason``, which comes from the outcome's error type, never from the output).
Bob's prompt runs at the same time and must finish with his output; nothing of his
changes. The stack runs with small limits (tests/attack/test_limit_attacks.py), so every
hog is bounded: tens of MB, a few seconds.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from tests.attack.hostile import Outcome, hostile_prompt, shell
from tests.attack.stack import AttackStack

MEMORY_LIMIT_MB = 64
DISK_QUOTA_MB = 16
# All of one owner's workspaces together: more than one workspace may hold, so the owner's
# quota binds only across two of them.
OWNER_DISK_QUOTA_MB = 24
CPU_MAX_PERCENT = 50
# All of one owner's sandboxes together: as much as one of them may take on its own.
OWNER_CPU_MAX_PERCENT = 50
STACK_ENV = {
    "SEAWALL_SANDBOX_MEMORY_MAX_MB": str(MEMORY_LIMIT_MB),
    "SEAWALL_SANDBOX_WORKSPACE_DISK_MB": str(DISK_QUOTA_MB),
    "SEAWALL_SANDBOX_CPU_MAX_PERCENT": str(CPU_MAX_PERCENT),
    "SEAWALL_SANDBOX_OWNER_CPU_MAX_PERCENT": str(OWNER_CPU_MAX_PERCENT),
    "SEAWALL_SANDBOX_OWNER_DISK_MB": str(OWNER_DISK_QUOTA_MB),
}

# The reasons the event stream gives (workflows/prompt/events.py).
OUT_OF_MEMORY = "stopped at the sandbox's memory limit"
DISK_QUOTA = "over a disk quota (its workspace's or its owner's)"
BOB_SAYS = "bob-ok-$((40+2))"
MIB = 1024 * 1024
# What a disk hog does once it has written: wait, so that the watched quota (which looks
# less often on a loaded machine) stops it before it could end by itself; a hog that ends
# on its own was not stopped, and its row fails.
HOLD = "; sleep 60"


def allocate(megabytes: int) -> str:
    """Allocate and touch ``megabytes`` in 8 MB steps, then say how much was held."""
    return (
        "python3 -c '\n"
        "held = []\n"
        f"for _ in range({megabytes // 8}):\n"
        "    held.append(bytearray(8 * 1024 * 1024))\n"
        '    held[-1][::4096] = b"x" * len(held[-1][::4096])\n'
        'print("held", 8 * len(held), "MB")\n'
        "'"
    )


def spin(report: str) -> str:
    """Spin three processes for 3 s and say, also into the workspace file ``report``, how
    much CPU they used in how long."""
    return SPIN.replace("tee cpu.txt", f"tee {report}")


SPIN = (
    "python3 -c '\n"
    "import os, time\n"
    "start = time.monotonic()\n"
    "kids = [os.fork() for _ in range(2)]\n"
    "while time.monotonic() - start < 3:\n"
    "    pass\n"
    "if 0 in kids:\n"
    "    os._exit(0)\n"
    "for _ in kids:\n"
    "    os.wait()\n"
    "t = os.times()\n"
    "used = t.user + t.system + t.children_user + t.children_system\n"
    'print(f"cpu-used {used:.2f} wall {time.monotonic() - start:.2f}")\n'
    "' | tee cpu.txt"
)

LIMIT_ROWS: list[dict[str, Any]] = [
    {
        "id": "limits-memory-hog",
        "tries": f"allocate 128 MB in 8 MB steps in one command (limit {MEMORY_LIMIT_MB} MB); "
        "control: 16 MB",
        "turns": [
            {"tool_calls": [shell(allocate(16))]},
            {"tool_calls": [shell(allocate(128))]},
        ],
        "reason": OUT_OF_MEMORY,
    },
    {
        "id": "limits-memory-in-tmp",
        "tries": "fill the sandbox's private /tmp (a tmpfs: memory) with 128 MB; control: 8 MB",
        "turns": [
            {"tool_calls": [shell("head -c 8m /dev/zero > /tmp/f && rm /tmp/f")]},
            {"tool_calls": [shell("head -c 128m /dev/zero > /tmp/f; " + allocate(48))]},
        ],
        "reason": OUT_OF_MEMORY,
    },
    {
        "id": "limits-disk-hog",
        "tries": f"write 8 files of 4 MB into the workspace (quota {DISK_QUOTA_MB} MB), each "
        "under the per-file limit; control: 8 MB, then removed",
        "turns": [
            {"tool_calls": [shell("head -c 8m /dev/zero > control && rm control")]},
            {
                "tool_calls": [
                    shell(
                        "for i in $(seq 1 8); do head -c 4m /dev/zero > part$i; sleep 0.5; done"
                        + HOLD
                    )
                ]
            },
        ],
        "reason": DISK_QUOTA,
    },
    {
        "id": "limits-cpu-hog",
        "tries": f"spin four processes for 3 s (cap {CPU_MAX_PERCENT}% of one core); "
        "control: a light command",
        "turns": [
            {"tool_calls": [shell("echo light")]},
            {"tool_calls": [shell(SPIN)]},
        ],
        "reason": None,  # the hog is slowed, not stopped: its CPU time is the check
    },
    {
        "id": "limits-owner-cpu",
        "tries": f"spin in two calls of one batch at once, each within the sandbox's cap of "
        f"{CPU_MAX_PERCENT}%, to take twice that (her owner's cap: {OWNER_CPU_MAX_PERCENT}%); "
        "control: a light command",
        "turns": [
            {"tool_calls": [shell("echo light")]},
            {"tool_calls": [shell(spin("cpu-1.txt")), shell(spin("cpu-2.txt"))]},
        ],
        "reason": None,
        # Both calls' CPU together, read from the files they wrote, against the owner's cap
        # (checked: with no owner cap the row fails, 2.35 s of CPU in 3.05 s).
        "cpu_reports": ["cpu-1.txt", "cpu-2.txt"],
        "cpu_cap": OWNER_CPU_MAX_PERCENT,
    },
]


def settled(events: str) -> list[dict[str, Any]]:
    """The ``tool_call_settled`` events of a prompt's event stream, in order."""
    found = []
    for line in events.splitlines():
        if line.startswith("data:"):
            with_data = line[len("data:") :].strip()
            try:
                event = json.loads(with_data)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("kind") == "tool_call_settled":
                found.append(event)
    return sorted(found, key=lambda e: e.get("seq", 0))


def _cpu_used(row: dict[str, Any], outcome: Outcome) -> tuple[float, float]:
    """The CPU seconds the row's spinning calls used together, and the longest wall time."""
    reports = row.get("cpu_reports")
    if reports is None:
        found = re.search(r"cpu-used ([\d.]+) wall ([\d.]+)", outcome.seen)
        assert found, "the CPU hog did not report its usage"
        return float(found.group(1)), float(found.group(2))
    workspace = outcome.facts["session"].workspace
    figures = []
    for name in reports:
        found = re.search(r"cpu-used ([\d.]+) wall ([\d.]+)", (workspace / name).read_text())
        assert found, f"a CPU hog did not report its usage: {name}"
        figures.append((float(found.group(1)), float(found.group(2))))
    return sum(u for u, _w in figures), max(w for _u, w in figures)


async def beside_bob(stack: AttackStack, turns: list[Any]) -> Outcome:
    """alice's hostile prompt and bob's ordinary one, at the same time."""
    alice, bob = await asyncio.gather(
        hostile_prompt(stack, "alice", turns),
        hostile_prompt(stack, "bob", [{"tool_calls": [shell(f"echo {BOB_SAYS}")]}]),
    )
    alice.facts["bob"] = bob
    return alice


def check(row: dict[str, Any], stack: AttackStack, outcome: Outcome) -> None:
    """The row's goal (taking more than the limit, or hurting bob) was not reached: the
    control succeeded, the hog settled with its reason (the CPU hog within its cap), bob's
    prompt finished with his output, and bob's file is unchanged."""
    calls = settled(outcome.seen)
    hogs = len(row["turns"][-1]["tool_calls"])
    assert len(calls) == 1 + hogs, f"expected the control and the hog to settle: {calls}"
    control, hog, *_ = calls
    assert control.get("status") == "success", f"the control failed, proving nothing: {control}"
    if row["reason"] is not None:
        assert hog.get("status") != "success", f"the hog was not stopped: {hog}"
        assert hog.get("reason") == row["reason"], f"the hog settled otherwise: {hog}"
    else:
        used, wall = _cpu_used(row, outcome)
        cap = row.get("cpu_cap", CPU_MAX_PERCENT)
        assert used <= cap / 100 * wall + 0.5, f"{used} s of CPU in {wall} s"
    bob = outcome.facts["bob"]
    assert "bob-ok-42" in bob.seen, f"bob did not finish: {settled(bob.seen)}"
    assert [c.get("status") for c in settled(bob.seen)] == ["success"]
    assert (stack.bob["workspace"] / "bob-secret.txt").read_text() == stack.bob["secret"]


# The owner's disk quota (docs/security-sandbox.md, "Disk per owner"): alice keeps 12 MB in
# one session's workspace, then in a second session writes a control that fits beside it
# (8 MB, removed again) and files of 2 MB one after another, each workspace staying under
# its own quota of 16 MB, until both together pass her 24 MB. The hogs wait after writing
# (HOLD), so the quota's watch stops them however slowly a loaded machine lets it look.
OWNER_DISK_FIRST = [{"tool_calls": [shell("head -c 12m /dev/zero > kept && echo kept")]}]
OWNER_DISK_SECOND = [
    {"tool_calls": [shell("head -c 8m /dev/zero > control && rm control")]},
    {
        "tool_calls": [
            shell("for i in $(seq 1 7); do head -c 2m /dev/zero > part$i; sleep 0.5; done" + HOLD)
        ]
    },
]
# bob, beside her second prompt, writes as much as her control in his own workspace.
BOB_WRITES = f"head -c 8m /dev/zero > mine && rm mine && echo {BOB_SAYS}"


async def owner_disk_beside_bob(stack: AttackStack) -> tuple[Outcome, Outcome, Outcome]:
    """alice's two prompts (two sessions) and, beside the second, bob's that writes."""
    first = await hostile_prompt(stack, "alice", OWNER_DISK_FIRST)
    second, bob = await asyncio.gather(
        hostile_prompt(stack, "alice", OWNER_DISK_SECOND),
        hostile_prompt(stack, "bob", [{"tool_calls": [shell(BOB_WRITES)]}]),
    )
    return first, second, bob


def check_owner_disk(stack: AttackStack, first: Outcome, second: Outcome, bob: Outcome) -> None:
    """The control fitting beside her kept file succeeded; the writes past her owner's quota
    settled with the disk quota's reason while neither workspace reached its own quota (so
    it was the owner's that bound); her kept file is intact; bob's prompt wrote and finished."""
    assert [c.get("status") for c in settled(first.seen)] == ["success"], first.seen[-2000:]
    control, hog = settled(second.seen)
    assert control.get("status") == "success", f"the control failed, proving nothing: {control}"
    assert hog.get("status") != "success", f"the writes were not stopped: {hog}"
    assert hog.get("reason") == DISK_QUOTA, f"the writes settled otherwise: {hog}"
    kept = first.facts["session"].workspace / "kept"
    assert kept.stat().st_size == 12 * MIB
    written = sum(p.stat().st_size for p in second.facts["session"].workspace.glob("part*"))
    assert written < DISK_QUOTA_MB * MIB, "the workspace's own quota could have stopped it"
    assert 12 * MIB + written <= (OWNER_DISK_QUOTA_MB + 4) * MIB, f"{written} bytes written"
    assert "bob-ok-42" in bob.seen, f"bob did not finish: {settled(bob.seen)}"
    assert [c.get("status") for c in settled(bob.seen)] == ["success"]
    assert (stack.bob["workspace"] / "bob-secret.txt").read_text() == stack.bob["secret"]
