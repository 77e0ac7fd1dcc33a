"""The FastAPI app: a thin edge over the Temporal client (docs/architecture.md, "The picture").

``create_app`` only assembles: the parts every route shares (left on ``app.state`` for the
dependencies of gateway/dependencies.py), the middleware, one router per resource
(gateway/routers/), the error handlers, the codec endpoint and the lifespan that connects to
Temporal. All state lives in workflows, so the gateway can restart, or run as several
replicas, without losing anything.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import structlog
from fastapi import Depends, FastAPI, HTTPException
from temporalio.client import Client

from gateway.admission import OwnerAdmission
from gateway.api_models import ErrorBody
from gateway.codec import install_codec
from gateway.dependencies import ClientFactory, TemporalConnection, documented_auth
from gateway.errors import install_error_handlers
from gateway.middleware import (
    BearerTokenMiddleware,
    BodySizeLimitMiddleware,
    HeaderSizeLimitMiddleware,
)
from gateway.ownership import SessionOwners
from gateway.quotas import owner_quotas
from gateway.routers import health, permissions, prompts, sessions
from gateway.settings import GatewaySettings, check_exposure
from seawall.runtime.grants import GrantSigner, signing_client

__all__ = ["MAX_HEADER_BYTES", "ClientFactory", "create_app"]

# The most bytes of headers a request may carry (431 beyond).
MAX_HEADER_BYTES = 16 * 1024

log = structlog.get_logger("seawall.gateway")

DESCRIPTION = """\
Seawall runs each AI-agent prompt as a durable Temporal workflow. A **session** keeps the
conversation and runs its prompts one at a time, in order; each prompt's id is its
workflow id. Stream a prompt's agent updates from `/v1/prompts/{prompt_id}/events`
(server-sent events, resumable with `Last-Event-ID`).

Every `/v1` route needs `Authorization: Bearer <token>` when the gateway has a token (or
an owners' tokens file: the session records the token's owner).
Errors are JSON `{"detail": "..."}`.
"""
# A prompt's text may be JSON-escaped up to 12 bytes a character ("\\ud83d\\ude00").
BODY_BYTES_PER_CHAR = 12
BODY_OVERHEAD_BYTES = 64 * 1024

# The errors any /v1 route may answer, documented on each.
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 404, 409, 413, 422, 431, 503, 504)
}
# In this order in the API docs: the paths appear as their routers are included.
V1_ROUTERS = (sessions.router, permissions.router, prompts.router)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Connect to Temporal at startup; a failure is logged and requests retry it."""
    connection: TemporalConnection = app.state.temporal
    try:
        await connection.get()
        log.info("gateway_connected", address=app.state.settings.temporal_address)
    except HTTPException:
        pass  # logged; requests retry the connection
    yield


def create_app(settings: GatewaySettings, client_factory: ClientFactory) -> FastAPI:
    """Build the gateway; raises ``ConfigurationError`` for an exposed, token-less address."""
    check_exposure(settings)
    app = FastAPI(
        title="Seawall gateway",
        description=DESCRIPTION,
        version="0.1.0",
        lifespan=lifespan,
    )
    app.state.settings = settings
    key = settings.session_signing_key
    signer = GrantSigner(key) if key else None

    async def signing_factory() -> Client:
        # Every session and admission workflow this gateway starts is signed for the
        # worker to check (docs/security-trust.md; seawall/runtime/grants.py).
        client = await client_factory()
        return signing_client(client, signer) if signer is not None else client

    app.state.temporal = TemporalConnection(signing_factory)
    # Several owners share this gateway only with a tokens file; otherwise every caller is
    # the one principal, and neither ownership nor the per-owner limit applies.
    owned = bool(settings.owner_tokens)
    app.state.session_owners = SessionOwners() if owned else None
    limit = settings.max_concurrent_prompts_per_owner
    quotas = owner_quotas(settings)
    app.state.admission = (
        OwnerAdmission(settings.task_queue, limit, quotas)
        if owned and (limit > 0 or quotas is not None)
        else None
    )
    install_error_handlers(app)
    app.add_middleware(
        BodySizeLimitMiddleware,
        max_bytes=settings.max_prompt_chars * BODY_BYTES_PER_CHAR + BODY_OVERHEAD_BYTES,
    )
    # Added last, so it runs first: nothing is read for an unauthenticated request.
    app.add_middleware(BearerTokenMiddleware, token=settings.token, owners=settings.owner_tokens)
    # Added last, so it runs first: an oversized head is refused before anything reads it.
    app.add_middleware(HeaderSizeLimitMiddleware, max_bytes=MAX_HEADER_BYTES)
    for router in V1_ROUTERS:
        app.include_router(
            router, prefix="/v1", dependencies=[Depends(documented_auth)], responses=_ERRORS
        )
    app.include_router(health.router)
    install_codec(app)  # the Temporal UI's codec endpoint (gateway/codec.py)
    return app
