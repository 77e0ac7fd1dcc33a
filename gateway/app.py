"""The FastAPI app: a thin edge over the Temporal client (docs/architecture.md, "Sessions and the
gateway").

Each route is one Temporal call (or two: a describe to tell "closed" from "unknown"); with
an owners' tokens file, a session's owner is asked once (gateway/ownership.py) and a prompt
is admitted against its owner's limit first (gateway/admission.py). All state lives in
workflows, so the gateway can restart, or run as several replicas, without losing anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import structlog
from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Query, Request, Security
from fastapi.responses import StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from temporalio.client import (
    Client,
    RPCTimeoutOrCancelledError,
    WorkflowExecutionStatus,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from gateway.admission import RETRY_AFTER_SECONDS, OwnerAdmission, submit_update_id
from gateway.api_models import (
    CancelRequested,
    CloseRequested,
    CreateSessionRequest,
    ErrorBody,
    Health,
    InputAccepted,
    InputRequest,
    PermissionAnswered,
    PermissionAnswerRequest,
    PromptAccepted,
    PromptView,
    SessionCreated,
    SubmitPromptRequest,
)
from gateway.closed_prompts import closed_prompt_view, closed_without_result
from gateway.codec import install_codec
from gateway.disconnects import tracking_disconnects
from gateway.errors import RETRY_AFTER, install_error_handlers
from gateway.idempotency import remembered_submit, session_exists
from gateway.middleware import (
    OWNER_STATE_KEY,
    BearerTokenMiddleware,
    BodySizeLimitMiddleware,
    HeaderSizeLimitMiddleware,
)
from gateway.ownership import SessionOwners
from gateway.prompt_lookup import prompt_state
from gateway.quotas import metadata_bytes, owner_quotas, text_bytes
from gateway.session_policy import session_choices
from gateway.settings import GatewaySettings, check_exposure
from gateway.sse import parse_cursor, prompt_events
from seawall.client.temporal_ops import (
    RPC_TIMEOUT,
    is_closed,
    is_not_found,
    prompt_handle,
    read,
    session_handle,
    update_failure,
)
from seawall.runtime.grants import GrantSigner, signing_client
from workflows.contracts.activity import ModelSpec
from workflows.contracts.prompt import PermissionAnswer, UserInput
from workflows.contracts.scenario import ScenarioHooks
from workflows.contracts.session import (
    PromptSubmission,
    SessionInput,
    SessionSettings,
    SessionStatus,
)
from workflows.prompt.workflow import PromptWorkflow
from workflows.session import SessionWorkflow, session_workflow_id

ClientFactory = Callable[[], Awaitable[Client]]
# The most bytes of headers a request may carry (431 beyond).
MAX_HEADER_BYTES = 16 * 1024

# A client that repeats a write after a 503/504 (or a dropped connection) sends the same key,
# and the write takes effect once: the key names the session, or becomes the Temporal update
# id, which the server deduplicates.
IdempotencyKey = Annotated[
    str,
    Header(
        alias="Idempotency-Key",
        description="repeat a request with the same key and it takes effect once",
        max_length=200,
    ),
]
# Sessions created with a key get an id derived from it, in their own namespace of ids.
SESSION_KEY_NAMESPACE = uuid.UUID("5e7a3a11-0000-4000-8000-5ea3a11c0de5")

log = structlog.get_logger("seawall.gateway")

DESCRIPTION = """\
Seawall runs each AI-agent prompt as a durable Temporal workflow. A **session** keeps the
conversation and runs its prompts one at a time, in order; each prompt's id is its
workflow id. Stream a prompt's agent updates from `/v1/prompts/{prompt_id}/events`
(server-sent events, resumable with `Last-Event-ID`).

Every `/v1` route needs `Authorization: Bearer <token>` when the gateway has a token (or
an owners' tokens file: the session records the token's owner).
Errors are JSON `{"detail": "..."}`.
"""
# A prompt's text may be JSON-escaped up to 12 bytes a character ("\\ud83d\\ude00").
BODY_BYTES_PER_CHAR = 12
BODY_OVERHEAD_BYTES = 64 * 1024
# A session reports its prompt as running as soon as it asks Temporal to start it.
CANCEL_START_WAIT_SECONDS = 2.0

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 404, 409, 413, 422, 431, 503, 504)
}
# The 429 of a per-owner quota (docs/architecture.md, "Per-owner quotas").
_QUOTA_REFUSED: dict[int | str, dict[str, Any]] = {
    429: {
        "model": ErrorBody,
        "description": "the owner is at a quota (SEAWALL_MAX_OPEN_SESSIONS_PER_OWNER, "
        "SEAWALL_MAX_STORED_BYTES_PER_OWNER); the detail says which",
    }
}


class TemporalConnection:
    """The app's one Temporal client, connected once (at startup, or on first use)."""

    def __init__(self, factory: ClientFactory) -> None:
        self._factory = factory
        self._client: Client | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> Client:
        if self._client is None:
            async with self._lock:
                if self._client is None:
                    try:
                        self._client = await self._factory()
                    except Exception as err:
                        log.warning("temporal_connect_failed", error=str(err))
                        raise HTTPException(
                            503,
                            "cannot connect to the Temporal service; try again shortly",
                            headers=RETRY_AFTER,
                        ) from err
        return self._client


