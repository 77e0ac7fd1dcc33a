"""The attack table's ACP rows (tests/attack/table.py): the hostile model through `seawall
acp`, the editor bridge, on the stack's worker."""

from __future__ import annotations

import pytest

from tests.attack.stack import AttackStack
from tests.attack.table import Attack, rows, run

pytestmark = pytest.mark.timeout(600)


@pytest.mark.parametrize("attack", rows("acp"))
async def test_a_hostile_model_over_acp_does_not_reach_its_goal(
    attack_stack: AttackStack, attack: Attack
) -> None:
    await run(attack_stack, attack)
