"""Operator settings, resolved once per session through an activity (docs/architecture.md, "The
prompt loop").

The guard mode is an operator decision, so it is read only from the worker's process
environment and the operator's user-level config file. Anything inside a workspace (a
project ``.env``, ``.seawall/``, ``.qwen/.env``, workspace settings) is under the control
of whoever wrote the repository, who must not be able to switch the guard off or on; this
module therefore never looks at the working directory. The resolution itself lives in
:mod:`seawall.runtime.settings`, the one settings model of the worker, the gateway and the CLI.
Resolving in an activity keeps the workflow deterministic: the result is recorded in
history and replayed as is.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import structlog
from temporalio import activity

from seawall.runtime.settings import (
    DEFAULT_GUARD_MODE,
    GUARD_MODE_CONFIG_KEY,
    GUARD_MODE_ENV,
    GUARD_MODE_ENV_ALIAS,
    Diagnostic,
    GuardModeResolution,
    UserConfig,
    user_config_path,
)
from seawall.runtime.settings import resolve_guard_mode as _resolve_from_sources
from workflows.activity_io import (
    RESOLVE_OPERATOR_SETTINGS,
    OperatorSettings,
    ResolveOperatorSettingsInput,
    SettingSource,
)
from workflows.guard import GuardMode

__all__ = [
    "DEFAULT_GUARD_MODE",
    "GUARD_MODE_CONFIG_KEY",
    "GUARD_MODE_ENV",
    "GUARD_MODE_ENV_ALIAS",
    "MAX_LOGGED_VALUE_CHARS",
    "Diagnostic",
    "GuardModeResolution",
    "OperatorSettingsActivities",
    "read_guard_mode",
    "resolve",
    "resolve_guard_mode",
    "user_config_path",
]

MAX_LOGGED_VALUE_CHARS = 100


def resolve(environ: Mapping[str, str], config_path: Path | None) -> GuardModeResolution:
    """The guard mode with its source and, when a value was rejected, why.

    The same resolution as the ``repeated_tool_failure_guard`` field of
    :class:`seawall.runtime.settings.SeawallSettings` (and ``seawall config``), reading only the
    guard's own sources so an unrelated bad setting cannot change the mode.
    """
    return _resolve_from_sources(environ, UserConfig.read(config_path))


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


def read_guard_mode(environ: Mapping[str, str]) -> GuardModeResolution:
    """The guard mode from ``environ`` and the user config file it locates."""
    return resolve(environ, user_config_path(environ))


class OperatorSettingsActivities:
    """The operator-settings activity of one worker. ``read_guard_mode`` resolves the guard
    mode from the worker's settings sources; it runs at every session and prompt start."""

    def __init__(self, read_guard_mode: Callable[[], GuardModeResolution]) -> None:
        self._read_guard_mode = read_guard_mode

    def activities(self) -> list[Callable[..., Any]]:
        return [self.resolve_operator_settings]

    @activity.defn(name=RESOLVE_OPERATOR_SETTINGS)
    async def resolve_operator_settings(
        self, inp: ResolveOperatorSettingsInput
    ) -> OperatorSettings:
        """Read the operator's guard mode from this worker's environment and user config."""
        result = self._read_guard_mode()
        problem = result.diagnostic
        if problem is not None:
            fields: dict[str, object] = {"source": problem.source, "diagnostic": problem.message}
            if problem.value is not None:
                # Operator configuration, not user data, so the value itself may be logged.
                fields["value"] = problem.value[:MAX_LOGGED_VALUE_CHARS]
                fields["value_length"] = len(problem.value)
            # A logging failure must not fail the activity (and so the prompt).
            with contextlib.suppress(Exception):
                structlog.get_logger(__name__).warning(problem.event, **fields)
        return OperatorSettings(guard_mode=result.mode, guard_mode_source=result.source)
