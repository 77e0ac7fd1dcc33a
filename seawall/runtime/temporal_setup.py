"""Namespace setup the workflows rely on: the custom search attributes.

A prompt workflow that upserts an unregistered search attribute fails its workflow task
and retries forever, so the worker registers them before it polls, and fails fast with a
clear message if it may not.
"""

from __future__ import annotations

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.service import RPCError

from workflows.contracts import search_attributes


class NamespaceSetupError(RuntimeError):
    pass


async def ensure_search_attributes(client: Client, namespace: str) -> None:
    """Register Seawall's keyword search attributes that the namespace lacks."""
    try:
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
    except RPCError as err:
        names = ", ".join(key.name for key in search_attributes.ALL)
        raise NamespaceSetupError(
            f"cannot register the search attributes {names} on namespace {namespace!r}: "
            f"{err.message}. Register them as Keyword attributes, then start the worker."
        ) from err
