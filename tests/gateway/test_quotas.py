"""Per-owner quotas (docs/security-gateway.md, "Per-owner quotas") through real gateway apps on
a real dev server and worker: client_metadata over its cap is a 413 for everybody, an
owner's open sessions and the bytes they hold are bounded across replicas (429 with the
setting in the detail) and freed once a session has closed, and a prompt bigger than the
whole byte quota is a 413."""

from __future__ import annotations

from typing import Any

import httpx
from temporalio.client import Client

from seawall.client.temporal_ops import session_handle
from tests.gateway.owner_helpers import WAITING_SCRIPT, Gateway, auth, submit
from workflows.contracts.owner_admission import admission_workflow_id
from workflows.session import OwnerAdmissionWorkflow

# JSON of exactly this many bytes: {"blob":"xxx..."} (11 bytes around the x's).
METADATA_BYTES = 100_000


def metadata(size: int = METADATA_BYTES) -> dict[str, Any]:
    return {"blob": "x" * (size - len('{"blob":""}'))}


async def create(
    http: httpx.AsyncClient, name: str, client_metadata: dict[str, Any] | None = None
) -> httpx.Response:
    return await http.post(
        "/v1/sessions",
        json={"model_script": WAITING_SCRIPT, "client_metadata": client_metadata or {}},
        headers=auth(name),
    )


async def created(http: httpx.AsyncClient, name: str, **body: Any) -> str:
    response = await create(http, name, **body)
    assert response.status_code == 201, response.text
    session_id: str = response.json()["session_id"]
    return session_id


async def close_and_wait(http: httpx.AsyncClient, client: Client, session_id: str) -> None:
    closed = await http.post(f"/v1/sessions/{session_id}/close", headers=auth("alice"))
    assert closed.status_code == 202, closed.text
    await session_handle(client, session_id).result()


def open_sessions_refused(response: httpx.Response, held: int, limit: int) -> None:
    assert response.status_code == 429, response.text
    assert response.json() == {
        "detail": f"this owner has {held} open sessions, the most it may have at once "
        f"(SEAWALL_MAX_OPEN_SESSIONS_PER_OWNER={limit}); close one (POST "
        "/v1/sessions/{session_id}/close) and create this one again once it has finished"
    }


def bytes_refused(response: httpx.Response, held: int, limit: int) -> None:
    assert response.status_code == 429, response.text
    assert response.json() == {
        "detail": f"this owner's open sessions hold {held} bytes of prompts, inputs and "
        "client_metadata, and this request would take them past the most allowed "
        f"(SEAWALL_MAX_STORED_BYTES_PER_OWNER={limit}); close sessions that are done to "
        "free their bytes"
    }


async def test_client_metadata_over_its_cap_is_a_413_for_every_caller(gateway: Gateway) -> None:
    http = await gateway(max_client_metadata_bytes=METADATA_BYTES)
    assert (await create(http, "alice", metadata())).status_code == 201
    for name in ("alice", "operator"):
        refused = await create(http, name, metadata(METADATA_BYTES + 1))
        assert refused.status_code == 413, refused.text
        assert refused.json() == {
            "detail": f"client_metadata is {METADATA_BYTES + 1} bytes as JSON; the limit is "
            f"{METADATA_BYTES} (SEAWALL_MAX_CLIENT_METADATA_BYTES)"
        }


async def test_open_sessions_are_bounded_per_owner_across_replicas(
    gateway: Gateway, client: Client
) -> None:
    one = await gateway(max_open_sessions_per_owner=2)
    two = await gateway(max_open_sessions_per_owner=2)
    first = await created(one, "alice")
    await created(two, "alice")
    open_sessions_refused(await create(one, "alice"), held=2, limit=2)
    open_sessions_refused(await create(two, "alice"), held=2, limit=2)
    # A keyed repeat of an open session is no new session.
    keyed = auth("alice") | {"Idempotency-Key": "k"}
    assert (await one.post("/v1/sessions", headers=keyed)).status_code == 429
    # Another owner has quotas of its own.
    await created(one, "bob")

    await close_and_wait(one, client, first)
    await created(two, "alice")
    open_sessions_refused(await create(one, "alice"), held=2, limit=2)


