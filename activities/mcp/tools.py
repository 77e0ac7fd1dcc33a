"""MCP tools on the outcome contract (workflows/contracts/outcome.py).

- listed once per prompt (through the ``list_tools`` activity, so the list is recorded in
  history) as ``mcp__<server>__<tool>`` with ``tool_type`` ``mcp``;
- an unknown server or tool → ``tool_not_registered``, arguments that are not a JSON object
  or do not match the tool's input schema → ``invalid_tool_params``, both ``not_started``;
- an MCP error result (``isError``) → ``mcp_tool_error``; a call that exceeds its timeout →
  ``execution_timeout``; a server that could not be started or died → ``execution_failed``
  (it is restarted on the next call); all three with ``execution_status`` ``error``.

Logs written here carry ``tool_type="mcp"`` and never a server name or a qualified tool
name (which contains the server name).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import structlog
from mcp import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, Tool

from activities.mcp.config import McpSettings, ServerConfig
from activities.mcp.connection import McpConnection, McpConnectionLost, McpUnavailable
from activities.mcp.names import qualified_name, server_of
from activities.mcp.pool import McpPool
from activities.outcomes import (
    cancelled_outcome,
    failed_outcome,
    not_started_outcome,
    succeeded_outcome,
)
from activities.sandbox import UNCONFINED, Sandbox
from workflows.contracts.activity import RunToolInput, ToolSpec
from workflows.contracts.outcome import (
    ExecutionStatus,
    ToolCall,
    ToolErrorType,
    ToolOutcome,
    ToolType,
)
from workflows.contracts.synthetic_outcomes import lost_call_outcome

MAX_SCHEMA_ERRORS = 8
MAX_SCHEMA_ERROR_CHARS = 200
MAX_LISTED_ALTERNATIVES = 20
MAX_PROTOCOL_ERROR_CHARS = 500

_log = structlog.get_logger(__name__)


# --- listing ------------------------------------------------------------------------------


def repeatable(tool: Tool) -> bool:
    """Whether the server says running ``tool`` twice does no more than once: read-only or
    idempotent (MCP tool annotations)."""
    annotations = tool.annotations
    return bool(
        annotations is not None and (annotations.read_only_hint or annotations.idempotent_hint)
    )


def tool_spec(server: str, config: ServerConfig, tool: Tool) -> ToolSpec:
    annotations = tool.annotations
    read_only = bool(annotations is not None and annotations.read_only_hint)
    return ToolSpec(
        name=qualified_name(server, tool.name),
        description=tool.description or tool.title or "",
        parameters=dict(tool.input_schema),
        # Only a trusted server's tools, or tools it marks read-only, run without asking.
        mutating=not (config.trust or read_only),
        tool_type=ToolType.MCP,
    )


async def _list_server(
    pool: McpPool,
    server: str,
    config: ServerConfig,
    settings: McpSettings,
    sandbox: Sandbox,
    workspace: Path | None,
    owner: str | None,
) -> list[ToolSpec]:
    ordinal = settings.ordinal(server)
    for _attempt in range(2):
        try:
            connection = await pool.get(
                server, config, settings, sandbox=sandbox, workspace=workspace, owner=owner
            )
        except McpUnavailable as exc:
            _log.warning(
                "mcp_server_unavailable",
                tool_type=ToolType.MCP.value,
                server_ordinal=ordinal,
                reason=str(exc),
            )
            return []
        try:
            tools = await connection.refresh_tools(settings.connect_timeout_seconds)
        except McpConnectionLost:
            # Died since its last use: listing restarts it once, silently.
            pool.discard(server, connection)
            continue
        except (TimeoutError, MCPError) as exc:
            _log.warning(
                "mcp_list_tools_failed",
                tool_type=ToolType.MCP.value,
                server_ordinal=ordinal,
                reason=type(exc).__name__,
            )
            return []
        return [tool_spec(server, config, tool) for tool in tools]
    _log.warning(
        "mcp_server_unavailable",
        tool_type=ToolType.MCP.value,
        server_ordinal=ordinal,
        reason="connection lost while listing tools",
    )
    return []


async def list_mcp_tools(
    pool: McpPool,
    settings: McpSettings,
    *,
    sandbox: Sandbox = UNCONFINED,
    workspace: Path | None = None,
    owner: str | None = None,
) -> list[ToolSpec]:
    """Every configured server's tools (each stdio server started in ``sandbox`` for
    ``workspace``, in the group of its ``owner``'s pseudonym); a server that cannot be
    reached lists none."""
    pool.retain_only(set(settings.servers))
    listed = await asyncio.gather(
        *(
            _list_server(pool, name, config, settings, sandbox, workspace, owner)
            for name, config in settings.servers.items()
        )
    )
    specs = {spec.name: spec for server_specs in listed for spec in server_specs}
    return sorted(specs.values(), key=lambda spec: spec.name)


# --- outcomes -----------------------------------------------------------------------------


def _not_started(
    call: ToolCall, error_type: ToolErrorType, message: str, registered: bool
) -> ToolOutcome:
    return not_started_outcome(
        call,
        error_type,
        message,
        policy_tool_name=call.name if registered else None,
        tool_type=ToolType.MCP,
    )


def _cancelled(call: ToolCall, execution_status: ExecutionStatus) -> ToolOutcome:
    return cancelled_outcome(
        call, policy_tool_name=call.name, tool_type=ToolType.MCP, execution_status=execution_status
    )


def _failed(call: ToolCall, error_type: ToolErrorType, message: str) -> ToolOutcome:
    return failed_outcome(
        call, error_type, message, policy_tool_name=call.name, tool_type=ToolType.MCP
    )


def _not_registered(call: ToolCall, connection: McpConnection | None, server: str) -> ToolOutcome:
    message = f"Tool {call.name!r} is not registered."
    if connection is not None and connection.tools:
        names = sorted(qualified_name(server, tool.name) for tool in connection.tools)
        shown = ", ".join(names[:MAX_LISTED_ALTERNATIVES])
        more = " ..." if len(names) > MAX_LISTED_ALTERNATIVES else ""
        message += f" This server's tools: {shown}{more}."
    return _not_started(call, ToolErrorType.TOOL_NOT_REGISTERED, message, registered=False)


def _server_down(call: ToolCall, why: str) -> ToolOutcome:
    return _failed(
        call,
        ToolErrorType.EXECUTION_FAILED,
        f"The MCP server providing {call.name!r} {why}. It will be restarted on the next "
        "call of one of its tools.",
    )


def content_text(result: CallToolResult) -> str:
    """The text parts of an MCP result, joined; other parts are named, not inlined."""
    parts: list[str] = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)  # type: ignore[union-attr]
        elif kind == "resource":
            resource = block.resource  # type: ignore[union-attr]
            text = getattr(resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource {resource.uri}]")
        elif kind == "resource_link":
            parts.append(f"[resource link {block.uri}]")  # type: ignore[union-attr]
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} content ({block.mime_type})]")  # type: ignore[union-attr]
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    if not parts and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False, default=str)
    return "\n".join(parts)


def schema_problems(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> list[str]:
    """Where ``arguments`` break the tool's input schema; empty when they fit or when the
    schema itself is unusable (the server then decides)."""
    try:
        validator_class = jsonschema.validators.validator_for(schema)
        validator_class.check_schema(schema)
        errors = list(validator_class(schema).iter_errors(arguments))
    except Exception:  # a schema this validator cannot handle: fail open
        return []
    problems = []
    for error in errors[:MAX_SCHEMA_ERRORS]:
        where = ".".join(str(p) for p in error.absolute_path) or "(arguments)"
        problems.append(f"{where}: {error.message[:MAX_SCHEMA_ERROR_CHARS]}")
    if len(errors) > MAX_SCHEMA_ERRORS:
        problems.append(f"... and {len(errors) - MAX_SCHEMA_ERRORS} more")
    return problems


# --- argument checks and execution --------------------------------------------------------------


async def _resolve(
    pool: McpPool,
    call: ToolCall,
    settings: McpSettings,
    sandbox: Sandbox,
    workspace: Path | None,
    owner: str | None = None,
) -> tuple[str, ServerConfig, McpConnection, Tool] | ToolOutcome:
    """The call's server, connection and tool, or the outcome refusing it."""
    server = server_of(call.name)
    config = settings.servers.get(server) if server is not None else None
    if server is None or config is None:
        return _not_started(
            call,
            ToolErrorType.TOOL_NOT_REGISTERED,
            f"Tool {call.name!r} is not registered: no MCP server of that name is configured.",
            registered=False,
        )
    try:
        connection = await pool.get(
            server, config, settings, sandbox=sandbox, workspace=workspace, owner=owner
        )
    except McpUnavailable as exc:
        _log.warning("mcp_server_unavailable", tool_type=ToolType.MCP.value, reason=str(exc))
        return _server_down(call, f"could not be started ({exc})")
    tool = next((t for t in connection.tools if qualified_name(server, t.name) == call.name), None)
    if tool is None and connection.alive:
        # The server may have added the tool since it was listed.
        with contextlib.suppress(McpConnectionLost, TimeoutError, MCPError):
            await connection.refresh_tools(settings.connect_timeout_seconds)
        tool = next(
            (t for t in connection.tools if qualified_name(server, t.name) == call.name), None
        )
    if tool is None:
        return _not_registered(call, connection, server)
    return server, config, connection, tool


