"""The loopback rows of the attack table (tests/attack/table.py) again, on a stack whose
operator allowed sandboxed processes the network: the host's loopback services (gateway,
Temporal, metrics) must stay unreachable even then (docs/security.md, "The sandbox")."""

from __future__ import annotations

import pytest

from tests.attack.stack import AttackStack
from tests.attack.table import Attack, rows, run

pytestmark = pytest.mark.timeout(600)

# The sandbox's network policy (docs/settings.md): "on" lets commands reach the network.
STACK_ENV = {"SEAWALL_SANDBOX_NETWORK": "on"}


@pytest.mark.parametrize("attack", rows("model", prefix="shell-reaches-"))
async def test_with_the_network_on_loopback_services_stay_unreachable(
    attack_stack: AttackStack, attack: Attack
) -> None:
    await run(attack_stack, attack)