async def test_the_bytes_an_owners_open_sessions_hold_are_bounded(
    gateway: Gateway, client: Client
) -> None:
    """The issue's measurement: sessions with large client_metadata, all accepted before."""
    limit = 3 * METADATA_BYTES + 50_000
    http = await gateway(
        max_client_metadata_bytes=METADATA_BYTES,
        max_stored_bytes_per_owner=limit,
        max_open_sessions_per_owner=0,
    )
    sessions = [await created(http, "alice", client_metadata=metadata()) for _ in range(3)]
    bytes_refused(await create(http, "alice", metadata()), held=3 * METADATA_BYTES, limit=limit)
    # A prompt carries its session's metadata again: 100,000 bytes more than its text.
    bytes_refused(await submit(http, "alice", sessions[0]), held=3 * METADATA_BYTES, limit=limit)
    small = await created(http, "alice")
    accepted = await submit(http, "alice", small)
    assert accepted.status_code == 202, accepted.text

    await close_and_wait(http, client, sessions[1])
    again = await submit(http, "alice", sessions[0])
    assert again.status_code == 202, again.text
    # Left: sessions[0] (metadata, and a prompt with it again), sessions[2], and `small`
    # (its empty metadata, "{}", at the start and with its prompt).
    prompt = len(b"write it")
    held = 3 * METADATA_BYTES + prompt + 2 + (prompt + 2)
    bytes_refused(await create(http, "alice", metadata()), held=held, limit=limit)


async def test_a_prompt_bigger_than_the_whole_byte_quota_is_a_413(gateway: Gateway) -> None:
    http = await gateway(max_stored_bytes_per_owner=1000)
    session_id = await created(http, "alice")
    refused = await http.post(
        f"/v1/sessions/{session_id}/prompts", json={"text": "é" * 501}, headers=auth("alice")
    )
    assert refused.status_code == 413, refused.text
    assert refused.json() == {
        "detail": "the prompt is 1002 bytes, more than one owner's open sessions may hold in "
        "all (SEAWALL_MAX_STORED_BYTES_PER_OWNER=1000)"
    }


async def test_no_quota_at_zero_nor_for_the_operator_token(gateway: Gateway) -> None:
    cap = {"max_client_metadata_bytes": METADATA_BYTES}
    off = await gateway(max_open_sessions_per_owner=0, max_stored_bytes_per_owner=0, **cap)
    for _ in range(3):
        await created(off, "alice", client_metadata=metadata())
    limited = await gateway(max_open_sessions_per_owner=1, max_stored_bytes_per_owner=1, **cap)
    for _ in range(2):
        await created(limited, "operator", client_metadata=metadata())


async def test_a_refused_prompt_gives_its_bytes_back(
    gateway: Gateway, client: Client, task_queue: str, owners: dict[str, str]
) -> None:
    http = await gateway(max_stored_bytes_per_owner=10_000)
    session_id = await created(http, "alice")
    assert (await submit(http, "alice", session_id)).status_code == 202  # it waits
    closing = await http.post(f"/v1/sessions/{session_id}/close", headers=auth("alice"))
    assert closing.status_code == 202
    refused = await http.post(
        f"/v1/sessions/{session_id}/prompts", json={"text": "x" * 5000}, headers=auth("alice")
    )
    assert refused.status_code == 409, refused.text
    admission = client.get_workflow_handle_for(
        OwnerAdmissionWorkflow.run, admission_workflow_id(owners["alice"], task_queue)
    )
    state = await admission.query(OwnerAdmissionWorkflow.state)
    # "{}" at the start, and the waiting prompt's text with "{}" again: not the refused one.
    assert [s.stored_bytes for s in state.sessions] == [2 + len(b"write it") + 2]
