"""ASGI middleware that refuses a request before FastAPI reads its body.

Authentication and the body-size cap have to run first: a route's body is parsed (and a
malformed one answered with 400) before its dependencies run, so a check done in a
dependency would tell an unauthenticated caller about its JSON, and a huge body would be
buffered whole before anyone looked at its size.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Served without a token: the health check, and the API's docs and schema, which describe
# what this repository's docs/http-api.md already publishes and nothing of any session. A
# browser cannot send a bearer header, so the banner's docs link would otherwise answer 401;
# the docs page's "Authorize" button takes the token for the calls made from it.
PUBLIC_PATHS = frozenset({"/healthz", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"})
# How a refused caller gets a token in (the CLI's flag and the setting both clients read).
TOKEN_HINT = "seawall prompt: --token or SEAWALL_GATEWAY_TOKEN"


# Where the middleware leaves the authenticated owner for the routes: ``request.state``.
OWNER_STATE_KEY = "owner_id"


def token_matches(authorization: str | None, token: str) -> bool:
    """``Authorization: Bearer <token>``, compared in constant time."""
    scheme, _, presented = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(presented.strip().encode(), token.encode())


class Authenticated:
    """A presented token matched: the owner it belongs to (None for the single
    ``SEAWALL_GATEWAY_TOKEN``, which names no owner)."""

    def __init__(self, owner_id: str | None) -> None:
        self.owner_id = owner_id


def authenticate(
    authorization: str | None, token: str | None, owners: Mapping[str, str]
) -> Authenticated | None:
    """Who presented ``authorization``: the single token, or one of the owners' tokens
    (token -> owner id). Every configured token is compared, in constant time each and with
    no early exit, so the timing says nothing about which one (or how much of one) matched."""
    scheme, _, presented = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    given = presented.strip().encode()
    found: Authenticated | None = None
    for candidate, owner_id in owners.items():
        if hmac.compare_digest(given, candidate.encode()):
            found = Authenticated(owner_id)
    if token is not None and hmac.compare_digest(given, token.encode()) and found is None:
        found = Authenticated(None)
    return found


class BearerTokenMiddleware:
    """Every path but ``PUBLIC_PATHS`` needs a bearer token when any is configured: the
    single ``token`` or one of the owners' tokens (``owners``: token -> owner id, from the
    operator's tokens file). The owner lands in ``request.state.owner_id``; no token or
    owner is ever logged."""

    def __init__(
        self, app: ASGIApp, token: str | None, owners: Mapping[str, str] | None = None
    ) -> None:
        self.app = app
        self.token = token
        self.owners = dict(owners or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in PUBLIC_PATHS:
            await self.app(scope, receive, send)
            return
        if self.token is None and not self.owners:
            scope.setdefault("state", {})[OWNER_STATE_KEY] = None
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        authorization = headers.get("authorization")
        who = authenticate(authorization, self.token, self.owners)
        if who is not None:
            scope.setdefault("state", {})[OWNER_STATE_KEY] = who.owner_id
            await self.app(scope, receive, send)
            return
        detail = (
            f"missing bearer token: send 'Authorization: Bearer <token>' ({TOKEN_HINT})"
            if not authorization
            else f"invalid bearer token: not the gateway's token nor an owner's ({TOKEN_HINT})"
        )
        response = JSONResponse(
            {"detail": detail}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
        )
        await response(scope, receive, send)


class BodySizeLimitMiddleware:
    """Refuse request bodies over ``max_bytes`` (declared or actually sent) with 413."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _detail(self) -> str:
        return f"request body is larger than {self.max_bytes} bytes"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            response = JSONResponse({"detail": self._detail()}, status_code=413)
            await response(scope, receive, send)
            return
        received = 0

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # FastAPI re-raises an HTTPException met while reading the body.
                    raise HTTPException(status_code=413, detail=self._detail())
            return message

        await self.app(scope, counting_receive, send)


class HeaderSizeLimitMiddleware:
    """Refuse requests whose headers together pass ``max_bytes`` with 431, before any route
    (or the token check) reads them: a client cannot make the gateway hold or parse
    arbitrarily large heads."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            size = sum(len(name) + len(value) for name, value in scope.get("headers", ()))
            if size > self.max_bytes:
                detail = f"request headers are larger than {self.max_bytes} bytes"
                response = JSONResponse({"detail": detail}, status_code=431)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
