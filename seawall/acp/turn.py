"""Following one prompt for an editor: its events as session updates, its permission
requests as ``session/request_permission``, its editor-side file calls as ``fs/*`` requests
(seawall/acp/editor_fs.py), and how it ended.

Events come only from ``seawall.client.events.follow_prompt_events`` (in ``seq`` order, once
each), so however that follower learns of new events the bridge needs no change. Updates are
sent in event order from this one task; a permission request and an editor-side call each
run in a task of their own because the batch's other calls keep settling meanwhile. A
declined, cancelled or failed dialog is a rejection, the safe answer.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import structlog
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)
from temporalio.client import Client, WorkflowQueryFailedError, WorkflowUpdateFailedError
from temporalio.service import RPCError

from seawall.acp.editor_fs import EditorFiles, serve_editor_call
from seawall.acp.mapping import (
    SessionUpdate,
    TurnMapper,
    agent_text,
    edit_diff,
    explanation,
    note,
    tool_kind,
    tool_locations,
    tool_title,
)
from seawall.client.events import Idle, follow_prompt_events
from seawall.client.temporal_ops import RPC_TIMEOUT, is_not_found, prompt_handle
from workflows.contracts.prompt import (
    AgentEvent,
    EventKind,
    PermissionAnswer,
    StopReason,
    ToolCallsQuery,
)
from workflows.contracts.prompt_options import DEFAULT_MAX_MODEL_REQUESTS
from workflows.prompt.workflow import PromptWorkflow

log = structlog.get_logger("seawall.acp")

ALLOW = "allow"
ALLOW_FOR_SESSION = "allow_session"
REJECT = "reject"
PERMISSION_OPTIONS = [
    PermissionOption(option_id=ALLOW, name="Allow", kind="allow_once"),
    PermissionOption(
        option_id=ALLOW_FOR_SESSION, name="Allow always in this session", kind="allow_always"
    ),
    PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"),
]


class EditorConnection(EditorFiles, Protocol):
    """The calls the bridge makes of the editor (the SDK's ``AgentSideConnection``)."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None: ...

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kw: Any
    ) -> RequestPermissionResponse: ...


@dataclass
class TurnState:
    """One followed prompt as the agent sees it: cancellation can arrive at any time."""

    session_id: str
    prompt_id: str | None = None
    cancel_requested: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(frozen=True)
class TurnEnd:
    stop_reason: StopReason | None
    loop_type: str | None
    error: str | None


def approves(response: RequestPermissionResponse) -> bool:
    """Only an allow option approves; a cancelled dialog or any other answer rejects."""
    outcome = response.outcome
    return isinstance(outcome, AllowedOutcome) and outcome.option_id in (ALLOW, ALLOW_FOR_SESSION)


def remembers(response: RequestPermissionResponse) -> bool:
    """Whether the editor's answer allows the same call for the rest of the session."""
    outcome = response.outcome
    return isinstance(outcome, AllowedOutcome) and outcome.option_id == ALLOW_FOR_SESSION


