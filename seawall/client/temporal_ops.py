"""The Temporal calls every client shares: handles, timeouts and a prompt's place.

A prompt's workflow starts only when its turn comes, so "no such workflow" can mean a
prompt still waiting in its session's queue; ``is_pending`` tells that apart from an
unknown id, and ``start_refusal`` from a prompt whose session the worker refused to start
(it never will start: its clients are told why instead of polling a 404). Every call
carries an RPC timeout so a request cannot hang on a missing worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

from temporalio.client import (
    Client,
    RPCTimeoutOrCancelledError,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from workflows.contracts.grant import START_REFUSALS
from workflows.contracts.prompt import PromptResult
from workflows.contracts.session import SessionStatus
from workflows.prompt.workflow import PromptWorkflow
from workflows.session import SessionWorkflow, session_workflow_id

# Queries and updates answer in milliseconds when a worker polls the task queue.
RPC_TIMEOUT = timedelta(seconds=10)
# Statuses that say "this attempt did not get through", not "the request is wrong": a server
# restarting (UNAVAILABLE), a call the client timed out or whose connection dropped
# (DEADLINE_EXCEEDED, CANCELLED), a server shedding load (RESOURCE_EXHAUSTED).
TRANSIENT_STATUSES = frozenset(
    {
        RPCStatusCode.UNAVAILABLE,
        RPCStatusCode.DEADLINE_EXCEEDED,
        RPCStatusCode.CANCELLED,
        RPCStatusCode.RESOURCE_EXHAUSTED,
    }
)
# A read is tried this many times in all, the pauses between attempts doubling from the first.
READ_ATTEMPTS = 3
READ_FIRST_PAUSE_SECONDS = 0.25
# Mirrors the prompt ids SessionWorkflow gives its child workflows: f"{session}-prompt-{n}".
PROMPT_ID_MARKER = "-prompt-"


T = TypeVar("T")


def is_transient(err: BaseException) -> bool:
    """Whether another attempt of the same call may well succeed."""
    if isinstance(err, RPCTimeoutOrCancelledError):
        return True
    return isinstance(err, RPCError) and err.status in TRANSIENT_STATUSES


async def read(call: Callable[[], Awaitable[T]]) -> T:
    """Run a read (a query, a describe, a result) and retry it briefly on a transient failure.

    Reads change nothing, so repeating one is always safe; writes (starts, signals, updates)
    are never retried here, because a call that timed out may still have taken effect. After
    the last attempt the error propagates, and the gateway answers 503 or 504 with
    ``Retry-After`` (``gateway/errors.py``).
    """
    pause = READ_FIRST_PAUSE_SECONDS
    for attempt in range(1, READ_ATTEMPTS + 1):
        try:
            return await call()
        except (RPCError, RPCTimeoutOrCancelledError) as err:
            if attempt == READ_ATTEMPTS or not is_transient(err):
                raise
        await asyncio.sleep(pause)
        pause *= 2
    raise AssertionError("unreachable")


def session_handle(
    client: Client, session_id: str
) -> WorkflowHandle[SessionWorkflow, SessionStatus]:
    # By workflow id alone, so calls follow the session across continue-as-new.
    return client.get_workflow_handle_for(SessionWorkflow.run, session_workflow_id(session_id))


def prompt_handle(client: Client, prompt_id: str) -> WorkflowHandle[PromptWorkflow, PromptResult]:
    return client.get_workflow_handle_for(PromptWorkflow.run, prompt_id)


def is_not_found(err: RPCError) -> bool:
    return err.status == RPCStatusCode.NOT_FOUND


async def is_closed(handle: WorkflowHandle[Any, Any]) -> bool:
    """Whether the workflow has finished (an unknown id raises ``RPCError`` NOT_FOUND)."""
    description = await read(lambda: handle.describe(rpc_timeout=RPC_TIMEOUT))
    return description.status != WorkflowExecutionStatus.RUNNING


def session_of_prompt(prompt_id: str) -> str | None:
    session_id, marker, number = prompt_id.rpartition(PROMPT_ID_MARKER)
    if not marker or not session_id or not number.isdigit():
        return None
    return session_id


async def is_pending(client: Client, prompt_id: str) -> bool:
    """Whether the prompt waits in its session: queued, or its workflow is being started."""
    session_id = session_of_prompt(prompt_id)
    if session_id is None:
        return False
    try:
        handle = session_handle(client, session_id)
        if await is_closed(handle):
            # A closed session starts no more prompts, though its last state (a refused
            # start's, say) still lists them as queued.
            return False
        status = await read(lambda: handle.query(SessionWorkflow.status, rpc_timeout=RPC_TIMEOUT))
    except RPCError as err:
        if is_not_found(err):
            return False
        raise
    return prompt_id in status.queued_prompt_ids or prompt_id == status.running_prompt_id


_CLOSED_AS = {
    WorkflowExecutionStatus.COMPLETED: "it was closed",
    WorkflowExecutionStatus.CANCELED: "it was cancelled",
    WorkflowExecutionStatus.TERMINATED: "it was terminated",
    WorkflowExecutionStatus.TIMED_OUT: "it timed out",
}


async def session_closed_reason(client: Client, session_id: str) -> str | None:
    """Why the session's workflow is no longer running (a failure's own message, such as a
    worker's refusal of its start), or ``None`` while it runs."""
    handle = session_handle(client, session_id)
    try:
        description = await read(lambda: handle.describe(rpc_timeout=RPC_TIMEOUT))
    except RPCError as err:
        if is_not_found(err):
            return "it does not exist"
        raise
    status = description.status
    if status == WorkflowExecutionStatus.RUNNING:
        return None
    if status != WorkflowExecutionStatus.FAILED:
        return _CLOSED_AS.get(status, "it is closed") if status is not None else "it is closed"
    try:
        await read(lambda: handle.result(rpc_timeout=RPC_TIMEOUT))
    except WorkflowFailureError as err:
        if isinstance(err.cause, ApplicationError):
            return f"it failed: {failure_message(err.cause)}"
    except (RPCError, RPCTimeoutOrCancelledError):
        pass
    return "it failed"


