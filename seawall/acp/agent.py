"""``SeawallAgent``: the ACP methods, each one or two Temporal calls on the session and
prompt workflows the gateway uses too (docs/acp.md, "Methods").

The ACP session id is the Seawall session id (workflow ``session-{id}``), so a session is
found again after the bridge or the editor restarts; everything else lives in the workflows.
The agent keeps only what a connection needs: which sessions it opened or loaded (their
workspace) and which prompts it follows (to cancel them).

Operator policy is never taken from the client: the guard mode and the model endpoint are
the worker's settings, a client's MCP servers are ignored, a session mode is at most as loose
as the operator's ``loosest_approval_mode``, and of a client's ``_meta`` only
``seawall.modelScript`` is read, and only when ``SEAWALL_ALLOW_SCRIPTED_MODELS`` allows it.
The SDK's ``Agent`` is a ``Protocol`` whose methods answer ``null`` when not overridden, so
every method is overridden and the unsupported ones answer "method not found".
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import structlog
from acp import PROTOCOL_VERSION, Agent, Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)
from pydantic import ValidationError
from temporalio.client import Client as TemporalClient
from temporalio.client import WorkflowExecutionStatus, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDReusePolicy
from temporalio.service import RPCError

from seawall.acp.errors import (
    internal_error,
    invalid_params,
    invalid_request,
    resource_not_found,
    unsupported,
)
from seawall.acp.mapping import turn_response
from seawall.acp.modes import approval_mode, mode_state
from seawall.acp.prompt_text import prompt_text
from seawall.acp.replay import TranscriptReplay
from seawall.acp.turn import EditorConnection, PromptFollower, TurnState
from seawall.client.temporal_ops import (
    RPC_TIMEOUT,
    is_not_found,
    is_pending,
    prompt_handle,
    session_closed_reason,
    session_handle,
    update_failure,
)
from seawall.runtime.grants import GrantSigner, signing_client
from seawall.runtime.workspace_roots import ROOTS_SETTINGS, inside_roots
from workflows.contracts.activity import ModelSpec
from workflows.contracts.editor_calls import EditorTools
from workflows.contracts.prompt import ApprovalModeChange
from workflows.contracts.prompt_options import DEFAULT_REDACTED_ARGUMENTS, ApprovalMode
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.contracts.session import (
    PromptSubmission,
    PromptWithdrawal,
    SessionInput,
    SessionSettings,
    TranscriptQuery,
)
from workflows.session import SessionWorkflow, session_workflow_id

log = structlog.get_logger("seawall.acp")

# How long a cancel waits for a prompt its session is still starting.
CANCEL_START_WAIT_SECONDS = 10.0


@dataclass(frozen=True)
class BridgeOptions:
    """What the operator's settings say about sessions this bridge starts."""

    task_queue: str
    approval_mode: ApprovalMode
    # The loosest approval mode a client may switch to (seawall/acp/modes.py); None: any.
    loosest_approval_mode: ApprovalMode | None
    permission_timeout_seconds: float
    allow_scripted_models: bool
    max_prompt_chars: int
    # Who this bridge's sessions belong to (rollout cohorts): the owner_id setting, else the
    # local user (seawall.runtime.owners.local_owner_id).
    owner_id: str | None = None
    # Signs each session's start for the workers to verify (docs/security-trust.md, "Session
    # grants"); None: the bridge has no key and starts no session.
    signer: GrantSigner | None = None
    # The folders this bridge's settings say its workers accept (resolved): an editor folder
    # outside them is refused at session/new and session/load, before a worker refuses the
    # start (seawall.runtime.workspace_roots). --embedded: its worker's own roots; else the
    # operator's editor_workspaces; None: the workers alone decide.
    workspace_roots: tuple[Path, ...] | None = None
    # Argument names a permission request never shows (PromptOptions.redacted_arguments).
    redacted_arguments: tuple[str, ...] = DEFAULT_REDACTED_ARGUMENTS
    # Which built-in tools run through an editor that offers them (acp_client_tools).
    client_tools: EditorTools = EditorTools.OFF


@dataclass
class OpenSession:
    session_id: str
    workspace: Path
    turns: list[TurnState] = field(default_factory=list)


def checked_workspace(cwd: str, workspace_roots: tuple[Path, ...] | None = None) -> Path:
    """The session's workspace: ``cwd`` must be an absolute path to a directory, and (with
    ``workspace_roots``) lie inside one of them once symlinks are resolved, by the rule the
    worker applies (``seawall.runtime.workspace_roots.inside_roots``)."""
    path = Path(cwd)
    if not path.is_absolute():
        raise invalid_params(f"cwd must be an absolute path, not {cwd!r}", cwd=cwd)
    if not path.is_dir():
        raise invalid_params(f"cwd {cwd!r} is not an existing directory", cwd=cwd)
    if workspace_roots is not None and inside_roots(cwd, workspace_roots) is None:
        raise invalid_params(
            f"cwd {cwd!r} is not inside the folders this agent's worker accepts "
            f"({ROOTS_SETTINGS}; editor folders default to the home directory)",
            cwd=cwd,
        )
    return path