def _check_arguments(call: ToolCall, tool: Tool) -> ToolOutcome | None:
    if call.arguments is None:
        raw = (call.raw_arguments or "")[:200]
        return _not_started(
            call,
            ToolErrorType.INVALID_TOOL_PARAMS,
            f"Invalid arguments for tool {call.name!r}: the arguments must be a JSON object, "
            f"but got {raw!r}. Send the arguments as a JSON object.",
            registered=True,
        )
    problems = schema_problems(tool.input_schema, call.arguments)
    if problems:
        return _not_started(
            call,
            ToolErrorType.INVALID_TOOL_PARAMS,
            f"Invalid arguments for tool {call.name!r}: {'; '.join(problems)}. "
            "Fix the arguments to match the tool's input schema.",
            registered=True,
        )
    return None


async def check_mcp_call(
    pool: McpPool,
    call: ToolCall,
    settings: McpSettings,
    *,
    sandbox: Sandbox = UNCONFINED,
    workspace: Path | None = None,
) -> ToolOutcome | None:
    """The outcome refusing ``call`` before it runs, or ``None`` when it is admissible."""
    resolved = await _resolve(pool, call, settings, sandbox, workspace)
    if isinstance(resolved, ToolOutcome):
        return resolved
    _server, _config, _connection, tool = resolved
    return _check_arguments(call, tool)


