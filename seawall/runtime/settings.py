"""Operator settings for the worker, the gateway and the CLI: one typed model, two sources.

Every value comes from, in order:

1. the process environment (the variable names below; a blank value counts as unset);
2. the operator's user-level config file, ``$XDG_CONFIG_HOME/seawall/config.yaml`` or
   ``~/.config/seawall/config.yaml`` (keys are the setting names below);
3. the default.

Nothing else is ever read: not a project ``.env``, not ``.seawall/``, not ``.qwen/.env``,
not workspace settings, not a secrets directory, and nothing relative to the working
directory. Whoever wrote a repository must not be able to switch the guard off, point the
worker at another server or read its keys. pydantic-settings' own ``.env`` and secrets
sources are therefore disabled (``env_file=None``, ``secrets_dir=None``) and replaced by
the single layered source below, which also records where each value came from
(``environment`` | ``user_config`` | ``default``) for ``seawall config``.

The guard mode keeps its operator semantics: a missing value means ``shadow``, and an
invalid one means ``shadow`` plus one diagnostic (it does not fall through to the user
config). Secrets (``openai_api_key``, ``gateway_token``) are ``SecretStr`` and are only ever
shown as ``set`` or ``unset``.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import yaml
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from workflows.activity_io import SettingSource
from workflows.guard import GuardMode, parse_guard_mode

CONFIG_DIR_NAME = "seawall"
CONFIG_FILE_NAME = "config.yaml"

GUARD_MODE_ENV = "SEAWALL_REPEATED_TOOL_FAILURE_GUARD"
# The seed's name, accepted so an existing deployment keeps its setting.
GUARD_MODE_ENV_ALIAS = "QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD"
GUARD_MODE_CONFIG_KEY = "repeated_tool_failure_guard"
DEFAULT_GUARD_MODE = GuardMode.SHADOW

LogFormat = Literal["json", "console"]
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


@dataclass(frozen=True)
class Setting:
    """One operator setting: its field name (also its config file key) and variables."""

    name: str
    env: tuple[str, ...]
    help: str
    secret: bool = False
    # False: only the environment may set it (its reader looks nowhere else).
    user_config: bool = True


SETTINGS: tuple[Setting, ...] = (
    Setting("temporal_address", ("TEMPORAL_ADDRESS",), "Temporal frontend host:port"),
    Setting("temporal_namespace", ("TEMPORAL_NAMESPACE",), "Temporal namespace"),
    Setting("task_queue", ("SEAWALL_TASK_QUEUE",), "task queue of the prompt workflows"),
    Setting(
        GUARD_MODE_CONFIG_KEY,
        (GUARD_MODE_ENV, GUARD_MODE_ENV_ALIAS),
        "repeated tool failure guard: off | shadow | warn | enforce",
    ),
    Setting("log_format", ("SEAWALL_LOG_FORMAT",), "json | console"),
    Setting("log_level", ("SEAWALL_LOG_LEVEL",), "DEBUG | INFO | WARNING | ERROR"),
    Setting("metrics_host", ("SEAWALL_METRICS_HOST",), "Prometheus endpoint address"),
    Setting("metrics_port", ("SEAWALL_METRICS_PORT",), "Prometheus endpoint port (unset: none)"),
    Setting("otlp_endpoint", ("SEAWALL_OTLP_ENDPOINT",), "OTLP collector for metrics and spans"),
    Setting("otel_tracing", ("SEAWALL_OTEL_TRACING",), "Temporal's tracing interceptor"),
    Setting(
        "otel_resource_attributes",
        ("OTEL_RESOURCE_ATTRIBUTES",),
        "deployment.environment=…,service.version=… (metric attributes)",
    ),
    Setting(
        "deployment_environment",
        ("SEAWALL_DEPLOYMENT_ENVIRONMENT",),
        "deployment.environment (overrides OTEL_RESOURCE_ATTRIBUTES)",
    ),
    Setting(
        "service_version",
        ("SEAWALL_SERVICE_VERSION",),
        "service.version (overrides OTEL_RESOURCE_ATTRIBUTES)",
    ),
    Setting("openai_base_url", ("OPENAI_BASE_URL",), "OpenAI-compatible endpoint"),
    Setting("openai_api_key", ("OPENAI_API_KEY",), "model endpoint API key", secret=True),
    Setting("model", ("SEAWALL_MODEL",), "model name for the openai provider"),
    Setting(
        "gateway_token",
        ("SEAWALL_GATEWAY_TOKEN",),
        "gateway bearer token",
        secret=True,
        user_config=False,
    ),
)
SETTINGS_BY_NAME: Mapping[str, Setting] = {s.name: s for s in SETTINGS}


class SettingsError(ValueError):
    """A setting has an unusable value; the message names where it came from, never a
    secret's value."""


@dataclass(frozen=True)
class Diagnostic:
    """Why a configured value was not used, for one operator log line."""

    event: str
    source: str
    message: str
    value: str | None = None


@dataclass(frozen=True)
class Origin:
    """Where a value came from: the source and, for environment and user config, the
    variable or the file and key."""

    source: SettingSource
    where: str | None = None


