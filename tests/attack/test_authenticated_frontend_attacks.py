"""The attack table's ``frontend-mtls`` rows (tests/attack/table.py): the ``temporal-*``
attacks again, on an mTLS-authenticated frontend (docs/security-temporal.md), by a client
with no client certificate and by one whose certificate another CA signed. The frontend is
the TLS-terminating proxy of tests/tls_helpers.py in front of the stack's dev server; the
stack's own processes still use the dev server directly. A legitimate client through the
same proxy reads bob's history, so these rows can fail: the proxy does forward."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.attack.hostile import history_text
from tests.attack.secured_frontend import SecuredFrontend, with_the_right_certificate
from tests.attack.stack import AttackStack
from tests.attack.table import Attack, rows, run
from tests.tls_helpers import make_pki, tls_proxy

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
async def secured_stack(
    attack_stack: AttackStack, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[AttackStack]:
    """The module's stack with an mTLS frontend in front of its dev server."""
    certificates = tmp_path_factory.mktemp("frontend-pki")
    pki = make_pki(certificates / "frontend")
    stranger = make_pki(certificates / "stranger", "stranger")
    async with tls_proxy(pki, attack_stack.temporal_address, require_client_cert=True) as proxy:
        attack_stack.extras["secured_frontend"] = SecuredFrontend(proxy, pki, stranger)
        try:
            yield attack_stack
        finally:
            del attack_stack.extras["secured_frontend"]


@pytest.mark.parametrize("attack", rows("frontend-mtls"))
async def test_an_attack_on_the_authenticated_frontend_does_not_reach_its_goal(
    secured_stack: AttackStack, attack: Attack
) -> None:
    await run(secured_stack, attack)


async def test_a_client_with_the_right_certificate_reads_through_the_same_frontend(
    secured_stack: AttackStack,
) -> None:
    proxy = secured_stack.extras["secured_frontend"].proxy
    before = proxy.connections
    client = await with_the_right_certificate(secured_stack)

    history = await history_text(client, secured_stack.bob["prompt_id"])

    assert secured_stack.bob["secret"] in history
    assert proxy.connections > before
