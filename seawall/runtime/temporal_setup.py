"""Namespace setup the workflows rely on: the custom search attributes.

A prompt workflow that upserts an unregistered search attribute fails its workflow task
and retries forever, so the worker registers them before it polls, and fails fast with a
clear message if it may not.

A namespace registered a moment ago (the compose file's namespace job, an operator's
``temporal operator namespace create``) reaches every frontend's namespace cache only after
its refresh interval (ten seconds by default), and until then the frontend answers "not
found". So a worker started right after it waits for it, a bounded number of times, before
it gives up with the same clear message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from workflows.contracts import search_attributes

# Waits for a namespace the frontend does not know yet: 0.5, 1, 2, then 4 seconds each, about
# half a minute in all (three refresh intervals of the namespace cache).
NAMESPACE_WAITS = (0.5, 1.0, 2.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0)


class NamespaceSetupError(RuntimeError):
    pass


async def ensure_search_attributes(
    client: Client,
    namespace: str,
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> None:
    """Register Seawall's keyword search attributes that the namespace lacks, waiting for a
    namespace the frontend does not know yet (:data:`NAMESPACE_WAITS`)."""
    waits = iter(NAMESPACE_WAITS)
    while True:
        try:
            await _register(client, namespace)
            return
        except RPCError as err:
            wait = next(waits, None) if err.status == RPCStatusCode.NOT_FOUND else None
            if wait is not None:
                await sleep(wait)
                continue
            names = ", ".join(key.name for key in search_attributes.ALL)
            raise NamespaceSetupError(
                f"cannot register the search attributes {names} on namespace {namespace!r}: "
                f"{err.message}. Register them as Keyword attributes, then start the worker."
            ) from err


async def _register(client: Client, namespace: str) -> None:
    listed = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=namespace)
    )
    missing = {
        key.name: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
        for key in search_attributes.ALL
        if key.name not in listed.custom_attributes
    }
    if missing:
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(namespace=namespace, search_attributes=missing)
        )
