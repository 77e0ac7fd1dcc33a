"""A repeated request (the same ``Idempotency-Key``) is answered as the first one was.

docs/security-gateway.md, "Ids and idempotency keys are never reused". A keyed session's id is
derived from the owner and the key, and a session id never gets a second run (the start's id reuse
policy), so a repeated create finds the first one's session, running or closed. A keyed submit's
update id is derived from the key; Temporal deduplicates update ids only within one run, so the
session itself remembers what its newest submits answered, across continue-as-new (query
``submitted``), and the gateway asks it first: a remembered submit is answered as before without
being admitted again, and one the session does not know is counted against the owner's limit like
any new prompt, so no key ever runs a prompt uncounted.
"""

from __future__ import annotations

from temporalio.client import Client, WorkflowQueryFailedError
from temporalio.service import RPCError

from seawall.client.temporal_ops import RPC_TIMEOUT, is_not_found, read, session_handle
from workflows.contracts.session import SubmitLookup, SubmittedPrompt
from workflows.session import SessionWorkflow


async def session_exists(client: Client, session_id: str) -> bool:
    """Whether the session was ever started (running or closed, within retention)."""
    handle = session_handle(client, session_id)
    try:
        await read(lambda: handle.describe(rpc_timeout=RPC_TIMEOUT))
    except RPCError as err:
        if is_not_found(err):
            return False
        raise
    return True


async def remembered_submit(
    client: Client, session_id: str, update_id: str
) -> SubmittedPrompt | None:
    """What the session's submit ``update_id`` answered, if the session remembers it (None
    also for an unknown session, and for a worker from before the query)."""
    handle = session_handle(client, session_id)
    try:
        found = await read(
            lambda: handle.query(
                SessionWorkflow.submitted,
                SubmitLookup(update_id=update_id),
                rpc_timeout=RPC_TIMEOUT,
            )
        )
    except WorkflowQueryFailedError:
        return None
    except RPCError as err:
        if is_not_found(err):
            return None
        raise
    return found.submitted
