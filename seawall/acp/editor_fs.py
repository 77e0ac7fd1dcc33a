"""Serving a prompt's editor-side file calls: ``fs/read_text_file`` and ``fs/write_text_file``.

docs/acp.md, "Editor-side tools"; the workflow side is ``workflows/prompt/editor_calls.py``.
An ``editor_request`` event names an open request; its path and content come only from the
prompt's ``editor_calls`` query (events carry neither). The worker resolved and confined the
path already; the bridge checks it again on the editor's machine (absolute, and inside the
session's workspace once symlinks are resolved there) before the editor sees it, so a path
the worker should have refused, or a workspace changed since, never reaches the editor. The
answer goes back through the ``answer_editor_call`` update, classified
(``EditorFailure``): the editor's own error text stays here, unlogged. Logs carry the
prompt, the request and the operation, never a path or content.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import structlog
from acp.exceptions import RequestError
from temporalio.client import Client, WorkflowQueryFailedError, WorkflowUpdateFailedError
from temporalio.service import RPCError

from seawall.client.temporal_ops import RPC_TIMEOUT, is_not_found, prompt_handle
from workflows.contracts.editor_calls import (
    MAX_EDITOR_READ_CHARS,
    EditorAnswer,
    EditorFailure,
    EditorOperation,
    EditorRequest,
    EditorRequestsQuery,
)
from workflows.prompt.workflow import PromptWorkflow

log = structlog.get_logger("seawall.acp")

# ACP's (and JSON-RPC's) "resource not found", which editors answer for a missing file.
RESOURCE_NOT_FOUND = -32002


class EditorFiles(Protocol):
    """The file methods of the editor's connection (the SDK's ``AgentSideConnection``)."""

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> Any: ...

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> Any: ...


def inside_workspace(path: str, workspace: Path) -> bool:
    """Whether ``path`` is absolute and, symlinks resolved on this machine, the workspace or
    below it (the bridge's own check, after the worker's)."""
    given = Path(path)
    if "\x00" in path or not given.is_absolute():
        return False
    try:
        root, resolved = workspace.resolve(), given.resolve(strict=False)
    except (OSError, RuntimeError):
        return False
    return resolved == root or resolved.is_relative_to(root)


async def serve_editor_call(
    client: Client,
    conn: EditorFiles,
    session_id: str,
    prompt_id: str,
    request_id: str,
    workspace: Path,
) -> None:
    """Run one open request in the editor and answer it; a request no longer open (answered,
    timed out, its prompt over) is left alone."""
    handle = prompt_handle(client, prompt_id)
    try:
        requests = await handle.query(
            PromptWorkflow.editor_calls,
            EditorRequestsQuery(request_ids=[request_id]),
            rpc_timeout=RPC_TIMEOUT,
        )
    except (RPCError, WorkflowQueryFailedError):
        log.warning("acp_editor_request_unreadable", prompt_id=prompt_id, request_id=request_id)
        return
    if not requests:
        return
    request = requests[0]
    answer = await _in_editor(conn, session_id, request, workspace)
    try:
        await handle.execute_update(
            PromptWorkflow.answer_editor_call, answer, rpc_timeout=RPC_TIMEOUT
        )
    except WorkflowUpdateFailedError:
        pass  # timed out meanwhile: the call settled as editor_unavailable
    except RPCError as err:
        if not is_not_found(err):
            raise
    log.info(
        "acp_editor_call_answered",
        prompt_id=prompt_id,
        request_id=request_id,
        operation=request.plan.operation.value,
        failure=answer.failure.value if answer.failure else None,
    )


async def _in_editor(
    conn: EditorFiles, session_id: str, request: EditorRequest, workspace: Path
) -> EditorAnswer:
    plan, request_id = request.plan, request.request_id
    if not inside_workspace(plan.path, workspace):
        log.warning("acp_editor_path_refused", request_id=request_id)
        return EditorAnswer(request_id=request_id, failure=EditorFailure.REFUSED)
    try:
        if plan.operation is EditorOperation.WRITE:
            await conn.write_text_file(
                session_id=session_id, path=plan.path, content=plan.content or ""
            )
            return EditorAnswer(request_id=request_id)
        read = await conn.read_text_file(session_id=session_id, path=plan.path)
    except RequestError as err:
        missing = err.code == RESOURCE_NOT_FOUND and plan.operation is EditorOperation.READ
        failure = EditorFailure.NOT_FOUND if missing else EditorFailure.FAILED
        return EditorAnswer(request_id=request_id, failure=failure)
    except Exception:
        # The editor went away mid-request, or answered nonsense.
        return EditorAnswer(request_id=request_id, failure=EditorFailure.FAILED)
    content = getattr(read, "content", None)
    if not isinstance(content, str):
        return EditorAnswer(request_id=request_id, failure=EditorFailure.FAILED)
    if len(content) > MAX_EDITOR_READ_CHARS:
        return EditorAnswer(request_id=request_id, failure=EditorFailure.TOO_LARGE)
    return EditorAnswer(request_id=request_id, content=content)
