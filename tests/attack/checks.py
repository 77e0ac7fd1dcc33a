"""What an attack row is and the checks of its goal (docs/security.md, "The attack suite"):
the rows of tests/attack/table.py and tests/attack/policy_table.py are built from these.

A check never depends on an error's wording: it looks at what the attacker saw (a secret's
value absent), a file on the host, a fact the drive recorded.
"""

from __future__ import annotations

import os
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
