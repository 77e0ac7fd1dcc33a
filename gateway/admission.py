"""The per-owner limit on prompts running or queued, and the per-owner quotas, as the
gateway applies them.

workflows/session/owner_admission.py. Before a prompt is
submitted, the owner's :class:`~workflows.session.owner_admission.OwnerAdmissionWorkflow` is asked
(one update-with-start, so it is created on first use) to hold a slot for it and charge its
bytes; before a session starts, to count it (``admit_session``); before mid-turn input, to
charge its bytes (``charge_input``). Only when that is refused does the gateway do more: it
looks at the sessions the refusal names (what each admitted submit made, which prompts still
run or wait, and whether the session is still open), hands that to the workflow, which frees
the slots of finished prompts and the sessions seen closed, and answers again. A refusal then
is a 429: with ``Retry-After`` for the prompt limit, without it for a quota.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, TypeVar

from fastapi import HTTPException
from pydantic import BaseModel
from temporalio.client import (
    Client,
    RPCTimeoutOrCancelledError,
    WithStartWorkflowOperation,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError
from temporalio.workflow import UpdateMethodMultiParam

from gateway.errors import RETRY_AFTER
from gateway.idempotency import remembered_submit
from seawall.client.temporal_ops import (
    RPC_TIMEOUT,
    is_closed,
    is_not_found,
    is_transient,
    prompt_handle,
    read,
    session_handle,
)
from workflows.contracts.grant import START_REFUSALS
from workflows.contracts.owner_admission import (
    Admission,
    AdmissionState,
    AdmitRequest,
    InputCharge,
    OwnerQuotas,
    Refund,
    SessionAdmitRequest,
    SessionObservation,
    Slot,
    SlotRelease,
    admission_workflow_id,
)
from workflows.session import OwnerAdmissionWorkflow, SessionWorkflow

# How long to wait for the outcome of a held slot's submit; one still unknown then is
# looked at again at the next refusal.
SUBMIT_OUTCOME_TIMEOUT = timedelta(seconds=2)
# A slot frees when one of the owner's prompts finishes, which the gateway cannot foresee.
RETRY_AFTER_SECONDS = 5
# Tries of an admission call whose workflow the worker refused (someone else's start in the
# owner's id fails, and the next try starts the gateway's own).
START_ATTEMPTS = 3

R = TypeVar("R", bound=BaseModel)


def submit_update_id(idempotency_key: str) -> str:
    """The id of the session's ``submit_prompt`` update: the client's key (so a repeat is
    deduplicated by the session), else a fresh one, so the slot can find what it made."""
    return f"prompt:{idempotency_key}" if idempotency_key else f"prompt:{uuid.uuid4().hex}"


@dataclass(frozen=True)
class Admitted:
    """What admitting a submit took: a slot (False for a repeat, or with no limit) and the
    bytes charged, both given back if the session refuses the submit."""

    held: bool
    charged: int


class OwnerAdmission:
    """Admission to the owner's ``limit`` of prompts (0: none) and its ``quotas``
    (docs/security-gateway.md, "Per-owner quotas"; None: none), one of them at least on."""

    def __init__(self, task_queue: str, limit: int, quotas: OwnerQuotas | None = None) -> None:
        self.task_queue = task_queue
        self.limit = limit
        self.quotas = quotas

    async def admit(
        self,
        client: Client,
        owner_id: str,
        session_id: str,
        update_id: str,
        *,
        text_bytes: int = 0,
        recount: bool = False,
    ) -> Admitted:
        """Hold a slot for the submit ``update_id`` (and charge its bytes), or raise a 429."""
        request = AdmitRequest(
            session_id=session_id,
            update_id=update_id,
            limit=self.limit,
            recount=recount,
            text_bytes=text_bytes,
            quotas=self.quotas,
        )
        admission = await self._ask(
            client,
            owner_id,
            OwnerAdmissionWorkflow.admit,
            lambda observations, as_of: request.model_copy(
                update={"observations": observations, "as_of": as_of}
            ),
        )
        return Admitted(held=admission.counted and self.limit > 0, charged=admission.charged)

    async def admit_session(
        self, client: Client, owner_id: str, session_id: str, metadata_bytes: int
    ) -> None:
        """Count a new session against the quotas, or raise a 429."""
        if self.quotas is None:
            return
        quotas = self.quotas
        await self._ask(
            client,
            owner_id,
            OwnerAdmissionWorkflow.admit_session,
            lambda observations, as_of: SessionAdmitRequest(
                session_id=session_id,
                metadata_bytes=metadata_bytes,
                quotas=quotas,
                observations=observations,
                as_of=as_of,
            ),
        )

    async def charge_input(
        self, client: Client, owner_id: str, session_id: str, text_bytes: int
    ) -> int:
        """Charge a mid-turn input's bytes to its session, or raise a 429; the bytes
        charged."""
        if self.quotas is None or not self.quotas.max_stored_bytes:
            return 0
        quotas = self.quotas
        admission = await self._ask(
            client,
            owner_id,
            OwnerAdmissionWorkflow.charge_input,
            lambda observations, as_of: InputCharge(
                session_id=session_id,
                text_bytes=text_bytes,
                quotas=quotas,
                observations=observations,
                as_of=as_of,
            ),
        )
        return admission.charged

    async def release(self, client: Client, owner_id: str, session_id: str, update_id: str) -> None:
        """Free the slot of a submit the session refused (it made no prompt)."""
        await self._handle(client, owner_id).signal(
            OwnerAdmissionWorkflow.release,
            SlotRelease(session_id=session_id, update_id=update_id),
            rpc_timeout=RPC_TIMEOUT,
        )

    async def refund(self, client: Client, owner_id: str, session_id: str, charged: int) -> None:
        """Give back the bytes charged for something the session refused."""
        if self.quotas is None or not self.quotas.max_stored_bytes or not charged:
            return
        await self._handle(client, owner_id).signal(
            OwnerAdmissionWorkflow.refund,
            Refund(session_id=session_id, bytes=charged),
            rpc_timeout=RPC_TIMEOUT,
        )

    def _handle(
        self, client: Client, owner_id: str
    ) -> WorkflowHandle[OwnerAdmissionWorkflow, None]:
        return client.get_workflow_handle_for(
            OwnerAdmissionWorkflow.run, admission_workflow_id(owner_id, self.task_queue)
        )

    async def _ask(
        self,
        client: Client,
        owner_id: str,
        update: UpdateMethodMultiParam[[OwnerAdmissionWorkflow, R], Admission],
        request: Callable[[list[SessionObservation], datetime | None], R],
    ) -> Admission:
        """Ask ``update``; when refused, look at the sessions the refusal names and ask
        again with what was seen; still refused, raise the 429 that says why."""
        admission = await self._call(client, owner_id, update, request([], None))
        if not admission.admitted:
            slots = by_session(admission.to_observe)
            for session_id in admission.sessions_to_observe:
                slots.setdefault(session_id, [])
            observations = await asyncio.gather(
                *(observe_session(client, sid, held) for sid, held in slots.items())
            )
            admission = await self._call(
                client, owner_id, update, request(list(observations), admission.as_of)
            )
        if not admission.admitted:
            raise refusal(admission, self.quotas)
        return admission

    async def _call(
        self,
        client: Client,
        owner_id: str,
        update: UpdateMethodMultiParam[[OwnerAdmissionWorkflow, R], Admission],
        request: R,
    ) -> Admission:
        refused: ApplicationError | None = None
        for _ in range(START_ATTEMPTS):
            # The client signs the start (seawall/runtime/grants.py); the worker checks it
            # before the workflow answers (docs/security-trust.md).
            start = WithStartWorkflowOperation(
                OwnerAdmissionWorkflow.run,
                AdmissionState(),
                id=admission_workflow_id(owner_id, self.task_queue),
                task_queue=self.task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )
            try:
                # No update id: a repeated request is recognised by the workflow itself,
                # across continue-as-new (an update id would also repeat an earlier refusal).
                return await client.execute_update_with_start_workflow(
                    update,
                    request,
                    start_workflow_operation=start,
                    rpc_timeout=RPC_TIMEOUT,
                )
            except WorkflowUpdateFailedError as err:
                refused = start_refusal(err)
                if refused is None:
                    raise
                # A run the worker refused (not this gateway's, or signed with another
                # key) fails; the next attempt starts a fresh one.
        assert refused is not None
        raise HTTPException(
            503,
            f"the worker refused this owner's admission workflow ({refused.type}): the "
            "gateway's session_signing_key (SEAWALL_SESSION_SIGNING_KEY, or the data "
            "directory's key file) must be the workers'",
            headers=RETRY_AFTER,
        )


def start_refusal(err: WorkflowUpdateFailedError) -> ApplicationError | None:
    """The worker's refusal of the admission workflow's start, if that failed the update."""
    cause = err.cause
    if isinstance(cause, ApplicationError) and cause.type in START_REFUSALS:
        return cause
    return None


def refusal(admission: Admission, quotas: OwnerQuotas | None) -> HTTPException:
    """The 429 for a refused admission: which limit, its setting and value, what frees it."""
    if admission.refused == "open_sessions":
        limit = quotas.max_open_sessions if quotas else 0
        return HTTPException(
            429,
            f"this owner has {admission.open_sessions} open sessions, the most it may have at "
            f"once (SEAWALL_MAX_OPEN_SESSIONS_PER_OWNER={limit}); close one (POST "
            "/v1/sessions/{session_id}/close) and create this one again once it has finished",
        )
    if admission.refused == "stored_bytes":
        limit = quotas.max_stored_bytes if quotas else 0
        return HTTPException(
            429,
            f"this owner's open sessions hold {admission.stored_bytes} bytes of prompts, "
            "inputs and client_metadata, and this request would take them past the most "
            f"allowed (SEAWALL_MAX_STORED_BYTES_PER_OWNER={limit}); close sessions that are "
            "done to free their bytes",
        )
    return HTTPException(
        429,
        f"this owner has {admission.held} prompts running or queued, the most it may "
        f"have at once (SEAWALL_MAX_CONCURRENT_PROMPTS_PER_OWNER={admission.limit}); "
        "submit again when one has finished",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def by_session(slots: list[Slot]) -> dict[str, list[Slot]]:
    grouped: dict[str, list[Slot]] = defaultdict(list)
    for slot in slots:
        grouped[slot.session_id].append(slot)
    return grouped


async def observe_session(client: Client, session_id: str, slots: list[Slot]) -> SessionObservation:
    """What became of ``slots`` in the session: first each unresolved submit's prompt, then
    the prompts running or queued (in that order, so a prompt found is judged by a later
    look at the session)."""
    handle = session_handle(client, session_id)

    async def made_by(update_id: str) -> tuple[str, str | None] | None:
        """The prompt the submit made (None: no such submit; None overall: not known yet)."""
        try:
            made = await handle.get_update_handle_for(
                SessionWorkflow.submit_prompt, update_id
            ).result(rpc_timeout=SUBMIT_OUTCOME_TIMEOUT)
            return update_id, made.prompt_id
        except WorkflowUpdateFailedError:
            return update_id, None  # refused: it made no prompt
        except RPCError as err:
            if is_not_found(err):
                # Not in this run: made before a continue-as-new, if the session remembers.
                remembered = await remembered_submit(client, session_id, update_id)
                return update_id, remembered.prompt_id if remembered else None
            if is_transient(err):
                return None
            raise
        except RPCTimeoutOrCancelledError:
            return None  # still in flight: looked at again next time

    unresolved = [s.update_id for s in slots if s.prompt_id is None and s.update_id is not None]
    outcomes = await asyncio.gather(*(made_by(update_id) for update_id in unresolved))
    submits = dict(outcome for outcome in outcomes if outcome is not None)
    state = await session_state(handle)
    live: list[str] = []
    if slots and state != "unknown":
        try:
            status = await read(
                lambda: handle.query(SessionWorkflow.status, rpc_timeout=RPC_TIMEOUT)
            )
            running = status.running_prompt_id
            if running is not None and await prompt_has_finished(client, running):
                # The prompt's own workflow has closed before its session saw the child
                # complete: the owner has seen its result, so it holds no slot any more.
                running = None
            live = [*([running] if running else []), *status.queued_prompt_ids]
        except RPCError as err:
            if not is_not_found(err):
                raise
            # the session is gone (past retention): nothing of it runs
    return SessionObservation(
        session_id=session_id, live_prompt_ids=live, submits=submits, state=state
    )


async def prompt_has_finished(client: Client, prompt_id: str) -> bool:
    """Whether the prompt's workflow has closed (one still being started is not)."""
    try:
        return await is_closed(prompt_handle(client, prompt_id))
    except RPCError as err:
        if is_not_found(err):
            return False
        raise


async def session_state(
    handle: WorkflowHandle[SessionWorkflow, object],
) -> Literal["open", "closed", "unknown"]:
    """Whether the session runs, has completed, or is unknown to Temporal."""
    try:
        description = await read(lambda: handle.describe(rpc_timeout=RPC_TIMEOUT))
    except RPCError as err:
        if not is_not_found(err):
            raise
        return "unknown"
    return "open" if description.status == WorkflowExecutionStatus.RUNNING else "closed"
