"""The real gateway served by uvicorn on a real port, for the terminal client's tests."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from temporalio.client import Client

from gateway.app import create_app
from gateway.settings import GatewaySettings

TOKEN = "client-test-token"


@asynccontextmanager
async def serve_gateway(client: Client, **settings: Any) -> AsyncIterator[str]:
    """Serve a gateway with ``settings`` (and :data:`TOKEN`) on a free loopback port; yields
    its URL."""
    # Bound here and handed to uvicorn, so no other process can take the port meanwhile.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    gateway_settings = GatewaySettings(port=port, token=TOKEN, **settings)

    async def factory() -> Client:
        return client

    config = uvicorn.Config(create_app(gateway_settings, factory), log_config=None, lifespan="on")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            assert not serving.done(), "uvicorn stopped while starting"
            await asyncio.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving
        sock.close()
