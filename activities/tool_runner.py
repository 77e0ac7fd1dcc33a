"""The tool activities: run one tool call and report it on both status axes
(workflows/contracts/outcome.py).

This is where a call's ``execution_status`` is frozen: ``not_started`` when the call never
reached its tool (unknown name, broken or invalid arguments), the tool's own result when it
ran, ``cancelled`` when the workflow cancelled it. Post-processing (spilling long output to a
file) happens afterwards and may turn the terminal status into an error without touching the
execution fields, which is exactly the distinction the guard relies on.

A tool error is always a returned :class:`~workflows.contracts.outcome.ToolOutcome`, never an
exception, so Temporal never retries a tool because the tool failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import structlog
from pydantic import BaseModel, ValidationError
from temporalio import activity
from temporalio.exceptions import ApplicationError

from workflows.contracts.activity import (
    CHECK_TOOL_CALL,
    LIST_TOOLS,
    LIST_TOOLS_WITHOUT_MCP,
    PREPARE_EDITOR_CALL,
    RUN_TOOL,
    CheckToolCallInput,
    ListToolsInput,
    ListToolsOutput,
    RunToolInput,
    ToolSpec,
)
from workflows.contracts.editor_calls import PreparedEditorCall, PrepareEditorCallInput
from workflows.contracts.outcome import (
    TerminalStatus,
    ToolCall,
    ToolErrorType,
    ToolOutcome,
    ToolType,
)
from workflows.contracts.scenario import FixtureTool
from workflows.contracts.synthetic_outcomes import lost_call_outcome
from workflows.rules.normalize import with_readings

from .fixtures import check_fixture, fixture_tool_spec, record_fixture_run, run_fixture
from .heartbeat import Heartbeat, activity_heartbeat, heartbeating, no_heartbeat
from .lost_calls import LostCalls, current_lost_calls, lost_attempt
from .mcp import McpSettings, current_settings, is_mcp_name
from .mcp.pool import McpPool
from .outcomes import cancelled_outcome, failed_outcome, not_started_outcome, succeeded_outcome
from .prompt_preamble import PromptPreambles, PromptRun
from .recorded_results import RecordedResults
from .sandbox import Sandbox, load_policy, probe
from .sandbox.owners import owner_group
from .tools import BuiltinTool, ToolContext, ToolFailure
from .tools.editor_plan import plan_editor_call
from .trust import DENY_ALL, WorkerTrust

# A tool activity's input that may name its fixture (RunToolInput, CheckToolCallInput).
T = TypeVar("T", RunToolInput, CheckToolCallInput)

RAW_ARGUMENTS_QUOTE_CHARS = 200
MAX_VALIDATION_ERRORS = 8
MAX_EXCEPTION_TEXT_CHARS = 500
SPILL_DIR = Path(".seawall") / "tool-output"

_log = structlog.get_logger(__name__)


# --- before the tool runs: its name, its arguments, its parsed input ------------------------------


def _not_started(
    call: ToolCall,
    error_type: ToolErrorType,
    message: str,
    tool: BuiltinTool | None = None,
) -> ToolOutcome:
    return not_started_outcome(
        call,
        error_type,
        message,
        policy_tool_name=tool.name if tool else None,
        tool_type=ToolType.NATIVE,
    )


def _summarise_validation(exc: ValidationError) -> str:
    # Field locations and messages only: the offending values are the model's own input
    # and may be large or sensitive, so they are never echoed back.
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    parts = []
    for err in errors[:MAX_VALIDATION_ERRORS]:
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        parts.append(f"{where}: {err['msg']}")
    if len(errors) > MAX_VALIDATION_ERRORS:
        parts.append(f"... and {len(errors) - MAX_VALIDATION_ERRORS} more")
    return "; ".join(parts)


def parse_call(
    call: ToolCall, tools: Mapping[str, BuiltinTool]
) -> tuple[BuiltinTool, BaseModel] | ToolOutcome:
    """The tool and its parsed arguments, or the ``not_started`` outcome refusing the call."""
    if not call.name:
        return _not_started(
            call,
            ToolErrorType.INVALID_TOOL_PARAMS,
            "The tool call had no function name. Call one of the declared tools by name.",
        )
    tool = tools.get(call.name)
    if tool is None:
        available = ", ".join(sorted(tools)) or "(none)"
        return _not_started(
            call,
            ToolErrorType.TOOL_NOT_REGISTERED,
            f"Tool {call.name!r} is not registered. Available tools: {available}.",
        )
    if call.arguments is None:
        raw = call.raw_arguments or ""
        quoted = raw[:RAW_ARGUMENTS_QUOTE_CHARS]
        more = ""
        if len(raw) > RAW_ARGUMENTS_QUOTE_CHARS:
            more = f" (first {RAW_ARGUMENTS_QUOTE_CHARS} of {len(raw)} characters)"
        return _not_started(
            call,
            ToolErrorType.INVALID_TOOL_PARAMS,
            f"Invalid arguments for tool {tool.name!r}: the arguments must be a JSON object, "
            f"but got {quoted!r}{more}. Send the arguments as a JSON object.",
            tool,
        )
    try:
        args = tool.parse_args(call.arguments)
    except ValidationError as exc:
        return _not_started(
            call,
            ToolErrorType.INVALID_TOOL_PARAMS,
            f"Invalid arguments for tool {tool.name!r}: {_summarise_validation(exc)}. "
            "Fix the arguments to match the tool's parameter schema.",
            tool,
        )
    return tool, args


# --- execution ----------------------------------------------------------------------------


async def _execute(
    call: ToolCall, tool: BuiltinTool, args: BaseModel, ctx: ToolContext
) -> ToolOutcome:
    try:
        content = await tool.run(args, ctx)
    except asyncio.CancelledError:
        # The workflow cancelled the activity. Returning (not re-raising) records what
        # happened to the call; the activity wrapper re-raises when the cancel was not a
        # workflow request (pause, reset).
        return cancelled_outcome(call, policy_tool_name=tool.name, tool_type=ToolType.NATIVE)
    except ToolFailure as failure:
        return failed_outcome(
            call,
            failure.error_type,
            failure.message,
            policy_tool_name=tool.name,
            tool_type=ToolType.NATIVE,
        )
    except Exception as exc:
        # A bug in the tool, not the model's mistake: reported to the model like any
        # failure (so the prompt can go on). The operator's log names the tool and the
        # exception type only: a traceback would carry raw error text and paths. A failing
        # log handler must not turn this into an activity failure.
        with contextlib.suppress(Exception):
            _log.error("tool_unhandled_exception", tool=tool.name, exc_type=type(exc).__name__)
        text = f"{type(exc).__name__}: {exc}"[:MAX_EXCEPTION_TEXT_CHARS]
        message = f"Tool {tool.name!r} failed unexpectedly: {text}"
        return failed_outcome(
            call,
            ToolErrorType.UNHANDLED_EXCEPTION,
            message,
            policy_tool_name=tool.name,
            tool_type=ToolType.NATIVE,
        )
    return succeeded_outcome(
        call,
        content,
        policy_tool_name=tool.name,
        tool_type=ToolType.NATIVE,
        writes=tuple(ctx.written),
    )


# --- post-processing ----------------------------------------------------------------------


def spill_name(call_id: str) -> str:
    """A file name for ``call_id`` that cannot escape the spill directory.

    A hash suffix is added whenever the id had to be changed, so two ids that sanitise to
    the same text still get different files.
    """
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", call_id)[:80]
    if safe != call_id or not safe:
        digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        safe = f"{safe}-{digest}" if safe else digest
    return f"{safe}.txt"


def _write_spill(root: Path, call_id: str, text: str) -> str:
    """Write ``text`` under the workspace spill directory; the relative path, or OSError.

    The model can create symlinks in its workspace, so the directories are walked with
    ``O_NOFOLLOW`` relative to each parent: a symlinked ``.seawall`` fails the write instead
    of redirecting it out of the workspace.
    """
    dir_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in SPILL_DIR.parts:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
            child = os.open(part, dir_flags, dir_fd=fd)
            os.close(fd)
            fd = child
        name = spill_name(call_id)
        file_flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(name, file_flags, 0o644, dir_fd=fd)
    finally:
        os.close(fd)
    # "replace": a lone surrogate in tool output must not turn a spill into a crash.
    with os.fdopen(out, "w", encoding="utf-8", errors="replace") as fh:
        fh.write(text)
    return (SPILL_DIR / name).as_posix()


def truncate_output(outcome: ToolOutcome, root: Path, max_chars: int) -> ToolOutcome:
    """Bound the content the model sees, keeping the full text in a workspace file.

    Runs after execution settled: a failure here changes the terminal status and error
    type only, so ``execution_status`` still says the tool ran (workflows/contracts/outcome.py).
    """
    content = outcome.content
    if max_chars <= 0 or len(content) <= max_chars:
        return outcome
    head = content[:max_chars]
    try:
        relative = _write_spill(root, outcome.call_id, content)
    except OSError as exc:
        # Only the OS reason: the exception text would name absolute host paths.
        reason = exc.strerror or (str(exc) if exc.filename is None else "")
        reason = reason or type(exc).__name__
        note = (
            f"\n\n[Output truncated to the first {max_chars} of {len(content)} characters; "
            f"the full output could not be saved ({reason}).]"
        )
        message = (
            f"The tool ran, but its output ({len(content)} characters) exceeded "
            f"{max_chars} characters and could not be saved for later reading ({reason})."
        )
        return outcome.model_copy(
            update={
                "status": TerminalStatus.ERROR,
                "error_type": ToolErrorType.OUTPUT_TRUNCATED,
                "content": head + note,
                "error_message": message,
            }
        )
    note = (
        f"\n\n[Output truncated: showing the first {max_chars} of {len(content)} characters. "
        f"The full output is saved in the workspace at {relative}; read or search that file "
        "for the rest.]"
    )
    update: dict[str, str] = {"content": head + note}
    if outcome.error_message is not None and len(outcome.error_message) > max_chars:
        update["error_message"] = outcome.error_message[:max_chars] + note
    return outcome.model_copy(update=update)


# --- the activities -----------------------------------------------------------------------


def builtin_tool_specs(tools: Mapping[str, BuiltinTool]) -> dict[str, ToolSpec]:
    """The tools of a registry as the workflow and the model see them."""
    return {
        name: ToolSpec(
            name=name,
            description=tool.description,
            parameters=tool.parameters_schema(),
            mutating=tool.mutating,
            tool_type=ToolType.NATIVE,
        )
        for name, tool in tools.items()
    }


def _workspace_at(root: Path) -> Path:
    """``root``, a workspace the worker's trust has checked (``WorkerTrust.workspace``)."""
    # A session's workspace is created on its first tool call, on the worker that runs it.
    root.mkdir(parents=True, exist_ok=True)
    return root


