"""The one reader of the settings' sources: the process environment, then the operator's
user config directory, then the default (docs/settings.md, "Where a value comes from").

Startup (:class:`OperatorSource`, which feeds the settings model) and the session-time reads
(session.py) both find a setting's raw value with :func:`find`, so they read the same
variable, key and file in the same order. Nothing else is ever read: not a project ``.env``,
not ``.seawall/``, not ``.qwen/.env``, not workspace settings, not a secrets directory,
nothing relative to the working directory — whoever wrote a repository must not be able to
switch the guard off, point the worker at another server, make it spawn commands or read its
keys. pydantic-settings' own ``.env`` and secrets sources are therefore disabled and
replaced by :class:`OperatorSource`, which also records where each value came from for
``seawall config``.
"""

from __future__ import annotations

import contextvars
import functools
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from workflows.contracts.activity import SettingSource
from workflows.rules import LoopProfile
from workflows.seed import GuardMode

from .fields import (
    CONFIG_DIR_NAME,
    CONFIG_FILE_NAME,
    GUARD_MODE_CONFIG_KEY,
    LOOP_PROFILE_CONFIG_KEY,
    MCP_FILE_NAME,
    Diagnostic,
    Origin,
    Setting,
    field_validator_of,
    setting_of,
)

DEFAULT_GUARD_MODE = GuardMode.SHADOW
# The event of the seed profile's notice for an invalid guard mode (:func:`seed_guard_notice`),
# the one the worker logs at each session that resolves such a value.
GUARD_NOTICE = "invalid_guard_mode"


