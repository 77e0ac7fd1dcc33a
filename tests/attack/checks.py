"""What an attack row is, and how the attack tables (tests/attack/table.py,
tests/attack/policy_table.py) judge one: each check says the attack's GOAL was not reached (a
secret's value absent from all the attacker saw, a host file absent or unchanged, a process
gone, a loopback service silent, a fact the drive recorded), never how it was refused, so it
holds whatever way the defence is built; and the positive controls a row pairs with it,
which must see the same mechanism work on what the attacker may touch (tests/attack/mcp_rows.py).
"""

from __future__ import annotations

import os
import signal
import stat
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tests.attack.hostile import Outcome, Turn
from tests.attack.stack import AttackStack

Drive = Callable[[AttackStack, "Attack"], Awaitable[Outcome]]
Check = Callable[[AttackStack, Outcome], Awaitable[None] | None]


@dataclass(frozen=True)
class Attack:
    id: str
    tries: str
    # The attacker: "alice" (an owner, through her model), "admin" (the operator's single
    # token), "anonymous", or "frontend" (whoever reaches the Temporal frontend's port).
    owner: str
    via: str
    # The hostile scripted model's turns; empty where no model is involved.
    turns: list[Turn]
    goal_not_reached: Check
    # How it is delivered (set for rows whose ``via`` has no default, tests/attack/drives.py).
    drive: Drive | None = None
    notes: str = ""
    session: dict[str, Any] = field(default_factory=dict)
    # A documented exposure: the attack still reaches its goal, by design of a component
    # Seawall does not control, and the docs say so and what closes it (this text names
    # where). The row is a strict xfail: it fails the suite the day the attack stops working,
    # so the docs are updated with it.
    exposure: str = ""


# --- checks -----------------------------------------------------------------------------


def assert_absent(seen: str, values: dict[str, str]) -> None:
    found = [name for name, value in values.items() if value and value in seen]
    if found:
        value = values[found[0]]
        at = seen.index(value)
        context = seen[max(0, at - 300) : at].replace(value, "<secret>")
        raise AssertionError(f"the attacker saw {', '.join(found)}, after: ...{context}")


def secrets_absent(*names: str) -> Check:
    """None of the stack's secrets ``names`` (Secrets.named(); "bob's file" and "bob's
    stored payload" are bob's data) is in what the attacker saw."""

    def check(stack: AttackStack, outcome: Outcome) -> None:
        values = {**stack.secrets.named(), **bob_data(stack)}
        assert_absent(outcome.seen, {name: values[name] for name in names})

    return check


def bob_data(stack: AttackStack) -> dict[str, str]:
    return {
        "bob's file": stack.bob.get("secret", ""),
        "bob's stored payload": stack.bob.get("stored_secret", ""),
    }


EVERY_SECRET = (
    "alice's gateway token",
    "bob's gateway token",
    "the admin gateway token",
    "the codec token",
    "the model API key",
    "MY_DB_PASSWD",
    "the config file's model API key",
    "the MCP server's secret",
)


def all_of(*checks: Check) -> Check:
    async def check(stack: AttackStack, outcome: Outcome) -> None:
        for one in checks:
            done = one(stack, outcome)
            if done is not None:
                await done

    return check


def host_files_untouched(stack: AttackStack, outcome: Outcome) -> None:
    """No file this run's marker names appeared outside alice's workspace, and the
    operator's decoy file kept its content."""
    made = [
        path
        for path in (
            stack.data_dir / f"pwned-{stack.marker}",
            stack.workspaces / f"pwned-{stack.marker}",
            stack.operator_dir / f"pwned-{stack.marker}",
            stack.host_tmp_file(),
        )
        if os.path.lexists(path)
    ]
    assert not made, f"the attack made {[str(p) for p in made]}"
    assert stack.decoy_file.read_text() == ORIGINAL, "the operator's file was changed"


def bob_workspace_untouched(stack: AttackStack, outcome: Outcome) -> None:
    workspace = stack.bob["workspace"]
    assert not (workspace / f"pwned-{stack.marker}").exists(), "alice wrote into bob's workspace"
    assert (workspace / "bob-secret.txt").read_text() == stack.bob["secret"], "bob's file changed"
    branches = workspace / ".git" / "refs" / "heads"
    made = [b.name for b in branches.iterdir() if b.name.startswith(f"pwned-{stack.marker}")]
    assert not made, f"alice made branches in bob's repository: {made}"


