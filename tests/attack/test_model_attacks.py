"""The attack table's model rows (tests/attack/table.py): a hostile scripted model in alice's
session, through the real gateway and worker, tries the shell, the file tools (racing their
path checks) and the operator's MCP server against bob and the operator."""

from __future__ import annotations

import pytest

from tests.attack.stack import AttackStack
from tests.attack.table import Attack, rows, run

pytestmark = pytest.mark.timeout(600)


@pytest.mark.parametrize("attack", rows("model"))
async def test_a_hostile_model_does_not_reach_its_goal(
    attack_stack: AttackStack, attack: Attack
) -> None:
    await run(attack_stack, attack)
