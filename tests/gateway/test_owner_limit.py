"""The per-owner limit on prompts running or queued (workflows/session/owner_admission.py), through
real gateway apps on a real dev server and worker: the 429 at the limit, admission again once a
prompt has finished or was cancelled, one limit shared by several gateway replicas, idempotent
retries counted once, and slots of submits that never happened freed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from gateway.admission import OwnerAdmission
from seawall.runtime.grants import new_signing_key
from tests.gateway.owner_helpers import (
    Gateway,
    accepted,
    auth,
    finish,
    permission_request,
    submit,
    view_until,
    waiting_session,
)
from workflows.contracts.grant import GRANT_MISSING
from workflows.contracts.owner_admission import AdmissionState, Slot, admission_workflow_id
from workflows.session import OwnerAdmissionWorkflow


def assert_refused(response: httpx.Response, held: int, limit: int) -> None:
    assert response.status_code == 429, response.text
    assert response.headers["Retry-After"] == "5"
    assert response.json() == {
        "detail": f"this owner has {held} prompts running or queued, the most it may have at "
        f"once (SEAWALL_MAX_CONCURRENT_PROMPTS_PER_OWNER={limit}); submit again when one has "
        "finished"
    }


async def test_the_limit_spans_sessions_and_frees_when_a_prompt_finishes(
    gateway: Gateway,
) -> None:
    http = await gateway(max_concurrent_prompts_per_owner=2)
    first, second, third = [await waiting_session(http, "alice") for _ in range(3)]
    finishing = await accepted(http, "alice", first)
    await accepted(http, "alice", second)
    assert_refused(await submit(http, "alice", third), held=2, limit=2)
    # A queued prompt counts as much as a running one.
    assert_refused(await submit(http, "alice", first), held=2, limit=2)

    # Another owner has a limit of their own.
    await accepted(http, "bob", await waiting_session(http, "bob"))

    result = await finish(http, "alice", finishing)
    assert result["stop_reason"] == "end_turn"
    await accepted(http, "alice", third)
    assert_refused(await submit(http, "alice", first), held=2, limit=2)


async def test_a_cancelled_prompt_frees_its_slot(gateway: Gateway) -> None:
    http = await gateway(max_concurrent_prompts_per_owner=1)
    session_id = await waiting_session(http, "alice")
    prompt_id = await accepted(http, "alice", session_id)
    assert_refused(await submit(http, "alice", session_id), held=1, limit=1)

    await permission_request(http, "alice", prompt_id)  # it runs
    cancelled = await http.post(f"/v1/sessions/{session_id}/cancel", headers=auth("alice"))
    assert cancelled.status_code == 202, cancelled.text
    view = await view_until(http, "alice", prompt_id, lambda v: v["result"] is not None)
    assert view["result"]["stop_reason"] == "cancelled"

    await accepted(http, "alice", session_id)


async def test_a_refused_submit_and_a_closed_session_hold_no_slot(gateway: Gateway) -> None:
    http = await gateway(max_concurrent_prompts_per_owner=2)
    session_id = await waiting_session(http, "alice")
    prompt_id = await accepted(http, "alice", session_id)
    closed = await http.post(f"/v1/sessions/{session_id}/close", headers=auth("alice"))
    assert closed.status_code == 202
    # The session refuses the submit (it is closing): the slot admitted for it is freed.
    refused = await submit(http, "alice", session_id)
    assert refused.status_code == 409, refused.text
    other, third = await waiting_session(http, "alice"), await waiting_session(http, "alice")
    await accepted(http, "alice", other)
    assert_refused(await submit(http, "alice", third), held=2, limit=2)

    # The closed session's last prompt finishes and the session completes.
    await finish(http, "alice", prompt_id)
    await accepted(http, "alice", third)


async def test_gateway_replicas_share_one_limit(gateway: Gateway) -> None:
    one, two = (
        await gateway(max_concurrent_prompts_per_owner=2),
        await gateway(max_concurrent_prompts_per_owner=2),
    )
    sessions = [await waiting_session(one, "alice") for _ in range(3)]
    finishing = await accepted(one, "alice", sessions[0])
    await accepted(two, "alice", sessions[1])
    assert_refused(await submit(one, "alice", sessions[2]), held=2, limit=2)
    assert_refused(await submit(two, "alice", sessions[2]), held=2, limit=2)
    # A gateway started afterwards (a restart) knows the count too.
    restarted = await gateway(max_concurrent_prompts_per_owner=2)
    assert_refused(await submit(restarted, "alice", sessions[2]), held=2, limit=2)

    await finish(two, "alice", finishing)
    await accepted(restarted, "alice", sessions[2])


async def test_a_retried_submit_is_counted_once(gateway: Gateway) -> None:
    http = await gateway(max_concurrent_prompts_per_owner=2)
    first, second, third, fourth = [await waiting_session(http, "alice") for _ in range(4)]
    prompt_id = await accepted(http, "alice", first, key="k-1")
    # The client repeats the request (say, after a 504): the same prompt, no new slot.
    assert await accepted(http, "alice", first, key="k-1") == prompt_id
    await accepted(http, "alice", second, key="k-2")
    assert_refused(await submit(http, "alice", third, key="k-3"), held=2, limit=2)
    # The same key in another session is another prompt.
    assert_refused(await submit(http, "alice", third, key="k-1"), held=2, limit=2)

    await finish(http, "alice", prompt_id)
    # Repeated after its prompt finished, before its slot was found free: still once.
    assert await accepted(http, "alice", first, key="k-1") == prompt_id
    await accepted(http, "alice", third, key="k-3")  # frees the finished prompt's slot
    # And repeated after its slot was freed: answered as before, not counted again.
    assert await accepted(http, "alice", first, key="k-1") == prompt_id
    assert_refused(await submit(http, "alice", fourth), held=2, limit=2)


async def test_a_slot_whose_submit_never_happened_is_freed_after_the_grace(
    gateway: Gateway, client: Client, task_queue: str, owners: dict[str, str]
) -> None:
    """A gateway that crashed between admitting a prompt and submitting it."""
    http = await gateway(max_concurrent_prompts_per_owner=1)
    session_id = await waiting_session(http, "alice")
    owner = owners["alice"]
    crashed = OwnerAdmission(task_queue, limit=1)
    assert await crashed.admit(client, owner, session_id, "prompt:lost-1")
    # Within the grace it may still be on its way: the slot holds.
    assert_refused(await submit(http, "alice", session_id), held=1, limit=1)

    # Bob's admission workflow, started with no grace, frees such a slot at once.
    await client.start_workflow(
        OwnerAdmissionWorkflow.run,
        AdmissionState(unsubmitted_grace_seconds=0),
        id=admission_workflow_id(owners["bob"], task_queue),
        task_queue=task_queue,
    )
    bob_session = await waiting_session(http, "bob")
    assert await crashed.admit(client, owners["bob"], bob_session, "prompt:lost-2")
    await accepted(http, "bob", bob_session)
    assert_refused(await submit(http, "bob", bob_session), held=1, limit=1)


async def test_the_count_survives_continue_as_new_and_never_names_the_owner(
    gateway: Gateway, client: Client, task_queue: str, owners: dict[str, str]
) -> None:
    owner = owners["alice"]
    first = await client.start_workflow(
        OwnerAdmissionWorkflow.run,
        AdmissionState(messages_per_run=2),
        id=admission_workflow_id(owner, task_queue),
        task_queue=task_queue,
    )
    http = await gateway(max_concurrent_prompts_per_owner=3)
    sessions = [await waiting_session(http, "alice") for _ in range(4)]
    for session_id in sessions[:3]:
        await accepted(http, "alice", session_id, key="k")
    assert_refused(await submit(http, "alice", sessions[3]), held=3, limit=3)
    handle = client.get_workflow_handle_for(OwnerAdmissionWorkflow.run, first.id)
    state = await handle.query(OwnerAdmissionWorkflow.state)
    assert sorted(slot.session_id for slot in state.slots) == sorted(sessions[:3])
    latest = (await handle.describe()).run_id
    assert latest != first.result_run_id
    # Neither the id nor any run's history carries the owner id.
    assert owner not in handle.id
    for run_id in (first.result_run_id, latest):
        history = await client.get_workflow_handle(handle.id, run_id=run_id).fetch_history()
        assert owner not in history.to_json()


async def test_no_limit_at_zero_nor_for_the_operator_token(gateway: Gateway) -> None:
    unlimited = await gateway(max_concurrent_prompts_per_owner=0)
    sessions = [await waiting_session(unlimited, "alice") for _ in range(3)]
    for session_id in sessions:
        await accepted(unlimited, "alice", session_id)
    # The operator's single token names no owner: never limited.
    limited = await gateway(max_concurrent_prompts_per_owner=1)
    for session_id in [await waiting_session(limited, "operator") for _ in range(2)]:
        await accepted(limited, "operator", session_id)


async def test_the_schema_declares_the_429_and_its_retry_after(gateway: Gateway) -> None:
    http = await gateway()
    schema = (await http.get("/openapi.json", headers=auth("alice"))).json()
    refused = schema["paths"]["/v1/sessions/{session_id}/prompts"]["post"]["responses"]["429"]
    assert refused["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorBody"
    }
    assert refused["headers"]["Retry-After"]["schema"]["type"] == "integer"


async def test_an_admission_workflow_someone_else_started_is_never_counted(
    gateway: Gateway,
    temporal_env: WorkflowEnvironment,
    task_queue: str,
    owners: dict[str, str],
) -> None:
    """Whoever reaches the frontend starts bob's admission workflow with a slot that would
    never free (docs/security-trust.md): the worker refuses the unsigned start, so the
    gateway's next request starts its own and bob is admitted."""
    now = datetime.now(UTC)
    ghost = Slot(
        session_id="ghost",
        update_id="prompt:ghost",
        admitted_at=now,
        known_as_of=now + timedelta(days=36500),
    )
    workflow_id = admission_workflow_id(owners["bob"], task_queue)
    hostile = await temporal_env.client.start_workflow(
        OwnerAdmissionWorkflow.run,
        AdmissionState(slots=[ghost], unsubmitted_grace_seconds=1e9),
        id=workflow_id,
        task_queue=task_queue,
    )
    http = await gateway(max_concurrent_prompts_per_owner=1)
    session_id = await waiting_session(http, "bob")
    await accepted(http, "bob", session_id)
    with pytest.raises(WorkflowFailureError) as refused:
        await hostile.result()
    assert isinstance(refused.value.cause, ApplicationError)
    assert refused.value.cause.type == GRANT_MISSING
    handle = temporal_env.client.get_workflow_handle_for(OwnerAdmissionWorkflow.run, workflow_id)
    state = await handle.query(OwnerAdmissionWorkflow.state)
    assert [slot.session_id for slot in state.slots] == [session_id]


async def test_a_gateway_whose_key_the_workers_refuse_says_so(gateway: Gateway) -> None:
    http = await gateway(session_signing_key=new_signing_key())
    refused = await http.post("/v1/sessions", json={}, headers=auth("alice"))
    assert refused.status_code == 503, refused.text
    assert refused.json()["detail"] == (
        "the worker refused this owner's admission workflow (SessionGrantInvalid): the "
        "gateway's session_signing_key (SEAWALL_SESSION_SIGNING_KEY, or the data directory's "
        "key file) must be the workers'"
    )
