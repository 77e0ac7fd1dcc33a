"""MCP servers configured by the operator of a worker.

Servers come from the worker's environment (``SEAWALL_MCP_SERVERS``, a JSON object) or, when
that is unset, the operator's user-level file ``~/.config/seawall/mcp.json``
(``$XDG_CONFIG_HOME/seawall/mcp.json``). Never from a project or workspace: a repository must
not be able to make the worker spawn commands. Both hold the same JSON object, optionally
wrapped in ``{"mcpServers": {...}}``::

    {
      "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"],
                "env": {"DEBUG": "0"}},
      "search": {"url": "http://localhost:8000/mcp", "headers": {"Authorization": "Bearer ..."},
                 "trust": true, "timeout_seconds": 60}
    }

A server name is letters, digits, ``-`` and single ``_`` (tools are registered as
``mcp__<server>__<tool>``). ``trust: true`` lets the server's tools run without asking the
user; otherwise only tools the server marks read-only do.

Server names are operator configuration that may be sensitive (docs/architecture.md,
"Observability and privacy"): nothing in
this package logs them, or the qualified tool names that contain them. Diagnostics refer to
a server by its position in the configuration instead.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from activities.operator_settings import user_config_path

SERVERS_ENV = "SEAWALL_MCP_SERVERS"
TOOL_TIMEOUT_ENV = "SEAWALL_MCP_TOOL_TIMEOUT_SECONDS"
CONNECT_TIMEOUT_ENV = "SEAWALL_MCP_CONNECT_TIMEOUT_SECONDS"
STDERR_ENV = "SEAWALL_MCP_STDERR"
CONFIG_FILE_NAME = "mcp.json"

DEFAULT_CONNECT_TIMEOUT_SECONDS = 20.0
SERVER_NAME_PATTERN = re.compile(r"^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$")
MAX_SERVER_NAME_CHARS = 40


class _ServerBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # Tools of a trusted server run without a permission request.
    trust: bool = False
    # Per-call timeout; the prompt's tool timeout still bounds it.
    timeout_seconds: float | None = Field(default=None, gt=0)


class StdioServer(_ServerBase):
    """A server the worker runs as a subprocess and talks to over stdin/stdout."""

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None


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
    connect_timeout_seconds: float = DEFAULT_CONNECT_TIMEOUT_SECONDS
    inherit_stderr: bool = False
    # Diagnostics for the operator; they never contain a server name.
    problems: tuple[str, ...] = ()

    def ordinal(self, server: str) -> int:
        """A server's 1-based position in the sorted configuration, for diagnostics."""
        names = sorted(self.servers)
        return names.index(server) + 1 if server in names else 0


def mcp_config_path(environ: Mapping[str, str]) -> Path:
    """``mcp.json`` beside the user-level ``config.yaml`` (XDG_CONFIG_HOME respected)."""
    return user_config_path(environ).with_name(CONFIG_FILE_NAME)


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


def _positive_float(environ: Mapping[str, str], name: str, problems: list[str]) -> float | None:
    text = environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        problems.append(f"environment {name}: must be a positive number of seconds; ignoring it")
        return None
    return value


def load_mcp_settings(environ: Mapping[str, str]) -> McpSettings:
    """The operator's MCP configuration; a broken one yields no servers and a diagnostic."""
    problems: list[str] = []
    raw_env = environ.get(SERVERS_ENV, "")
    data: Any = None
    source = "none"
    if raw_env.strip():
        source = f"environment {SERVERS_ENV}"
        try:
            data = json.loads(raw_env)
        except ValueError:
            problems.append(f"{source}: is not valid JSON; ignoring it")
    else:
        path = mcp_config_path(environ)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = None
        except (OSError, UnicodeDecodeError) as exc:
            text = None
            problems.append(f"user config {path}: cannot be read ({type(exc).__name__})")
        if text is not None:
            source = f"user config {path}"
            try:
                data = json.loads(text)
            except ValueError:
                problems.append(f"{source}: is not valid JSON; ignoring it")
    servers: dict[str, ServerConfig] = {}
    if data is not None:
        servers, found = parse_servers(data, source)
        problems.extend(found)
    tool_timeout = _positive_float(environ, TOOL_TIMEOUT_ENV, problems)
    connect_timeout = _positive_float(environ, CONNECT_TIMEOUT_ENV, problems)
    stderr = environ.get(STDERR_ENV, "").strip().lower()
    if stderr not in ("", "discard", "inherit"):
        problems.append(f"environment {STDERR_ENV}: expected discard or inherit; using discard")
    return McpSettings(
        servers=servers,
        source=source,
        tool_timeout_seconds=tool_timeout,
        connect_timeout_seconds=connect_timeout or DEFAULT_CONNECT_TIMEOUT_SECONDS,
        inherit_stderr=stderr == "inherit",
        problems=tuple(problems),
    )


_reported_problems: set[str] = set()


def current_settings(environ: Mapping[str, str] | None = None) -> McpSettings:
    """The operator's MCP settings, read now (so a changed environment or file applies to
    the next prompt); each configuration problem is logged once per worker."""
    settings = load_mcp_settings(os.environ if environ is None else environ)
    for problem in settings.problems:
        if problem not in _reported_problems:
            _reported_problems.add(problem)
            structlog.get_logger(__name__).warning(
                "mcp_config_invalid", tool_type="mcp", diagnostic=problem
            )
    return settings
