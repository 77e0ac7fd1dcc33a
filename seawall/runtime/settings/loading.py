"""Startup: build one process's settings from their sources, and turn every bad value into
one error naming the setting, its value (never a secret's) and its source.

Every entry point calls :func:`load_settings` (through :func:`settings_or_exit`: one line on
stderr, ``<program>: error: …``, and exit code 2, before it connects or listens), e.g.
``SEAWALL_GATEWAY_PORT=abc (environment): not an integer``, naming the process whose
settings to read (``reader``): a process reads, checks and keeps only the settings whose
``read_by`` names it (docs/settings.md, "Each process reads its own settings"), so the
gateway never holds the model key, nor the worker the owners' tokens, whatever the config
file says. The guard mode is refused too, except under the seed profile, which keeps the
seed design's semantics: an invalid value runs ``shadow``, with a notice startup shows
(sources.py, "the seed profile's guard mode"). ``seawall config`` reads every setting the
same way with :func:`inspect_settings`, which marks each invalid value instead of refusing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from workflows.contracts.activity import SettingSource

from .catalogue import SETTINGS, SETTINGS_BY_NAME, SeawallSettings, validator_of
from .fields import (
    CONFIG_FILE_NAME,
    EXIT_BAD_SETTINGS,
    GUARD_MODE_CONFIG_KEY,
    MCP_FILE_NAME,
    Diagnostic,
    Origin,
    Readers,
    SettingsError,
    field_validator_of,
    shown,
)
from .sources import GUARD_NOTICE, Load, UserConfig


@dataclass(frozen=True)
class EffectiveSettings:
    """One process's settings, where each came from, the files read, and diagnostics;
    ``origins`` has the settings the process keeps, no other.

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

    def _origin(self, name: str) -> Origin:
        if name not in self.origins:
            getattr(self.settings, name)  # raises, naming the setting and its readers
        return self.origins[name]

    def is_set(self, name: str) -> bool:
        """Whether the operator set ``name`` (in the environment or the user config)."""
        return self._origin(name).source is not SettingSource.DEFAULT

    def labelled(self, name: str) -> str:
        """``VARIABLE=value (environment)``, ``key=value (user config PATH)`` or ``name
        (default)``: how an error about setting ``name`` names it (a secret without its
        value), for checks made after loading (seawall/runtime/temporal_connect.py)."""
        setting = SETTINGS_BY_NAME[name]
        origin = self._origin(name)
        if origin.source is SettingSource.DEFAULT:
            return f"{name} (default)"
        value = "" if setting.secret else f"={shown(str(getattr(self.settings, name)))}"
        if origin.source is SettingSource.ENVIRONMENT:
            return f"{origin.where}{value} (environment)"
        return f"{name}{value} (user config {self.config.path})"


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
    value = "" if setting.secret else f"={shown(load.raw.get(name))}"
    return f"{label}{value} ({source}): {message}"


def load_settings(
    environ: Mapping[str, str] | None = None,
    config_path: Path | None = None,
    *,
    reader: str | Iterable[str] | None = None,
    also: Iterable[str] = (),
) -> EffectiveSettings:
    """The settings of ``reader`` — a process (``WORKER``, ``GATEWAY``, ...) or the roles one
    process plays (``(ACP, WORKER)``); ``None``: every setting, as ``seawall config``
    reports them — from ``environ`` (default: this process's environment) and the user
    config directory (default: found through ``environ``'s XDG_CONFIG_HOME / HOME;
    ``config_path`` names its ``config.yaml``, ``mcp.json`` is beside it). Only the settings
    whose ``read_by`` names the reader are read, checked and kept; of ``also``'s settings,
    those that are no secret too (``seawall up``'s worker's and gateway's).

    Reads the files every time it is called (no cache), so a long-running process that
    calls it again sees an edited file. Raises :class:`SettingsError` for an unreadable
    config file or an invalid value, naming each; under the seed profile an invalid guard
    mode is not an error (it runs ``shadow``, with its notice: ``guard_notice``).
    """
    effective = inspect_settings(environ, config_path, reader=reader, also=also)
    if effective.problems:
        raise SettingsError("; ".join(effective.problems))
    return effective


def inspect_settings(
    environ: Mapping[str, str] | None = None,
    config_path: Path | None = None,
    *,
    reader: str | Iterable[str] | None = None,
    also: Iterable[str] = (),
) -> EffectiveSettings:
    """What :func:`load_settings` reads, with each invalid value marked (``problems``,
    ``invalid``) instead of refused: ``seawall config``'s view. Raises
    :class:`SettingsError` only for a config file that cannot be read or parsed."""
    readers = Readers.of(reader, also)
    env = dict(os.environ if environ is None else environ)
    load = Load.of(env, SETTINGS, readers, config_path)
    for broken in (load.config.problem, load.mcp.problem):
        if broken is not None:
            raise SettingsError(broken.message.removesuffix("; ignoring it"))
    errors: list[tuple[str, str]] = []
    try:
        settings = SeawallSettings.model_validate(
            load.read(SETTINGS, validator_of), context=readers
        )
    except ValidationError as exc:
        errors = [
            (str(err["loc"][0]) if err["loc"] else "?", error_message(err))
            for err in exc.errors(include_url=False, include_input=False)
        ]
        settings = _valid_part(load, {name for name, _ in errors})
    settings.keep_only(readers)
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
        origins={
            name: origin
            for name, origin in load.origins.items()
            if readers.reads(SETTINGS_BY_NAME[name])
        },
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
                values[name] = validator_of(name).validate_python(raw, context=load.readers)
    return SeawallSettings.model_construct(**values)


def _config_file_diagnostics(config: UserConfig) -> Iterator[Diagnostic]:
    """Keys of ``config.yaml`` that set nothing: unknown, or settable elsewhere only."""
    source = f"user config {config.path}"
    for key in config.keys:
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


def settings_or_exit(
    program: str,
    environ: Mapping[str, str] | None = None,
    *,
    reader: str | Iterable[str] | None,
    also: Iterable[str] = (),
) -> EffectiveSettings:
    """:func:`load_settings` of ``reader`` for an entry point: a bad setting is one line on
    stderr, ``<program>: error: …``, and exit code 2, before anything connects or listens."""
    try:
        return load_settings(environ, reader=reader, also=also)
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