@dataclass(frozen=True)
class GuardModeResolution:
    mode: GuardMode
    source: SettingSource
    diagnostic: Diagnostic | None = None
    where: str | None = None


def user_config_path(environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/seawall/config.yaml``, else ``~/.config/seawall/config.yaml``."""
    xdg = environ.get("XDG_CONFIG_HOME", "").strip()
    # The XDG spec says a relative value is invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / CONFIG_DIR_NAME / CONFIG_FILE_NAME
    home = environ.get("HOME", "").strip()
    base = Path(home) if home else Path.home()
    return base / ".config" / CONFIG_DIR_NAME / CONFIG_FILE_NAME


@dataclass(frozen=True)
class UserConfig:
    """The operator's user-level config file as read once; a broken file has no values
    and a diagnostic."""

    path: Path | None
    values: Mapping[str, Any] = field(default_factory=dict)
    found: bool = False
    problem: Diagnostic | None = None

    @classmethod
    def read(cls, path: Path | None) -> UserConfig:
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
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            return broken("is not valid YAML")
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


def from_environment(setting: Setting, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """``(variable, value)`` of the first non-blank variable of ``setting``."""
    for name in setting.env:
        value = environ.get(name, "")
        if value.strip():
            return name, value
    return None


def _guard_from_value(value: str, source: str, origin: Origin) -> GuardModeResolution:
    mode = parse_guard_mode(value)
    if mode is not None:
        return GuardModeResolution(mode, origin.source, where=origin.where)
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


def resolve_guard_mode(environ: Mapping[str, str], config: UserConfig) -> GuardModeResolution:
    """The guard mode, where it came from and, when a value was rejected, why.

    Order: ``SEAWALL_REPEATED_TOOL_FAILURE_GUARD``, its alias, the user config file, then
    ``shadow``. The first non-blank value decides; an invalid one (or an unreadable config
    file) means ``shadow``, it does not fall through to a lower-priority source.
    """
    setting = SETTINGS_BY_NAME[GUARD_MODE_CONFIG_KEY]
    found = from_environment(setting, environ)
    if found is not None:
        name, value = found
        return _guard_from_value(
            value, f"environment {name}", Origin(SettingSource.ENVIRONMENT, name)
        )
    if config.problem is not None:
        return GuardModeResolution(DEFAULT_GUARD_MODE, SettingSource.DEFAULT, config.problem)
    configured = config.get(GUARD_MODE_CONFIG_KEY)
    if configured is None:
        return GuardModeResolution(DEFAULT_GUARD_MODE, SettingSource.DEFAULT)
    if configured is False:
        # YAML 1.1 reads a bare ``off`` as false; that is what the operator meant.
        configured = GuardMode.OFF.value
    where = config.where(GUARD_MODE_CONFIG_KEY)
    return _guard_from_value(
        str(configured), f"user config {where}", Origin(SettingSource.USER_CONFIG, where)
    )


# --- the typed model ----------------------------------------------------------------------


@dataclass
class _Load:
    """What one construction of :class:`SeawallSettings` reads, and what it found."""

    environ: Mapping[str, str]
    config: UserConfig
    origins: dict[str, Origin] = field(default_factory=dict)
    guard: GuardModeResolution | None = None


_CURRENT_LOAD: contextvars.ContextVar[_Load | None] = contextvars.ContextVar(
    "seawall_settings_load", default=None
)


class _OperatorSource(PydanticBaseSettingsSource):
    """Process environment over the user config file, recording each value's origin."""

    def __init__(self, settings_cls: type[BaseSettings], load: _Load) -> None:
        super().__init__(settings_cls)
        self._load = load

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        # Unused: __call__ resolves every field itself.
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        load = self._load
        values: dict[str, Any] = {}
        for setting in SETTINGS:
            if setting.name == GUARD_MODE_CONFIG_KEY:
                load.guard = resolve_guard_mode(load.environ, load.config)
                values[setting.name] = load.guard.mode
                load.origins[setting.name] = Origin(load.guard.source, load.guard.where)
                continue
            found = from_environment(setting, load.environ)
            if found is not None:
                name, value = found
                values[setting.name] = value
                load.origins[setting.name] = Origin(SettingSource.ENVIRONMENT, name)
                continue
            configured = load.config.get(setting.name) if setting.user_config else None
            if configured is not None:
                values[setting.name] = configured
                load.origins[setting.name] = Origin(
                    SettingSource.USER_CONFIG, load.config.where(setting.name)
                )
                continue
            load.origins[setting.name] = Origin(SettingSource.DEFAULT)
        return values


class SeawallSettings(BaseSettings):
    """The effective operator settings. Build it with :func:`load_settings`."""

    model_config = SettingsConfigDict(
        env_file=None,
        secrets_dir=None,
        extra="ignore",
        frozen=True,
        str_strip_whitespace=True,
    )

    temporal_address: str = Field(default="localhost:7233", min_length=1)
    temporal_namespace: str = Field(default="default", min_length=1)
    task_queue: str = Field(default="seawall", min_length=1)
    repeated_tool_failure_guard: GuardMode = DEFAULT_GUARD_MODE
    log_format: LogFormat = "json"
    log_level: str = "INFO"
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = Field(default=None, ge=0, le=65535)
    otlp_endpoint: str | None = None
    otel_tracing: bool = False
    otel_resource_attributes: str | None = None
    deployment_environment: str | None = None
    service_version: str | None = None
    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    model: str = Field(default="gpt-4o-mini", min_length=1)
    gateway_token: SecretStr | None = None

    @field_validator("log_format", mode="before")
    @classmethod
    def _lower_format(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("log_level", mode="before")
    @classmethod
    def _level(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().upper() in LOG_LEVELS:
            return value.strip().upper()
        raise ValueError(f"expected one of {', '.join(LOG_LEVELS)}")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Never dotenv_settings (a project .env) or file_secret_settings; env_settings is
        # replaced by the layered source, which knows the aliases and records origins.
        load = _CURRENT_LOAD.get()
        if load is None:
            environ = dict(os.environ)
            load = _Load(environ=environ, config=UserConfig.read(user_config_path(environ)))
        return (init_settings, _OperatorSource(settings_cls, load))


@contextmanager
def _loading(load: _Load) -> Iterator[None]:
    token = _CURRENT_LOAD.set(load)
    try:
        yield
    finally:
        _CURRENT_LOAD.reset(token)


@dataclass(frozen=True)
class EffectiveSettings:
    """The settings, where each came from, the config file read, and diagnostics."""

    settings: SeawallSettings
    origins: Mapping[str, Origin]
    config: UserConfig
    guard: GuardModeResolution
    diagnostics: tuple[Diagnostic, ...]

    def display_value(self, name: str) -> str:
        """The value as ``seawall config`` shows it: secrets only as ``set``/``unset``."""
        value = getattr(self.settings, name)
        if SETTINGS_BY_NAME[name].secret:
            return "set" if value is not None else "unset"
        if value is None:
            return "unset"
        if isinstance(value, bool):
            return "true" if value else "false"
        if name == "openai_base_url":
            return _without_userinfo(str(value))
        return str(value)

    def as_json(self) -> dict[str, Any]:
        return {
            "user_config": {
                "path": str(self.config.path) if self.config.path else None,
                "found": self.config.found,
            },
            "settings": {
                s.name: {
                    "value": self.display_value(s.name),
                    "source": self.origins[s.name].source.value,
                    "from": self.origins[s.name].where,
                    "environment": list(s.env),
                    "secret": s.secret,
                }
                for s in SETTINGS
            },
            "diagnostics": [d.message for d in self.diagnostics],
        }


def _without_userinfo(url: str) -> str:
    """A URL with any ``user:password@`` replaced, so a credential never prints."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "set (unparseable URL)"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"***@{host}"))


def load_settings(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> EffectiveSettings:
    """The effective settings from ``environ`` (default: this process's environment) and
    the user config file (default: found through ``environ``'s XDG_CONFIG_HOME / HOME).

    Raises :class:`SettingsError` naming the variable or config key of an invalid value.
    An invalid guard mode is not an error: it resolves to ``shadow`` with a diagnostic.
    """
    env = dict(os.environ if environ is None else environ)
    path = user_config_path(env) if config_path is None else config_path
    load = _Load(environ=env, config=UserConfig.read(path))
    try:
        with _loading(load):
            settings = SeawallSettings()
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False, include_input=False):
            name = str(err["loc"][0]) if err["loc"] else "?"
            origin = load.origins.get(name)
            where = _describe_origin(origin) if origin else name
            problems.append(f"{where}: {err['msg']}")
        raise SettingsError("invalid settings: " + "; ".join(problems)) from None
    assert load.guard is not None
    diagnostics = [load.config.problem] if load.config.problem else []
    if load.guard.diagnostic is not None and load.guard.diagnostic not in diagnostics:
        diagnostics.append(load.guard.diagnostic)
    return EffectiveSettings(
        settings=settings,
        origins=dict(load.origins),
        config=load.config,
        guard=load.guard,
        diagnostics=tuple(diagnostics),
    )


def _describe_origin(origin: Origin) -> str:
    if origin.source is SettingSource.ENVIRONMENT:
        return f"environment {origin.where}"
    if origin.source is SettingSource.USER_CONFIG:
        return f"user config {origin.where}"
    return "default"


def render_table(effective: EffectiveSettings) -> str:
    """The settings as an aligned text table with the source of each value."""
    rows = [("setting", "value", "source", "from")]
    for setting in SETTINGS:
        origin = effective.origins[setting.name]
        rows.append(
            (
                setting.name,
                effective.display_value(setting.name),
                origin.source.value,
                origin.where or "",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = []
    config = effective.config
    state = "found" if config.found else "not found"
    lines.append(f"user config: {config.path} ({state})")
    lines.append("")
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(3)]
        lines.append("  ".join([*cells, row[3]]).rstrip())
    for diagnostic in effective.diagnostics:
        lines.append(f"warning: {diagnostic.message}")
    return "\n".join(lines)
