"""The gateway over HTTP (httpx's ASGI transport) against a real dev server and worker.

Sessions run the offline demo model: "hello" lists the workspace and ends; "loop" makes it
read missing files until the guard reminds it; "stubborn loop" keeps failing regardless.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from temporalio.client import Client

from gateway.app import create_app
from gateway.settings import ConfigurationError, GatewaySettings, is_loopback
from gateway.sse import parse_cursor
from workflows.seed.guard import REPEATED_TOOL_FAILURE_REMINDER

TOKEN = "s3cret-token"
GUARD_ENV = "SEAWALL_REPEATED_TOOL_FAILURE_GUARD"


def make_settings(task_queue: str, tmp_path: Path, **overrides: Any) -> GatewaySettings:
    return GatewaySettings(task_queue=task_queue, workspaces=tmp_path / "workspaces", **overrides)


@pytest_asyncio.fixture
async def connect_http(client: Client, task_queue: str, tmp_path: Path) -> AsyncIterator[Any]:
    """Open gateway clients over the in-process app: ``await connect_http(**settings)``."""
    opened: list[httpx.AsyncClient] = []

    async def factory() -> Client:
        return client

    async def connect(**overrides: Any) -> httpx.AsyncClient:
        app = create_app(make_settings(task_queue, tmp_path, **overrides), factory)
        http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://gateway", timeout=60
        )
        opened.append(http)
        return http

    yield connect
    for http in opened:
        await http.aclose()


@pytest_asyncio.fixture
async def http(connect_http: Any) -> httpx.AsyncClient:
    result: httpx.AsyncClient = await connect_http()
    return result


async def new_session(http: httpx.AsyncClient, **body: Any) -> str:
    response = await http.post("/v1/sessions", json=body)
    assert response.status_code == 201, response.text
    session_id: str = response.json()["session_id"]
    return session_id


async def submit(http: httpx.AsyncClient, session_id: str, text: str) -> dict[str, Any]:
    response = await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": text})
    assert response.status_code == 202, response.text
    accepted: dict[str, Any] = response.json()
    return accepted


async def wait_for(
    http: httpx.AsyncClient, prompt_id: str, key: str, timeout: float = 60
) -> dict[str, Any]:
    """Poll the prompt view until ``key`` ("status" or "result") is set."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        response = await http.get(f"/v1/prompts/{prompt_id}")
        assert response.status_code == 200, response.text
        view: dict[str, Any] = response.json()
        if view[key] is not None:
            return view
        assert asyncio.get_running_loop().time() < deadline, f"{prompt_id}: no {key} in time"
        await asyncio.sleep(0.1)


def parse_sse(text: str) -> list[dict[str, Any]]:
    """Each event of an SSE body as {"id", "event", "data"}; comment lines skipped."""
    events = []
    for block in text.split("\n\n"):
        fields: dict[str, Any] = {}
        for line in block.splitlines():
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        if fields:
            fields["id"] = int(fields["id"])
            fields["data"] = json.loads(fields["data"])
            events.append(fields)
    return events


async def read_stream(
    http: httpx.AsyncClient, prompt_id: str, **kwargs: Any
) -> list[dict[str, Any]]:
    async with http.stream("GET", f"/v1/prompts/{prompt_id}/events", **kwargs) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        body = (await response.aread()).decode()
    return parse_sse(body)


# --- sessions and prompts ---------------------------------------------------------------


async def test_create_session_and_read_its_status(http: httpx.AsyncClient) -> None:
    response = await http.post("/v1/sessions", json={"client_metadata": {"client": "test"}})
    assert response.status_code == 201
    created = response.json()
    assert created["workflow_id"] == f"session-{created['session_id']}"

    response = await http.get(f"/v1/sessions/{created['session_id']}")
    assert response.status_code == 200
    status = response.json()
    assert status["session_id"] == created["session_id"]
    assert status["running_prompt_id"] is None
    assert status["queued_prompt_ids"] == []
    assert status["closing"] is False


async def test_session_without_a_body_uses_the_defaults(http: httpx.AsyncClient) -> None:
    response = await http.post("/v1/sessions")
    assert response.status_code == 201, response.text


