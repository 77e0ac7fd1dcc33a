"""The gateway tests' shared fixture: gateway replicas with an owners' tokens file."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from temporalio.client import Client

from gateway.app import create_app
from gateway.settings import GatewaySettings
from tests.gateway.owner_helpers import OPERATOR_TOKEN, TOKENS, Gateway


@pytest.fixture
def owners() -> dict[str, str]:
    """Each test's own owner ids (each owner's admission workflow lives on the server)."""
    run = uuid.uuid4().hex[:8]
    return {name: f"owner-{name}-{run}" for name in TOKENS}


@pytest_asyncio.fixture
async def gateway(
    client: Client, task_queue: str, tmp_path: Path, owners: dict[str, str]
) -> AsyncIterator[Gateway]:
    """``await gateway(**settings)``: a new gateway app (as another replica, or a restarted
    one, would be) with the owners' tokens and the operator's token."""
    opened: list[httpx.AsyncClient] = []

    async def factory() -> Client:
        return client

    async def open_gateway(**overrides: Any) -> httpx.AsyncClient:
        settings = GatewaySettings(
            **{
                "task_queue": task_queue,
                "workspaces": tmp_path / "workspaces",
                "token": OPERATOR_TOKEN,
                "owner_tokens": {TOKENS[name]: owner for name, owner in owners.items()},
                "allow_scripted_models": True,
                **overrides,
            }
        )
        http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(settings, factory)),
            base_url="http://gateway",
            timeout=60,
        )
        opened.append(http)
        return http

    yield open_gateway
    for http in opened:
        await http.aclose()