ORIGINAL = "the operator's original content\n"  # the decoy file's (tests/attack/stack.py)
REACHED = "reach-ok-42"  # printed by a probe that connected; spelled $((40+2)) in the command


def unreachable(stack: AttackStack, outcome: Outcome) -> None:
    assert REACHED not in outcome.seen, "a loopback service answered the model's command"


def probe(port: str) -> str:
    """Connect to 127.0.0.1:<port> three ways; print REACHED for each that connects."""
    ok = "echo reach-ok-$((40+2))"
    return (
        f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && {ok}; "
        f"(exec 3<>/dev/tcp/localhost/{port}) 2>/dev/null && {ok}; "
        "python3 -c 'import socket,sys; "
        f'socket.create_connection(("127.0.0.1", {port}), 3); print("reach-ok-" + str(40+2))\''
        " 2>/dev/null; "
        "command -v curl >/dev/null && "
        f"curl -s -m 3 -o /dev/null http://127.0.0.1:{port}/ && {ok}; "
        "true"
    )


def marker_processes(marker: str) -> list[int]:
    """Host processes whose command line carries ``marker``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


async def no_survivor(stack: AttackStack, outcome: Outcome) -> None:
    """No process the prompt's commands started is still running once it has finished. A
    kill sent as the call ended may need a moment to land; one still there 30 s later is
    a survivor (and is killed here, having been started by this test)."""
    from tests.attack.hostile import until

    marker = f"{stack.marker}-survivor"

    async def gone() -> bool:
        return not marker_processes(marker)

    try:
        await until(gone, timeout=30)
    except TimeoutError:
        survivors = marker_processes(marker)
        for pid in survivors:
            os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"processes outlived the prompt: {survivors}") from None


def mode_of(path: Any) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def tool_results(outcome: Outcome, name: str) -> list[tuple[dict[str, Any], str]]:
    """(arguments, result text) of every call of tool ``name`` in the prompt's conversation."""
    messages = (outcome.facts.get("result") or {}).get("messages") or []
    calls = {c["call_id"]: c for m in messages for c in m.get("tool_calls") or []}
    found = []
    for message in messages:
        made = calls.get(message.get("tool_call_id") or "")
        if message.get("role") == "tool" and made and made["name"] == name:
            found.append((made.get("arguments") or {}, message.get("content") or ""))
    return found


# The shell rows' control: the same mechanism (a command in alice's sandbox) writes and
# reads a file of her own workspace, so a shell that never ran fails the row. The output is
# computed ($((40+2))), so the command's own text never matches.
SHELL_CONTROL = "echo own-$((40+2))-@{marker} > own-control.txt && cat own-control.txt"


def own_shell_ran(stack: AttackStack, outcome: Outcome) -> None:
    """The control: the shell wrote and read back a file in alice's own workspace."""
    said = f"own-42-{stack.marker}"
    results = tool_results(outcome, "run_shell_command")
    assert any(said in text for _, text in results), (
        f"the control failed, so the row proves nothing: a command in alice's own "
        f"workspace did not run: {[text[:300] for _, text in results]}\n{stack.logs()}"
    )


def fact(name: str, predicate: Callable[[Any], bool], what: str) -> Check:
    def check(stack: AttackStack, outcome: Outcome) -> None:
        value = outcome.facts.get(name)
        assert predicate(value), f"{what}: {name}={value!r} (all: {outcome.facts})"

    return check


# The dev server `seawall up` runs has no authentication: whoever reaches its frontend drives
# every workflow, and no worker-side check can tell that client from the gateway. Closed by
# authenticated Temporal: the ``frontend-mtls`` rows (tests/attack/table.py).
DEV_FRONTEND_EXPOSURE = (
    "the dev server (make run, seawall up) has no authentication: whoever reaches its "
    "frontend on loopback drives every workflow; a sandboxed model cannot reach it (the "
    "shell-reaches-* rows) and authenticated Temporal refuses such a client (the "
    'temporal-mtls-* rows): docs/security-temporal.md, "What `make run` does NOT protect"'
)