async def temporal(request: Request) -> Client:
    connection: TemporalConnection = request.app.state.temporal
    return await connection.get()


TemporalClient = Annotated[Client, Depends(temporal)]


async def owned_session(request: Request, session_id: str, client: TemporalClient) -> None:
    """404 unless the caller owns the session (with an owners' tokens file)."""
    owners: SessionOwners | None = request.app.state.session_owners
    if owners is not None:
        await owners.check(request, client, session_id)


async def owned_prompt(request: Request, prompt_id: str, client: TemporalClient) -> None:
    """404 unless the caller owns the prompt's session (with an owners' tokens file)."""
    owners: SessionOwners | None = request.app.state.session_owners
    if owners is not None:
        await owners.check_prompt(request, client, prompt_id)


OwnedSession = [Depends(owned_session)]
OwnedPrompt = [Depends(owned_prompt)]


async def check_prompt_size(request: Request) -> None:
    """413 (not 422) for an oversized prompt: checked before the body is validated."""
    limit: int = request.app.state.settings.max_prompt_chars
    try:
        body = await request.json()
    except ValueError:
        return  # not JSON: the body validation answers
    text = body.get("text") if isinstance(body, dict) else None
    if isinstance(text, str) and len(text) > limit:
        raise HTTPException(
            413,
            f"the prompt is {len(text)} characters; the limit is {limit} "
            "(SEAWALL_MAX_PROMPT_CHARS)",
        )


# Enforced by BearerTokenMiddleware; declared as a dependency so the docs show the scheme.
_bearer = HTTPBearer(auto_error=False, description="SEAWALL_GATEWAY_TOKEN")


async def documented_auth(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
) -> None:
    return None


