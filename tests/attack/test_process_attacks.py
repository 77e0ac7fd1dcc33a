"""The attack table's ``process`` rows (tests/attack/table.py, tests/attack/process_rows.py):
a reader of each kind of process's environment and memory (the gateway, the worker, a
model's command, the stdio MCP server, ``seawall run``, ``seawall acp``) and of every command
line on the host, looking for the secrets that process does not read."""

from __future__ import annotations

import pytest

from tests.attack.stack import AttackStack
from tests.attack.table import Attack, rows, run

pytestmark = pytest.mark.timeout(600)


@pytest.mark.parametrize("attack", rows("process"))
async def test_a_process_holds_no_secret_it_does_not_read(
    attack_stack: AttackStack, attack: Attack
) -> None:
    await run(attack_stack, attack)