def _refused(
    call: ToolCall,
    error_type: ToolErrorType,
    refused: ApplicationError,
    fixture: FixtureTool | None = None,
) -> ToolOutcome:
    """A call the worker's own settings refuse (activities/trust.py): it never runs."""
    tool_type = fixture.tool_type if fixture else ToolType.MCP if is_mcp_name(call.name) else None
    return not_started_outcome(
        call,
        error_type,
        refused.message,
        policy_tool_name=call.name,
        tool_type=tool_type or ToolType.NATIVE,
    )


def _cancel_is_workflow_request() -> bool:
    details = activity.cancellation_details()
    return details is None or not (details.paused or details.reset)


class ToolActivities:
    """The tool activities of one worker, over its built-in tool registry and its MCP servers.

    ``tools`` are the built-in tools the model may call by name. ``mcp_pool`` holds the
    worker's MCP server connections (stopped by :meth:`close`); ``mcp_settings`` reads the
    operator's MCP configuration, on every prompt, so a changed configuration applies to the
    next one. ``sandbox`` is the worker's probed sandbox (``seawall/worker/main.py`` probes it
    at startup); by default it is probed from this process's settings on first use.
    ``trust`` is what the worker accepts of a call's input (activities/trust.py): its
    workspace root and fixtures; by default nothing.
    """

    def __init__(
        self,
        tools: Mapping[str, BuiltinTool],
        mcp_pool: McpPool,
        mcp_settings: Callable[[], McpSettings] = current_settings,
        sandbox: Sandbox | None = None,
        *,
        trust: WorkerTrust = DENY_ALL,
        lost_calls: Callable[[], LostCalls] = current_lost_calls,
        preambles: PromptPreambles | None = None,
        results: RecordedResults | None = None,
    ) -> None:
        self._trust = trust
        # The fixture a scenario's call names (activities/prompt_preamble.py).
        self._preambles = preambles or PromptPreambles()
        # The results the next model request may keep by reference (activities/
        # recorded_results.py), shared with the worker's model activity.
        self._results = results or RecordedResults()
        self._lost_calls = lost_calls
        self._tools = dict(tools)
        self._mcp_pool = mcp_pool
        self._mcp_settings = mcp_settings
        self._sandbox = sandbox
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        # Building the JSON schemas took ~14 ms of every prompt (a profile of the worker);
        # the registry never changes within a worker, and ToolSpec is frozen.
        self._specs = builtin_tool_specs(self._tools)

    def activities(self) -> list[Callable[..., Any]]:
        return [
            self.run_tool,
            self.check_tool_call,
            self.prepare_editor_call,
            self.list_tools,
            self.list_tools_without_mcp,
        ]

    @property
    def sandbox(self) -> Sandbox:
        """The sandbox every model-chosen process of this worker runs in."""
        if self._sandbox is None:
            self._sandbox = probe(load_policy())
        return self._sandbox

    async def close(self) -> None:
        """Stop the MCP servers this worker started."""
        await self._mcp_pool.close()
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def _mcp_workspace(self, workspace_root: str | None) -> Path:
        """Where a sandboxed stdio MCP server of this session runs: the session's workspace,
        or (inputs recorded before they carried one) an empty scratch directory of this
        worker's, never another session's. A session's workspace is checked like a tool
        call's (activities/trust.py): outside this worker's workspaces it is refused."""
        if workspace_root is not None:
            return _workspace_at(self._trust.workspace(workspace_root))
        if self._scratch is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="seawall-mcp-scratch-")
        return Path(self._scratch.name).resolve()

    def _owner_group(self, owner_id: str | None) -> str | None:
        """The pseudonym of a call's owner (activities/sandbox/owners.py): the cgroup her
        sandboxes share, and her directory in the disk quota's index."""
        return owner_group(owner_id, self._trust.keys[0] if self._trust.keys else None)

    def _not_again(self, tool_name: str, *, safe: bool) -> bool:
        """Whether this attempt must not run its call: the attempt before it was lost mid-run
        and the tool may not be repeated (activities/lost_calls.py)."""
        return lost_attempt() and not self._lost_calls().may_rerun(tool_name, safe=safe)

    def _is_mcp_call(self, call: ToolCall) -> bool:
        return is_mcp_name(call.name) and call.name not in self._tools

    async def execute(self, inp: RunToolInput, heartbeat: Heartbeat | None = None) -> ToolOutcome:
        """Run one call to its settled outcome, heartbeating while it runs; never raises
        for a tool error. ``heartbeat`` is the activity's (``None`` outside an activity)."""
        async with heartbeating(heartbeat):
            return await self._settle(inp, heartbeat or no_heartbeat)

    async def _settle(self, inp: RunToolInput, heartbeat: Heartbeat) -> ToolOutcome:
        call = inp.call
        try:
            # Resolved (symlinks followed) and inside this worker's workspaces, every call.
            checked = self._trust.workspace(inp.workspace_root)
        except ApplicationError as refused:
            return _refused(
                call, ToolErrorType.PATH_NOT_IN_WORKSPACE, refused, inp.scenario_fixture
            )
        if inp.scenario_fixture is not None:
            try:
                self._trust.check_scripted()
            except ApplicationError as refused:
                return _refused(call, ToolErrorType.EXECUTION_DENIED, refused, inp.scenario_fixture)
            fixture = inp.scenario_fixture
            if self._not_again(call.name, safe=not fixture.mutating):
                return lost_call_outcome(
                    call, policy_tool_name=call.name, tool_type=fixture.tool_type
                )
            # Fixtures report exactly what they script: no validation, no truncation.
            record_fixture_run(checked, call.call_id)
            return await run_fixture(call, inp.scenario_fixture, inp.ordinal)
        if self._is_mcp_call(call):
            return await self._execute_mcp_call(inp, checked)
        parsed = parse_call(call, self._tools)
        if isinstance(parsed, ToolOutcome):
            return parsed
        tool, args = parsed
        if self._not_again(tool.name, safe=not tool.mutating):
            return lost_call_outcome(call, policy_tool_name=tool.name, tool_type=ToolType.NATIVE)
        root = _workspace_at(checked)
        ctx = ToolContext(
            workspace_root=root,
            heartbeat=heartbeat,
            shell_timeout_seconds=inp.shell_timeout_seconds,
            sandbox=self.sandbox,
            owner=self._owner_group(inp.owner_id),
        )
        outcome = await _execute(call, tool, args, ctx)
        if outcome.status == TerminalStatus.CANCELLED:
            return outcome
        return truncate_output(outcome, root, inp.max_output_chars)

    async def _execute_mcp_call(self, inp: RunToolInput, root: Path) -> ToolOutcome:
        """An ``mcp__<server>__<tool>`` call, routed to the worker's MCP connection pool
        (``root``: the call's checked workspace)."""
        from .mcp.tools import run_mcp_call  # the MCP SDK loads only when a call needs it

        root = _workspace_at(root)
        outcome = await run_mcp_call(
            self._mcp_pool,
            inp,
            self._mcp_settings(),
            sandbox=self.sandbox,
            workspace=root,
            owner=self._owner_group(inp.owner_id),
            not_again=self._not_again,
        )
        if (
            outcome.status == TerminalStatus.CANCELLED
            or len(outcome.content) <= inp.max_output_chars
        ):
            return outcome
        return truncate_output(outcome, root, inp.max_output_chars)

    async def _with_fixture(self, inp: T) -> T:
        """``inp`` with the fixture it names (``fixture_in_start``) read from the prompt's
        start input; itself when it names none."""
        if not inp.fixture_in_start:
            return inp
        fixture = await self._preambles.fixture(PromptRun.current(), inp.call.name)
        return inp.model_copy(update={"scenario_fixture": fixture, "fixture_in_start": False})

    @activity.defn(name=RUN_TOOL)
    async def run_tool(self, inp: RunToolInput) -> ToolOutcome:
        """Run one tool call (or fixture) with heartbeats; returns its settled outcome."""
        inp = await self._with_fixture(inp)
        outcome = await self.execute(inp, activity.heartbeat)
        if outcome.status == TerminalStatus.CANCELLED and not _cancel_is_workflow_request():
            # A pause or reset must stay a cancellation error so Temporal can pause or rerun
            # the activity; completing it with a result would end it for good.
            raise asyncio.CancelledError()
        self._results.record(PromptRun.current(), inp.batch, outcome.call_id, outcome.content)
        # Read here, off the workflow task, what the loop rules compare (a long text only).
        return with_readings(
            inp.call.name,
            inp.call.arguments,
            outcome,
            labelled_ids=inp.labelled_ids,
            world_ids=inp.world_ids,
        )

    @activity.defn(name=CHECK_TOOL_CALL)
    async def check_tool_call(self, inp: CheckToolCallInput) -> ToolOutcome | None:
        """The outcome a call would be refused with before running, or ``None`` when valid."""
        inp = await self._with_fixture(inp)
        if inp.scenario_fixture is not None:
            try:
                self._trust.check_scripted()
            except ApplicationError as refused:
                return _refused(
                    inp.call, ToolErrorType.EXECUTION_DENIED, refused, inp.scenario_fixture
                )
            return check_fixture(inp.call, inp.scenario_fixture)
        if self._is_mcp_call(inp.call):
            from .mcp.tools import check_mcp_call

            try:
                workspace = self._mcp_workspace(inp.workspace_root)
            except ApplicationError as refused:
                return _refused(inp.call, ToolErrorType.PATH_NOT_IN_WORKSPACE, refused)
            return await check_mcp_call(
                self._mcp_pool,
                inp.call,
                self._mcp_settings(),
                sandbox=self.sandbox,
                workspace=workspace,
            )
        parsed = parse_call(inp.call, self._tools)
        return parsed if isinstance(parsed, ToolOutcome) else None

    @activity.defn(name=PREPARE_EDITOR_CALL)
    async def prepare_editor_call(self, inp: PrepareEditorCallInput) -> PreparedEditorCall:
        """What an ACP editor is asked for a ``read_file`` or ``write_file`` call, checked
        here on the worker (activities/tools/editor_plan.py), or the outcome refusing it."""
        call = inp.call
        try:
            root = _workspace_at(self._trust.workspace(inp.workspace_root))
        except ApplicationError as refused:
            return PreparedEditorCall(
                refused=_refused(call, ToolErrorType.PATH_NOT_IN_WORKSPACE, refused)
            )
        parsed = parse_call(call, self._tools)
        if isinstance(parsed, ToolOutcome):
            return PreparedEditorCall(refused=parsed)
        tool, args = parsed
        try:
            plan = await asyncio.to_thread(plan_editor_call, tool.name, args, root)
        except ToolFailure as failure:
            return PreparedEditorCall(
                refused=_not_started(call, failure.error_type, failure.message, tool)
            )
        return PreparedEditorCall(plan=plan)

    @activity.defn(name=LIST_TOOLS)
    async def list_tools(self, inp: ListToolsInput) -> ListToolsOutput:
        """Every tool the model may call in this prompt, sorted by name: the built-ins, every
        configured MCP server's tools (``mcp__<server>__<tool>``) and the fixtures.

        A fixture replaces a built-in of the same name, so a scenario can script a failing
        ``read_file`` without touching the disk. A root prompt's start claim (``inp.start``)
        is checked first (activities/trust.py): a refusal fails the prompt before anything ran.
        """
        self._check_listing(inp)
        specs = dict(self._specs)
        mcp_settings = self._mcp_settings()
        if mcp_settings.servers:
            from .mcp.tools import list_mcp_tools

            async with heartbeating(activity_heartbeat()):
                listed = await list_mcp_tools(
                    self._mcp_pool,
                    mcp_settings,
                    sandbox=self.sandbox,
                    workspace=self._mcp_workspace(inp.workspace_root),
                    owner=self._owner_group(inp.owner_id) if inp.workspace_root else None,
                )
            for spec in listed:
                specs.setdefault(spec.name, spec)
        return self._with_fixtures(specs, inp)

    @activity.defn(name=LIST_TOOLS_WITHOUT_MCP)
    async def list_tools_without_mcp(self, inp: ListToolsInput) -> ListToolsOutput | None:
        """What :meth:`list_tools` returns when no MCP server is configured, else ``None``.

        Run as a local activity (docs/capacity.md, "Durable steps per prompt"): without
        MCP servers the list is the worker's own (built-ins and fixtures), cheap and
        idempotent, so a prompt need not take an activity hop for it. With MCP servers the
        answer is ``None`` and the prompt asks :meth:`list_tools`, which may wait on them
        and heartbeats while it does."""
        self._check_listing(inp)
        if self._mcp_settings().servers:
            return None
        return self._with_fixtures(dict(self._specs), inp)

    def _check_listing(self, inp: ListToolsInput) -> None:
        """Refuse a root prompt's unverified start, and fixtures this worker does not allow."""
        self._trust.check_start_in_activity(inp.start)
        if inp.scenario_tools:
            self._trust.check_scripted()

    @staticmethod
    def _with_fixtures(specs: dict[str, ToolSpec], inp: ListToolsInput) -> ListToolsOutput:
        for name, fixture in (inp.scenario_tools or {}).items():
            specs[name] = fixture_tool_spec(name, fixture)
        return ListToolsOutput(tools=sorted(specs.values(), key=lambda s: s.name))
