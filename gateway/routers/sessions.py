"""The session routes, ``/v1/sessions``: start a session, read it, queue its prompts, send
mid-turn input, cancel the running prompt, close it.

Each route is one Temporal call on the session's workflow (or two: a describe to tell
"closed" from "unknown"); with an owners' tokens file, a session's owner is asked once
(gateway/ownership.py) and a prompt or a session is admitted against its owner's limit and
quotas first (gateway/admission.py). docs/http-api.md, "Retries and idempotency keys".
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

import structlog
from fastapi import APIRouter, Depends, HTTPException
from temporalio.client import Client, RPCTimeoutOrCancelledError, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from gateway.admission import RETRY_AFTER_SECONDS, OwnerAdmission, submit_update_id
from gateway.api_models import (
    CancelRequested,
    CloseRequested,
    CreateSessionRequest,
    ErrorBody,
    InputAccepted,
    InputRequest,
    PromptAccepted,
    SessionCreated,
    SessionView,
    SubmitPromptRequest,
)
from gateway.dependencies import (
    Admission,
    Caller,
    IdempotencyKey,
    OwnedSession,
    Owners,
    Settings,
    TemporalClient,
    check_prompt_size,
)
from gateway.idempotency import remembered_submit, session_exists
from gateway.quotas import metadata_bytes, text_bytes
from gateway.session_policy import session_choices
from seawall.client.temporal_ops import (
    RPC_TIMEOUT,
    is_closed,
    is_not_found,
    prompt_handle,
    read,
    session_closed_reason,
    session_handle,
    start_refusal,
    update_failure,
)
from workflows.contracts.activity import ModelSpec
from workflows.contracts.prompt import UserInput
from workflows.contracts.scenario import ScenarioHooks
from workflows.contracts.session import (
    PromptSubmission,
    SessionInput,
    SessionSettings,
)
from workflows.session import SessionWorkflow, session_workflow_id

log = structlog.get_logger("seawall.gateway")

# Sessions created with a key get an id derived from it, in their own namespace of ids.
SESSION_KEY_NAMESPACE = uuid.UUID("5e7a3a11-0000-4000-8000-5ea3a11c0de5")
# A session reports its prompt as running as soon as it asks Temporal to start it.
CANCEL_START_WAIT_SECONDS = 2.0

# The 429 of a per-owner quota (docs/security-gateway.md, "Per-owner quotas").
QUOTA_REFUSED: dict[int | str, dict[str, Any]] = {
    429: {
        "model": ErrorBody,
        "description": "the owner is at a quota (SEAWALL_MAX_OPEN_SESSIONS_PER_OWNER, "
        "SEAWALL_MAX_STORED_BYTES_PER_OWNER); the detail says which",
    }
}
# The 429 of the per-owner prompt limit (workflows/session/owner_admission.py).
PROMPT_LIMIT_REFUSED: dict[int | str, dict[str, Any]] = {
    429: {
        "model": ErrorBody,
        "description": "the owner has as many prompts running or queued as "
        "SEAWALL_MAX_CONCURRENT_PROMPTS_PER_OWNER allows",
        "headers": {
            "Retry-After": {
                "description": "seconds to wait before submitting again",
                "schema": {"type": "integer", "example": RETRY_AFTER_SECONDS},
            }
        },
    }
}

router = APIRouter(prefix="/sessions", tags=["sessions"])


@router.post(
    "",
    status_code=201,
    responses={
        403: {
            "model": ErrorBody,
            "description": "a choice the operator does not allow: a looser approval_mode, "
            "a channel session, a scripted model (the detail names the setting)",
        },
        **QUOTA_REFUSED,
    },
)
async def create_session(
    client: TemporalClient,
    settings: Settings,
    owner_id: Caller,
    admission: Admission,
    owners: Owners,
    body: CreateSessionRequest | None = None,
    idempotency_key: IdempotencyKey = "",
) -> SessionCreated:
    """Start a session (a `SessionWorkflow`); its prompts run in its own workspace.
    Repeated with the same `Idempotency-Key`, it answers as the first request did, also
    once that session has closed (docs/http-api.md, "Retries and idempotency keys")."""
    body = body or CreateSessionRequest()
    metadata_size = metadata_bytes(body.client_metadata, settings.max_client_metadata_bytes)
    # Only what tightens the operator's policy (gateway/session_policy.py).
    choices = session_choices(body, settings, owner_id)
    # A key is the client's: two owners' equal keys name two sessions.
    session_id = (
        uuid.uuid5(SESSION_KEY_NAMESPACE, f"{owner_id or ''}\n{idempotency_key}").hex
        if idempotency_key
        else uuid.uuid4().hex
    )
    created = SessionCreated(session_id=session_id, workflow_id=session_workflow_id(session_id))
    # A repeat is not counted again; its start finds the session the first one started
    # (and signals its grant again, in case the first request's was lost).
    repeat = bool(idempotency_key) and await session_exists(client, session_id)
    if admission is not None and owner_id is not None and not repeat:
        await admission.admit_session(client, owner_id, session_id, metadata_size)
    session_settings = SessionSettings(
        workspace_root=str(settings.workspaces / session_id),
        # The worker answers with the operator's model (its endpoint, else the demo model).
        model=ModelSpec(provider="operator"),
        approval_mode=choices.approval_mode,
        loosest_approval_mode=choices.loosest_approval_mode,
        permission_timeout_seconds=settings.permission_timeout_seconds,
        redacted_arguments=settings.redacted_arguments,
        session_approval_rules=body.approval_rules,
        client_metadata=body.client_metadata,
        scenario=(
            ScenarioHooks(model_script=body.model_script, fixture_tools=body.fixture_tools)
            if choices.scripted
            else None
        ),
    )
    session = SessionInput(
        session_id=session_id,
        settings=session_settings,
        # The authenticated owner (BearerTokenMiddleware); its rollout cohort is resolved by
        # the worker when the session starts.
        owner_id=owner_id,
    )
    # The client signs the start for the run it makes (gateway/app.py; the worker checks
    # it: docs/security-trust.md). Already started and closed meanwhile: answered as the
    # first request was.
    with contextlib.suppress(WorkflowAlreadyStartedError):
        await client.start_workflow(
            SessionWorkflow.run,
            session,
            id=session_workflow_id(session_id),
            task_queue=settings.task_queue,
            rpc_timeout=RPC_TIMEOUT,
            # A repeated keyed request finds the session the first one started, running or
            # closed: a session id never gets a second run (whose prompts would take the
            # first run's prompt ids).
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            static_summary="Seawall session (HTTP API)",
        )
    if owners is not None:
        owners.remember(session_id, owner_id)
    log.info("session_created", session_id=session_id)
    return created


@router.get("/{session_id}", dependencies=OwnedSession)
async def get_session(session_id: str, client: TemporalClient) -> SessionView:
    """The session's running prompt, queue, finished prompts and guard mode, and its
    state: `open`, `closed`, or `refused` when the worker refused to start it (`reason`
    says why; its prompts end `error` with `start_refused`)."""
    handle = session_handle(client, session_id)
    status = await read(lambda: handle.query(SessionWorkflow.status, rpc_timeout=RPC_TIMEOUT))
    view = SessionView.model_validate(status.model_dump())
    closed = await session_closed_reason(client, session_id)
    if closed is None:
        return view
    refused = await start_refusal(client, session_id)
    if refused is not None:
        return view.model_copy(update={"state": "refused", "reason": refused})
    return view.model_copy(update={"state": "closed", "reason": closed})


async def closed_session_conflict(client: Client, session_id: str, err: RPCError) -> None:
    """Turn "already completed" into 409; an unknown session stays a 404."""
    if is_not_found(err) and await is_closed(session_handle(client, session_id)):
        refused = await start_refusal(client, session_id)
        if refused is not None:
            detail = f"session {session_id!r} was refused by the worker: {refused}"
            raise HTTPException(409, detail) from err
        raise HTTPException(409, f"session {session_id!r} is closed") from err


async def release_refused(
    admission: OwnerAdmission | None,
    owner_id: str | None,
    session_id: str,
    update_id: str | None,
    held: bool,
    charged: int,
    client: Client,
) -> None:
    """Free the slot and bytes of a submit (or input) the session refused; if this fails
    too, the slot frees at the owner's next refusal anyway, and the bytes once the session is
    seen closed (workflows/session/owner_admission.py)."""
    if admission is None or owner_id is None:
        return
    try:
        if held and update_id is not None:
            await admission.release(client, owner_id, session_id, update_id)
        await admission.refund(client, owner_id, session_id, charged)
    except (RPCError, RPCTimeoutOrCancelledError):
        log.warning("admission_release_failed", session_id=session_id)


@router.post(
    "/{session_id}/prompts",
    status_code=202,
    dependencies=[*OwnedSession, Depends(check_prompt_size)],
    responses=PROMPT_LIMIT_REFUSED,
)
async def submit_prompt(
    session_id: str,
    body: SubmitPromptRequest,
    client: TemporalClient,
    owner_id: Caller,
    admission: Admission,
    idempotency_key: IdempotencyKey = "",
) -> PromptAccepted:
    """Queue a prompt; it runs when the prompts ahead of it have finished. With an
    owners' tokens file, 429 when the owner already has the most prompts running or
    queued that `SEAWALL_MAX_CONCURRENT_PROMPTS_PER_OWNER` allows, or is at its byte
    quota. Repeated with the same `Idempotency-Key`, it answers as the first did, also
    after the session has closed or continued as new."""
    handle = session_handle(client, session_id)
    update_id = submit_update_id(idempotency_key)
    if idempotency_key:
        known = await remembered_submit(client, session_id, update_id)
        if known is not None:
            return PromptAccepted(prompt_id=known.prompt_id, position=known.position)
    held, charged = False, 0
    if admission is not None and owner_id is not None:
        size = text_bytes(body.text, admission.quotas, "prompt")
        # Counted even if a slot was held for this key: the session does not know it.
        admitted = await admission.admit(
            client, owner_id, session_id, update_id, text_bytes=size, recount=True
        )
        held, charged = admitted.held, admitted.charged
    try:
        accepted = await handle.execute_update(
            SessionWorkflow.submit_prompt,
            PromptSubmission(text=body.text),
            id=update_id,
            rpc_timeout=RPC_TIMEOUT,
        )
    except WorkflowUpdateFailedError as err:
        await release_refused(admission, owner_id, session_id, update_id, held, charged, client)
        raise HTTPException(409, update_failure(err)) from err
    except RPCError as err:
        if is_not_found(err):
            await release_refused(admission, owner_id, session_id, update_id, held, charged, client)
        await closed_session_conflict(client, session_id, err)
        raise
    log.info(
        "prompt_submitted",
        session_id=session_id,
        prompt_id=accepted.prompt_id,
        position=accepted.position,
    )
    return PromptAccepted(prompt_id=accepted.prompt_id, position=accepted.position)


@router.post(
    "/{session_id}/input", status_code=202, dependencies=OwnedSession, responses=QUOTA_REFUSED
)
async def send_input(
    session_id: str,
    body: InputRequest,
    client: TemporalClient,
    owner_id: Caller,
    admission: Admission,
    idempotency_key: IdempotencyKey = "",
) -> InputAccepted:
    """Mid-turn input for the running prompt (it reaches the model after the batch)."""
    handle = session_handle(client, session_id)
    charged = 0
    if admission is not None and owner_id is not None:
        size = text_bytes(body.text, admission.quotas, "input")
        charged = await admission.charge_input(client, owner_id, session_id, size)
    try:
        delivery = await handle.execute_update(
            SessionWorkflow.send_input,
            UserInput(text=body.text),
            id=f"input:{idempotency_key}" if idempotency_key else None,
            rpc_timeout=RPC_TIMEOUT,
        )
    except WorkflowUpdateFailedError as err:
        await release_refused(admission, owner_id, session_id, None, False, charged, client)
        raise HTTPException(409, update_failure(err)) from err
    except RPCError as err:
        if is_not_found(err):
            await release_refused(admission, owner_id, session_id, None, False, charged, client)
        await closed_session_conflict(client, session_id, err)
        raise
    return InputAccepted(prompt_id=delivery.prompt_id)


@router.post("/{session_id}/cancel", status_code=202, dependencies=OwnedSession)
async def cancel_prompt(session_id: str, client: TemporalClient) -> CancelRequested:
    """Cancel the running prompt; the session and its queued prompts carry on."""
    session = session_handle(client, session_id)
    status = await read(lambda: session.query(SessionWorkflow.status, rpc_timeout=RPC_TIMEOUT))
    prompt_id = status.running_prompt_id
    no_prompt = HTTPException(409, f"no prompt is running in session {session_id!r}")
    if prompt_id is None:
        raise no_prompt
    handle = prompt_handle(client, prompt_id)
    deadline = asyncio.get_running_loop().time() + CANCEL_START_WAIT_SECONDS
    while True:
        try:
            closed = await is_closed(handle)
            break
        except RPCError as err:
            if not is_not_found(err) or asyncio.get_running_loop().time() > deadline:
                raise HTTPException(
                    409, f"prompt {prompt_id!r} is still starting; try again"
                ) from err
            await asyncio.sleep(0.1)
    # Cancelling a workflow that has already finished succeeds silently; say so instead.
    if closed:
        raise no_prompt
    await handle.cancel(rpc_timeout=RPC_TIMEOUT)
    log.info("prompt_cancel_requested", session_id=session_id, prompt_id=prompt_id)
    return CancelRequested(prompt_id=prompt_id)


@router.post("/{session_id}/close", status_code=202, dependencies=OwnedSession)
async def close_session(session_id: str, client: TemporalClient) -> CloseRequested:
    """Close the session once its queued prompts have run; it takes no new prompts."""
    try:
        await session_handle(client, session_id).signal(
            SessionWorkflow.close, rpc_timeout=RPC_TIMEOUT
        )
    except RPCError as err:
        await closed_session_conflict(client, session_id, err)
        raise
    return CloseRequested(session_id=session_id)
