"""An mTLS-authenticated frontend for the attack suite: the TLS-terminating proxy of
tests/tls_helpers.py in front of the attack stack's dev server, which is what an
authenticated Temporal (docs/security-temporal.md) puts between a client and the cluster.

The stack's own processes keep using the dev server directly (they are unaffected); only the
attacker's client and the control client go through the proxy. The attackers trust the
server's CA (the best case for them) and offer no client certificate, or one of another CA.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.client import Client, TLSConfig

from seawall.runtime.plugin import SeawallPlugin
from tests.attack.stack import NAMESPACE, AttackStack
from tests.long_prompt_helpers import filesystem_storage
from tests.tls_helpers import Pki, TlsProxy


@dataclass(frozen=True)
class SecuredFrontend:
    proxy: TlsProxy  # requires a client certificate signed by ``pki``'s CA
    pki: Pki  # the frontend's own CA, its server certificate and the legitimate client's
    stranger: Pki  # another CA, with a client certificate of its own


def secured(stack: AttackStack) -> SecuredFrontend:
    frontend = stack.extras.get("secured_frontend")
    assert isinstance(frontend, SecuredFrontend), "the module starts no secured frontend"
    return frontend


async def _connect(stack: AttackStack, tls: TLSConfig) -> Client:
    return await Client.connect(
        secured(stack).proxy.address,
        namespace=NAMESPACE,
        tls=tls,
        plugins=[SeawallPlugin(storage=filesystem_storage(stack.data_dir / "payloads"))],
    )


async def without_a_client_certificate(stack: AttackStack) -> Client:
    """A client that trusts the frontend's CA but has no certificate of its own."""
    ca = secured(stack).pki.ca.read_bytes()
    return await _connect(stack, TLSConfig(server_root_ca_cert=ca))


async def with_another_cas_certificate(stack: AttackStack) -> Client:
    """A client whose certificate (and key) another CA signed."""
    frontend = secured(stack)
    return await _connect(
        stack,
        TLSConfig(
            server_root_ca_cert=frontend.pki.ca.read_bytes(),
            client_cert=frontend.stranger.client_cert.read_bytes(),
            client_private_key=frontend.stranger.client_key.read_bytes(),
        ),
    )


async def with_the_right_certificate(stack: AttackStack) -> Client:
    """The legitimate client: a certificate the frontend's CA signed (the control)."""
    pki = secured(stack).pki
    return await _connect(
        stack,
        TLSConfig(
            server_root_ca_cert=pki.ca.read_bytes(),
            client_cert=pki.client_cert.read_bytes(),
            client_private_key=pki.client_key.read_bytes(),
        ),
    )
