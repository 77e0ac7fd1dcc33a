"""The codec endpoint: stored payloads resolved for the Temporal UI.

gateway/codec_scope.py. Payloads past the storage threshold sit in Temporal's
history as small External Storage references; the Temporal UI shows what a prompt saw only
if something turns a reference back into the payload. The UI's *codec server* protocol is
that something: it POSTs ``{"payloads": [...]}`` (the proto3 JSON of ``Payloads``) to
``<endpoint>/decode`` and shows what comes back. This module serves ``decode`` (each
reference replaced by the stored payload, read through the same drivers as the gateway's
client, every other payload unchanged) and ``encode`` (unchanged: Seawall encodes nothing,
and a payload the UI sends stays inline), at two endpoints, both authenticated:

- ``/codec``: behind the gateway's bearer token like every other route (the gateway's
  middleware), for API clients and scripts. An owner's token (an owners' tokens file)
  decodes only its own sessions' payloads; the operator's reads every one
  (gateway/codec_scope.py);
- ``/codec/ui/<codec token>``: the endpoint the Temporal UI is configured with. The UI calls
  its codec endpoint from the browser, which can add no header of ours (the UI forwards only
  its own OIDC token, and only to an https endpoint), so the credential is part of the URL:
  the operator's ``codec_token``, a narrower one than the gateway's (it decodes references
  read from Temporal's history; it starts nothing and reads no session). The UI serves its
  settings, this URL among them, to whoever can open it, so the credential is as visible as
  the histories it decodes; it is kept out of the access log, and this endpoint answers only
  a request whose ``Origin`` is one of ``codec_ui_origins`` (what the UI's browser sends).
  A script that read the credential can forge the header, so the bound that matters is the
  references: a stranger without access to Temporal's history has none to send, and every
  one naming a workflow must be one the store recorded for it (gateway/codec_scope.py).

A reference a caller may not read, and one that names no stored payload, get one answer
(404, :data:`UNKNOWN_REFERENCE_DETAIL`). A browser asks first with a CORS preflight, which
carries no credentials; :class:`CodecAccess` answers it for the configured UI origins only
(``codec_ui_origins``) and puts the allowed origin on the answers.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Request, Response
from fastapi.responses import JSONResponse
from google.protobuf import json_format
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.api.sdk.v1.external_storage_pb2 import ExternalStorageReference
from temporalio.client import Client, RPCTimeoutOrCancelledError
from temporalio.converter import (
    ExternalStorage,
    JSONProtoPayloadConverter,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from gateway.codec_scope import EVERYTHING, CodecReader, UnknownReference, check_reference
from gateway.middleware import OWNER_STATE_KEY
from seawall.runtime.storage import STORED_PAYLOAD_MISSING
from seawall.runtime.storage_s3 import StoredObjectMissing

CODEC_PREFIX = "/codec"
UI_PREFIX = "/codec/ui/"
ACTIONS = frozenset({"decode", "encode"})
# The UI sends the payloads of one history event at a time; each is under Temporal's 2 MB
# payload limit.
MAX_CODEC_BODY_BYTES = 8 * 1024 * 1024
UI_ORIGIN_ONLY = (
    "the UI's codec endpoint answers the Temporal UI's browser only (an Origin of "
    "codec_ui_origins); scripts use /codec with a bearer token"
)
REFERENCE_MESSAGE_TYPE = ExternalStorageReference.DESCRIPTOR.full_name.encode()
_REFERENCES = JSONProtoPayloadConverter()


class CodecError(Exception):
    """A codec request that fails with ``status`` and ``detail``."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def stored_reference(payload: Payload) -> ExternalStorageReference | None:
    """The External Storage reference ``payload`` is, if it is one."""
    if (
        payload.metadata.get("encoding") != b"json/protobuf"
        or payload.metadata.get("messageType") != REFERENCE_MESSAGE_TYPE
    ):
        return None
    reference = _REFERENCES.from_payload(payload, ExternalStorageReference)
    return reference if isinstance(reference, ExternalStorageReference) else None


