"""What a client is shown over HTTP (issue 36): a permission request says what it would
run, secrets redacted; a session the worker refused to start says so, everywhere a client
looks; a call's settlement says why it failed."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from gateway.app import create_app
from gateway.settings import GatewaySettings
from seawall.worker.build import build_worker
from tests.gateway.test_app import read_stream, submit, wait_for
from tests.trust_helpers import harness_trust
from workflows.prompt.approvals import SHOWN_VALUE_CHARS

SECRET = "sk-live-0123456789abcdefghijklmn"


@pytest_asyncio.fixture
async def scripted_http(
    client: Client, task_queue: str, tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    async def factory() -> Client:
        return client

    settings = GatewaySettings(
        task_queue=task_queue,
        workspaces=tmp_path / "workspaces",
        allow_scripted_models=True,
        redacted_arguments=("*token*", "db_password"),
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(settings, factory)),
        base_url="http://gateway",
        timeout=60,
    ) as http:
        yield http


async def pending_request(http: httpx.AsyncClient, prompt_id: str) -> dict[str, Any]:
    """The prompt's first open permission request, once there is one."""
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        view = await wait_for(http, prompt_id, "status")
        status = view["status"]
        if status["pending_permissions"]:
            request: dict[str, Any] = status["pending_permissions"][0]
            return request
        assert view["result"] is None, f"the prompt ended without asking: {view['result']}"
        assert asyncio.get_running_loop().time() < deadline, "no permission request in time"
        await asyncio.sleep(0.05)


async def test_a_permission_request_shows_what_it_approves(
    scripted_http: httpx.AsyncClient, client: Client
) -> None:
    long_content = "line of the new file\n" * 100
    # A tool of the operator's that changes things (so it asks) and takes any arguments.
    deploy = {"mutating": True, "outcomes": [{"content": "deployed"}]}
    call = {
        "name": "deploy",
        "arguments": {
            "path": "deploy.sh",
            "content": long_content,
            "api_token": "t-123",
            "options": {"db_password": "hunter2", "note": f"Bearer {SECRET}"},
        },
    }
    created = await scripted_http.post(
        "/v1/sessions",
        json={
            "model_script": {"turns": [{"tool_calls": [call]}, {"text": "ok"}]},
            "fixture_tools": {"deploy": deploy},
        },
    )
    session_id = created.json()["session_id"]
    prompt_id = (await submit(scripted_http, session_id, "deploy"))["prompt_id"]

    request = await pending_request(scripted_http, prompt_id)
    shown = request["arguments"]
    assert request["tool_name"] == "deploy"
    assert shown["path"] == "deploy.sh"
    # Long values are cut and say by how much; secrets never appear.
    assert shown["content"].startswith("line of the new file\nline")
    assert shown["content"].endswith(f"… ({len(long_content) - SHOWN_VALUE_CHARS} more characters)")
    assert shown["api_token"] == "[redacted]"
    assert shown["options"] == {"db_password": "[redacted]", "note": "Bearer [redacted]"}
    assert request["summary"].startswith("deploy path=deploy.sh content=")
    assert "t-123" not in str(request) and "hunter2" not in str(request)
    assert SECRET not in str(request)

    # The Temporal UI's current details say which call waits (by tool, without arguments).
    metadata = await client.get_workflow_handle(prompt_id).query("__temporal_workflow_metadata")
    assert (
        f"**Waiting for the user's approval**: `deploy` ({request['request_id']}, asked by "
        "the rule 'default mode: changes ask')" in metadata.current_details
    )

    answered = await scripted_http.post(
        f"/v1/prompts/{prompt_id}/permissions/{request['request_id']}", json={"approve": False}
    )
    assert answered.json() == {
        "prompt_id": prompt_id,
        "request_id": request["request_id"],
        "outcome": "rejected",
    }
    events = await read_stream(scripted_http, prompt_id)
    (asked,) = [e["data"] for e in events if e["event"] == "permission_request"]
    assert asked["arguments"] == shown and asked["text"] == request["summary"]
    (settled,) = [e["data"] for e in events if e["event"] == "tool_call_settled"]
    assert (settled["status"], settled["reason"]) == ("cancelled", "not approved")


