"""Gateways with an owners' tokens file over one real dev server and worker, and sessions
whose prompt waits (for a permission answer) until the test lets it finish."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}
# The single token of the same gateway: no owner.
OPERATOR_TOKEN = "operator-token-0123456789"
# The first prompt of a session asks to write a file and waits for the answer; once it is
# approved, the model ends the turn.
WAITING_SCRIPT = {
    "turns": [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a", "content": "x"}}]},
        {"text": "done"},
    ]
}

Gateway = Callable[..., Awaitable[httpx.AsyncClient]]


def auth(name: str) -> dict[str, str]:
    token = OPERATOR_TOKEN if name == "operator" else TOKENS[name]
    return {"Authorization": f"Bearer {token}"}


async def waiting_session(http: httpx.AsyncClient, name: str) -> str:
    created = await http.post(
        "/v1/sessions", json={"model_script": WAITING_SCRIPT}, headers=auth(name)
    )
    assert created.status_code == 201, created.text
    session_id: str = created.json()["session_id"]
    return session_id


async def submit(
    http: httpx.AsyncClient, name: str, session_id: str, key: str = ""
) -> httpx.Response:
    headers = auth(name) | ({"Idempotency-Key": key} if key else {})
    return await http.post(
        f"/v1/sessions/{session_id}/prompts", json={"text": "write it"}, headers=headers
    )


async def accepted(http: httpx.AsyncClient, name: str, session_id: str, key: str = "") -> str:
    response = await submit(http, name, session_id, key)
    assert response.status_code == 202, response.text
    prompt_id: str = response.json()["prompt_id"]
    return prompt_id


async def view_until(
    http: httpx.AsyncClient, name: str, prompt_id: str, done: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """Poll the prompt's view until ``done`` says so (the test's time-out bounds it)."""
    while True:
        response = await http.get(f"/v1/prompts/{prompt_id}", headers=auth(name))
        assert response.status_code == 200, response.text
        view: dict[str, Any] = response.json()
        if done(view):
            return view
        await asyncio.sleep(0.05)


async def permission_request(http: httpx.AsyncClient, name: str, prompt_id: str) -> str:
    """The prompt's pending permission request, once it asks."""
    view = await view_until(
        http,
        name,
        prompt_id,
        lambda v: v["status"] is not None and bool(v["status"]["pending_permissions"]),
    )
    request_id: str = view["status"]["pending_permissions"][0]["request_id"]
    return request_id


async def finish(http: httpx.AsyncClient, name: str, prompt_id: str) -> dict[str, Any]:
    """Approve the prompt's write; it then ends its turn. Returns its result."""
    request_id = await permission_request(http, name, prompt_id)
    answered = await http.post(
        f"/v1/prompts/{prompt_id}/permissions/{request_id}",
        json={"approve": True},
        headers=auth(name),
    )
    assert answered.status_code == 200, answered.text
    view = await view_until(http, name, prompt_id, lambda v: v["result"] is not None)
    result: dict[str, Any] = view["result"]
    return result