async def start_refusal(client: Client, session_id: str) -> str | None:
    """The worker's reason for refusing to start the session (a workspace outside its
    workspaces, a missing grant, a scripted model it does not allow), or ``None`` when the
    session runs, ended otherwise, or does not exist."""
    handle = session_handle(client, session_id)
    try:
        description = await read(lambda: handle.describe(rpc_timeout=RPC_TIMEOUT))
    except RPCError as err:
        if is_not_found(err):
            return None
        raise
    if description.status != WorkflowExecutionStatus.FAILED:
        return None
    try:
        await read(lambda: handle.result(rpc_timeout=RPC_TIMEOUT))
    except WorkflowFailureError as err:
        cause = err.cause
        if isinstance(cause, ApplicationError) and cause.type in START_REFUSALS:
            return failure_message(cause)
    return None


async def refused_prompt(client: Client, prompt_id: str) -> str | None:
    """Why a prompt that never started never will: its session's start was refused."""
    session_id = session_of_prompt(prompt_id)
    return None if session_id is None else await start_refusal(client, session_id)


def failure_message(cause: ApplicationError) -> str:
    """An application error's message without its type prefix."""
    message = cause.message
    prefix = f"{cause.type}: " if cause.type else ""
    return message[len(prefix) :] if prefix and message.startswith(prefix) else message


def update_failure(err: WorkflowUpdateFailedError) -> str:
    """The reason a workflow gave for rejecting or failing an update, without its type."""
    cause = err.cause
    if isinstance(cause, ApplicationError):
        return failure_message(cause)
    return str(cause) if cause is not None else "the workflow rejected the request"