@pytest_asyncio.fixture
async def refusing_http(client: Client, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """A gateway whose sessions' workspaces are outside its worker's workspaces."""
    (tmp_path / "root").mkdir()
    queue = f"narrow-{uuid.uuid4().hex[:8]}"

    async def factory() -> Client:
        return client

    trust = harness_trust(workspace_roots=(tmp_path / "root",))
    settings = GatewaySettings(task_queue=queue, workspaces=tmp_path / "elsewhere")
    async with (
        build_worker(client, queue, trust=trust),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(settings, factory)),
            base_url="http://gateway",
            timeout=60,
        ) as http,
    ):
        yield http


async def test_a_refused_session_start_is_an_answer(refusing_http: httpx.AsyncClient) -> None:
    http = refusing_http
    session_id = (await http.post("/v1/sessions", json={})).json()["session_id"]
    prompt_id = (await submit(http, session_id, "hello"))["prompt_id"]

    # The prompt is answered as finished, with why, instead of a 404 or "pending" forever.
    view = await wait_for(http, prompt_id, "result")
    result = view["result"]
    assert (result["stop_reason"], result["error_reason"]) == ("error", "start_refused")
    assert result["error"].startswith(
        "the worker refused to start this prompt's session: the workspace is not inside this "
        "worker's workspaces directory"
    )
    assert view["status"]["running"] is False

    session = (await http.get(f"/v1/sessions/{session_id}")).json()
    assert session["state"] == "refused"
    assert session["reason"].startswith("the workspace is not inside")

    # The stream ends at once with the same answer.
    events = await read_stream(http, prompt_id)
    assert [(e["event"], e["data"]["status"]) for e in events] == [("prompt_finished", "error")]
    assert events[0]["data"]["text"] == result["error"]

    # A later prompt is refused with the reason too.
    again = await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": "hello"})
    assert again.status_code == 409
    assert "the workspace is not inside" in again.json()["detail"]


async def test_an_open_session_says_so(scripted_http: httpx.AsyncClient) -> None:
    session_id = (await scripted_http.post("/v1/sessions", json={})).json()["session_id"]
    session = (await scripted_http.get(f"/v1/sessions/{session_id}")).json()
    assert (session["state"], session["reason"]) == ("open", None)
    await scripted_http.post(f"/v1/sessions/{session_id}/close")
    while (await scripted_http.get(f"/v1/sessions/{session_id}")).json()["state"] == "open":
        await asyncio.sleep(0.05)
    closed = (await scripted_http.get(f"/v1/sessions/{session_id}")).json()
    assert (closed["state"], closed["reason"]) == ("closed", "it was closed")


async def test_the_temporal_ui_says_what_each_row_is(
    scripted_http: httpx.AsyncClient,
    client: Client,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """What the Temporal UI reads (its API: the workflow's user metadata, each activity's
    summary): a prompt listed by its first line, a session as one, a tool activity as the
    call on one line, secrets redacted."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("SEAWALL_ACTIVITY_SUMMARIES", "true")
    call = {"name": "deploy", "arguments": {"path": "deploy.sh", "api_token": "t-123"}}
    created = await scripted_http.post(
        "/v1/sessions",
        json={
            "model_script": {"turns": [{"tool_calls": [call]}, {"text": "ok"}]},
            "fixture_tools": {"deploy": {"outcomes": [{"content": "deployed"}]}},
        },
    )
    session_id = created.json()["session_id"]
    text = "  deploy the app to staging\nthen tell me how it went"
    prompt_id = (await submit(scripted_http, session_id, text))["prompt_id"]
    await wait_for(scripted_http, prompt_id, "result")

    prompt = await client.get_workflow_handle(prompt_id).describe()
    assert await prompt.static_summary() == "deploy the app to staging"
    session = await client.get_workflow_handle(f"session-{session_id}").describe()
    assert await session.static_summary() == "Seawall session (HTTP API)"
    history = await client.get_workflow_handle(prompt_id).fetch_history()
    summaries = [
        json.loads(event.user_metadata.summary.data)
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and event.HasField("user_metadata")
    ]
    assert "deploy path=deploy.sh api_token=[redacted] (batch 1)" in summaries
    assert "t-123" not in str(summaries)
