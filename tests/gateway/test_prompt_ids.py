"""Prompt routes on an id that names no prompt (docs/security-gateway.md, "Prompt routes touch
prompts only"), through real gateway apps on a real dev server and worker: a session's id or
workflow id, an owner's admission workflow and garbage are a 404 on every prompt route for every
token (they were a 500 for the operator's), and a dropped event stream on one never signals
anybody's workflow: the histories are read to show it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from gateway.app import create_app
from gateway.disconnects import report_disconnect
from gateway.settings import GatewaySettings
from seawall.client.temporal_ops import prompt_handle, session_handle
from tests.gateway.owner_helpers import (
    Gateway,
    accepted,
    auth,
    permission_request,
    waiting_session,
)
from workflows.contracts.grant import GRANT_SIGNAL
from workflows.contracts.owner_admission import admission_workflow_id

ROUTES = (
    ("GET", "/v1/prompts/{id}"),
    ("GET", "/v1/prompts/{id}/events"),
    ("POST", "/v1/prompts/{id}/permissions/some-request"),
)


async def call(
    http: httpx.AsyncClient, method: str, route: str, prompt_id: str, name: str
) -> httpx.Response:
    path = route.format(id=prompt_id)
    body = {"approve": True} if method == "POST" else None
    return await http.request(method, path, json=body, headers=auth(name))


async def signals(client: Client, workflow_id: str) -> list[str]:
    """The names of every signal in the workflow's history but the starter's ``grant`` (the
    session's own grant for its run, docs/security-trust.md)."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    return [
        event.workflow_execution_signaled_event_attributes.signal_name
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
        and event.workflow_execution_signaled_event_attributes.signal_name != GRANT_SIGNAL
    ]


@pytest.mark.parametrize("name", ["operator", "alice", "bob"])
async def test_an_id_of_no_prompt_is_a_404_on_every_prompt_route(
    gateway: Gateway, client: Client, task_queue: str, owners: dict[str, str], name: str
) -> None:
    http = await gateway(max_concurrent_prompts_per_owner=2)
    bob_session = await waiting_session(http, "bob")
    await accepted(http, "bob", bob_session)  # bob's admission workflow exists now
    ids = [
        bob_session,
        f"session-{bob_session}",
        admission_workflow_id(owners["bob"], task_queue),
        "garbage",
        f"{bob_session}-prompt-9",  # of bob's session, but no such prompt
    ]
    for prompt_id in ids:
        for method, route in ROUTES:
            response = await call(http, method, route, prompt_id, name)
            assert response.status_code == 404, (method, route, prompt_id, response.text)
            assert response.json() == {"detail": f"unknown prompt {prompt_id!r}"}
    assert await signals(client, f"session-{bob_session}") == []


async def test_without_owners_a_session_id_on_a_prompt_route_is_a_404(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    async def factory() -> Client:
        return client

    settings = GatewaySettings(
        task_queue=task_queue, workspaces=tmp_path / "workspaces", allow_scripted_models=True
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(settings, factory)), base_url="http://gw"
    ) as http:
        created = await http.post("/v1/sessions", json={})
        workflow_id = created.json()["workflow_id"]
        for method, route in ROUTES:
            response = await http.request(
                method,
                route.format(id=workflow_id),
                json={"approve": True} if method == "POST" else None,
            )
            assert response.status_code == 404, (route, response.text)
        assert await signals(client, workflow_id) == []


async def test_a_disconnect_is_reported_to_a_running_prompt_only(
    gateway: Gateway, client: Client
) -> None:
    http = await gateway()
    session_id = await waiting_session(http, "alice")
    prompt_id = await accepted(http, "alice", session_id)
    await permission_request(http, "alice", prompt_id)  # it runs
    await report_disconnect(client, f"session-{session_id}")
    await report_disconnect(client, session_id)
    assert await signals(client, session_handle(client, session_id).id) == []
    # The one workflow that is told: the prompt itself.
    await report_disconnect(client, prompt_id)
    assert await signals(client, prompt_handle(client, prompt_id).id) == ["client_disconnected"]
