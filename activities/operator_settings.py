"""Operator settings, resolved once per session through an activity (SPEC section 6).

The guard mode is an operator decision, so it is read only from the worker's process
environment and the operator's user-level config file. Anything inside a workspace (a
project ``.env``, ``.seawall/``, ``.qwen/.env``, workspace settings) is under the control
of whoever wrote the repository, who must not be able to switch the guard off or on; this
module therefore never looks at the working directory. Resolving in an activity keeps the
workflow deterministic: the result is recorded in history and replayed as is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import structlog
import yaml
from temporalio import activity

from workflows.activity_io import (
    RESOLVE_OPERATOR_SETTINGS,
    OperatorSettings,
    ResolveOperatorSettingsInput,
    SettingSource,
)
from workflows.guard import GuardMode, parse_guard_mode

GUARD_MODE_ENV = "SEAWALL_REPEATED_TOOL_FAILURE_GUARD"
# The seed's name, accepted so an existing deployment keeps its setting.
GUARD_MODE_ENV_ALIAS = "QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD"
GUARD_MODE_CONFIG_KEY = "repeated_tool_failure_guard"
DEFAULT_GUARD_MODE = GuardMode.SHADOW
MAX_LOGGED_VALUE_CHARS = 100


@dataclass(frozen=True)
class Diagnostic:
    """Why a configured value was not used, for the one operator log line."""

    event: str
    source: str
    message: str
    value: str | None = None


@dataclass(frozen=True)
class GuardModeResolution:
    mode: GuardMode
    source: SettingSource
    diagnostic: Diagnostic | None = None


def user_config_path(environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/seawall/config.yaml``, else ``~/.config/seawall/config.yaml``."""
    xdg = environ.get("XDG_CONFIG_HOME", "").strip()
    # The XDG spec says a relative value is invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "seawall" / "config.yaml"
    home = environ.get("HOME", "").strip()
    base = Path(home) if home else Path.home()
    return base / ".config" / "seawall" / "config.yaml"


def _from_value(value: str, source: str, setting_source: SettingSource) -> GuardModeResolution:
    mode = parse_guard_mode(value)
    if mode is not None:
        return GuardModeResolution(mode, setting_source)
    allowed = ", ".join(m.value for m in GuardMode)
    return GuardModeResolution(
        DEFAULT_GUARD_MODE,
        SettingSource.DEFAULT,
        Diagnostic(
            event="invalid_guard_mode",
            source=source,
            value=value,
            message=(
                f"{source}: invalid repeated tool failure guard mode {value[:100]!r} "
                f"(expected one of: {allowed}); using {DEFAULT_GUARD_MODE.value}"
            ),
        ),
    )


def _config_value(path: Path) -> tuple[str | None, Diagnostic | None]:
    """The configured mode text from the user-level file (``None`` when not set)."""
    source = f"user config {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, Diagnostic(
            event="invalid_operator_config",
            source=source,
            message=f"{source}: cannot be read ({type(exc).__name__}); ignoring it",
        )
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None, Diagnostic(
            event="invalid_operator_config",
            source=source,
            message=f"{source}: is not valid YAML; ignoring it",
        )
    if data is None:
        return None, None
    if not isinstance(data, dict):
        return None, Diagnostic(
            event="invalid_operator_config",
            source=source,
            message=f"{source}: must be a YAML mapping; ignoring it",
        )
    value = data.get(GUARD_MODE_CONFIG_KEY)
    if value is None:
        return None, None
    if value is False:
        # YAML 1.1 reads a bare ``off`` as false; that is what the operator meant.
        return GuardMode.OFF.value, None
    if not isinstance(value, str):
        return str(value), None
    return value, None


def resolve(environ: Mapping[str, str], config_path: Path | None) -> GuardModeResolution:
    """The guard mode with its source and, when a value was rejected, why."""
    for name in (GUARD_MODE_ENV, GUARD_MODE_ENV_ALIAS):
        value = environ.get(name, "")
        if value.strip():
            return _from_value(value, f"environment {name}", SettingSource.ENVIRONMENT)
    if config_path is not None:
        configured, problem = _config_value(config_path)
        if problem is not None:
            return GuardModeResolution(DEFAULT_GUARD_MODE, SettingSource.DEFAULT, problem)
        if configured is not None and configured.strip():
            return _from_value(
                configured,
                f"user config {config_path} key {GUARD_MODE_CONFIG_KEY}",
                SettingSource.USER_CONFIG,
            )
    return GuardModeResolution(DEFAULT_GUARD_MODE, SettingSource.DEFAULT)


def resolve_guard_mode(
    environ: Mapping[str, str], user_config_path: Path | None
) -> tuple[GuardMode, SettingSource, str | None]:
    """Mode, where it came from, and a diagnostic when a configured value was rejected.

    Order: ``SEAWALL_REPEATED_TOOL_FAILURE_GUARD``, its alias, the user-level config file,
    then ``shadow``. Blank values count as missing; the first non-blank one decides, and an
    invalid one means ``shadow`` (it does not fall through to a lower source).
    """
    result = resolve(environ, user_config_path)
    message = result.diagnostic.message if result.diagnostic else None
    return result.mode, result.source, message


@activity.defn(name=RESOLVE_OPERATOR_SETTINGS)
async def resolve_operator_settings(inp: ResolveOperatorSettingsInput) -> OperatorSettings:
    """Read the operator's guard mode from this worker's environment and user config."""
    environ = dict(os.environ)
    result = resolve(environ, user_config_path(environ))
    problem = result.diagnostic
    if problem is not None:
        fields: dict[str, object] = {"source": problem.source, "diagnostic": problem.message}
        if problem.value is not None:
            # Operator configuration, not user data, so the value itself may be logged.
            fields["value"] = problem.value[:MAX_LOGGED_VALUE_CHARS]
            fields["value_length"] = len(problem.value)
        structlog.get_logger(__name__).warning(problem.event, **fields)
    return OperatorSettings(guard_mode=result.mode, guard_mode_source=result.source)
