"""The attack table's ``limits`` rows: alice's hostile model tries to take the worker's memory,
CPU and disk from everyone, while bob's ordinary prompt runs alongside (docs/security.md,
"The attack suite"; docs/security-sandbox.md, "Resource limits").

Each row is one prompt of alice's with two calls: first a control just under the limit,
on the same mechanism (a smaller allocation, a smaller write, a light command), which must
succeed; then the hog, which must settle with its classified reason (read from the event
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
CPU_MAX_PERCENT = 50
STACK_ENV = {
    "SEAWALL_SANDBOX_MEMORY_MAX_MB": str(MEMORY_LIMIT_MB),
    "SEAWALL_SANDBOX_WORKSPACE_DISK_MB": str(DISK_QUOTA_MB),
    "SEAWALL_SANDBOX_CPU_MAX_PERCENT": str(CPU_MAX_PERCENT),
}

# The reasons the event stream gives (workflows/prompt/events.py).
OUT_OF_MEMORY = "stopped at the sandbox's memory limit"
DISK_QUOTA = "over the workspace's disk quota"
BOB_SAYS = "bob-ok-$((40+2))"


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
                    shell("for i in $(seq 1 8); do head -c 4m /dev/zero > part$i; sleep 0.5; done")
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
    assert len(calls) == 2, f"expected the control and the hog to settle: {calls}"
    control, hog = calls
    assert control.get("status") == "success", f"the control failed, proving nothing: {control}"
    if row["reason"] is not None:
        assert hog.get("status") != "success", f"the hog was not stopped: {hog}"
        assert hog.get("reason") == row["reason"], f"the hog settled otherwise: {hog}"
    else:
        found = re.search(r"cpu-used ([\d.]+) wall ([\d.]+)", outcome.seen)
        assert found, "the CPU hog did not report its usage"
        used, wall = float(found.group(1)), float(found.group(2))
        assert used <= CPU_MAX_PERCENT / 100 * wall + 0.5, f"{used} s of CPU in {wall} s"
    bob = outcome.facts["bob"]
    assert "bob-ok-42" in bob.seen, "bob's prompt did not finish with his output"
    assert [c.get("status") for c in settled(bob.seen)] == ["success"]
    assert (stack.bob["workspace"] / "bob-secret.txt").read_text() == stack.bob["secret"]
