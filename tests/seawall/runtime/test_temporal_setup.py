"""The worker's namespace setup (seawall/runtime/temporal_setup.py) on a real dev server: a
namespace the frontend knows gets its search attributes at once; one it does not know is
waited for a bounded number of times, then refused with one clear error."""

from __future__ import annotations

import pytest
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.client import Client

from seawall.runtime.temporal_setup import (
    NAMESPACE_WAITS,
    NamespaceSetupError,
    ensure_search_attributes,
)
from workflows.contracts import search_attributes

pytestmark = pytest.mark.asyncio


async def test_a_known_namespace_gets_its_attributes_without_waiting(client: Client) -> None:
    waited: list[float] = []

    async def sleep(seconds: float) -> None:
        waited.append(seconds)

    await ensure_search_attributes(client, client.namespace, sleep=sleep)
    listed = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=client.namespace)
    )
    assert {key.name for key in search_attributes.ALL} <= set(listed.custom_attributes)
    assert waited == []


async def test_an_unknown_namespace_is_waited_for_then_refused(client: Client) -> None:
    waited: list[float] = []

    async def sleep(seconds: float) -> None:  # the waits, without the wall clock
        waited.append(seconds)

    with pytest.raises(NamespaceSetupError, match=r"namespace 'never-created'.*not found"):
        await ensure_search_attributes(client, "never-created", sleep=sleep)
    assert waited == list(NAMESPACE_WAITS)
    assert 20 <= sum(NAMESPACE_WAITS) <= 60  # a few refresh intervals of the namespace cache