class PromptFollower:
    """Streams one prompt to the editor and returns how it ended."""

    def __init__(
        self,
        client: Client,
        conn: EditorConnection,
        turn: TurnState,
        prompt_id: str,
        workspace: Path,
    ) -> None:
        self._client = client
        self._conn = conn
        self._turn = turn
        self._prompt_id = prompt_id
        self._mapper = TurnMapper(prompt_id, workspace)
        self._asking: set[asyncio.Task[None]] = set()

    async def follow(self, after: int = 0) -> TurnEnd | None:
        """``None`` when the events ended before the prompt finished (Temporal was out of
        reach for too long, or the prompt was withdrawn before it started)."""
        mapper = self._mapper
        try:
            # The follower ends by itself after ``prompt_finished``.
            async for item in follow_prompt_events(self._client, self._prompt_id, after):
                if not isinstance(item, Idle):
                    await self._on_event(item)
        finally:
            # A dialog still open belongs to a prompt that is over; its answer is moot.
            for task in list(self._asking):
                task.cancel()
        if mapper.stop_reason is None:
            return None
        error = await self._error() if mapper.stop_reason is StopReason.ERROR else None
        note = explanation(
            mapper.stop_reason, error=error, max_model_requests=await self._max_requests()
        )
        if note and not self._turn.cancel_requested:
            await self._send(agent_text(note, kind="stop", message=mapper.message_id("note", 0)))
        return TurnEnd(mapper.stop_reason, mapper.loop_type, error)

    async def _on_event(self, event: AgentEvent) -> None:
        if event.kind is EventKind.TOOL_CALL_STARTED or (
            event.kind is EventKind.TOOL_CALL_SETTLED and event.call_id not in self._mapper.details
        ):
            await self._look_up(event.call_id)
        if event.kind is EventKind.TOOL_CALL_SETTLED:
            await self._look_up_result(event.call_id)
        for update in self._mapper.on_event(event):
            await self._send(update)
        if event.kind is EventKind.PERMISSION_REQUEST:
            self._in_task(self._ask(event))
        if event.kind is EventKind.EDITOR_REQUEST and event.request_id:
            self._in_task(
                serve_editor_call(
                    self._client,
                    self._conn,
                    self._turn.session_id,
                    self._prompt_id,
                    event.request_id,
                    self._mapper.workspace,
                )
            )

    def _in_task(self, work: Any) -> None:
        """Run ``work`` beside the events (cancelled when the prompt's events end)."""
        task = asyncio.create_task(work)
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _send(self, update: SessionUpdate) -> None:
        await self._conn.session_update(self._turn.session_id, update)

    async def _look_up(self, call_id: str | None) -> None:
        """The call's arguments, for its title, location and diff (best effort)."""
        if not call_id:
            return
        try:
            calls = await prompt_handle(self._client, self._prompt_id).query(
                PromptWorkflow.tool_calls,
                ToolCallsQuery(call_ids=[call_id]),
                rpc_timeout=RPC_TIMEOUT,
            )
        except (RPCError, WorkflowQueryFailedError):
            return  # a worker without the query: the call is shown by its tool name
        for call in calls:
            self._mapper.details[call.call_id] = call

    async def _look_up_result(self, call_id: str | None) -> None:
        """The settled call's result, for its reason and output (best effort). Only the
        editor is sent it: never logged."""
        if not call_id:
            return
        try:
            results = await prompt_handle(self._client, self._prompt_id).query(
                PromptWorkflow.tool_results,
                ToolCallsQuery(call_ids=[call_id]),
                rpc_timeout=RPC_TIMEOUT,
            )
        except (RPCError, WorkflowQueryFailedError):
            return  # a worker without the query: the reason alone is shown
        for result in results:
            self._mapper.results[result.call_id] = result

    async def _ask(self, event: AgentEvent) -> None:
        call_id, request_id = event.call_id or "", event.request_id or ""
        mapper = self._mapper
        call = mapper.details.get(call_id)
        tool_name = event.tool_name or ""
        try:
            response = await self._conn.request_permission(
                self._turn.session_id,
                tool_call=ToolCallUpdate(
                    tool_call_id=mapper.tool_call_id(call_id),
                    title=tool_title(tool_name, call),
                    kind=tool_kind(tool_name),
                    # Never moves the call back: only a call announced pending says so.
                    status="pending" if mapper.status(call_id) == "pending" else None,
                    # What the call would do: an edit's diff, else the call on one line
                    # (arguments shortened, secrets redacted by the workflow).
                    content=edit_diff(call, mapper.workspace) or note(event.text),
                    locations=tool_locations(call, mapper.workspace),
                ),
                options=PERMISSION_OPTIONS,
            )
            approve, remember = approves(response), remembers(response)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("acp_permission_request_failed", prompt_id=self._prompt_id)
            approve = remember = False
        if self._turn.cancel_requested:
            return  # the prompt is being cancelled, and its open request with it
        if approve:
            update = mapper.approved(call_id)
            if update is not None:
                await self._send(update)
        else:
            mapper.rejected.add(call_id)
        try:
            await prompt_handle(self._client, self._prompt_id).execute_update(
                PromptWorkflow.answer_permission,
                PermissionAnswer(request_id=request_id, approve=approve, remember=remember),
                rpc_timeout=RPC_TIMEOUT,
            )
        except WorkflowUpdateFailedError:
            pass  # timed out meanwhile: the workflow rejected it already
        except RPCError as err:
            if not is_not_found(err):
                raise
        log.info(
            "acp_permission_answered",
            prompt_id=self._prompt_id,
            request_id=request_id,
            approve=approve,
        )

    async def _error(self) -> str | None:
        with contextlib.suppress(Exception):
            result = await prompt_handle(self._client, self._prompt_id).result(
                rpc_timeout=RPC_TIMEOUT
            )
            return result.error
        return None

    async def _max_requests(self) -> int:
        if self._mapper.stop_reason is not StopReason.MAX_TURN_REQUESTS:
            return DEFAULT_MAX_MODEL_REQUESTS
        with contextlib.suppress(Exception):
            status = await prompt_handle(self._client, self._prompt_id).query(
                PromptWorkflow.status, rpc_timeout=RPC_TIMEOUT
            )
            return status.model_requests
        return DEFAULT_MAX_MODEL_REQUESTS
