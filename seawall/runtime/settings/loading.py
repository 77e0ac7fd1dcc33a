"""Startup: build the settings model from its sources once, and turn every bad value into one
error naming the setting, its value (never a secret's) and its source.

Every entry point calls :func:`load_settings` (through :func:`settings_or_exit`: one line on
stderr, ``<program>: error: …``, and exit code 2, before it connects or listens), e.g.
``SEAWALL_GATEWAY_PORT=abc (environment): not an integer``. The guard mode too, except under
the seed profile, which keeps the seed design's semantics: an invalid value runs ``shadow``,
with a notice startup shows (sources.py, "the seed profile's guard mode").
``seawall config`` reads the same way with :func:`inspect_settings`, which marks each invalid
value instead of refusing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from workflows.contracts.activity import SettingSource

from . import report
from .catalogue import SETTINGS_BY_NAME, SeawallSettings, validator_of
from .fields import (
    CONFIG_FILE_NAME,
    EXIT_BAD_SETTINGS,
    GUARD_MODE_CONFIG_KEY,
    MCP_FILE_NAME,
    Diagnostic,
    Origin,
    SettingsError,
    field_validator_of,
)
from .sources import GUARD_NOTICE, Load, UserConfig, loading


@dataclass(frozen=True)
class EffectiveSettings:
    """The settings, where each came from, the files read, and diagnostics.

    ``problems`` are the lines a start refuses with (``VARIABLE=value (environment):
    message``; none for a process that started). ``invalid`` maps each setting whose value
    does not validate to its lines, and is what ``seawall config`` marks; for a process that
    started it holds at most the guard mode the seed profile runs as shadow, with its notice.
    An invalid setting's value in ``settings`` is its default."""

    settings: SeawallSettings
    origins: Mapping[str, Origin]
    config: UserConfig
    mcp: UserConfig
    diagnostics: tuple[Diagnostic, ...]
    problems: tuple[str, ...] = ()
    invalid: Mapping[str, str] = field(default_factory=dict)

    @property
    def guard_notice(self) -> str | None:
        """The line saying the seed profile runs an invalid guard mode as shadow."""
        return next((d.message for d in self.diagnostics if d.event == GUARD_NOTICE), None)

    def is_set(self, name: str) -> bool:
        """Whether the operator set ``name`` (in the environment or the user config)."""
        return self.origins[name].source is not SettingSource.DEFAULT

    def labelled(self, name: str) -> str:
        """``VARIABLE=value (environment)``, ``key=value (user config PATH)`` or ``name
        (default)``: how an error about setting ``name`` names it (a secret without its
        value), for checks made after loading (seawall/runtime/temporal_connect.py)."""
        setting = SETTINGS_BY_NAME[name]
        origin = self.origins[name]
        if origin.source is SettingSource.DEFAULT:
            return f"{name} (default)"
        shown = "" if setting.secret else f"={_shown(str(getattr(self.settings, name)))}"
        if origin.source is SettingSource.ENVIRONMENT:
            return f"{origin.where}{shown} (environment)"
        return f"{name}{shown} (user config {self.config.path})"

    def display_value(self, name: str) -> str:
        """The value as ``seawall config`` shows it (report.py)."""
        return report.display_value(self, name)

    def as_json(self) -> dict[str, Any]:
        """``seawall config --json``'s settings part (report.py)."""
        return report.as_json(self)


# --- errors -------------------------------------------------------------------------------

_SHORT_MESSAGES = {
    "int_parsing": "not an integer",
    "int_type": "not an integer",
    "int_from_float": "not an integer",
    "float_parsing": "not a number",
    "float_type": "not a number",
    "finite_number": "not a finite number",
    "bool_parsing": "not a boolean (true/false, yes/no, on/off, 1/0)",
    "bool_type": "not a boolean (true/false, yes/no, on/off, 1/0)",
    "string_too_short": "must not be empty",
    "string_type": "not a string",
    "dict_type": "must be a mapping",
    "path_type": "not a path",
}
MAX_SHOWN_VALUE_CHARS = 80


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if "://" in text:
        text = report.without_userinfo(text)
    if len(text) > MAX_SHOWN_VALUE_CHARS:
        text = text[: MAX_SHOWN_VALUE_CHARS - 1] + "…"
    return text if text and text.isprintable() and " " not in text else repr(text)


def error_message(err: Mapping[str, Any]) -> str:
    """The short text of one pydantic error, as a bad setting's error line says it."""
    short = _SHORT_MESSAGES.get(str(err["type"]))
    if short is not None:
        return short
    message = str(err["msg"]).removeprefix("Value error, ")
    if message.startswith("Input should be "):
        message = "must be " + message.removeprefix("Input should be ")
    return message


def flag_type(name: str) -> Callable[[str], Any]:
    """An ``argparse`` type for the flag that overrides setting ``name``: its value is
    validated by the setting's own field, so a flag accepts exactly what the setting does
    and a bad one says why in the words a bad setting's error line uses."""
    validator = field_validator_of(SeawallSettings.model_fields[name])

    def parse(text: str) -> Any:
        try:
            return validator.validate_python(text)
        except ValidationError as err:
            raise argparse.ArgumentTypeError(error_message(err.errors()[0])) from None

    parse.__name__ = name  # argparse names the type in its "invalid ... value" message
    return parse