# What the codec answers for a reference it cannot resolve for its caller: missing from the
# store, made up, or another owner's (gateway/codec_scope.py) get this one answer.
UNKNOWN_REFERENCE_STATUS = 404
UNKNOWN_REFERENCE_DETAIL = (
    "a stored payload is unknown: it is not in the payload store (removed, or stored under "
    "another payload_storage_dir or bucket), or this token may not read it"
)
Check = Callable[[ExternalStorageReference], Awaitable[None]]


def unknown_reference() -> CodecError:
    return CodecError(UNKNOWN_REFERENCE_STATUS, UNKNOWN_REFERENCE_DETAIL)


def is_missing(err: BaseException) -> bool:
    """Whether ``err`` is a driver saying no payload is stored under a reference."""
    if isinstance(err, ApplicationError) and err.type == STORED_PAYLOAD_MISSING:
        return True
    return isinstance(err.__cause__, StoredObjectMissing)


async def resolve(
    storage: ExternalStorage | None, payloads: Sequence[Payload], check: Check
) -> list[Payload]:
    """``payloads`` with every stored reference replaced by the payload it stands for, each
    one first passed through ``check`` (which raises :class:`UnknownReference` for one its
    caller may not read)."""
    drivers = {d.name(): d for d in storage.drivers} if storage else {}
    resolved = []
    for payload in payloads:
        reference = stored_reference(payload)
        if reference is None:
            resolved.append(payload)
            continue
        driver = drivers.get(reference.driver_name)
        if driver is None:
            raise CodecError(
                422,
                f"a payload is stored by driver {reference.driver_name!r}, which this "
                "gateway is not configured with (payload_storage)",
            )
        try:
            await check(reference)
        except UnknownReference:
            raise unknown_reference() from None
        claim = StorageDriverClaim(claim_data=dict(reference.claim_data))
        try:
            [stored] = await driver.retrieve(StorageDriverRetrieveContext(), [claim])
        except Exception as err:
            if is_missing(err):
                raise unknown_reference() from None
            raise
        resolved.append(stored)
    return resolved


def _payloads(body: bytes) -> Payloads:
    try:
        return json_format.Parse(body or b"{}", Payloads())
    except json_format.ParseError:
        raise CodecError(400, 'the body must be {"payloads": [...]}') from None


async def answer(app: Any, action: str, body: bytes, reader: CodecReader) -> Response:
    """The answer to ``action`` (``decode`` or ``encode``) on ``body`` for ``reader``, read
    through the storage of the gateway's own Temporal client (``app.state.temporal``), so
    the codec resolves exactly what the gateway itself can, and of that only what
    ``reader`` may read (gateway/codec_scope.py). Raises :class:`CodecError`; a failure to
    ask Temporal for a session's owner propagates as the gateway's other routes' do."""
    payloads: Sequence[Payload] = _payloads(body).payloads
    if action == "decode":
        connected: Client = await app.state.temporal.get()
        storage = connected.data_converter.external_storage

        async def check(reference: ExternalStorageReference) -> None:
            await check_reference(
                reference,
                reader,
                client=connected,
                storage=storage,
                owners=app.state.session_owners,
            )

        try:
            payloads = await resolve(storage, payloads, check)
        except (CodecError, HTTPException, RPCError, RPCTimeoutOrCancelledError):
            raise
        except Exception as err:  # a corrupt payload, an unreachable bucket
            raise CodecError(502, f"a stored payload could not be read: {err}") from None
    body_out = json_format.MessageToJson(Payloads(payloads=payloads), indent=None)
    return Response(body_out, media_type="application/json")


def codec_router() -> APIRouter:
    """The bearer-token codec routes (``/codec/decode``, ``/codec/encode``)."""
    router = APIRouter(prefix=CODEC_PREFIX, tags=["codec"])

    async def handle(request: Request, action: str) -> Response:
        # The bearer token's owner (BearerTokenMiddleware): an owner's token reads its own
        # sessions' payloads only; the operator's (no owner) reads every one.
        reader = CodecReader(owner_id=getattr(request.state, OWNER_STATE_KEY, None))
        try:
            return await answer(request.app, action, await request.body(), reader)
        except CodecError as err:
            raise HTTPException(err.status, err.detail) from None

    @router.post("/decode", summary="Resolve stored payloads (Temporal UI codec server)")
    async def decode(request: Request) -> Response:
        return await handle(request, "decode")

    @router.post("/encode", summary="Payloads as sent (Temporal UI codec server)")
    async def encode(request: Request) -> Response:
        return await handle(request, "encode")

    return router


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The request body, or None past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


