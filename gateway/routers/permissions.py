"""The permission route, ``/v1/prompts/{prompt_id}/permissions/{request_id}``: approve or
reject a tool call that asked for permission (docs/http-api.md).

The answer is an update of the prompt's workflow, which knows its open requests: an id it
does not know is a 404, an answer to a finished prompt a 409.
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from temporalio.client import WorkflowUpdateFailedError
from temporalio.service import RPCError

from gateway.api_models import PermissionAnswered, PermissionAnswerRequest
from gateway.dependencies import OwnedPrompt, TemporalClient
from gateway.prompt_lookup import prompt_state
from seawall.client.temporal_ops import RPC_TIMEOUT, is_closed, is_not_found, prompt_handle
from workflows.contracts.prompt import PermissionAnswer
from workflows.prompt.workflow import PromptWorkflow

# Tagged with the prompt routes it belongs beside in the API docs.
router = APIRouter(
    prefix="/prompts/{prompt_id}/permissions", tags=["prompts"], dependencies=OwnedPrompt
)


@router.post("/{request_id}")
async def answer_permission(
    request: Request,
    prompt_id: str,
    request_id: str,
    body: PermissionAnswerRequest,
    client: TemporalClient,
) -> PermissionAnswered:
    """Approve or reject a tool call that asked for permission."""
    no_request = f"prompt {prompt_id!r} has no pending permission request {request_id!r}"
    if await prompt_state(request, client, prompt_id) != "started":
        raise HTTPException(404, no_request)
    handle = prompt_handle(client, prompt_id)
    try:
        outcome = await handle.execute_update(
            PromptWorkflow.answer_permission,
            PermissionAnswer(request_id=request_id, approve=body.approve, remember=body.remember),
            rpc_timeout=RPC_TIMEOUT,
        )
    except WorkflowUpdateFailedError as err:
        raise HTTPException(404, no_request) from err
    except RPCError as err:
        if is_not_found(err) and await is_closed(handle):
            raise HTTPException(409, f"prompt {prompt_id!r} has finished") from err
        raise
    return PermissionAnswered(prompt_id=prompt_id, request_id=request_id, outcome=outcome)