def _agent_version() -> str:
    try:
        return version("seawall")
    except PackageNotFoundError:
        return "0"


class SeawallAgent(Agent):
    def __init__(self, client: TemporalClient, options: BridgeOptions) -> None:
        self._client = client
        self._options = options
        # Starts sessions signed for the workers to check (docs/security-trust.md).
        self._starter = signing_client(client, options.signer) if options.signer else None
        self._conn: EditorConnection | None = None
        # What the editor offers at ``initialize`` (its file system methods).
        self._client_capabilities: ClientCapabilities | None = None
        self._sessions: dict[str, OpenSession] = {}
        # prompt id -> the turn following it; what stdin closing cancels.
        self._followed: dict[str, TurnState] = {}
        self._background: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    @property
    def conn(self) -> EditorConnection:
        assert self._conn is not None, "the SDK connects the agent before any request"
        return self._conn

    # --- the handshake ----------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        if isinstance(client_capabilities, ClientCapabilities):
            self._client_capabilities = client_capabilities
        # Always the version this agent speaks: a client that cannot use it disconnects.
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
            ),
            auth_methods=[],
            agent_info=Implementation(name="seawall", title="Seawall", version=_agent_version()),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        raise unsupported("authenticate")

    # --- sessions ---------------------------------------------------------------------------

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        workspace = checked_workspace(cwd, self._options.workspace_roots)
        starter = self._starter
        if starter is None:
            raise invalid_request(
                "seawall acp has no session_signing_key (SEAWALL_SESSION_SIGNING_KEY), the key "
                "its workers verify sessions with; use --embedded, or set it (or data_dir) as "
                "the workers' (docs/security-trust.md)"
            )
        if additional_directories:
            raise invalid_params("additional directories are not supported")
        if mcp_servers:
            # Operator policy: only the operator configures MCP servers (a count, no names).
            log.info("acp_mcp_servers_ignored", count=len(mcp_servers))
        options = self._options
        session_id = uuid.uuid4().hex
        settings = SessionSettings(
            workspace_root=str(workspace),
            # The worker answers with the operator's model (its endpoint, else the demo model).
            model=ModelSpec(provider="operator"),
            approval_mode=options.approval_mode,
            loosest_approval_mode=options.loosest_approval_mode,
            permission_timeout_seconds=options.permission_timeout_seconds,
            redacted_arguments=options.redacted_arguments,
            client_metadata={"client": "acp"},
            scenario=self._scripted_model(kwargs.get("seawall")),
            editor_tools=self._editor_tools(),
        )
        try:
            session = SessionInput(
                session_id=session_id, settings=settings, owner_id=options.owner_id
            )
            await starter.start_workflow(
                SessionWorkflow.run,
                session,
                id=session_workflow_id(session_id),
                task_queue=options.task_queue,
                rpc_timeout=RPC_TIMEOUT,
                # A session id never gets a second run (workflows/session/workflow.py): its prompts
                # would take the first run's prompt ids.
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                static_summary="Seawall session (editor over ACP)",
            )
        except RPCError as err:
            raise internal_error(f"cannot start the session on Temporal: {err.message}") from err
        self._sessions[session_id] = OpenSession(session_id, workspace)
        log.info(
            "acp_session_created", session_id=session_id, editor_tools=settings.editor_tools.value
        )
        return NewSessionResponse(
            session_id=session_id,
            modes=mode_state(options.approval_mode, options.loosest_approval_mode),
        )

    def _editor_tools(self) -> EditorTools:
        """Which tools of a new session run through this editor: what ``acp_client_tools``
        allows of what the editor advertised (both fs methods for ``fs``), else none."""
        fs = self._client_capabilities.fs if self._client_capabilities else None
        offers_fs = fs is not None and bool(fs.read_text_file) and bool(fs.write_text_file)
        if self._options.client_tools is EditorTools.FS and offers_fs:
            return EditorTools.FS
        return EditorTools.OFF

    def _scripted_model(self, meta: Any) -> ScenarioHooks | None:
        """A scripted model from ``_meta.seawall.modelScript`` (tests, simulations), only
        when the operator allows it."""
        script = meta.get("modelScript") if isinstance(meta, dict) else None
        if script is None:
            return None
        if not self._options.allow_scripted_models:
            raise invalid_params(
                "scripted models are disabled on this agent (SEAWALL_ALLOW_SCRIPTED_MODELS)"
            )
        try:
            return ScenarioHooks(model_script=ModelScript.model_validate(script))
        except ValidationError as err:
            raise invalid_params(f"invalid modelScript: {err.error_count()} errors") from None

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        workspace = checked_workspace(cwd, self._options.workspace_roots)
        handle = session_handle(self._client, session_id)
        try:
            description = await handle.describe(rpc_timeout=RPC_TIMEOUT)
        except RPCError as err:
            if is_not_found(err):
                raise resource_not_found(
                    f"no session {session_id!r}", sessionId=session_id
                ) from None
            raise
        if description.status != WorkflowExecutionStatus.RUNNING:
            raise invalid_params(f"session {session_id!r} is closed", sessionId=session_id)
        session = self._sessions.setdefault(session_id, OpenSession(session_id, workspace))
        replay = TranscriptReplay(session_id, workspace)
        after = 0
        while True:
            page = await handle.query(
                SessionWorkflow.transcript, TranscriptQuery(after=after), rpc_timeout=RPC_TIMEOUT
            )
            for update in replay.updates(page.messages, page.tool_statuses, page.prompt_ids):
                await self.conn.session_update(session_id, update)
            if page.next_index >= page.total or page.next_index == after:
                break
            after = page.next_index
        status = await handle.query(SessionWorkflow.status, rpc_timeout=RPC_TIMEOUT)
        waiting = [
            prompt_id
            for prompt_id in [status.running_prompt_id, *status.queued_prompt_ids]
            if prompt_id is not None and prompt_id not in self._followed
        ]
        if waiting:
            self._start_background(self._follow_unowned(session, waiting))
        log.info("acp_session_loaded", session_id=session_id, reattached=len(waiting))
        return LoadSessionResponse(
            modes=mode_state(
                status.approval_mode or ApprovalMode.DEFAULT, self._options.loosest_approval_mode
            )
        )

    def _start_background(self, work: Any) -> None:
        task: asyncio.Task[None] = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _follow_unowned(self, session: OpenSession, prompt_ids: list[str]) -> None:
        """Stream prompts no ``session/prompt`` of this connection owns (still running when
        the session was loaded), outside any turn."""
        for prompt_id in prompt_ids:
            turn = TurnState(session.session_id, prompt_id)
            session.turns.append(turn)
            self._followed[prompt_id] = turn
            try:
                follower = PromptFollower(
                    self._client, self.conn, turn, prompt_id, session.workspace
                )
                await follower.follow()
            except Exception:
                log.warning("acp_follow_failed", prompt_id=prompt_id)
            finally:
                session.turns.remove(turn)
            self._followed.pop(prompt_id, None)

    def _open(self, session_id: str) -> OpenSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise resource_not_found(
                f"session {session_id!r} is not open on this connection; "
                "use session/new or session/load",
                sessionId=session_id,
            )
        return session

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        self._open(session_id)
        mode = approval_mode(mode_id, self._options.loosest_approval_mode)
        try:
            await session_handle(self._client, session_id).execute_update(
                SessionWorkflow.set_approval_mode,
                ApprovalModeChange(approval_mode=mode),
                rpc_timeout=RPC_TIMEOUT,
            )
        except WorkflowUpdateFailedError as err:
            # The session's own bound (a session another bridge started, with its own).
            raise invalid_params(update_failure(err), modeId=mode_id) from None
        except RPCError as err:
            if is_not_found(err):
                raise invalid_request(f"session {session_id!r} is closed") from None
            raise
        log.info("acp_mode_set", session_id=session_id, mode=mode.value)
        return SetSessionModeResponse()

    # --- turns ------------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._open(session_id)
        text = prompt_text(prompt, self._options.max_prompt_chars)
        turn = TurnState(session_id)
        session.turns.append(turn)
        finished = False
        try:
            try:
                accepted = await session_handle(self._client, session_id).execute_update(
                    SessionWorkflow.submit_prompt,
                    PromptSubmission(text=text),
                    rpc_timeout=RPC_TIMEOUT,
                )
            except WorkflowUpdateFailedError as err:
                # The session may have closed before the update completed (a refused start,
                # a termination): say why, not the SDK's "the Workflow completed" alone.
                if await session_closed_reason(self._client, session_id) is not None:
                    raise await self._session_ended(session_id) from None
                raise invalid_request(update_failure(err)) from None
            except RPCError as err:
                if is_not_found(err):
                    raise await self._session_ended(session_id) from None
                raise
            prompt_id = turn.prompt_id = accepted.prompt_id
            self._followed[prompt_id] = turn
            log.info("acp_prompt_submitted", session_id=session_id, prompt_id=prompt_id)
            if turn.cancel_requested:
                await self._stop_prompt(session_id, prompt_id)
            follower = PromptFollower(self._client, self.conn, turn, prompt_id, session.workspace)
            end = await follower.follow()
            finished = True
        finally:
            session.turns.remove(turn)
            if finished and turn.prompt_id is not None:
                self._followed.pop(turn.prompt_id, None)
        if end is None:
            if turn.cancel_requested:
                return turn_response(
                    None, prompt_id=prompt_id, loop_type=None, cancel_requested=True
                )
            if await session_closed_reason(self._client, session_id) is not None:
                # Its session failed or closed (a worker refused its start, say): the prompt
                # will never run, so the turn ends rather than waits.
                raise await self._session_ended(session_id, promptId=prompt_id)
            raise internal_error(
                "lost contact with Temporal; the prompt keeps running; "
                "load the session again to follow it",
                promptId=prompt_id,
            )
        return turn_response(
            end.stop_reason,
            prompt_id=prompt_id,
            loop_type=end.loop_type,
            cancel_requested=turn.cancel_requested,
            error=end.error,
        )

    async def _session_ended(self, session_id: str, **data: Any) -> Exception:
        """The error for a prompt whose session's workflow is no longer running, saying why
        (a worker's refusal names the setting to change)."""
        reason = await session_closed_reason(self._client, session_id) or "it is closed"
        log.warning("acp_session_ended", session_id=session_id)
        return invalid_request(
            f"session {session_id!r} is no longer running: {reason}; start a new session",
            sessionId=session_id,
            **data,
        )

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self._sessions.get(session_id)
        if session is None:
            return  # a notification: nothing to answer
        turns = list(session.turns)
        for turn in turns:
            turn.cancel_requested = True
        # Newest first: a queued prompt is withdrawn before the one ahead of it ends and
        # lets it start.
        for turn in reversed(turns):
            if turn.prompt_id is not None:
                await self._stop_prompt(session_id, turn.prompt_id)
        log.info("acp_cancel", session_id=session_id, turns=len(session.turns))

    def cancel_request(self, request: tuple[str, Any] | None) -> None:
        """``$/cancel_request`` for an outstanding request (its method and session id, None
        when none is outstanding): a ``session/prompt`` is cancelled as ``session/cancel``
        cancels its session's turns, and answers ``cancelled``; every other request answers
        on its own within moments, so it is left to."""
        method, session_id = request or (None, None)
        if method == "session/prompt" and isinstance(session_id, str):
            self._start_background(self.cancel(session_id))
        log.info("acp_cancel_request", method=method)

    async def _stop_prompt(self, session_id: str, prompt_id: str) -> None:
        """Cancel the prompt's workflow at once when it runs (no call may start after the
        cancel, so nothing waits before it), else withdraw it if it still waits in the
        queue, else wait for a prompt its session is starting; a finished one is left alone."""
        handle = prompt_handle(self._client, prompt_id)
        try:
            await handle.cancel(rpc_timeout=RPC_TIMEOUT)
            return
        except RPCError as err:
            if not is_not_found(err):
                return
        try:
            await session_handle(self._client, session_id).execute_update(
                SessionWorkflow.withdraw_prompt,
                PromptWithdrawal(prompt_id=prompt_id),
                rpc_timeout=RPC_TIMEOUT,
            )
            return
        except WorkflowUpdateFailedError:
            pass  # not queued: starting, or finished
        except RPCError:
            return  # the session is gone, and its prompts with it
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CANCEL_START_WAIT_SECONDS
        while True:
            try:
                await handle.cancel(rpc_timeout=RPC_TIMEOUT)
                return
            except RPCError as err:
                if not is_not_found(err) or loop.time() > deadline:
                    return
                if not await is_pending(self._client, prompt_id):
                    return
            await asyncio.sleep(0.1)

    async def shutdown(self, *, detach: bool) -> None:
        """stdin closed: cancel every prompt this connection followed, unless detaching
        (then they run on, and a later ``session/load`` re-attaches to them)."""
        for task in self._background:
            task.cancel()
        followed = dict(self._followed)
        if detach:
            log.info("acp_detached", prompts=len(followed))
            return
        for turn in followed.values():
            turn.cancel_requested = True
        for prompt_id, turn in reversed(followed.items()):
            with contextlib.suppress(Exception):
                await self._stop_prompt(turn.session_id, prompt_id)
        log.info("acp_prompts_cancelled_on_exit", prompts=len(followed))

    # --- not supported ----------------------------------------------------------------------

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        raise unsupported("session/list")

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        raise unsupported("session/set_config_option")

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        raise unsupported("session/fork")

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        raise unsupported("session/resume")

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        raise unsupported("session/close")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise unsupported(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("acp_extension_notification_ignored")
