"""The routes' FastAPI dependencies: the Temporal client, the caller, ownership and the parts
of the gateway every route shares.

``create_app`` (gateway/app.py) builds each part once and leaves it on ``app.state``; a
route names what it needs as a parameter (``client: TemporalClient``, ``owner_id: Caller``,
``dependencies=OwnedSession``) and FastAPI hands it in, so a route module holds no state of
its own and any number of apps (replicas, tests) share the same routers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated

import structlog
from fastapi import Depends, Header, HTTPException, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from temporalio.client import Client

from gateway.admission import OwnerAdmission
from gateway.errors import RETRY_AFTER
from gateway.middleware import OWNER_STATE_KEY
from gateway.ownership import SessionOwners
from gateway.settings import GatewaySettings

ClientFactory = Callable[[], Awaitable[Client]]

log = structlog.get_logger("seawall.gateway")


class TemporalConnection:
    """The app's one Temporal client, connected once (at startup, or on first use)."""

    def __init__(self, factory: ClientFactory) -> None:
        self._factory = factory
        self._client: Client | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> Client:
        if self._client is None:
            async with self._lock:
                if self._client is None:
                    try:
                        self._client = await self._factory()
                    except Exception as err:
                        log.warning("temporal_connect_failed", error=str(err))
                        raise HTTPException(
                            503,
                            "cannot connect to the Temporal service; try again shortly",
                            headers=RETRY_AFTER,
                        ) from err
        return self._client


async def temporal(request: Request) -> Client:
    """The app's Temporal client (a 503 while it cannot connect)."""
    connection: TemporalConnection = request.app.state.temporal
    return await connection.get()


TemporalClient = Annotated[Client, Depends(temporal)]


async def gateway_settings(request: Request) -> GatewaySettings:
    settings: GatewaySettings = request.app.state.settings
    return settings


Settings = Annotated[GatewaySettings, Depends(gateway_settings)]


async def caller(request: Request) -> str | None:
    """The authenticated owner (BearerTokenMiddleware); None for the single token, or none."""
    owner_id: str | None = getattr(request.state, OWNER_STATE_KEY, None)
    return owner_id


Caller = Annotated[str | None, Depends(caller)]


async def session_owners(request: Request) -> SessionOwners | None:
    """Each session's owner, remembered; None without an owners' tokens file (one
    principal, nothing to check)."""
    owners: SessionOwners | None = request.app.state.session_owners
    return owners


Owners = Annotated[SessionOwners | None, Depends(session_owners)]


async def owner_admission(request: Request) -> OwnerAdmission | None:
    """The per-owner limit and quotas (gateway/admission.py); None when neither applies."""
    admission: OwnerAdmission | None = request.app.state.admission
    return admission


Admission = Annotated[OwnerAdmission | None, Depends(owner_admission)]


async def owned_session(
    request: Request, session_id: str, client: TemporalClient, owners: Owners
) -> None:
    """404 unless the caller owns the session (with an owners' tokens file)."""
    if owners is not None:
        await owners.check(request, client, session_id)


async def owned_prompt(
    request: Request, prompt_id: str, client: TemporalClient, owners: Owners
) -> None:
    """404 unless the caller owns the prompt's session (with an owners' tokens file)."""
    if owners is not None:
        await owners.check_prompt(request, client, prompt_id)


OwnedSession = [Depends(owned_session)]
OwnedPrompt = [Depends(owned_prompt)]


async def check_prompt_size(request: Request, settings: Settings) -> None:
    """413 (not 422) for an oversized prompt: checked before the body is validated."""
    limit = settings.max_prompt_chars
    try:
        body = await request.json()
    except ValueError:
        return  # not JSON: the body validation answers
    text = body.get("text") if isinstance(body, dict) else None
    if isinstance(text, str) and len(text) > limit:
        raise HTTPException(
            413,
            f"the prompt is {len(text)} characters; the limit is {limit} "
            "(SEAWALL_MAX_PROMPT_CHARS)",
        )


# Enforced by BearerTokenMiddleware; declared as a dependency so the docs show the scheme.
_bearer = HTTPBearer(auto_error=False, description="SEAWALL_GATEWAY_TOKEN")


async def documented_auth(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
) -> None:
    return None


# A client that repeats a write after a 503/504 (or a dropped connection) sends the same key,
# and the write takes effect once: the key names the session, or becomes the Temporal update
# id, which the server deduplicates.
IdempotencyKey = Annotated[
    str,
    Header(
        alias="Idempotency-Key",
        description="repeat a request with the same key and it takes effect once",
        max_length=200,
    ),
]
