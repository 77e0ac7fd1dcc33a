"""How the gateway answers Temporal failures (``gateway/errors.py``): transient ones are 503 or
504 with ``Retry-After`` so a client can simply retry; the rest keep their meaning."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from temporalio.client import RPCTimeoutOrCancelledError
from temporalio.service import RPCError, RPCStatusCode

from gateway.errors import install_error_handlers


def app_raising(err: Exception) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/v1/prompts/{prompt_id}")
    async def failing(prompt_id: str) -> None:
        raise err

    return app


async def answer(err: Exception) -> httpx.Response:
    transport = httpx.ASGITransport(app=app_raising(err), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://gw") as http:
        return await http.get("/v1/prompts/p-1")


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (RPCStatusCode.UNAVAILABLE, 503),
        (RPCStatusCode.RESOURCE_EXHAUSTED, 503),
        (RPCStatusCode.DEADLINE_EXCEEDED, 504),
        # What a client-side time-out or a dropped connection reports; it used to be a 502.
        (RPCStatusCode.CANCELLED, 504),
    ],
)
async def test_transient_failures_say_when_to_retry(status: RPCStatusCode, code: int) -> None:
    response = await answer(RPCError("secret server text", status, b""))
    assert response.status_code == code
    assert response.headers["Retry-After"] == "2"
    assert "try again" in response.json()["detail"]
    assert "secret server text" not in response.text


async def test_an_sdk_timeout_is_a_504_with_retry_after() -> None:
    response = await answer(RPCTimeoutOrCancelledError("timed out"))
    assert (response.status_code, response.headers["Retry-After"]) == (504, "2")


async def test_an_unknown_workflow_is_a_404_and_a_refusal_a_502_without_retry_after() -> None:
    missing = await answer(RPCError("no such workflow", RPCStatusCode.NOT_FOUND, b""))
    assert (missing.status_code, missing.json()["detail"]) == (404, "unknown prompt 'p-1'")

    refused = await answer(RPCError("bad", RPCStatusCode.INVALID_ARGUMENT, b""))
    assert refused.status_code == 502
    assert "Retry-After" not in refused.headers
    assert "INVALID_ARGUMENT" in refused.json()["detail"]
