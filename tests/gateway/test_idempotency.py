"""Ids and keys are never reused (docs/security-gateway.md, "Ids and idempotency keys are never
reused"), through real gateway apps on a real dev server and worker: a keyed session re-created
after it closed is the same closed session (no second run, so no prompt id is given twice and no
finished result changes), an old prompt key is answered as the first submit was, and keys cannot
take an owner past its prompt limit."""

from __future__ import annotations

from typing import Any

import httpx
from temporalio.client import Client

from seawall.client.temporal_ops import prompt_handle, session_handle
from tests.gateway.owner_helpers import Gateway, accepted, auth, finish, submit, waiting_session
from tests.gateway.test_owner_limit import assert_refused
from workflows.session import SessionWorkflow

# Each prompt of the session asks to write a file and waits for the answer, then ends.
WAITING_PROMPTS = {
    "turns": [
        turn
        for _ in range(3)
        for turn in (
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a", "content": "x"}}]},
            {"text": "done"},
        )
    ]
}


async def keyed_session(http: httpx.AsyncClient, key: str) -> httpx.Response:
    return await http.post(
        "/v1/sessions",
        json={"model_script": WAITING_PROMPTS},
        headers=auth("alice") | {"Idempotency-Key": key},
    )


async def close_and_wait(http: httpx.AsyncClient, client: Client, session_id: str) -> None:
    closed = await http.post(f"/v1/sessions/{session_id}/close", headers=auth("alice"))
    assert closed.status_code == 202, closed.text
    await session_handle(client, session_id).result()


async def run_ids(client: Client, *workflow_ids: str) -> list[str]:
    return [(await client.get_workflow_handle(w).describe()).run_id for w in workflow_ids]


async def live_prompts(client: Client, session_ids: list[str]) -> list[str]:
    """Every prompt running or queued in these sessions."""
    live: list[str] = []
    for session_id in session_ids:
        status = await session_handle(client, session_id).query(SessionWorkflow.status)
        live += [p for p in [status.running_prompt_id, *status.queued_prompt_ids] if p]
    return live


async def test_a_keyed_session_created_again_after_it_closed_is_the_same_closed_session(
    gateway: Gateway, client: Client
) -> None:
    http = await gateway()
    first = await keyed_session(http, "session-key")
    assert first.status_code == 201, first.text
    session_id = first.json()["session_id"]
    prompt_id = await accepted(http, "alice", session_id, key="prompt-key")
    result = await finish(http, "alice", prompt_id)
    await close_and_wait(http, client, session_id)
    runs = await run_ids(client, f"session-{session_id}", prompt_id)

    again = await keyed_session(http, "session-key")
    assert again.status_code == 201, again.text
    assert again.json() == first.json()
    # The old prompt key answers as the first submit did; a new prompt is refused.
    repeated = await submit(http, "alice", session_id, key="prompt-key")
    assert repeated.status_code == 202, repeated.text
    assert repeated.json() == {"prompt_id": prompt_id, "position": 0}
    fresh = await submit(http, "alice", session_id, key="another-key")
    assert fresh.status_code == 409, fresh.text
    assert fresh.json() == {"detail": f"session {session_id!r} is closed"}

    # Nothing ran again: the same runs, the same result.
    assert await run_ids(client, f"session-{session_id}", prompt_id) == runs
    view = await http.get(f"/v1/prompts/{prompt_id}", headers=auth("alice"))
    assert view.json()["result"] == result


async def test_old_prompt_keys_never_take_an_owner_past_its_limit(
    gateway: Gateway, client: Client
) -> None:
    """The issue's attack: three keyed prompts, the session closed and created again, the
    old keys submitted again beside three new prompts, under a limit of 3."""
    http = await gateway(max_concurrent_prompts_per_owner=3)
    created = await keyed_session(http, "reused")
    session_id = created.json()["session_id"]
    keys = ["k-1", "k-2", "k-3"]
    first_ids = [await accepted(http, "alice", session_id, key=key) for key in keys]
    assert_refused(await submit(http, "alice", await waiting_session(http, "alice")), 3, 3)
    results = [await finish(http, "alice", prompt_id) for prompt_id in first_ids]
    await close_and_wait(http, client, session_id)
    assert (await keyed_session(http, "reused")).json() == created.json()

    others = [await waiting_session(http, "alice") for _ in range(4)]
    for key, prompt_id in zip(keys, first_ids, strict=True):
        repeated = await submit(http, "alice", session_id, key=key)
        assert repeated.status_code == 202, repeated.text
        assert repeated.json()["prompt_id"] == prompt_id
    new_ids = [
        await accepted(http, "alice", other, key=f"new-{n}") for n, other in enumerate(others[:3])
    ]
    for key in keys:  # and again, with the limit reached
        assert (await submit(http, "alice", session_id, key=key)).status_code == 202
    assert_refused(await submit(http, "alice", others[3], key="new-3"), 3, 3)

    assert sorted(await live_prompts(client, [session_id, *others])) == sorted(new_ids)
    for prompt_id, result in zip(first_ids, results, strict=True):
        assert (await prompt_handle(client, prompt_id).result()).model_dump(mode="json") == result


async def test_a_repeated_submit_is_answered_as_the_first_while_its_prompt_waits(
    gateway: Gateway, client: Client
) -> None:
    http = await gateway(max_concurrent_prompts_per_owner=2)
    session_id = (await keyed_session(http, "waits")).json()["session_id"]
    running = await accepted(http, "alice", session_id, key="a")
    queued = await submit(http, "alice", session_id, key="b")
    assert queued.json()["prompt_id"] == f"{session_id}-prompt-2"
    # Repeated, both are what they were; neither is counted again (limit 2).
    assert (await submit(http, "alice", session_id, key="a")).json() == {
        "prompt_id": running,
        "position": 0,
    }
    assert (await submit(http, "alice", session_id, key="b")).json() == queued.json()
    status: dict[str, Any] = (
        await http.get(f"/v1/sessions/{session_id}", headers=auth("alice"))
    ).json()
    assert status["queued_prompt_ids"] == [f"{session_id}-prompt-2"]
