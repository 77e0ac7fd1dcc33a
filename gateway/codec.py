"""The codec endpoint: stored payloads resolved for the Temporal UI.

docs/architecture.md, "Long prompts". Payloads past the storage threshold sit in Temporal's
history as small External Storage references; the Temporal UI shows what a prompt saw only
if something turns a reference back into the payload. The UI's *codec server* protocol is
that something: it POSTs ``{"payloads": [...]}`` (the proto3 JSON of ``Payloads``) to
``<endpoint>/decode`` and shows what comes back. This module serves ``/codec/decode`` (each
reference replaced by the stored payload, read through the same drivers as the gateway's
client, every other payload unchanged) and ``/codec/encode`` (unchanged: Seawall encodes
nothing, and a payload the UI sends stays inline).

The routes are the gateway's: the bearer token guards them like every other route (the
gateway's middleware). A browser asks first with a CORS preflight, which carries no
credentials; :class:`CodecCors` answers it, for these paths and loopback origins only (the
UI of ``make run`` and of the compose stack, as the browser sees them).
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from fastapi import APIRouter, FastAPI, HTTPException, Request, Response
from google.protobuf import json_format
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.api.sdk.v1.external_storage_pb2 import ExternalStorageReference
from temporalio.client import Client
from temporalio.converter import (
    ExternalStorage,
    JSONProtoPayloadConverter,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
)

CODEC_PREFIX = "/codec"
REFERENCE_MESSAGE_TYPE = ExternalStorageReference.DESCRIPTOR.full_name.encode()
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
_REFERENCES = JSONProtoPayloadConverter()


def stored_reference(payload: Payload) -> ExternalStorageReference | None:
    """The External Storage reference ``payload`` is, if it is one."""
    if (
        payload.metadata.get("encoding") != b"json/protobuf"
        or payload.metadata.get("messageType") != REFERENCE_MESSAGE_TYPE
    ):
        return None
    reference = _REFERENCES.from_payload(payload, ExternalStorageReference)
    return reference if isinstance(reference, ExternalStorageReference) else None


async def resolve(storage: ExternalStorage | None, payloads: Sequence[Payload]) -> list[Payload]:
    """``payloads`` with every stored reference replaced by the payload it stands for."""
    drivers = {d.name(): d for d in storage.drivers} if storage else {}
    resolved = []
    for payload in payloads:
        reference = stored_reference(payload)
        if reference is None:
            resolved.append(payload)
            continue
        driver = drivers.get(reference.driver_name)
        if driver is None:
            raise HTTPException(
                422,
                f"a payload is stored by driver {reference.driver_name!r}, which this "
                "gateway is not configured with (payload_storage)",
            )
        claim = StorageDriverClaim(claim_data=dict(reference.claim_data))
        [stored] = await driver.retrieve(StorageDriverRetrieveContext(), [claim])
        resolved.append(stored)
    return resolved


def _payloads(body: bytes) -> Payloads:
    try:
        return json_format.Parse(body or b"{}", Payloads())
    except json_format.ParseError:
        raise HTTPException(400, 'the body must be {"payloads": [...]}') from None


def _answer(payloads: Sequence[Payload]) -> Response:
    body = json_format.MessageToJson(Payloads(payloads=payloads), indent=None)
    return Response(body, media_type="application/json")


def codec_router() -> APIRouter:
    """The codec routes. They read through the storage of the gateway's own Temporal client
    (``app.state.temporal``), so they resolve exactly what the gateway itself can."""
    router = APIRouter(prefix=CODEC_PREFIX, tags=["codec"])

    @router.post("/decode", summary="Resolve stored payloads (Temporal UI codec server)")
    async def decode(request: Request) -> Response:
        connected: Client = await request.app.state.temporal.get()
        payloads = _payloads(await request.body())
        storage = connected.data_converter.external_storage
        try:
            return _answer(await resolve(storage, payloads.payloads))
        except HTTPException:
            raise
        except Exception as err:  # a missing or corrupt payload, an unreachable bucket
            raise HTTPException(502, f"a stored payload could not be read: {err}") from None

    @router.post("/encode", summary="Payloads as sent (Temporal UI codec server)")
    async def encode(request: Request) -> Response:
        return _answer(_payloads(await request.body()).payloads)

    return router


def _loopback(origin: str) -> bool:
    try:
        host = urlsplit(origin).hostname
    except ValueError:
        return False
    return host in LOOPBACK_HOSTS


class CodecCors:
    """CORS for the codec paths: preflights answered before the token check (a browser
    sends none with them), and the allowed origin on the answers, for loopback origins."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(CODEC_PREFIX + "/"):
            await self.app(scope, receive, send)
            return
        origin = Headers(scope=scope).get("origin")
        allowed = origin is not None and _loopback(origin)
        if scope["method"] == "OPTIONS":
            headers = {"Vary": "Origin"}
            if allowed and origin is not None:
                headers |= {
                    "Access-Control-Allow-Origin": origin,
                    "Access-Control-Allow-Methods": "POST",
                    "Access-Control-Allow-Headers": "authorization, content-type, x-namespace",
                    "Access-Control-Max-Age": "600",
                }
            await Response(status_code=204 if allowed else 403, headers=headers)(
                scope, receive, send
            )
            return

        async def with_origin(message: Message) -> None:
            if message["type"] == "http.response.start" and allowed and origin is not None:
                message["headers"] = [
                    *message.get("headers", []),
                    (b"access-control-allow-origin", origin.encode("latin-1")),
                    (b"vary", b"Origin"),
                ]
            await send(message)

        await self.app(scope, receive, with_origin)


def install_codec(app: FastAPI) -> None:
    """Serve the codec routes on ``app`` (after its other middleware, so the CORS preflight
    is answered first)."""
    app.include_router(codec_router())
    app.add_middleware(CodecCors)
