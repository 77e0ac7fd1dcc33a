"""Tell a prompt's id from every other workflow id before a prompt route touches it.

docs/security-gateway.md, "Prompt routes touch prompts only". A prompt route names a workflow id,
and Temporal answers for any workflow: a session's (``session-…``), an owner's admission workflow, a
stranger's. Before this check, ``GET /v1/prompts/<a session's workflow id>`` queried a session for a
prompt's status (a 500), and a dropped event stream on such an id signalled ``client_disconnected``
into that session's history. Every prompt route now asks :func:`prompt_state` first: a workflow that
is not a ``PromptWorkflow`` is answered exactly as an unknown id (404), and only a real prompt is
read, streamed or signalled.
"""

from __future__ import annotations

from typing import Literal

from fastapi import HTTPException, Request
from temporalio.client import Client
from temporalio.service import RPCError

from gateway.errors import not_found_detail
from seawall.client.temporal_ops import (
    RPC_TIMEOUT,
    is_not_found,
    is_pending,
    prompt_handle,
    read,
    refused_prompt,
)

# The workflow type every prompt runs as (workflows/prompt/workflow.py).
PROMPT_WORKFLOW_TYPE = "PromptWorkflow"


async def prompt_state(
    request: Request, client: Client, prompt_id: str
) -> Literal["started", "pending", "refused"]:
    """Whether the prompt's workflow has started, it still waits in its session's queue, or
    it never will because the worker refused to start its session; a 404 for anything else
    (no such workflow, or a workflow that is not a prompt)."""
    try:
        description = await read(
            lambda: prompt_handle(client, prompt_id).describe(rpc_timeout=RPC_TIMEOUT)
        )
    except RPCError as err:
        if not is_not_found(err):
            raise
        if await is_pending(client, prompt_id):
            return "pending"
        if await refused_prompt(client, prompt_id) is not None:
            return "refused"
        raise HTTPException(404, not_found_detail(request)) from err
    if description.workflow_type != PROMPT_WORKFLOW_TYPE:
        raise HTTPException(404, not_found_detail(request))
    return "started"
