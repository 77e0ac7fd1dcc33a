"""A session and its prompts are visible only to their owner (docs/http-api.md, "Tokens, owners and
limits"): another owner, or the operator's single token, gets exactly the 404 an unknown id gets, on
every route, and nothing they send reaches the session."""

from __future__ import annotations

from typing import Any

from tests.gateway.owner_helpers import (
    Gateway,
    accepted,
    auth,
    finish,
    permission_request,
    view_until,
    waiting_session,
)


def routes(session_id: str, prompt_id: str, request_id: str) -> list[tuple[str, str, Any, str]]:
    """Each route naming the session or the prompt, and what an unknown id gets."""
    no_session = f"unknown session {session_id!r}"
    no_prompt = f"unknown prompt {prompt_id!r}"
    return [
        ("GET", f"/v1/sessions/{session_id}", None, no_session),
        ("POST", f"/v1/sessions/{session_id}/prompts", {"text": "hi"}, no_session),
        ("POST", f"/v1/sessions/{session_id}/input", {"text": "hi"}, no_session),
        ("POST", f"/v1/sessions/{session_id}/cancel", None, no_session),
        ("POST", f"/v1/sessions/{session_id}/close", None, no_session),
        ("GET", f"/v1/prompts/{prompt_id}", None, no_prompt),
        ("GET", f"/v1/prompts/{prompt_id}/events", None, no_prompt),
        (
            "POST",
            f"/v1/prompts/{prompt_id}/permissions/{request_id}",
            {"approve": False},
            no_prompt,
        ),
    ]


async def test_another_owner_gets_the_unknown_ids_404_on_every_route(gateway: Gateway) -> None:
    http = await gateway()
    session_id = await waiting_session(http, "alice")
    prompt_id = await accepted(http, "alice", session_id)
    queued_id = await accepted(http, "alice", session_id)
    request_id = await permission_request(http, "alice", prompt_id)
    unknown = "0" * 32

    for stranger in ("bob", "operator"):
        for method, path, body, detail in (
            routes(session_id, prompt_id, request_id)
            + routes(session_id, queued_id, request_id)
            + routes(unknown, f"{unknown}-prompt-1", request_id)
        ):
            response = await http.request(method, path, json=body, headers=auth(stranger))
            assert (response.status_code, response.json()) == (404, {"detail": detail}), (
                stranger,
                path,
            )

    # Nothing the strangers sent reached the session: the prompt still waits, the queued
    # one is still queued, the session still takes prompts.
    status = await http.get(f"/v1/sessions/{session_id}", headers=auth("alice"))
    assert status.status_code == 200
    assert status.json()["running_prompt_id"] == prompt_id
    assert status.json()["queued_prompt_ids"] == [queued_id]
    assert status.json()["closing"] is False
    assert await permission_request(http, "alice", prompt_id) == request_id
    result = await finish(http, "alice", prompt_id)
    assert result["stop_reason"] == "end_turn"
    assert [m["content"] for m in result["messages"] if m["role"] == "user"] == ["write it"]


async def test_the_owner_reaches_every_route(gateway: Gateway) -> None:
    http = await gateway()
    session_id = await waiting_session(http, "bob")
    prompt_id = await accepted(http, "bob", session_id)
    await permission_request(http, "bob", prompt_id)
    assert (await http.get(f"/v1/sessions/{session_id}", headers=auth("bob"))).status_code == 200
    sent = await http.post(
        f"/v1/sessions/{session_id}/input", json={"text": "and more"}, headers=auth("bob")
    )
    assert sent.status_code == 202, sent.text
    cancelled = await http.post(f"/v1/sessions/{session_id}/cancel", headers=auth("bob"))
    assert cancelled.status_code == 202, cancelled.text
    await view_until(http, "bob", prompt_id, lambda v: v["result"] is not None)
    async with http.stream(
        "GET", f"/v1/prompts/{prompt_id}/events", headers=auth("bob")
    ) as response:
        assert response.status_code == 200
        assert "prompt_finished" in (await response.aread()).decode()
    closed = await http.post(f"/v1/sessions/{session_id}/close", headers=auth("bob"))
    assert closed.status_code == 202


async def test_another_replica_knows_the_owner_too(gateway: Gateway) -> None:
    one, two = await gateway(), await gateway()
    session_id = await waiting_session(one, "alice")
    assert (await two.get(f"/v1/sessions/{session_id}", headers=auth("bob"))).status_code == 404
    response = await two.get(f"/v1/sessions/{session_id}", headers=auth("alice"))
    assert response.status_code == 200
