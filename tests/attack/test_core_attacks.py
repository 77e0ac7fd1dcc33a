"""The attack table's core rows (tests/attack/table.py): a client of the Temporal frontend,
the codec, the gateway's HTTP API and the data dir, against bob's sessions and the limits."""

from __future__ import annotations

import pytest

from tests.attack.stack import AttackStack
from tests.attack.table import Attack, rows, run

pytestmark = pytest.mark.timeout(600)


@pytest.mark.parametrize("attack", rows("core"))
async def test_an_attack_on_the_core_does_not_reach_its_goal(
    attack_stack: AttackStack, attack: Attack
) -> None:
    await run(attack_stack, attack)
