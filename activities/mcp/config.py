"""MCP servers configured by the operator of a worker: each server checked and typed.

The server list and the MCP timeouts are settings of the one settings model
(:mod:`seawall.runtime.settings`, docs/settings.md): the ``mcp_servers`` setting comes from
the worker's environment (``SEAWALL_MCP_SERVERS``, a JSON object) or, when that is unset, the
operator's ``mcp.json`` in the user config directory (``$XDG_CONFIG_HOME/seawall/mcp.json``
or ``~/.config/seawall/mcp.json``). Never from a project or workspace: a repository must not
be able to make the worker spawn commands. Both hold the same JSON object, optionally
wrapped in ``{"mcpServers": {...}}``::

    {
      "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"],
                "env": {"DEBUG": "0"}},
      "search": {"url": "http://localhost:8000/mcp", "headers": {"Authorization": "Bearer ..."},
                 "trust": true, "timeout_seconds": 60}
    }

A stdio server runs in the worker's sandbox (docs/security-sandbox.md, "MCP servers"), one
process per session workspace. Where a server legitimately needs more than the system
directories and that workspace, the operator says so in its ``sandbox`` object (never a
workspace: this file is the only source)::

      "git": {"command": "/opt/mcp/bin/mcp-server-git",
              "sandbox": {"read_only_paths": ["/opt/mcp"], "network": "off"}}

``read_only_paths`` are absolute paths bound read-only at the same place (the server's
install prefix, its interpreter); ``network`` (``off`` | ``on``) overrides the worker's
``sandbox_network`` for this server.

A server name is letters, digits, ``-`` and single ``_`` (tools are registered as
``mcp__<server>__<tool>``). ``trust: true`` lets the server's tools run without asking the
user; otherwise only tools the server marks read-only do. An invalid server is left out
with a diagnostic; the others still run.

Server names are operator configuration that may be sensitive (docs/observability.md, "Privacy"):
nothing in this package logs them, or the qualified tool names that contain them. Diagnostics refer
to a server by its position in the configuration instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from seawall.runtime.settings import (
    MCP_FILE_NAME,
    WORKER,
    SettingsError,
    default_of,
    load_settings,
    user_config_path,
)
from workflows.contracts.activity import SettingSource

SERVER_NAME_PATTERN = re.compile(r"^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$")
MAX_SERVER_NAME_CHARS = 40


class _ServerBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # Tools of a trusted server run without a permission request.
    trust: bool = False
    # Per-call timeout; the prompt's tool timeout still bounds it.
    timeout_seconds: float | None = Field(default=None, gt=0)


class ServerSandbox(BaseModel):
    """What one stdio server may see beyond the sandbox's defaults (operator config only)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    read_only_paths: tuple[str, ...] = ()
    network: Literal["off", "on"] | None = None

    @field_validator("read_only_paths")
    @classmethod
    def _absolute(cls, paths: tuple[str, ...]) -> tuple[str, ...]:
        for path in paths:
            if not PurePosixPath(path).is_absolute():
                raise ValueError(f"{path[:80]!r} is not an absolute path")
            if PurePosixPath(path) == PurePosixPath("/"):
                raise ValueError("'/' would show the worker's data and other workspaces")
        return paths


class StdioServer(_ServerBase):
    """A server the worker runs as a subprocess and talks to over stdin/stdout."""

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    # Sandboxed: must be inside the workspace or a read-only path (default: the workspace).
    cwd: str | None = None
    sandbox: ServerSandbox = ServerSandbox()


class HttpServer(_ServerBase):
    """A server reached over streamable HTTP."""

    type: Literal["http"] = "http"
    url: str = Field(pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)


ServerConfig = StdioServer | HttpServer

_HTTP_TYPES = {"http", "streamable-http", "streamable_http", "streamableHttp"}


class McpSettings(BaseModel):
    """Every configured server, with the problems found reading the configuration."""

    model_config = ConfigDict(frozen=True)

    servers: dict[str, ServerConfig] = Field(default_factory=dict)
    source: str = "none"
    tool_timeout_seconds: float | None = None
    connect_timeout_seconds: float = default_of("mcp_connect_timeout_seconds")
    inherit_stderr: bool = False
    # Diagnostics for the operator; they never contain a server name.
    problems: tuple[str, ...] = ()

    def ordinal(self, server: str) -> int:
        """A server's 1-based position in the sorted configuration, for diagnostics."""
        names = sorted(self.servers)
        return names.index(server) + 1 if server in names else 0