def create_app(settings: GatewaySettings, client_factory: ClientFactory) -> FastAPI:
    """Build the gateway; raises ``ConfigurationError`` for an exposed, token-less address."""
    check_exposure(settings)
    key = settings.session_signing_key
    signer = GrantSigner(key) if key else None

    async def signing_factory() -> Client:
        # Every session and admission workflow this gateway starts is signed for the
        # worker to check (docs/security-trust.md; seawall/runtime/grants.py).
        client = await client_factory()
        return signing_client(client, signer) if signer is not None else client

    connection = TemporalConnection(signing_factory)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            await connection.get()
            log.info("gateway_connected", address=settings.temporal_address)
        except HTTPException:
            pass  # logged; requests retry the connection
        yield

    app = FastAPI(
        title="Seawall gateway",
        description=DESCRIPTION,
        version="0.1.0",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.temporal = connection
    # Several owners share this gateway only with a tokens file; otherwise every caller is
    # the one principal, and neither ownership nor the per-owner limit applies.
    owned = bool(settings.owner_tokens)
    app.state.session_owners = SessionOwners() if owned else None
    limit = settings.max_concurrent_prompts_per_owner
    quotas = owner_quotas(settings)
    admission = (
        OwnerAdmission(settings.task_queue, limit, quotas)
        if owned and (limit > 0 or quotas is not None)
        else None
    )
    install_error_handlers(app)
    app.add_middleware(
        BodySizeLimitMiddleware,
        max_bytes=settings.max_prompt_chars * BODY_BYTES_PER_CHAR + BODY_OVERHEAD_BYTES,
    )
    # Added last, so it runs first: nothing is read for an unauthenticated request.
    app.add_middleware(BearerTokenMiddleware, token=settings.token, owners=settings.owner_tokens)
    # Added last, so it runs first: an oversized head is refused before anything reads it.
    app.add_middleware(HeaderSizeLimitMiddleware, max_bytes=MAX_HEADER_BYTES)

    v1 = APIRouter(prefix="/v1", dependencies=[Depends(documented_auth)], responses=_ERRORS)

    # --- sessions -------------------------------------------------------------------------

    @v1.post(
        "/sessions",
        status_code=201,
        tags=["sessions"],
        responses={
            403: {
                "model": ErrorBody,
                "description": "a choice the operator does not allow: a looser approval_mode, "
                "a channel session, a scripted model (the detail names the setting)",
            },
            **_QUOTA_REFUSED,
        },
    )
    async def create_session(
        request: Request,
        client: TemporalClient,
        body: CreateSessionRequest | None = None,
        idempotency_key: IdempotencyKey = "",
    ) -> SessionCreated:
        """Start a session (a `SessionWorkflow`); its prompts run in its own workspace.
        Repeated with the same `Idempotency-Key`, it answers as the first request did, also
        once that session has closed (docs/architecture.md, "Sessions and the gateway")."""
        body = body or CreateSessionRequest()
        metadata_size = metadata_bytes(body.client_metadata, settings.max_client_metadata_bytes)
        owner_id = getattr(request.state, OWNER_STATE_KEY, None)
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
            # The authenticated owner (BearerTokenMiddleware); its rollout cohort is
            # resolved by the worker when the session starts.
            owner_id=owner_id,
        )
        # Already started and closed meanwhile: answered as the first request was.
        with contextlib.suppress(WorkflowAlreadyStartedError):
            await client.start_workflow(
                SessionWorkflow.run,
                session,
                id=session_workflow_id(session_id),
                task_queue=settings.task_queue,
                rpc_timeout=RPC_TIMEOUT,
                # A repeated keyed request finds the session the first one started, running
                # or closed: a session id never gets a second run (whose prompts would take
                # the first run's prompt ids).
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            )
        if app.state.session_owners is not None:
            app.state.session_owners.remember(session_id, owner_id)
        log.info("session_created", session_id=session_id)
        return created

    @v1.get("/sessions/{session_id}", tags=["sessions"], dependencies=OwnedSession)
    async def get_session(session_id: str, client: TemporalClient) -> SessionStatus:
        """The session's running prompt, queue, finished prompts and guard mode."""
        handle = session_handle(client, session_id)
        return await read(lambda: handle.query(SessionWorkflow.status, rpc_timeout=RPC_TIMEOUT))

    async def closed_session_conflict(client: Client, session_id: str, err: RPCError) -> None:
        """Turn "already completed" into 409; an unknown session stays a 404."""
        if is_not_found(err) and await is_closed(session_handle(client, session_id)):
            raise HTTPException(409, f"session {session_id!r} is closed") from err

    @v1.post(
        "/sessions/{session_id}/prompts",
        status_code=202,
        tags=["sessions"],
        dependencies=[*OwnedSession, Depends(check_prompt_size)],
        responses={
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
        },
    )
    async def submit_prompt(
        request: Request,
        session_id: str,
        body: SubmitPromptRequest,
        client: TemporalClient,
        idempotency_key: IdempotencyKey = "",
    ) -> PromptAccepted:
        """Queue a prompt; it runs when the prompts ahead of it have finished. With an
        owners' tokens file, 429 when the owner already has the most prompts running or
        queued that `SEAWALL_MAX_CONCURRENT_PROMPTS_PER_OWNER` allows, or is at its byte
        quota. Repeated with the same `Idempotency-Key`, it answers as the first did, also
        after the session has closed or continued as new."""
        handle = session_handle(client, session_id)
        update_id = submit_update_id(idempotency_key)
        owner_id = getattr(request.state, OWNER_STATE_KEY, None)
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
            await release_refused(owner_id, session_id, update_id, held, charged, client)
            raise HTTPException(409, update_failure(err)) from err
        except RPCError as err:
            if is_not_found(err):
                await release_refused(owner_id, session_id, update_id, held, charged, client)
            await closed_session_conflict(client, session_id, err)
            raise
        log.info(
            "prompt_submitted",
            session_id=session_id,
            prompt_id=accepted.prompt_id,
            position=accepted.position,
        )
        return PromptAccepted(prompt_id=accepted.prompt_id, position=accepted.position)

    async def release_refused(
        owner_id: str | None,
        session_id: str,
        update_id: str | None,
        held: bool,
        charged: int,
        client: Client,
    ) -> None:
        """Free the slot and bytes of a submit (or input) the session refused; if this
        fails too, the slot frees at the owner's next refusal anyway, and the bytes once
        the session is seen closed (docs/architecture.md)."""
        if admission is None or owner_id is None:
            return
        try:
            if held and update_id is not None:
                await admission.release(client, owner_id, session_id, update_id)
            await admission.refund(client, owner_id, session_id, charged)
        except (RPCError, RPCTimeoutOrCancelledError):
            log.warning("admission_release_failed", session_id=session_id)

    @v1.post(
        "/sessions/{session_id}/input",
        status_code=202,
        tags=["sessions"],
        dependencies=OwnedSession,
        responses=_QUOTA_REFUSED,
    )
    async def send_input(
        request: Request,
        session_id: str,
        body: InputRequest,
        client: TemporalClient,
        idempotency_key: IdempotencyKey = "",
    ) -> InputAccepted:
        """Mid-turn input for the running prompt (it reaches the model after the batch)."""
        handle = session_handle(client, session_id)
        owner_id = getattr(request.state, OWNER_STATE_KEY, None)
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
            await release_refused(owner_id, session_id, None, False, charged, client)
            raise HTTPException(409, update_failure(err)) from err
        except RPCError as err:
            if is_not_found(err):
                await release_refused(owner_id, session_id, None, False, charged, client)
            await closed_session_conflict(client, session_id, err)
            raise
        return InputAccepted(prompt_id=delivery.prompt_id)

    @v1.post(
        "/sessions/{session_id}/cancel",
        status_code=202,
        tags=["sessions"],
        dependencies=OwnedSession,
    )
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

    @v1.post(
        "/sessions/{session_id}/close",
        status_code=202,
        tags=["sessions"],
        dependencies=OwnedSession,
    )
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

    # --- prompts --------------------------------------------------------------------------

    @v1.post(
        "/prompts/{prompt_id}/permissions/{request_id}", tags=["prompts"], dependencies=OwnedPrompt
    )
    async def answer_permission(
        request: Request,
        prompt_id: str,
        request_id: str,
        body: PermissionAnswerRequest,
        client: TemporalClient,
    ) -> PermissionAnswered:
        """Approve or reject a tool call that asked for permission."""
        if await prompt_state(request, client, prompt_id) == "pending":
            raise HTTPException(
                404, f"prompt {prompt_id!r} has no pending permission request {request_id!r}"
            )
        handle = prompt_handle(client, prompt_id)
        try:
            outcome = await handle.execute_update(
                PromptWorkflow.answer_permission,
                PermissionAnswer(request_id=request_id, approve=body.approve),
                rpc_timeout=RPC_TIMEOUT,
            )
        except WorkflowUpdateFailedError as err:
            raise HTTPException(
                404, f"prompt {prompt_id!r} has no pending permission request {request_id!r}"
            ) from err
        except RPCError as err:
            if is_not_found(err) and await is_closed(handle):
                raise HTTPException(409, f"prompt {prompt_id!r} has finished") from err
            raise
        return PermissionAnswered(prompt_id=prompt_id, request_id=request_id, outcome=outcome)

    @v1.get("/prompts/{prompt_id}", tags=["prompts"], dependencies=OwnedPrompt)
    async def get_prompt(request: Request, prompt_id: str, client: TemporalClient) -> PromptView:
        """The prompt's live status, and its result once it has completed."""
        if await prompt_state(request, client, prompt_id) == "pending":
            return PromptView(prompt_id=prompt_id)
        handle = prompt_handle(client, prompt_id)
        description = await read(lambda: handle.describe(rpc_timeout=RPC_TIMEOUT))
        status = await read(lambda: handle.query(PromptWorkflow.status, rpc_timeout=RPC_TIMEOUT))
        result = None
        if description.status == WorkflowExecutionStatus.COMPLETED:
            result = await read(lambda: handle.result(rpc_timeout=RPC_TIMEOUT))
        elif description.status is not None and closed_without_result(description.status):
            # Closed without a result (gateway/closed_prompts.py): answered as finished, so
            # a client polling for the result stops.
            status, result = await closed_prompt_view(client, handle, description.status, status)
        return PromptView(prompt_id=prompt_id, status=status, result=result)

    @v1.get(
        "/prompts/{prompt_id}/events",
        tags=["prompts"],
        dependencies=OwnedPrompt,
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def stream_events(
        request: Request,
        prompt_id: str,
        client: TemporalClient,
        after: Annotated[int, Query(ge=0, description="resume after this event seq")] = 0,
        last_event_id: Annotated[
            str,
            Header(
                description="resume after this event seq (as sent in each event's id:)",
                # Documented, not enforced here: a malformed value gets the 400 that
                # parse_cursor explains.
                json_schema_extra={"pattern": r"^\s*[0-9]*\s*$"},
            ),
        ] = "",
    ) -> StreamingResponse:
        """Server-sent events: each agent update once, in order; ends after `prompt_finished`."""
        try:
            cursor = parse_cursor(after, last_event_id)
        except ValueError as err:
            raise HTTPException(400, str(err)) from err
        # A 404 for anything but a prompt of the caller's (OwnedPrompt): only such a prompt
        # is ever told that its stream dropped.
        await prompt_state(request, client, prompt_id)
        return StreamingResponse(
            tracking_disconnects(prompt_events(client, prompt_id, cursor), client, prompt_id),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    app.include_router(v1)

    @app.get("/healthz", tags=["health"])
    async def healthz() -> Health:
        """Liveness: the process answers (no Temporal call, no token)."""
        return Health(ok=True)

    install_codec(app)  # the Temporal UI's codec endpoint (gateway/codec.py)
    return app