class CodecAccess:
    """The codec paths' gate, ahead of the gateway's other middleware: CORS for the
    configured UI origins (preflights answered before any token check: a browser sends none
    with them), and the UI's endpoint, ``/codec/ui/<codec token>/{decode,encode}``, served
    here against the codec token (module docstring)."""

    def __init__(self, app: ASGIApp, token: str | None, origins: Sequence[str]) -> None:
        self.app = app
        self.token = token
        self.origins = frozenset(origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(CODEC_PREFIX + "/"):
            await self.app(scope, receive, send)
            return
        origin = Headers(scope=scope).get("origin")
        allowed = origin if origin in self.origins else None
        if scope["method"] == "OPTIONS":
            await self._preflight(allowed)(scope, receive, send)
            return

        async def with_origin(message: Message) -> None:
            if message["type"] == "http.response.start" and allowed is not None:
                message["headers"] = [
                    *message.get("headers", []),
                    (b"access-control-allow-origin", allowed.encode("latin-1")),
                    (b"vary", b"Origin"),
                ]
            await send(message)

        if scope["path"].startswith(UI_PREFIX):
            response = await self._ui_endpoint(scope, receive, allowed is not None)
            await response(scope, receive, with_origin)
            return
        await self.app(scope, receive, with_origin)

    def _preflight(self, allowed: str | None) -> Response:
        headers = {"Vary": "Origin"}
        if allowed is not None:
            headers |= {
                "Access-Control-Allow-Origin": allowed,
                "Access-Control-Allow-Methods": "POST",
                "Access-Control-Allow-Headers": "authorization, content-type, x-namespace",
                "Access-Control-Max-Age": "600",
            }
        return Response(status_code=204 if allowed else 403, headers=headers)

    async def _ui_endpoint(self, scope: Scope, receive: Receive, from_ui: bool) -> Response:
        credential, _, action = scope["path"][len(UI_PREFIX) :].rpartition("/")
        if self.token is None or not hmac.compare_digest(
            credential.encode("utf-8"), self.token.encode("utf-8")
        ):
            return JSONResponse({"detail": "invalid codec credential"}, status_code=401)
        if action not in ACTIONS or scope["method"] != "POST":
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        if not from_ui:
            # The UI's browser always sends its Origin; anything else (a script that read
            # the credential) uses /codec with a bearer token (module docstring).
            return JSONResponse({"detail": UI_ORIGIN_ONLY}, status_code=403)
        body = await _read_body(receive, MAX_CODEC_BODY_BYTES)
        if body is None:
            return JSONResponse(
                {"detail": f"the body is over {MAX_CODEC_BODY_BYTES} bytes"}, status_code=413
            )
        try:
            return await answer(scope["app"], action, body, EVERYTHING)
        except CodecError as err:
            return JSONResponse({"detail": err.detail}, status_code=err.status)


class HideCodecCredential(logging.Filter):
    """Keeps the codec token out of the access log: uvicorn logs each request's path."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and len(record.args) >= 3:
            path = record.args[2]
            if isinstance(path, str) and path.startswith(UI_PREFIX):
                action = path.rpartition("/")[2]
                args = list(record.args)
                args[2] = f"{UI_PREFIX}***/{action}"
                record.args = tuple(args)
        return True


def install_codec(app: FastAPI) -> None:
    """Serve the codec on ``app``, configured by its settings (``app.state.settings``:
    ``codec_token``, ``codec_ui_origins``); added after its other middleware, so the gate
    runs first."""
    settings = app.state.settings
    app.include_router(codec_router())
    app.add_middleware(CodecAccess, token=settings.codec_token, origins=settings.codec_ui_origins)
    access_log = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, HideCodecCredential) for f in access_log.filters):
        access_log.addFilter(HideCodecCredential())
