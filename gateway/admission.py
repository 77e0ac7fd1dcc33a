"""The per-owner limit on prompts running or queued, as the gateway applies it.

docs/architecture.md, "Per-owner prompt limit". Before a prompt is submitted, the owner's
:class:`~workflows.owner_admission.OwnerAdmissionWorkflow` is asked (one update-with-start,
so it is created on first use) to hold a slot for it. Only when that is refused does the
gateway do more: it looks at the sessions the held slots point to (what each admitted
submit made, then which prompts still run or wait), hands that to the workflow, which frees
the slots of finished prompts and answers again. A refusal then is a 429 with
``Retry-After``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from datetime import timedelta

from fastapi import HTTPException
from temporalio.client import (
    Client,
    RPCTimeoutOrCancelledError,
    WithStartWorkflowOperation,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError

from seawall.client.temporal_ops import (
    RPC_TIMEOUT,
    is_not_found,
    is_transient,
    read,
    session_handle,
)
from workflows.owner_admission import OwnerAdmissionWorkflow
from workflows.owner_admission_io import (
    Admission,
    AdmissionState,
    AdmitRequest,
    SessionObservation,
    Slot,
    SlotRelease,
    admission_workflow_id,
)
from workflows.session import SessionWorkflow

# How long to wait for the outcome of a held slot's submit; one still unknown then is
# looked at again at the next refusal.
SUBMIT_OUTCOME_TIMEOUT = timedelta(seconds=2)
# A slot frees when one of the owner's prompts finishes, which the gateway cannot foresee.
RETRY_AFTER_SECONDS = 5


def submit_update_id(idempotency_key: str) -> str:
    """The id of the session's ``submit_prompt`` update: the client's key (so a repeat is
    deduplicated by the session), else a fresh one, so the slot can find what it made."""
    return f"prompt:{idempotency_key}" if idempotency_key else f"prompt:{uuid.uuid4().hex}"


class OwnerAdmission:
    """Admission to the owner's ``limit`` of prompts (``limit`` > 0)."""

    def __init__(self, task_queue: str, limit: int) -> None:
        self.task_queue = task_queue
        self.limit = limit

    async def admit(self, client: Client, owner_id: str, session_id: str, update_id: str) -> bool:
        """Hold a slot for the submit ``update_id``, or raise a 429. Returns whether a new
        slot was taken (False for a repeated request)."""
        request = AdmitRequest(session_id=session_id, update_id=update_id, limit=self.limit)
        admission = await self._admit(client, owner_id, request)
        if not admission.admitted:
            observations = await asyncio.gather(
                *(
                    observe_session(client, sid, slots)
                    for sid, slots in by_session(admission.to_observe).items()
                )
            )
            request = request.model_copy(
                update={"observations": observations, "as_of": admission.as_of}
            )
            admission = await self._admit(client, owner_id, request)
        if not admission.admitted:
            raise HTTPException(
                429,
                f"this owner has {admission.held} prompts running or queued, the most it may "
                f"have at once (SEAWALL_MAX_CONCURRENT_PROMPTS_PER_OWNER={admission.limit}); "
                "submit again when one has finished",
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
        return admission.counted

    async def release(self, client: Client, owner_id: str, session_id: str, update_id: str) -> None:
        """Free the slot of a submit the session refused (it made no prompt)."""
        handle = client.get_workflow_handle_for(
            OwnerAdmissionWorkflow.run, admission_workflow_id(owner_id, self.task_queue)
        )
        await handle.signal(
            OwnerAdmissionWorkflow.release,
            SlotRelease(session_id=session_id, update_id=update_id),
            rpc_timeout=RPC_TIMEOUT,
        )

    async def _admit(self, client: Client, owner_id: str, request: AdmitRequest) -> Admission:
        start = WithStartWorkflowOperation(
            OwnerAdmissionWorkflow.run,
            AdmissionState(),
            id=admission_workflow_id(owner_id, self.task_queue),
            task_queue=self.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        )
        # No update id: a repeated request is recognised by the workflow itself, across
        # continue-as-new (an update id would also repeat an earlier refusal).
        return await client.execute_update_with_start_workflow(
            OwnerAdmissionWorkflow.admit,
            request,
            start_workflow_operation=start,
            rpc_timeout=RPC_TIMEOUT,
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
                return update_id, None
            if is_transient(err):
                return None
            raise
        except RPCTimeoutOrCancelledError:
            return None  # still in flight: looked at again next time

    unresolved = [s.update_id for s in slots if s.prompt_id is None and s.update_id is not None]
    outcomes = await asyncio.gather(*(made_by(update_id) for update_id in unresolved))
    submits = dict(outcome for outcome in outcomes if outcome is not None)
    try:
        status = await read(lambda: handle.query(SessionWorkflow.status, rpc_timeout=RPC_TIMEOUT))
        live = [*([status.running_prompt_id] if status.running_prompt_id else [])]
        live += status.queued_prompt_ids
    except RPCError as err:
        if not is_not_found(err):
            raise
        live = []  # the session is gone (past retention): nothing of it runs
    return SessionObservation(session_id=session_id, live_prompt_ids=live, submits=submits)
