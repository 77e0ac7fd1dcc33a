"""Owners and cohorts at the gateway, end to end against a real dev server and worker
(docs/rollout.md, "Rollout cohorts"): several bearer tokens from the operator's tokens
file, each session recorded with its owner, the owner's cohort resolved once by the worker
and carried by its prompts as search attributes; and a dropped event stream counted by the
prompt (the seed's disconnect-or-retry gate)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest_asyncio
from temporalio.client import Client

from gateway import disconnects
from gateway.app import create_app
from gateway.disconnects import tracking_disconnects
from gateway.settings import GatewaySettings
from gateway.sse import prompt_events
from seawall.worker.build import build_activities, build_worker
from tests.trust_helpers import harness_trust
from workflows.contracts import search_attributes
from workflows.contracts.prompt import PromptResult
from workflows.contracts.session import SessionInput, SessionStatus
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed.rollout import owner_bucket
from workflows.session import session_workflow_id

SALT = "pepper"
TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}


def owner_in(enforce: bool) -> str:
    """The first owner id the policy enforce:5%,warn:rest puts in (or out of) enforcement."""
    for n in range(10_000):
        owner = f"owner-{n}"
        if (owner_bucket(owner, SALT) < 500) == enforce:
            return owner
    raise AssertionError("unreachable")


@pytest_asyncio.fixture
async def rollout_queue(client: Client, tmp_path: Path) -> AsyncIterator[str]:
    """A worker whose operator settings carry a rollout policy for environment ``internal``."""
    environ = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "SEAWALL_GUARD_ROLLOUT": "enforce:5%,warn:rest",
        "SEAWALL_GUARD_ROLLOUT_SALT": SALT,
        "SEAWALL_DEPLOYMENT_ENVIRONMENT": "internal",
        "SEAWALL_SERVICE_VERSION": "1.4.0",
        "SEAWALL_GUARD_ROLLOUT_VERSION": "1.4.0",
    }
    queue = f"test-{uuid.uuid4().hex[:10]}"
    async with build_worker(client, queue, build_activities(environ, trust=harness_trust())):
        yield queue


@pytest_asyncio.fixture
async def http(
    client: Client, rollout_queue: str, tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    async def factory() -> Client:
        return client

    owners = {TOKENS["alice"]: owner_in(True), TOKENS["bob"]: owner_in(False)}
    settings = GatewaySettings(
        task_queue=rollout_queue,
        workspaces=tmp_path / "workspaces",
        owner_tokens=owners,
        allow_scripted_models=True,
    )
    app = create_app(settings, factory)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://gateway", timeout=60
    ) as http:
        yield http


def auth(owner: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[owner]}"}


async def started(http: httpx.AsyncClient, prompt_id: str, owner: str) -> None:
    """Until the session has started the prompt (its view has a status)."""
    while (await http.get(f"/v1/prompts/{prompt_id}", headers=auth(owner))).json()[
        "status"
    ] is None:
        await asyncio.sleep(0.05)


async def session_of(http: httpx.AsyncClient, owner: str, **body: Any) -> str:
    created = await http.post("/v1/sessions", json=body, headers=auth(owner))
    assert created.status_code == 201, created.text
    session_id: str = created.json()["session_id"]
    return session_id


async def test_each_token_is_an_owner_whose_cohort_the_session_and_prompts_carry(
    http: httpx.AsyncClient, client: Client
) -> None:
    unknown = await http.post("/v1/sessions", json={}, headers={"Authorization": "Bearer nope"})
    assert unknown.status_code == 401
    assert (await http.post("/v1/sessions", json={})).status_code == 401

    for owner, cohort in (("alice", "enforce"), ("bob", "warn")):
        session_id = await session_of(http, owner)
        handle = client.get_workflow_handle(session_workflow_id(session_id))
        history = await handle.fetch_history()
        session_input = history.events[0].workflow_execution_started_event_attributes
        decoded = await client.data_converter.decode(session_input.input.payloads, [SessionInput])
        assert decoded[0].owner_id == owner_in(cohort == "enforce")

        accepted = await http.post(
            f"/v1/sessions/{session_id}/prompts", json={"text": "hello"}, headers=auth(owner)
        )
        assert accepted.status_code == 202, accepted.text
        prompt_id = accepted.json()["prompt_id"]
        await started(http, prompt_id, owner)
        result = await client.get_workflow_handle(prompt_id, result_type=PromptResult).result()
        assert result.guard_mode == cohort

        status = (await http.get(f"/v1/sessions/{session_id}", headers=auth(owner))).json()
        assert (status["guard_mode"], status["rollout_cohort"]) == (cohort, cohort)
        described = await client.get_workflow_handle(prompt_id).describe()
        attributes = described.typed_search_attributes
        assert attributes.get(search_attributes.ROLLOUT_COHORT) == cohort
        assert attributes.get(search_attributes.GUARD_MODE) == cohort
        assert attributes.get(search_attributes.ENVIRONMENT) == "internal"
        assert attributes.get(search_attributes.SERVICE_VERSION) == "1.4.0"
        # No search attribute carries the owner.
        owner_id = owner_in(cohort == "enforce")
        assert all(owner_id not in str(pair.value) for pair in attributes)


async def test_a_stream_dropped_before_the_prompt_ends_is_counted_by_the_prompt(
    http: httpx.AsyncClient, client: Client
) -> None:
    # The prompt asks permission to write a file and waits: it is running while we drop.
    script = {
        "turns": [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a", "content": "x"}}]},
            {"text": "done"},
        ]
    }
    session_id = await session_of(http, "bob", model_script=script)
    accepted = await http.post(
        f"/v1/sessions/{session_id}/prompts", json={"text": "write it"}, headers=auth("bob")
    )
    prompt_id = accepted.json()["prompt_id"]
    await started(http, prompt_id, "bob")

    stream = tracking_disconnects(prompt_events(client, prompt_id, 0), client, prompt_id)
    first = await anext(stream)
    assert first.startswith("id: ")
    await stream.aclose()  # the client went away mid-prompt
    await asyncio.gather(*disconnects._IN_FLIGHT)

    handle = client.get_workflow_handle(prompt_id, result_type=PromptResult)
    while not (status := await handle.query(PromptWorkflow.status)).pending_permissions:
        await asyncio.sleep(0.05)
    request_id = status.pending_permissions[0].request_id
    answered = await http.post(
        f"/v1/prompts/{prompt_id}/permissions/{request_id}",
        json={"approve": True},
        headers=auth("bob"),
    )
    assert answered.status_code == 200, answered.text
    result = await handle.result()
    assert result.client_disconnects == 1

    # A stream read to its end is no disconnect.
    whole = tracking_disconnects(prompt_events(client, prompt_id, 0), client, prompt_id)
    assert [chunk async for chunk in whole]
    assert not disconnects._IN_FLIGHT
    assert (await handle.result()).client_disconnects == 1
    await http.post(f"/v1/sessions/{session_id}/close", headers=auth("bob"))
    closed = await client.get_workflow_handle(
        session_workflow_id(session_id), result_type=SessionStatus
    ).result()
    assert [p.prompt_id for p in closed.finished] == [prompt_id]