def _problem(load: Load, name: str, message: str) -> str:
    """``VARIABLE=value (environment): message`` or ``key=value (user config PATH): …``;
    a secret's value is never shown."""
    setting = SETTINGS_BY_NAME.get(name)
    origin = load.origins.get(name)
    if setting is None or origin is None or origin.source is SettingSource.DEFAULT:
        return f"{name} (default): {message}"
    if origin.source is SettingSource.ENVIRONMENT:
        label, source = str(origin.where), "environment"
    else:
        path = load.mcp.path if setting.config_file == MCP_FILE_NAME else load.config.path
        label, source = name, f"user config {path}"
    shown = "" if setting.secret else f"={_shown(load.raw.get(name))}"
    return f"{label}{shown} ({source}): {message}"


def load_settings(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> EffectiveSettings:
    """The effective settings from ``environ`` (default: this process's environment) and
    the user config directory (default: found through ``environ``'s XDG_CONFIG_HOME / HOME;
    ``config_path`` names its ``config.yaml``, ``mcp.json`` is beside it).

    Reads the files every time it is called (no cache), so a long-running process that
    calls it again sees an edited file. Raises :class:`SettingsError` for an unreadable
    config file or an invalid value, naming each; under the seed profile an invalid guard
    mode is not an error (it runs ``shadow``, with its notice: ``guard_notice``).
    """
    effective = inspect_settings(environ, config_path)
    if effective.problems:
        raise SettingsError("; ".join(effective.problems))
    return effective


def inspect_settings(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> EffectiveSettings:
    """What :func:`load_settings` reads, with each invalid value marked (``problems``,
    ``invalid``) instead of refused: ``seawall config``'s view. Raises
    :class:`SettingsError` only for a config file that cannot be read or parsed."""
    load = Load.of(dict(os.environ if environ is None else environ), config_path)
    for broken in (load.config.problem, load.mcp.problem):
        if broken is not None:
            raise SettingsError(broken.message.removesuffix("; ignoring it"))
    errors: list[tuple[str, str]] = []
    try:
        with loading(load):
            settings = SeawallSettings()
    except ValidationError as exc:
        errors = [
            (str(err["loc"][0]) if err["loc"] else "?", error_message(err))
            for err in exc.errors(include_url=False, include_input=False)
        ]
        settings = _valid_part(load, {name for name, _ in errors})
    problems = [_problem(load, name, message) for name, message in errors]
    invalid: dict[str, str] = {}
    for (name, _), problem in zip(errors, problems, strict=True):
        invalid[name] = f"{invalid[name]}; {problem}" if name in invalid else problem
    diagnostics = [*_config_file_diagnostics(load.config)]
    if load.guard_notice is not None:
        diagnostics.append(load.guard_notice)
        invalid[GUARD_MODE_CONFIG_KEY] = load.guard_notice.message
    return EffectiveSettings(
        settings=settings,
        origins=dict(load.origins),
        config=load.config,
        mcp=load.mcp,
        diagnostics=tuple(diagnostics),
        problems=tuple(problems),
        invalid=invalid,
    )


def _valid_part(load: Load, invalid: set[str]) -> SeawallSettings:
    """The settings of every value that validates on its own, each invalid one at its
    default: only for showing them (``seawall config``), never for running."""
    values = {}
    for name, raw in load.raw.items():
        if name not in invalid:
            with contextlib.suppress(ValidationError):
                values[name] = validator_of(name).validate_python(raw)
    return SeawallSettings.model_construct(**values)


def _config_file_diagnostics(config: UserConfig) -> Iterator[Diagnostic]:
    """Keys of ``config.yaml`` that set nothing: unknown, or settable elsewhere only."""
    source = f"user config {config.path}"
    for key in config.values:
        setting = SETTINGS_BY_NAME.get(key)
        if setting is None:
            reason = "is not a setting"
        elif setting.config_file is None:
            reason = "may only be set in the environment"
        elif setting.config_file != CONFIG_FILE_NAME:
            reason = f"belongs in {setting.config_file}"
        else:
            continue
        yield Diagnostic(
            event="ignored_operator_config_key",
            source=source,
            message=f"{source}: key {key[:60]!r} {reason}; ignoring it",
        )


def settings_or_exit(program: str, environ: Mapping[str, str] | None = None) -> EffectiveSettings:
    """:func:`load_settings` for an entry point: a bad setting is one line on stderr,
    ``<program>: error: …``, and exit code 2, before anything connects or listens."""
    try:
        return load_settings(environ)
    except SettingsError as err:
        print(f"{program}: error: {err}", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_BAD_SETTINGS) from None


def log_startup_diagnostics(effective: EffectiveSettings, logger: Any) -> None:
    """Log the diagnostics of a process's settings once at startup, except the seed
    profile's guard-mode notice: the worker's ``worker_started`` line carries that one
    (report.protections), and it reports the guard mode with each session that resolves it."""
    for diagnostic in effective.diagnostics:
        if diagnostic.event != GUARD_NOTICE:
            logger.warning(
                diagnostic.event, source=diagnostic.source, diagnostic=diagnostic.message
            )
