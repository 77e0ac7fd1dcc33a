"""One place that turns every failure into a JSON ``{"detail": "..."}`` response.

Routes raise ``HTTPException`` for what they know (409 for a closed session, ...); Temporal
errors that mean the same thing on every route are mapped here, so an unknown workflow id
is a 404 whichever route met it, a transient failure (the server restarting, a time-out, a
dropped connection, load shedding) is a 503 or 504 with ``Retry-After``, and an unexpected
error is a 500 that leaks nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from temporalio.client import RPCTimeoutOrCancelledError
from temporalio.service import RPCError, RPCStatusCode

log = structlog.get_logger("seawall.gateway")

TIMEOUT_DETAIL = (
    "Temporal did not answer in time (is a worker polling the task queue?); try again shortly"
)
UNAVAILABLE_DETAIL = "the Temporal service is unavailable; try again shortly"
# Both are transient: reads were already retried (seawall.client.temporal_ops.read), and a
# client may simply repeat the request after this many seconds.
RETRY_AFTER = {"Retry-After": "2"}


def _error(status_code: int, detail: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status_code, headers=headers)


def _location(error: dict[str, Any]) -> str:
    return ".".join(str(part) for part in error.get("loc", ()))


def validation_detail(exc: RequestValidationError) -> tuple[int, str]:
    """400 for a body that is not JSON at all, 422 for JSON of the wrong shape."""
    errors = list(exc.errors())
    for error in errors:
        if error.get("type") == "json_invalid":
            reason = (error.get("ctx") or {}).get("error", "invalid JSON")
            position = error["loc"][-1] if error.get("loc") else "?"
            return 400, f"malformed JSON in the request body: {reason} (at character {position})"
    parts = [f"{_location(error)}: {error.get('msg', 'invalid')}" for error in errors]
    return 422, "; ".join(parts) or "invalid request"


def not_found_detail(request: Request) -> str:
    params = request.path_params
    if "prompt_id" in params:
        return f"unknown prompt {params['prompt_id']!r}"
    if "session_id" in params:
        return f"unknown session {params['session_id']!r}"
    return "not found"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail), exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        status_code, detail = validation_detail(exc)
        return _error(status_code, detail)

    @app.exception_handler(RPCError)
    async def _rpc(request: Request, exc: RPCError) -> JSONResponse:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return _error(404, not_found_detail(request))
        if exc.status in (RPCStatusCode.UNAVAILABLE, RPCStatusCode.RESOURCE_EXHAUSTED):
            log.warning("temporal_unavailable", path=request.url.path, status=exc.status.name)
            return _error(503, UNAVAILABLE_DETAIL, RETRY_AFTER)
        if exc.status in (RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.CANCELLED):
            # CANCELLED is what a client-side time-out or a dropped connection reports.
            log.warning("temporal_timeout", path=request.url.path, status=exc.status.name)
            return _error(504, TIMEOUT_DETAIL, RETRY_AFTER)
        log.error("temporal_rpc_error", status=exc.status.name)
        return _error(502, f"the Temporal service refused the request ({exc.status.name})")

    @app.exception_handler(RPCTimeoutOrCancelledError)
    async def _timeout(request: Request, exc: RPCTimeoutOrCancelledError) -> JSONResponse:
        log.warning("temporal_timeout", path=request.url.path)
        return _error(504, TIMEOUT_DETAIL, RETRY_AFTER)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("gateway_error", path=request.url.path)
        return _error(500, "internal error")