def call_timeout(inp: RunToolInput, config: ServerConfig, settings: McpSettings) -> float:
    """The server's (or the operator's) MCP timeout, never above the prompt's tool timeout."""
    configured = config.timeout_seconds or settings.tool_timeout_seconds or math.inf
    return min(configured, inp.shell_timeout_seconds)


async def run_mcp_call(
    pool: McpPool,
    inp: RunToolInput,
    settings: McpSettings,
    *,
    sandbox: Sandbox = UNCONFINED,
    workspace: Path | None = None,
    owner: str | None = None,
    not_again: Callable[..., bool] | None = None,
) -> ToolOutcome:
    """Run one ``mcp__`` call to its settled outcome (its stdio server confined to
    ``workspace``, the call's session workspace, in the group of its ``owner``'s pseudonym
    when it starts); never raises for a tool failure.
    ``not_again(name, safe=…)`` says whether this attempt must not run a call whose attempt
    before was lost (activities/lost_calls.py): a tool is safe to repeat when its server
    annotates it read-only or idempotent."""
    call = inp.call
    try:
        resolved = await _resolve(pool, call, settings, sandbox, workspace, owner)
    except asyncio.CancelledError:
        return _cancelled(call, ExecutionStatus.NOT_STARTED)
    if isinstance(resolved, ToolOutcome):
        return resolved
    server, config, connection, tool = resolved
    refused = _check_arguments(call, tool)
    if refused is not None:
        return refused
    if not_again is not None and not_again(call.name, safe=repeatable(tool)):
        return lost_call_outcome(call, policy_tool_name=call.name, tool_type=ToolType.MCP)
    timeout = call_timeout(inp, config, settings)
    try:
        result = await connection.call_tool(tool.name, dict(call.arguments or {}), timeout)
    except asyncio.CancelledError:
        return _cancelled(call, ExecutionStatus.CANCELLED)
    except TimeoutError:
        return _failed(
            call,
            ToolErrorType.EXECUTION_TIMEOUT,
            f"Tool {call.name!r} did not finish within {timeout:g} seconds and was cancelled.",
        )
    except McpConnectionLost:
        pool.discard(server, connection)
        _log.warning("mcp_connection_lost", tool_type=ToolType.MCP.value)
        return _server_down(call, "stopped or lost its connection")
    except MCPError as exc:
        message = " ".join(exc.message.split())[:MAX_PROTOCOL_ERROR_CHARS]
        if exc.code == INVALID_PARAMS:
            return _not_started(
                call,
                ToolErrorType.INVALID_TOOL_PARAMS,
                f"The MCP server rejected the call to {call.name!r}: {message}",
                registered=True,
            )
        return _failed(
            call,
            ToolErrorType.MCP_TOOL_ERROR,
            f"The MCP server reported an error for {call.name!r}: {message}",
        )
    text = content_text(result)
    if result.is_error:
        return _failed(
            call,
            ToolErrorType.MCP_TOOL_ERROR,
            text or f"Tool {call.name!r} reported an error without a message.",
        )
    return succeeded_outcome(call, text, policy_tool_name=call.name, tool_type=ToolType.MCP)
