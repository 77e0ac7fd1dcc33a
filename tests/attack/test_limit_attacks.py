"""The ``limits`` rows (tests/attack/limit_rows.py): alice's model hogs memory, its /tmp, disk
(in one workspace, and across two of hers) and CPU on a stack with small sandbox limits,
beside bob's prompt; each hog must settle at its limit with its classified reason, its
control must succeed, and bob must not notice (docs/security.md, "The attack suite")."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from seawall.runtime.cgroups import controller_dirs
from tests.attack.limit_rows import (
    LIMIT_ROWS,
    STACK_ENV,
    beside_bob,
    check,
    check_owner_disk,
    owner_disk_beside_bob,
)
from tests.attack.stack import AttackStack

pytestmark = pytest.mark.timeout(600)

# The stack's sandbox limits (docs/settings.md, "The sandbox"), small so every hog is bounded.
__all__ = ["STACK_ENV"]

# Which cgroup controller each row's mechanism needs (the disk quota needs none).
NEEDS = {
    "limits-memory-hog": "memory",
    "limits-memory-in-tmp": "memory",
    "limits-cpu-hog": "cpu",
    "limits-owner-cpu": "cpu",
}


async def test_an_owner_cannot_pass_her_disk_quota_across_sessions(
    attack_stack: AttackStack,
) -> None:
    """First in this module, so no other row's files count against alice's quota."""
    first, second, bob = await owner_disk_beside_bob(attack_stack)
    try:
        check_owner_disk(attack_stack, first, second, bob)
    finally:
        # The operator removes her closed sessions' workspaces, so the rows after this one
        # start with her quota free (docs/security-sandbox.md, "Disk per owner").
        for outcome in (first, second):
            shutil.rmtree(outcome.facts["session"].workspace, ignore_errors=True)


@pytest.mark.parametrize("row", [pytest.param(r, id=r["id"]) for r in LIMIT_ROWS])
async def test_a_hog_stops_at_its_limit_and_bob_does_not_notice(
    attack_stack: AttackStack, row: dict[str, Any]
) -> None:
    needed = NEEDS.get(row["id"])
    if needed is not None and needed not in controller_dirs("seawall-sandbox"):
        pytest.skip(f"no writable {needed} cgroup on this host (docs/security-sandbox.md)")
    outcome = await beside_bob(attack_stack, row["turns"])
    check(row, attack_stack, outcome)