def _parse_server(entry: Any) -> ServerConfig:
    if not isinstance(entry, dict):
        raise ValueError("must be a JSON object")
    data = dict(entry)
    kind = data.pop("type", None)
    if kind in _HTTP_TYPES or (kind is None and "url" in data):
        return HttpServer.model_validate(data)
    if kind in (None, "stdio"):
        return StdioServer.model_validate(data)
    raise ValueError(f"unknown server type {str(kind)[:40]!r} (expected stdio or http)")


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors(include_url=False, include_input=False, include_context=False):
            where = ".".join(str(p) for p in err["loc"]) or "(entry)"
            parts.append(f"{where}: {err['msg']}")
        return "; ".join(parts)
    return str(exc)


def parse_servers(data: Any, source: str) -> tuple[dict[str, ServerConfig], list[str]]:
    """The valid servers in ``data`` and a diagnostic per invalid one (by position)."""
    if isinstance(data, dict) and set(data) == {"mcpServers"}:
        data = data["mcpServers"]
    if not isinstance(data, dict):
        return {}, [f"{source}: must be a JSON object of servers; ignoring it"]
    servers: dict[str, ServerConfig] = {}
    problems: list[str] = []
    for position, (name, entry) in enumerate(sorted(data.items()), start=1):
        if (
            not isinstance(name, str)
            or len(name) > MAX_SERVER_NAME_CHARS
            or not SERVER_NAME_PATTERN.match(name)
        ):
            problems.append(
                f"{source}: server #{position}: invalid name (letters, digits, '-' and single "
                f"'_', at most {MAX_SERVER_NAME_CHARS} characters); ignoring it"
            )
            continue
        try:
            servers[name] = _parse_server(entry)
        except (ValidationError, ValueError) as exc:
            problems.append(f"{source}: server #{position}: {_describe(exc)}; ignoring it")
    return servers, problems


def load_mcp_settings(environ: Mapping[str, str] | None = None) -> McpSettings:
    """The operator's MCP configuration from the settings of ``environ`` (default: this
    process's environment). A broken one yields no servers and a diagnostic instead of an
    error: the worker checked its settings at startup, and a file edited since must not fail
    the prompts of a running worker."""
    try:
        effective = load_settings(environ, reader=WORKER)
    except SettingsError as err:
        return McpSettings(problems=(f"{err}; no MCP servers",))
    settings = effective.settings
    servers: dict[str, ServerConfig] = {}
    problems: list[str] = []
    source = "none"
    if settings.mcp_servers is not None:
        origin = effective.origins["mcp_servers"]
        kind = "environment" if origin.source is SettingSource.ENVIRONMENT else "user config"
        source = f"{kind} {origin.where}"
        servers, problems = parse_servers(settings.mcp_servers, source)
    return McpSettings(
        servers=servers,
        source=source,
        tool_timeout_seconds=settings.mcp_tool_timeout_seconds,
        connect_timeout_seconds=settings.mcp_connect_timeout_seconds,
        inherit_stderr=settings.mcp_stderr == "inherit",
        problems=tuple(problems),
    )


_reported_problems: set[str] = set()


# The settings last read, by what they were read from: a prompt reads them at its start (the
# tool listing's local activity, on the critical path of every prompt), and reading them
# (the worker's settings, two files) took about 6 ms a prompt.
_last_read: tuple[tuple[object, ...], McpSettings] | None = None


def _read_from(environ: Mapping[str, str]) -> tuple[object, ...]:
    """What the settings are read from: the environment, and the bytes of the user config
    file and of the ``mcp.json`` beside it (``None`` when absent or unreadable). The bytes,
    not the files' change times, which can stay the same across two quick edits."""
    config = user_config_path(environ)
    stamps: list[object] = [frozenset(environ.items())]
    for path in (config, config.with_name(MCP_FILE_NAME)):
        try:
            stamps.append(path.read_bytes())
        except OSError:
            stamps.append(None)
    return tuple(stamps)


def current_settings(environ: Mapping[str, str] | None = None) -> McpSettings:
    """The operator's MCP settings as they are now (so a changed environment or file applies
    to the next prompt): read again whenever the environment or either file changed, else
    the settings last read. Each configuration problem is logged once per worker."""
    global _last_read
    source = os.environ if environ is None else environ
    read_from = _read_from(source)
    if _last_read is not None and _last_read[0] == read_from:
        return _last_read[1]
    settings = load_mcp_settings(environ)
    _last_read = (read_from, settings)
    for problem in settings.problems:
        if problem not in _reported_problems:
            _reported_problems.add(problem)
            structlog.get_logger(__name__).warning(
                "mcp_config_invalid", tool_type="mcp", diagnostic=problem
            )
    return settings