def user_config_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/seawall``, else ``~/.config/seawall`` (``HOME`` from ``environ``)."""
    xdg = environ.get("XDG_CONFIG_HOME", "").strip()
    # The XDG spec says a relative value is invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / CONFIG_DIR_NAME
    home = environ.get("HOME", "").strip()
    base = Path(home) if home else Path.home()
    return base / ".config" / CONFIG_DIR_NAME


def user_data_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_DATA_HOME/seawall``, else ``~/.local/share/seawall``: the per-user data
    directory (``seawall acp --embedded`` keeps its Temporal state there when ``data_dir``
    is unset)."""
    xdg = environ.get("XDG_DATA_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / CONFIG_DIR_NAME
    home = environ.get("HOME", "").strip()
    base = Path(home) if home else Path.home()
    return base / ".local" / "share" / CONFIG_DIR_NAME


def user_config_path(environ: Mapping[str, str]) -> Path:
    """``config.yaml`` in :func:`user_config_dir`."""
    return user_config_dir(environ) / CONFIG_FILE_NAME


@dataclass(frozen=True)
class UserConfig:
    """A file of the operator's user config directory as read once; a broken file has no
    values and a diagnostic."""

    path: Path | None
    values: Mapping[str, Any] = field(default_factory=dict)
    found: bool = False
    problem: Diagnostic | None = None
    # The whole document, for files that hold one setting (mcp.json).
    document: Any = None

    @classmethod
    def read(cls, path: Path | None) -> UserConfig:
        """``config.yaml``: a YAML mapping of setting names to values."""
        return cls._read(path, "is not valid YAML", _load_yaml, mapping=True)

    @classmethod
    def read_json(cls, path: Path | None) -> UserConfig:
        """A JSON document (``mcp.json``), kept whole in ``document``."""
        return cls._read(path, "is not valid JSON", json.loads, mapping=False)

    @classmethod
    def _read(
        cls, path: Path | None, invalid: str, parse: Callable[[str], Any], *, mapping: bool
    ) -> UserConfig:
        if path is None:
            return cls(path=None)
        source = f"user config {path}"

        def broken(reason: str) -> UserConfig:
            return cls(
                path=path,
                found=True,
                problem=Diagnostic(
                    event="invalid_operator_config",
                    source=source,
                    message=f"{source}: {reason}; ignoring it",
                ),
            )

        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(path=path)
        except (OSError, UnicodeDecodeError) as exc:
            return broken(f"cannot be read ({type(exc).__name__})")
        try:
            data = parse(text)
        except ValueError:
            return broken(invalid)
        if not mapping:
            return cls(path=path, found=True, document=data)
        if data is None:
            return cls(path=path, found=True)
        if not isinstance(data, dict):
            return broken("must be a YAML mapping")
        return cls(path=path, values={str(k): v for k, v in data.items()}, found=True)

    def get(self, key: str) -> Any:
        """The configured value, or ``None`` when unset or blank."""
        value = self.values.get(key)
        if isinstance(value, str) and not value.strip():
            return None
        return value

    def where(self, key: str) -> str:
        return f"{self.path} key {key}"


def _load_yaml(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError("not YAML") from exc


def from_environment(setting: Setting, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """``(variable, value)`` of the first non-blank variable of ``setting``."""
    for name in setting.env:
        value = environ.get(name, "")
        if value.strip():
            return name, value
    return None


@dataclass(frozen=True)
class Found:
    """A setting's raw value as its source holds it, where it came from, and how a
    diagnostic names that place (``environment VARIABLE``, ``user config PATH key KEY``)."""

    value: Any
    origin: Origin
    label: str

    @property
    def text(self) -> str:
        """The raw value as text, for a diagnostic."""
        return self.value if isinstance(self.value, str) else str(self.value)

    @property
    def word(self) -> str:
        """A mode or profile word as found, for a diagnostic (YAML's bare ``off`` is false)."""
        return "off" if self.value is False else self.text

    def rejected(
        self, event: str, what: str, expected: str, instead: str, shown: str
    ) -> Diagnostic:
        """The diagnostic of a value a session's start does not use:
        ``LABEL: invalid WHAT 'VALUE' (expected EXPECTED); INSTEAD``."""
        return Diagnostic(
            event=event,
            source=self.label,
            value=shown,
            message=(
                f"{self.label}: invalid {what} {shown[:100]!r} (expected {expected}); {instead}"
            ),
        )


def find(
    setting: Setting, environ: Mapping[str, str], config: UserConfig, mcp: UserConfig | None = None
) -> Found | None:
    """The raw value of ``setting``: its first non-blank variable, else its key of the file
    it belongs in (a broken file counting as unset), else ``None`` (the default applies)."""
    found = from_environment(setting, environ)
    if found is not None:
        name, value = found
        return Found(value, Origin(SettingSource.ENVIRONMENT, name), f"environment {name}")
    if setting.config_file == CONFIG_FILE_NAME and config.problem is None:
        configured = config.get(setting.name)
        if configured is not None:
            where = config.where(setting.name)
            return Found(
                configured, Origin(SettingSource.USER_CONFIG, where), f"user config {where}"
            )
    if (
        setting.config_file == MCP_FILE_NAME
        and mcp is not None
        and mcp.found
        and mcp.problem is None
    ):
        where = str(mcp.path)
        return Found(mcp.document, Origin(SettingSource.USER_CONFIG, where), f"user config {where}")
    return None


# --- the guard mode at a session's start: never an error ------------------------------------


@dataclass(frozen=True)
class GuardModeResolution:
    """The guard mode, where it came from, and why a configured value was rejected."""

    mode: GuardMode
    source: SettingSource
    diagnostic: Diagnostic | None = None
    where: str | None = None


def read_guard_mode(
    setting: Setting, validator: TypeAdapter[Any], environ: Mapping[str, str], config: UserConfig
) -> GuardModeResolution:
    """The guard mode with its operator semantics: missing means ``shadow``; the first
    non-blank value decides, and an invalid one (or an unreadable config file) means
    ``shadow`` plus a diagnostic — it does not fall through to a lower-priority source.
    ``validator`` is the guard field's own (:func:`~.fields.field_validator_of`)."""
    found = find(setting, environ, config)
    if found is None:
        if config.problem is not None:
            return GuardModeResolution(DEFAULT_GUARD_MODE, SettingSource.DEFAULT, config.problem)
        return GuardModeResolution(DEFAULT_GUARD_MODE, SettingSource.DEFAULT)
    try:
        mode = validator.validate_python(found.value)
    except ValidationError:
        allowed = ", ".join(m.value for m in GuardMode)
        return GuardModeResolution(
            DEFAULT_GUARD_MODE,
            SettingSource.DEFAULT,
            found.rejected(
                "invalid_guard_mode",
                "repeated tool failure guard mode",
                f"one of: {allowed}",
                f"using {DEFAULT_GUARD_MODE.value}",
                found.word,
            ),
        )
    return GuardModeResolution(mode, found.origin.source, where=found.origin.where)


# --- the seed profile's guard mode at startup -----------------------------------------------


@functools.cache
def _validator(settings_cls: type[BaseSettings], name: str) -> TypeAdapter[Any]:
    return field_validator_of(settings_cls.model_fields[name])


def _validates(settings_cls: type[BaseSettings], name: str, value: Any) -> Any | None:
    """``value`` as field ``name`` reads it, or ``None`` when it does not validate."""
    try:
        return _validator(settings_cls, name).validate_python(value)
    except ValidationError:
        return None


def seed_guard_notice(found: Found) -> Diagnostic:
    """What startup says when the seed profile runs an invalid guard mode as shadow: one
    line naming the setting, the value and the accepted words (docs/settings.md, "Bad
    values")."""
    word = found.word
    shown = json.dumps(word if len(word) <= 80 else word[:79] + "…", ensure_ascii=False)
    allowed = ", ".join(m.value for m in GuardMode)
    return Diagnostic(
        event=GUARD_NOTICE,
        source=found.label,
        value=word,
        message=(
            f"{GUARD_MODE_CONFIG_KEY}: {shown} is not a mode ({allowed}); "
            f"running {DEFAULT_GUARD_MODE.value} as the seed design requires"
        ),
    )


# --- what one load reads, and the model's source --------------------------------------------


@dataclass
class Load:
    """What one construction of the settings model reads, and what it found."""

    environ: Mapping[str, str]
    config: UserConfig
    mcp: UserConfig
    origins: dict[str, Origin] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    # Set when the seed profile runs an invalid guard mode as shadow (seed_guard_notice).
    guard_notice: Diagnostic | None = None

    @classmethod
    def of(cls, environ: Mapping[str, str], config_path: Path | None = None) -> Load:
        path = user_config_path(environ) if config_path is None else config_path
        return cls(
            environ=environ,
            config=UserConfig.read(path),
            mcp=UserConfig.read_json(path.with_name(MCP_FILE_NAME)),
        )


_CURRENT_LOAD: contextvars.ContextVar[Load | None] = contextvars.ContextVar(
    "seawall_settings_load", default=None
)


@contextmanager
def loading(load: Load) -> Iterator[None]:
    """Make ``load`` what a settings model built inside reads (:func:`current_load`)."""
    token = _CURRENT_LOAD.set(load)
    try:
        yield
    finally:
        _CURRENT_LOAD.reset(token)


def current_load(environ: Mapping[str, str]) -> Load:
    """The load :func:`loading` set, else a fresh one of ``environ``."""
    return _CURRENT_LOAD.get() or Load.of(environ)


class OperatorSource(PydanticBaseSettingsSource):
    """Process environment over the user config directory, recording each value's origin."""

    def __init__(self, settings_cls: type[BaseSettings], load: Load) -> None:
        super().__init__(settings_cls)
        self._load = load

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        # Unused: __call__ resolves every field itself.
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        load = self._load
        guard: Found | None = None
        for name, info in self.settings_cls.model_fields.items():
            found = find(setting_of(name, info), load.environ, load.config, load.mcp)
            if found is None:
                load.origins[name] = Origin(SettingSource.DEFAULT)
                continue
            load.raw[name] = found.value
            load.origins[name] = found.origin
            if name == GUARD_MODE_CONFIG_KEY:
                guard = found
        if guard is not None and self._seed_profile():
            self._seed_guard_mode(guard)
        return dict(load.raw)

    def _seed_profile(self) -> bool:
        profile = self._load.raw.get(LOOP_PROFILE_CONFIG_KEY)
        return _validates(self.settings_cls, LOOP_PROFILE_CONFIG_KEY, profile) is LoopProfile.SEED

    def _seed_guard_mode(self, found: Found) -> None:
        """The seed profile keeps the seed design's semantics for the guard mode: an
        invalid value runs ``shadow``, loudly (the notice). Under any other profile an
        invalid value stays in ``raw``, and the model refuses it like any bad value."""
        if _validates(self.settings_cls, GUARD_MODE_CONFIG_KEY, found.value) is None:
            self._load.raw[GUARD_MODE_CONFIG_KEY] = DEFAULT_GUARD_MODE
            self._load.guard_notice = seed_guard_notice(found)
