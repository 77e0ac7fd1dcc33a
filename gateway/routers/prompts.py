"""The prompt routes, ``/v1/prompts/{prompt_id}``: a prompt's status and result, and its
agent events as server-sent events.

A prompt id is its workflow id. Every route first checks that the caller owns the prompt's
session (``OwnedPrompt``) and that the id names a prompt at all (gateway/prompt_lookup.py),
so only a real prompt of the caller's is ever read or streamed.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Query, Request
from fastapi.responses import StreamingResponse
from temporalio.client import WorkflowExecutionStatus

from gateway.api_models import PromptView
from gateway.closed_prompts import closed_prompt_view, closed_without_result, refused_view
from gateway.dependencies import OwnedPrompt, TemporalClient
from gateway.disconnects import tracking_disconnects
from gateway.prompt_lookup import prompt_state
from gateway.sse import parse_cursor, prompt_events
from seawall.client.temporal_ops import RPC_TIMEOUT, prompt_handle, read, refused_prompt
from workflows.prompt.workflow import PromptWorkflow

router = APIRouter(prefix="/prompts/{prompt_id}", tags=["prompts"], dependencies=OwnedPrompt)


@router.get("")
async def get_prompt(request: Request, prompt_id: str, client: TemporalClient) -> PromptView:
    """The prompt's live status, and its result once it has completed."""
    state = await prompt_state(request, client, prompt_id)
    if state == "pending":
        return PromptView(prompt_id=prompt_id)
    if state == "refused":
        # The session's start was refused: this prompt never runs, and says why.
        reason = await refused_prompt(client, prompt_id) or "the start was refused"
        refused_status, refused_result = refused_view(prompt_id, reason)
        return PromptView(prompt_id=prompt_id, status=refused_status, result=refused_result)
    handle = prompt_handle(client, prompt_id)
    description = await read(lambda: handle.describe(rpc_timeout=RPC_TIMEOUT))
    status = await read(lambda: handle.query(PromptWorkflow.status, rpc_timeout=RPC_TIMEOUT))
    result = None
    if description.status == WorkflowExecutionStatus.COMPLETED:
        result = await read(lambda: handle.result(rpc_timeout=RPC_TIMEOUT))
    elif description.status is not None and closed_without_result(description.status):
        # Closed without a result (gateway/closed_prompts.py): answered as finished, so a
        # client polling for the result stops.
        status, result = await closed_prompt_view(client, handle, description.status, status)
    return PromptView(prompt_id=prompt_id, status=status, result=result)


@router.get(
    "/events",
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
    # A 404 for anything but a prompt of the caller's (OwnedPrompt): only such a prompt is
    # ever told that its stream dropped.
    await prompt_state(request, client, prompt_id)
    return StreamingResponse(
        tracking_disconnects(prompt_events(client, prompt_id, cursor), client, prompt_id),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