async def test_hello_prompt_lists_the_workspace_and_ends(http: httpx.AsyncClient) -> None:
    session_id = await new_session(http)
    accepted = await submit(http, session_id, "hello")
    assert accepted["position"] == 0

    view = await wait_for(http, accepted["prompt_id"], "result")
    result = view["result"]
    assert result["workflow_id"] == accepted["prompt_id"]
    assert result["stop_reason"] == "end_turn"
    assert result["tool_calls"]["executed"] == 1
    assert result["messages"][-1]["content"].startswith("Demo model: the workspace lists")
    assert view["status"]["running"] is False

    session = (await http.get(f"/v1/sessions/{session_id}")).json()
    assert session["finished"] == [
        {"prompt_id": accepted["prompt_id"], "stop_reason": "end_turn", "loop_type": None}
    ]


async def test_loop_is_warned_in_enforce_and_the_model_changes_approach(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The session resolves the operator's guard mode from the (in-process) worker's env.
    monkeypatch.setenv(GUARD_ENV, "enforce")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    session_id = await new_session(http)
    accepted = await submit(http, session_id, "show me a loop")

    result = (await wait_for(http, accepted["prompt_id"], "result"))["result"]
    assert result["stop_reason"] == "end_turn"
    assert result["guard_mode"] == "enforce"
    assert "warn" in [entry["decision"] for entry in result["guard"]]
    assert result["messages"][-1]["content"].startswith("Demo model:")

    events = await read_stream(http, accepted["prompt_id"])
    reminders = [e for e in events if e["event"] == "reminder"]
    assert [e["data"]["text"] for e in reminders] == [REPEATED_TOOL_FAILURE_REMINDER]
    session = (await http.get(f"/v1/sessions/{session_id}")).json()
    assert session["guard_mode"] == "enforce"
    # The profile the operator chose (here the default) is shown beside the mode.
    assert session["loop_profile"] == result["loop_profile"] == "recommended"
    view = (await http.get(f"/v1/prompts/{accepted['prompt_id']}")).json()
    assert view["status"]["loop_profile"] == "recommended"


async def test_queue_input_cancel_and_permission_answers(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(GUARD_ENV, "shadow")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    session_id = await new_session(http)
    # In shadow the stubborn demo loop runs until cancelled (or its request budget ends).
    first = await submit(http, session_id, "show me a stubborn loop")
    second = await submit(http, session_id, "hello")
    assert second["position"] in (0, 1)  # 1 unless the first prompt has already started
    await wait_for(http, first["prompt_id"], "status")

    # The second prompt waits in the session's queue: known, but not started.
    queued = await http.get(f"/v1/prompts/{second['prompt_id']}")
    assert queued.status_code == 200
    assert queued.json() == {"prompt_id": second["prompt_id"], "status": None, "result": None}

    answer = await http.post(
        f"/v1/prompts/{first['prompt_id']}/permissions/permission-99", json={"approve": True}
    )
    assert answer.status_code == 404
    assert "no pending permission request 'permission-99'" in answer.json()["detail"]

    batch = (await wait_for(http, first["prompt_id"], "status"))["status"]["batch"]
    sent = await http.post(f"/v1/sessions/{session_id}/input", json={"text": "stop it"})
    assert sent.status_code == 202, sent.text
    assert sent.json() == {"prompt_id": first["prompt_id"]}
    # Input joins the conversation when the batch it arrived in settles; wait for that.
    while (await wait_for(http, first["prompt_id"], "status"))["status"]["batch"] < batch + 2:
        await asyncio.sleep(0.02)

    cancelled = await http.post(f"/v1/sessions/{session_id}/cancel")
    assert cancelled.status_code == 202, cancelled.text
    assert cancelled.json() == {"prompt_id": first["prompt_id"]}

    first_result = (await wait_for(http, first["prompt_id"], "result"))["result"]
    assert first_result["stop_reason"] == "cancelled"
    assert any(
        m["role"] == "user" and m["content"].endswith("stop it") for m in first_result["messages"]
    )
    # The queue stayed: the second prompt runs once the first was cancelled.
    events = await read_stream(http, second["prompt_id"])
    assert events[-1]["event"] == "prompt_finished"
    assert events[-1]["data"]["status"] == "end_turn"

    finished = await http.post(
        f"/v1/prompts/{first['prompt_id']}/permissions/permission-1", json={"approve": False}
    )
    assert finished.status_code == 409
    assert "has finished" in finished.json()["detail"]


async def test_close_then_no_new_prompts(http: httpx.AsyncClient) -> None:
    session_id = await new_session(http)
    closed = await http.post(f"/v1/sessions/{session_id}/close")
    assert closed.status_code == 202
    assert closed.json() == {"session_id": session_id}

    refused = await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": "hello"})
    assert refused.status_code == 409
    assert "clos" in refused.json()["detail"]

    # Once the session workflow has completed, the answer is the same, and so is closing.
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        again = await http.post(f"/v1/sessions/{session_id}/close")
        if again.status_code == 409:
            break
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.1)
    assert again.json()["detail"] == f"session {session_id!r} is closed"
    refused = await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": "hello"})
    assert refused.status_code == 409
    assert refused.json()["detail"] == f"session {session_id!r} is closed"
    status = await http.get(f"/v1/sessions/{session_id}")
    assert status.status_code == 200
    assert status.json()["closing"] is True


# --- the event stream -------------------------------------------------------------------


async def test_event_stream_and_resume_without_duplicates(http: httpx.AsyncClient) -> None:
    session_id = await new_session(http)
    prompt_id = (await submit(http, session_id, "hello"))["prompt_id"]

    # Opened right away: the stream follows the prompt until it finishes.
    events = await read_stream(http, prompt_id)
    ids = [event["id"] for event in events]
    assert ids == list(range(1, len(events) + 1))
    assert all(event["data"]["seq"] == event["id"] for event in events)
    assert all(event["data"]["kind"] == event["event"] for event in events)
    kinds = [event["event"] for event in events if event["event"] != "message_delta"]
    assert kinds == [
        "agent_message",
        "tool_call_started",
        "tool_call_settled",
        "agent_message",
        "prompt_finished",
    ]
    # The demo model's text streamed before each whole message, and adds up to it.
    streamed = ""
    for event in events:
        if event["event"] == "message_delta":
            streamed += event["data"]["text"]
        elif event["event"] == "agent_message":
            assert streamed == event["data"]["text"]
            streamed = ""
    settled = next(e for e in events if e["event"] == "tool_call_settled")
    assert settled["data"]["tool_name"] == "list_directory"
    assert settled["data"]["status"] == "success"
    assert events[-1]["data"]["status"] == "end_turn"

    middle = ids[len(ids) // 2]
    assert await read_stream(http, prompt_id, params={"after": middle}) == events[middle:]
    resumed = await read_stream(http, prompt_id, headers={"Last-Event-ID": str(middle)})
    assert resumed == events[middle:]
    # Both given: the later cursor wins, as a reconnecting EventSource keeps its URL.
    both = await read_stream(
        http, prompt_id, params={"after": 1}, headers={"Last-Event-ID": str(middle)}
    )
    assert both == events[middle:]
    # A cursor at (or past) the end of a finished prompt: an empty stream that ends.
    assert await read_stream(http, prompt_id, params={"after": ids[-1]}) == []
    assert await read_stream(http, prompt_id, params={"after": 1000}) == []


async def test_event_stream_rejects_a_bad_cursor(http: httpx.AsyncClient) -> None:
    session_id = await new_session(http)
    prompt_id = (await submit(http, session_id, "hello"))["prompt_id"]
    response = await http.get(f"/v1/prompts/{prompt_id}/events", params={"after": -1})
    assert response.status_code == 422
    response = await http.get(f"/v1/prompts/{prompt_id}/events", headers={"Last-Event-ID": "abc"})
    assert response.status_code == 400
    assert "Last-Event-ID" in response.json()["detail"]


def test_parse_cursor() -> None:
    assert parse_cursor(0, None) == 0
    assert parse_cursor(3, "") == 3
    assert parse_cursor(3, " 7 ") == 7
    assert parse_cursor(9, "7") == 9
    with pytest.raises(ValueError, match="Last-Event-ID"):
        parse_cursor(0, "-1")


# --- authentication ----------------------------------------------------------------------


async def test_bearer_token_is_required_on_v1(connect_http: Any) -> None:
    http: httpx.AsyncClient = await connect_http(token=TOKEN)

    missing = await http.post("/v1/sessions", json={})
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    assert "missing bearer token" in missing.json()["detail"]

    wrong = await http.post(
        "/v1/sessions", json={}, headers={"Authorization": "Bearer not-the-token"}
    )
    assert wrong.status_code == 401
    assert wrong.json()["detail"].startswith("invalid bearer token")
    assert "--token or SEAWALL_GATEWAY_TOKEN" in wrong.json()["detail"]
    basic = await http.get("/v1/sessions/x", headers={"Authorization": f"Basic {TOKEN}"})
    assert basic.status_code == 401
    # Refused before the body is read: no hint about the JSON to an unknown caller.
    malformed = await http.post(
        "/v1/sessions", content=b"{", headers={"content-type": "application/json"}
    )
    assert malformed.status_code == 401

    good = await http.post("/v1/sessions", json={}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert good.status_code == 201, good.text
    assert (await http.get("/healthz")).json() == {"ok": True}
    # Everything but the health check and the API's docs needs the token: a browser opening
    # the banner's docs link has no way to send one.
    assert (await http.get("/v1/prompts/p/events")).status_code == 401
    for path in ("/openapi.json", "/docs", "/redoc"):
        assert (await http.get(path)).status_code == 200, path


def test_refuses_to_build_on_a_public_address_without_a_token(tmp_path: Path) -> None:
    async def factory() -> Client:
        raise AssertionError("not connected at build time")

    for host in ("0.0.0.0", "192.168.1.10", "example.com", "::"):
        with pytest.raises(ConfigurationError, match="SEAWALL_GATEWAY_TOKEN"):
            create_app(make_settings("q", tmp_path, host=host), factory)
    for host in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"):
        create_app(make_settings("q", tmp_path, host=host), factory)
    create_app(make_settings("q", tmp_path, host="0.0.0.0", token=TOKEN), factory)
    assert not is_loopback("0.0.0.0")


# --- bad input ---------------------------------------------------------------------------


async def test_unknown_session_and_prompt_are_404(http: httpx.AsyncClient) -> None:
    unknown_session = "0" * 32
    for method, path, body in [
        ("GET", f"/v1/sessions/{unknown_session}", None),
        ("POST", f"/v1/sessions/{unknown_session}/prompts", {"text": "hi"}),
        ("POST", f"/v1/sessions/{unknown_session}/input", {"text": "hi"}),
        ("POST", f"/v1/sessions/{unknown_session}/cancel", None),
        ("POST", f"/v1/sessions/{unknown_session}/close", None),
    ]:
        response = await http.request(method, path, json=body)
        assert response.status_code == 404, (path, response.text)
        assert response.json() == {"detail": f"unknown session {unknown_session!r}"}

    for method, path, body in [
        ("GET", "/v1/prompts/nope", None),
        ("GET", "/v1/prompts/nope/events", None),
        ("GET", f"/v1/prompts/{unknown_session}-prompt-1", None),
        ("POST", "/v1/prompts/nope/permissions/permission-1", {"approve": True}),
    ]:
        response = await http.request(method, path, json=body)
        assert response.status_code == 404, (path, response.text)
        assert response.json()["detail"].startswith("unknown prompt")

    assert (await http.get("/v1/nothing-here")).status_code == 404


async def test_oversized_prompt_is_413_naming_the_limit(connect_http: Any) -> None:
    http: httpx.AsyncClient = await connect_http(max_prompt_chars=50)
    session_id = await new_session(http)
    response = await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": "x" * 51})
    assert response.status_code == 413
    assert response.json() == {
        "detail": "the prompt is 51 characters; the limit is 50 (SEAWALL_MAX_PROMPT_CHARS)"
    }
    accepted = await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": "x" * 50})
    assert accepted.status_code == 202
    # A body far beyond any prompt is refused before it is read.
    huge = await http.post(
        f"/v1/sessions/{session_id}/prompts",
        content=b'{"text": "' + b"x" * 2_000_000 + b'"}',
        headers={"content-type": "application/json"},
    )
    assert huge.status_code == 413
    assert "request body is larger than" in huge.json()["detail"]


async def test_malformed_json_is_400_and_schema_errors_are_422(http: httpx.AsyncClient) -> None:
    session_id = await new_session(http)
    path = f"/v1/sessions/{session_id}/prompts"
    json_header = {"content-type": "application/json"}

    malformed = await http.post(path, content=b'{"text": "hi"', headers=json_header)
    assert malformed.status_code == 400
    assert malformed.json()["detail"].startswith("malformed JSON in the request body")

    unknown = await http.post(path, json={"text": "hi", "mode": "yolo"})
    assert unknown.status_code == 422
    assert unknown.json() == {"detail": "body.mode: Extra inputs are not permitted"}

    for body in ({}, {"text": ""}, {"text": 5}, ["hi"]):
        response = await http.post(path, json=body)
        assert response.status_code == 422, body
        detail = response.json()["detail"]
        assert isinstance(detail, str)
        assert "\n" not in detail

    bad_mode = await http.post("/v1/sessions", json={"approval_mode": "sometimes"})
    assert bad_mode.status_code == 422
    assert bad_mode.json()["detail"].startswith("body.approval_mode:")
    # The channel marker turns the guard off: a word that is not a boolean is refused, not
    # read as true.
    for marker in ("false", "no", 0, 1, None):
        channel = await http.post("/v1/sessions", json={"client_metadata": {"channel": marker}})
        assert channel.status_code == 422, marker
        assert channel.json()["detail"] == (
            "body.client_metadata: Value error, channel marks a channel-bridge session (the "
            "guard off) and must be true or false"
        )
    assert (
        await http.post("/v1/sessions", json={"client_metadata": {"channel": False}})
    ).is_success
    permission = await http.post("/v1/prompts/p/permissions/r", json={"approve": "perhaps"})
    assert permission.status_code == 422


async def test_input_and_cancel_with_no_running_prompt_are_409(http: httpx.AsyncClient) -> None:
    session_id = await new_session(http)
    response = await http.post(f"/v1/sessions/{session_id}/input", json={"text": "hi"})
    assert response.status_code == 409
    assert response.json() == {"detail": "no prompt is running in this session"}

    response = await http.post(f"/v1/sessions/{session_id}/cancel")
    assert response.status_code == 409
    assert response.json() == {"detail": f"no prompt is running in session {session_id!r}"}


# --- docs, health, settings --------------------------------------------------------------


async def test_docs_and_openapi_are_served(http: httpx.AsyncClient) -> None:
    docs = await http.get("/docs")
    assert docs.status_code == 200
    assert "swagger" in docs.text.lower()
    spec = (await http.get("/openapi.json")).json()
    assert spec["info"]["title"] == "Seawall gateway"
    assert spec["info"]["description"]
    assert {
        "/v1/sessions",
        "/v1/sessions/{session_id}",
        "/v1/sessions/{session_id}/prompts",
        "/v1/sessions/{session_id}/input",
        "/v1/sessions/{session_id}/cancel",
        "/v1/sessions/{session_id}/close",
        "/v1/prompts/{prompt_id}",
        "/v1/prompts/{prompt_id}/events",
        "/v1/prompts/{prompt_id}/permissions/{request_id}",
        "/healthz",
    } <= set(spec["paths"])
    assert "HTTPBearer" in spec["components"]["securitySchemes"]
    assert (await http.get("/healthz")).json() == {"ok": True}


async def test_a_write_repeated_with_its_idempotency_key_takes_effect_once(
    http: httpx.AsyncClient,
) -> None:
    # A client whose request met a 504 cannot know whether it took effect; with the same key,
    # repeating it is safe.
    key = {"Idempotency-Key": "create-1"}
    first = await http.post("/v1/sessions", json={}, headers=key)
    again = await http.post("/v1/sessions", json={}, headers=key)
    assert first.status_code == again.status_code == 201
    session_id = first.json()["session_id"]
    assert again.json()["session_id"] == session_id
    other = await new_session(http)
    assert other != session_id

    url = f"/v1/sessions/{session_id}/prompts"
    sent = [
        await http.post(url, json={"text": "hello"}, headers={"Idempotency-Key": "p-1"})
        for _ in range(3)
    ]
    assert {r.status_code for r in sent} == {202}
    assert len({r.json()["prompt_id"] for r in sent}) == 1
    unkeyed = await submit(http, session_id, "hello again")
    assert unkeyed["prompt_id"] != sent[0].json()["prompt_id"]

    result = (await wait_for(http, unkeyed["prompt_id"], "result"))["result"]
    assert result["stop_reason"] == "end_turn"
    session = (await http.get(f"/v1/sessions/{session_id}")).json()
    # Two prompts ran, not four.
    assert [f["prompt_id"] for f in session["finished"]] == [
        sent[0].json()["prompt_id"],
        unkeyed["prompt_id"],
    ]
