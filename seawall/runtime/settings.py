"""The one settings model of every Seawall process, and the one reader of its sources.

The worker, the gateway, ``seawall run``, ``seawall up``, ``seawall prompt`` and ``seawall
acp`` all call :func:`load_settings`; nothing else in the code base reads a ``SEAWALL_*``,
``OPENAI_*``, ``TEMPORAL_*`` or ``OTEL_*`` variable as a setting, or the user config
directory. Every value comes from, in order:

1. the process environment (the variables in :data:`SETTINGS`; a blank value counts as
   unset);
2. the operator's user config directory, ``$XDG_CONFIG_HOME/seawall/`` or
   ``~/.config/seawall/``: ``config.yaml`` (keys are the setting names) and, for the MCP
   server list only, ``mcp.json``;
3. the default.

Nothing else is ever read: not a project ``.env``, not ``.seawall/``, not ``.qwen/.env``,
not workspace settings, not a secrets directory, nothing relative to the working directory.
Whoever wrote a repository must not be able to switch the guard off, point the worker at
another server, make it spawn commands or read its keys. pydantic-settings' own ``.env``
and secrets sources are therefore disabled and replaced by the single layered source below,
which also records where each value came from (``environment`` | ``user_config`` |
``default``) for ``seawall config``.

A bad value is a :class:`SettingsError` naming the setting, its value (never a secret's)
and its source, e.g. ``SEAWALL_GATEWAY_PORT=abc (environment): not an integer``; every
entry point turns it into one line on stderr and exit code 2 (:func:`settings_or_exit`),
before it connects or listens. The guard mode is the one exception, with its operator
semantics kept: missing means ``shadow``, and an invalid value means ``shadow`` plus one
diagnostic (it does not fall through to the user config); the worker resolves it once per
session (:func:`resolve_guard_mode`) and never fails a prompt over it. The rollout policy
(``guard_rollout``) is a startup error like any bad value, but the worker too re-reads it per
session without ever failing one (:func:`resolve_rollout_settings`).

docs/settings.md lists every setting; ``seawall config`` prints their effective values.
"""

from __future__ import annotations

import contextvars
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import yaml
from pydantic import (
    Field,
    SecretStr,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic.config import JsonDict
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from seawall.runtime.storage import DEFAULT_THRESHOLD_BYTES, PayloadStorageKind, storage_dir
from workflows.activity_io import SettingSource
from workflows.conversation import DEFAULT_CONTEXT_BUDGET_CHARS, MIN_CONTEXT_BUDGET_CHARS
from workflows.guard import GuardMode, parse_guard_mode
from workflows.prompt_options import DEFAULT_PERMISSION_TIMEOUT_SECONDS, ApprovalMode
from workflows.rollout import (
    MAX_ENFORCE_PERCENT,
    RolloutPolicies,
    RolloutPolicyError,
    label_value,
    parse_rollout_policy,
)
from workflows.rules import (
    DEFAULT_LOOP_PROFILE,
    LoopProfile,
    LoopRule,
    LoopSettings,
    parse_loop_profile,
    rule_spec,
)
from workflows.session_io import MAX_PROMPT_CHARS

CONFIG_DIR_NAME = "seawall"
CONFIG_FILE_NAME = "config.yaml"
MCP_FILE_NAME = "mcp.json"

GUARD_MODE_ENV = "SEAWALL_REPEATED_TOOL_FAILURE_GUARD"
# The seed's name, accepted so an existing deployment keeps its setting.
GUARD_MODE_ENV_ALIAS = "QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD"
GUARD_MODE_CONFIG_KEY = "repeated_tool_failure_guard"
DEFAULT_GUARD_MODE = GuardMode.SHADOW

# The loop profile and the recommended profile's per-rule modes (docs/architecture.md, "Loop
# profiles"): operator policy like the guard mode, read by the operator-settings activity.
LOOP_PROFILE_CONFIG_KEY = "loop_profile"
LOOP_PROFILE_ENV = "SEAWALL_LOOP_PROFILE"
# Setting (also its config key) -> (its variable, the LoopSettings field it sets), from the
# rule table (workflows/rules/registry.py), in its catalogue order. Unset: the rule runs in
# the guard's mode. The fields below spell each one out; tests/workflows/test_rule_registry.py
# checks there is one per rule.
RULE_MODE_SETTINGS: Mapping[str, tuple[str, str]] = {
    rule_spec(rule).setting: (rule_spec(rule).env, rule_spec(rule).mode_field) for rule in LoopRule
}

LogFormat = Literal["json", "console"]
LOG_FORMATS: tuple[LogFormat, ...] = ("json", "console")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

# Exit code of a process that refuses to start over a bad setting (as for a usage error).
EXIT_BAD_SETTINGS = 2

# The processes that read settings, as docs/settings.md and ``seawall config --json`` name them.
WORKER = "worker"
GATEWAY = "gateway"
RUN = "seawall run"
UP = "seawall up"
PROMPT = "seawall prompt"
ACP = "seawall acp"
ROLLOUT = "seawall rollout"
STORAGE = "seawall storage"
# Every process that is a Temporal client: each reads the Temporal access settings.
TEMPORAL_CLIENTS = (WORKER, GATEWAY, RUN, ACP, ROLLOUT, STORAGE)


@dataclass(frozen=True)
class Setting:
    """One setting: its field name (also its ``config.yaml`` key), its variables, the file
    of the user config directory that may set it (``None``: only the environment may) and
    the processes that read it."""

    name: str
    env: tuple[str, ...]
    help: str
    read_by: tuple[str, ...]
    secret: bool = False
    config_file: str | None = CONFIG_FILE_NAME


def setting(
    default: Any,
    help: str,
    *,
    env: str | tuple[str, ...],
    read_by: tuple[str, ...],
    secret: bool = False,
    config_file: str | None = CONFIG_FILE_NAME,
    **constraints: Any,
) -> Any:
    """A field of :class:`SeawallSettings` with what docs/settings.md and ``seawall
    config`` say about it: its variables, which user config file may set it (``None``:
    only the environment may), and the processes that read it."""
    names = (env,) if isinstance(env, str) else env
    extra: JsonDict = {
        "env": list(names),
        "read_by": list(read_by),
        "secret": secret,
        "config_file": config_file,
    }
    return Field(default, description=help, json_schema_extra=extra, **constraints)


class SettingsError(ValueError):
    """A setting has an unusable value. The message names each bad setting, its value
    (never a secret's) and where the value came from."""


@dataclass(frozen=True)
class Diagnostic:
    """Why a configured value was not used, for one operator log line."""

    event: str
    source: str
    message: str
    value: str | None = None


@dataclass(frozen=True)
class Origin:
    """Where a value came from: the source and, for the environment, the variable; for the
    user config, the file and key."""

    source: SettingSource
    where: str | None = None


@dataclass(frozen=True)
class GuardModeResolution:
    """The guard mode, where it came from, and why a configured value was rejected."""

    mode: GuardMode
    source: SettingSource
    diagnostic: Diagnostic | None = None
    where: str | None = None


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


def _from_environment(setting: Setting, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """``(variable, value)`` of the first non-blank variable of ``setting``."""
    for name in setting.env:
        value = environ.get(name, "")
        if value.strip():
            return name, value
    return None


# --- the guard mode: resolved on its own, never an error ----------------------------------


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


def _resolve_guard_mode(environ: Mapping[str, str], config: UserConfig) -> GuardModeResolution:
    setting = SETTINGS_BY_NAME[GUARD_MODE_CONFIG_KEY]
    found = _from_environment(setting, environ)
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


def resolve_guard_mode(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> GuardModeResolution:
    """The guard mode from ``environ`` (default: this process's environment) and the user
    config file (default: found through ``environ``), with its source and, when a value
    was rejected, why.

    Order: ``SEAWALL_REPEATED_TOOL_FAILURE_GUARD``, its alias, the user config file, then
    ``shadow``. The first non-blank value decides; an invalid one (or an unreadable config
    file) means ``shadow``, it does not fall through to a lower-priority source. Only the
    guard's own sources are read, so an unrelated bad setting cannot change the mode, and
    nothing here raises: the worker calls this once per session.
    """
    env = os.environ if environ is None else environ
    path = user_config_path(env) if config_path is None else config_path
    return _resolve_guard_mode(env, UserConfig.read(path))


# --- the loop profile: resolved like the guard mode, never an error --------------------------


@dataclass(frozen=True)
class LoopSettingsResolution:
    settings: LoopSettings
    diagnostics: tuple[Diagnostic, ...] = ()


def _loop_value(
    key: str, variable: str, environ: Mapping[str, str], config: UserConfig
) -> tuple[str, str] | None:
    """``(value, where)`` of one loop setting: its variable, else its user config key."""
    value = environ.get(variable, "")
    if value.strip():
        return value, f"environment {variable}"
    if config.problem is not None:
        return None
    configured = config.get(key)
    if configured is None:
        return None
    if configured is False:
        configured = GuardMode.OFF.value  # YAML 1.1 reads a bare ``off`` as false
    return str(configured), f"user config {config.where(key)}"


def _resolve_loop_settings(
    environ: Mapping[str, str], config: UserConfig
) -> LoopSettingsResolution:
    diagnostics: list[Diagnostic] = []
    profile = DEFAULT_LOOP_PROFILE
    found = _loop_value(LOOP_PROFILE_CONFIG_KEY, LOOP_PROFILE_ENV, environ, config)
    if found is not None:
        value, where = found
        parsed = parse_loop_profile(value)
        if parsed is None:
            allowed = ", ".join(p.value for p in LoopProfile)
            diagnostics.append(
                Diagnostic(
                    event="invalid_loop_profile",
                    source=where,
                    value=value,
                    message=f"{where}: invalid loop profile {value[:100]!r} (expected one "
                    f"of: {allowed}); using {DEFAULT_LOOP_PROFILE.value}",
                )
            )
        else:
            profile = parsed
    modes: dict[str, GuardMode] = {}
    for key, (variable, field_name) in RULE_MODE_SETTINGS.items():
        found = _loop_value(key, variable, environ, config)
        if found is None:
            continue
        value, where = found
        mode = parse_guard_mode(value)
        if mode is None:
            allowed = ", ".join(m.value for m in GuardMode)
            diagnostics.append(
                Diagnostic(
                    event="invalid_rule_mode",
                    source=where,
                    value=value,
                    message=f"{where}: invalid rule mode {value[:100]!r} (expected one of: "
                    f"{allowed}); the rule runs in the guard's mode",
                )
            )
            continue
        modes[field_name] = mode
    return LoopSettingsResolution(
        LoopSettings.model_validate({"profile": profile, **modes}), tuple(diagnostics)
    )


def resolve_loop_settings(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> LoopSettingsResolution:
    """The loop profile and per-rule modes from ``environ`` (default: this process's
    environment) and the user config file (default: found through ``environ``).

    Each comes from its variable, else its user config key, else the default (the
    ``recommended`` profile; every rule in the guard's mode). Like the guard mode, nothing
    here raises: an invalid value means the default plus one diagnostic, since the worker
    calls this once per session (a bad value at startup is the settings model's error).
    """
    env = os.environ if environ is None else environ
    path = user_config_path(env) if config_path is None else config_path
    return _resolve_loop_settings(env, UserConfig.read(path))


# --- the context budget: resolved with the guard mode, never an error ---------------------


def _session_setting(
    name: str, environ: Mapping[str, str] | None, config_path: Path | None
) -> tuple[str, str] | None:
    """The raw value of the setting ``name`` as the worker reads it at a session's start
    (its variable, else the user config key, a config file that stopped parsing counting as
    unset) and where it came from; ``None`` when neither sets it."""
    env = os.environ if environ is None else environ
    setting = SETTINGS_BY_NAME[name]
    found = _from_environment(setting, env)
    if found is not None:
        return found[1], f"environment {found[0]}"
    config = UserConfig.read(user_config_path(env) if config_path is None else config_path)
    configured = config.get(setting.name) if config.problem is None else None
    if configured is None:
        return None
    return str(configured), f"user config {config.where(setting.name)}"


@dataclass(frozen=True)
class ContextBudgetResolution:
    chars: int
    diagnostic: Diagnostic | None = None


def resolve_context_budget(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> ContextBudgetResolution:
    """The operator's context budget (docs/architecture.md, "The context policy") from
    ``SEAWALL_CONTEXT_BUDGET_CHARS``, else the user config key ``context_budget_chars``, else
    the default. Read with the guard mode, once per session; like it, nothing here raises: a
    value that stopped validating since the worker started means the default plus one
    diagnostic (a bad value at startup is the settings model's error)."""
    found = _session_setting("context_budget_chars", environ, config_path)
    if found is None:
        return ContextBudgetResolution(DEFAULT_CONTEXT_BUDGET_CHARS)
    value, where = found
    try:
        chars = int(value.strip())
    except ValueError:
        chars = 0
    if chars < MIN_CONTEXT_BUDGET_CHARS:
        return ContextBudgetResolution(
            DEFAULT_CONTEXT_BUDGET_CHARS,
            Diagnostic(
                event="invalid_context_budget",
                source=where,
                value=value,
                message=f"{where}: invalid context budget {value[:100]!r} (expected a whole "
                f"number of characters, at least {MIN_CONTEXT_BUDGET_CHARS}); using "
                f"{DEFAULT_CONTEXT_BUDGET_CHARS}",
            ),
        )
    return ContextBudgetResolution(chars)


# --- activity summaries: resolved with the guard mode, never an error -----------------------

_YES_OR_NO = TypeAdapter(bool)


def session_bool(text: str) -> bool | None:
    """``text`` read as a yes or a no at a session's start, exactly as the settings model
    read it at startup (pydantic's words, any case: 1/0, true/false, t/f, yes/no, y/n,
    on/off), so a value that passed startup means the same thing later; an empty value is
    no. ``None`` for anything else. (``activity_summaries`` and
    ``guard_rollout_allow_wide_enforce``.)"""
    word = text.strip()
    if not word:
        return False
    try:
        return _YES_OR_NO.validate_python(word)
    except ValidationError:
        return None


@dataclass(frozen=True)
class ActivitySummariesResolution:
    enabled: bool
    diagnostic: Diagnostic | None = None


def resolve_activity_summaries(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> ActivitySummariesResolution:
    """Whether prompts name their activities in the Temporal UI (docs/settings.md,
    ``activity_summaries``), from ``SEAWALL_ACTIVITY_SUMMARIES``, else the user config key,
    else off. Read with the guard mode, once per session; a value that stopped validating
    since the worker started means off plus one diagnostic."""
    found = _session_setting("activity_summaries", environ, config_path)
    if found is None:
        return ActivitySummariesResolution(False)
    value, where = found
    enabled = session_bool(value)
    if enabled is not None:
        return ActivitySummariesResolution(enabled)
    return ActivitySummariesResolution(
        False,
        Diagnostic(
            event="invalid_activity_summaries",
            source=where,
            value=value,
            message=f"{where}: invalid activity_summaries {value[:100]!r} (expected true or "
            "false); summaries stay off",
        ),
    )


# --- owners and the rollout policy (docs/architecture.md, "Rollout cohorts") ----------------

# The dev server's UI as a browser opens it (seawall up's default ui_port).
DEFAULT_CODEC_UI_ORIGINS = "http://localhost:8233,http://127.0.0.1:8233"
# An owner id: an operator-given name, never a secret, kept out of logs, labels and search
# attributes all the same.
OWNER_ID = re.compile(r"^[A-Za-z0-9._@:-]{1,128}$")
MIN_TOKEN_CHARS = 16


def read_owner_tokens(path: Path) -> dict[str, str]:
    """The gateway's tokens file: a YAML mapping of owner id to a token or a list of tokens.
    Returns token -> owner id. Raises ValueError naming the problem (never a token)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot be read ({type(exc).__name__})") from None
    except yaml.YAMLError:
        raise ValueError(f"{path}: is not valid YAML") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{path}: must be a non-empty mapping of owner id to token(s)")
    tokens: dict[str, str] = {}
    for owner, given in data.items():
        owner = str(owner)
        if not OWNER_ID.match(owner):
            raise ValueError(
                f"{path}: owner id {owner[:40]!r} is not 1-128 of A-Z a-z 0-9 . _ @ : -"
            )
        listed = given if isinstance(given, list) else [given]
        if not listed:
            raise ValueError(f"{path}: owner {owner} has no token")
        for token in listed:
            if not isinstance(token, str) or len(token.strip()) < MIN_TOKEN_CHARS:
                raise ValueError(
                    f"{path}: a token of owner {owner} is shorter than {MIN_TOKEN_CHARS} characters"
                )
            if token.strip() in tokens:
                raise ValueError(f"{path}: a token of owner {owner} is also another owner's")
            tokens[token.strip()] = owner
    return tokens


def _resource_value(explicit: Any, resource_attributes: Any, key: str) -> str | None:
    """An OpenTelemetry resource value: the explicit setting, else ``key`` in
    ``otel_resource_attributes``; only a short token (it becomes a search attribute)."""
    if isinstance(explicit, str) and explicit.strip():
        return label_value(explicit.strip())
    for pair in str(resource_attributes or "").split(","):
        name, _, value = pair.partition("=")
        if name.strip() == key and value.strip():
            return label_value(value.strip())
    return None


def _environment_of(explicit: Any, resource_attributes: Any) -> str | None:
    return _resource_value(explicit, resource_attributes, "deployment.environment")


def _version_of(explicit: Any, resource_attributes: Any) -> str | None:
    return _resource_value(explicit, resource_attributes, "service.version")


@dataclass(frozen=True)
class RolloutSettings:
    """What the operator-settings activity needs to assign a session's cohort."""

    policies: RolloutPolicies | None = None
    salt: str = ""
    pinned_version: str | None = None
    environment: str | None = None
    service_version: str | None = None
    diagnostic: Diagnostic | None = None


def check_rollout(
    text: str, *, salt: str | None, environment: str | None, allow_wide_enforce: bool
) -> RolloutPolicies:
    """The parsed ``guard_rollout`` policy, or ValueError saying what is wrong with it or
    with what it needs (a salt, a deployment environment, the override above 5 %)."""
    try:
        policies = parse_rollout_policy(text)
    except RolloutPolicyError as err:
        raise ValueError(f"invalid rollout policy: {err}") from None
    if not salt:
        raise ValueError("needs SEAWALL_GUARD_ROLLOUT_SALT (the owner hash's salt)")
    if environment is None:
        raise ValueError(
            "needs a deployment environment (SEAWALL_DEPLOYMENT_ENVIRONMENT, a short name): "
            "the seed's rollout advances per environment"
        )
    widest = policies.max_enforce_percent()
    if widest > MAX_ENFORCE_PERCENT and not allow_wide_enforce:
        raise ValueError(
            f"enforces for {widest}% of owners; more than {MAX_ENFORCE_PERCENT}% needs "
            "SEAWALL_GUARD_ROLLOUT_ALLOW_WIDE_ENFORCE=true"
        )
    return policies


def resolve_rollout_settings(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> RolloutSettings:
    """The rollout policy, salt, pinned version, environment and version, read at each
    session start from their own sources only (like the guard mode, so an unrelated bad
    setting cannot change a cohort). Never raises: a policy that stopped validating since
    the worker started means no policy (the guard-mode setting applies) plus one diagnostic.
    """
    env = os.environ if environ is None else environ
    path = user_config_path(env) if config_path is None else config_path
    config = UserConfig.read(path)

    def value(name: str) -> str | None:
        found = _from_environment(SETTINGS_BY_NAME[name], env)
        if found is not None:
            return found[1].strip()
        configured = config.get(name) if config.problem is None else None
        return None if configured is None else str(configured).strip()

    attributes = value("otel_resource_attributes")
    environment = _environment_of(value("deployment_environment"), attributes)
    version = _version_of(value("service_version"), attributes)
    plain = RolloutSettings(environment=environment, service_version=version)
    text = value("guard_rollout")
    if text is None:
        return plain
    salt = value("guard_rollout_salt")
    wide = session_bool(value("guard_rollout_allow_wide_enforce") or "") is True
    try:
        policies = check_rollout(text, salt=salt, environment=environment, allow_wide_enforce=wide)
    except ValueError as err:
        where = "guard_rollout"
        return RolloutSettings(
            environment=environment,
            service_version=version,
            diagnostic=Diagnostic(
                event="invalid_guard_rollout",
                source=where,
                value=text,
                message=f"{where}: {err}; no rollout policy applies",
            ),
        )
    return RolloutSettings(
        policies=policies,
        salt=salt or "",
        pinned_version=value("guard_rollout_version"),
        environment=environment,
        service_version=version,
    )


def local_owner_id(settings: SeawallSettings, environ: Mapping[str, str] | None = None) -> str:
    """The owner of a local client's sessions (``seawall acp``): the ``owner_id`` setting,
    else ``local:<user name>`` of this process."""
    if settings.owner_id:
        return settings.owner_id
    env = os.environ if environ is None else environ
    user = env.get("USER") or env.get("LOGNAME") or ""
    if not user:
        import getpass

        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = "unknown"
    name = re.sub(r"[^A-Za-z0-9._@-]", "_", user)[:120] or "unknown"
    return f"local:{name}"


# --- the typed model ----------------------------------------------------------------------


@dataclass
class _Load:
    """What one construction of :class:`SeawallSettings` reads, and what it found."""

    environ: Mapping[str, str]
    config: UserConfig
    mcp: UserConfig
    origins: dict[str, Origin] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    guard: GuardModeResolution | None = None

    @classmethod
    def of(cls, environ: Mapping[str, str], config_path: Path | None = None) -> _Load:
        path = user_config_path(environ) if config_path is None else config_path
        return cls(
            environ=environ,
            config=UserConfig.read(path),
            mcp=UserConfig.read_json(path.with_name(MCP_FILE_NAME)),
        )


_CURRENT_LOAD: contextvars.ContextVar[_Load | None] = contextvars.ContextVar(
    "seawall_settings_load", default=None
)


class _OperatorSource(PydanticBaseSettingsSource):
    """Process environment over the user config directory, recording each value's origin."""

    def __init__(self, settings_cls: type[BaseSettings], load: _Load) -> None:
        super().__init__(settings_cls)
        self._load = load

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        # Unused: __call__ resolves every field itself.
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        load = self._load
        for setting in SETTINGS:
            if setting.name == GUARD_MODE_CONFIG_KEY:
                load.guard = _resolve_guard_mode(load.environ, load.config)
                load.raw[setting.name] = load.guard.mode
                load.origins[setting.name] = Origin(load.guard.source, load.guard.where)
                continue
            found = _from_environment(setting, load.environ)
            if found is not None:
                name, value = found
                load.raw[setting.name] = value
                load.origins[setting.name] = Origin(SettingSource.ENVIRONMENT, name)
                continue
            if setting.config_file == CONFIG_FILE_NAME:
                configured = load.config.get(setting.name)
                if configured is not None:
                    load.raw[setting.name] = configured
                    load.origins[setting.name] = Origin(
                        SettingSource.USER_CONFIG, load.config.where(setting.name)
                    )
                    continue
            if setting.config_file == MCP_FILE_NAME and load.mcp.found and load.mcp.problem is None:
                load.raw[setting.name] = load.mcp.document
                load.origins[setting.name] = Origin(SettingSource.USER_CONFIG, str(load.mcp.path))
                continue
            load.origins[setting.name] = Origin(SettingSource.DEFAULT)
        return dict(load.raw)


class SeawallSettings(BaseSettings):
    """The effective settings. Build it with :func:`load_settings` (which also says where
    each value came from); docs/settings.md describes every field."""

    model_config = SettingsConfigDict(
        env_file=None,
        secrets_dir=None,
        extra="ignore",
        frozen=True,
        str_strip_whitespace=True,
        coerce_numbers_to_str=True,
        allow_inf_nan=False,
    )

    # --- Temporal ---------------------------------------------------------------------------
    temporal_address: str = setting(
        "localhost:7233",
        "Temporal frontend host:port (seawall run: when unset, an embedded dev server)",
        env="TEMPORAL_ADDRESS",
        read_by=(WORKER, GATEWAY, RUN, ACP),
        min_length=1,
    )
    temporal_namespace: str = setting(
        "default",
        "Temporal namespace",
        env="TEMPORAL_NAMESPACE",
        read_by=(WORKER, GATEWAY, RUN, UP, ACP),
        min_length=1,
    )
    task_queue: str = setting(
        "seawall",
        "task queue of the prompt and session workflows",
        env="SEAWALL_TASK_QUEUE",
        read_by=(WORKER, GATEWAY, RUN, UP, ACP),
        min_length=1,
    )
    connect_timeout_seconds: float = setting(
        300.0,
        "how long the worker and the gateway wait, retrying with backoff, for the Temporal "
        "server at start-up (0: for ever)",
        env="SEAWALL_CONNECT_TIMEOUT_SECONDS",
        read_by=(WORKER, GATEWAY),
        ge=0,
    )
    # --- Temporal access: TLS, mTLS, API keys (docs/settings.md, "Temporal access") ---------
    # The variables are the Temporal SDKs' own environment configuration; the profile file
    # is theirs too (temporalio.envconfig). seawall/runtime/temporal_connect.py builds every
    # client's connect arguments from these, over the profile, over the defaults above.
    temporal_profile: str | None = setting(
        None,
        "profile of the Temporal config file to use (unset: its 'default' profile, if any)",
        env="TEMPORAL_PROFILE",
        read_by=TEMPORAL_CLIENTS,
        min_length=1,
    )
    temporal_config_file: Path | None = setting(
        None,
        "Temporal client config file (TOML profiles; unset: "
        "$XDG_CONFIG_HOME/temporalio/temporal.toml or ~/.config/temporalio/temporal.toml "
        "when it exists)",
        env="TEMPORAL_CONFIG_FILE",
        read_by=TEMPORAL_CLIENTS,
    )
    temporal_api_key: SecretStr | None = setting(
        None,
        "API key sent to the Temporal frontend (Temporal Cloud); turns TLS on",
        env="TEMPORAL_API_KEY",
        read_by=TEMPORAL_CLIENTS,
        secret=True,
    )
    temporal_tls: bool | None = setting(
        None,
        "TLS to the Temporal frontend: true | false (unset: on when an API key or a TLS file "
        "is set)",
        env="TEMPORAL_TLS",
        read_by=TEMPORAL_CLIENTS,
    )
    temporal_tls_server_ca_cert_path: Path | None = setting(
        None,
        "PEM file of the CA that signed the frontend's certificate (unset: system roots)",
        env="TEMPORAL_TLS_SERVER_CA_CERT_PATH",
        read_by=TEMPORAL_CLIENTS,
    )
    temporal_tls_server_ca_cert_data: SecretStr | None = setting(
        None,
        "the same CA certificate as PEM text (environment only)",
        env="TEMPORAL_TLS_SERVER_CA_CERT_DATA",
        read_by=TEMPORAL_CLIENTS,
        secret=True,
        config_file=None,
    )
    temporal_tls_client_cert_path: Path | None = setting(
        None,
        "PEM file of this client's certificate, for mTLS (with the client key)",
        env="TEMPORAL_TLS_CLIENT_CERT_PATH",
        read_by=TEMPORAL_CLIENTS,
    )
    temporal_tls_client_cert_data: SecretStr | None = setting(
        None,
        "the client certificate as PEM text (environment only)",
        env="TEMPORAL_TLS_CLIENT_CERT_DATA",
        read_by=TEMPORAL_CLIENTS,
        secret=True,
        config_file=None,
    )
    temporal_tls_client_key_path: Path | None = setting(
        None,
        "PEM file of this client's private key, for mTLS (with the client certificate)",
        env="TEMPORAL_TLS_CLIENT_KEY_PATH",
        read_by=TEMPORAL_CLIENTS,
    )
    temporal_tls_client_key_data: SecretStr | None = setting(
        None,
        "the client private key as PEM text (environment only)",
        env="TEMPORAL_TLS_CLIENT_KEY_DATA",
        read_by=TEMPORAL_CLIENTS,
        secret=True,
        config_file=None,
    )
    temporal_tls_server_name: str | None = setting(
        None,
        "name the frontend's certificate must carry, when it is not the address's host (SNI)",
        env="TEMPORAL_TLS_SERVER_NAME",
        read_by=TEMPORAL_CLIENTS,
        min_length=1,
    )
    # --- the guard and the worker -----------------------------------------------------------
    repeated_tool_failure_guard: GuardMode = setting(
        DEFAULT_GUARD_MODE,
        "repeated tool failure guard: off | shadow | warn | enforce (read once per session)",
        env=(GUARD_MODE_ENV, GUARD_MODE_ENV_ALIAS),
        read_by=(WORKER,),
    )
    loop_profile: LoopProfile = setting(
        DEFAULT_LOOP_PROFILE,
        "loop profile: recommended | seed (the seeds' rules verbatim; read once per session)",
        env=LOOP_PROFILE_ENV,
        read_by=(WORKER,),
    )
    failure_cycle_guard: GuardMode | None = setting(
        None,
        rule_spec(LoopRule.FAILURE_CYCLE).setting_help,
        env=rule_spec(LoopRule.FAILURE_CYCLE).env,
        read_by=(WORKER,),
    )
    identical_result_guard: GuardMode | None = setting(
        None,
        rule_spec(LoopRule.IDENTICAL_RESULT).setting_help,
        env=rule_spec(LoopRule.IDENTICAL_RESULT).env,
        read_by=(WORKER,),
    )
    denied_call_guard: GuardMode | None = setting(
        None,
        rule_spec(LoopRule.DENIED_CALL).setting_help,
        env=rule_spec(LoopRule.DENIED_CALL).env,
        read_by=(WORKER,),
    )
    context_budget_chars: int = setting(
        DEFAULT_CONTEXT_BUDGET_CHARS,
        "characters of the conversation one model request may carry, for prompts that set "
        "no budget of their own (read once per session)",
        env="SEAWALL_CONTEXT_BUDGET_CHARS",
        read_by=(WORKER,),
        ge=MIN_CONTEXT_BUDGET_CHARS,
    )
    activity_summaries: bool = setting(
        False,
        "name each model and tool activity in the Temporal UI (`read_file (batch 3)`); "
        "costs a payload per activity (read once per session)",
        env="SEAWALL_ACTIVITY_SUMMARIES",
        read_by=(WORKER,),
    )
    max_cached_workflows: int = setting(
        1000,
        "workflows a worker keeps in memory; 0 replays every workflow task from history",
        env="SEAWALL_MAX_CACHED_WORKFLOWS",
        read_by=(WORKER,),
        ge=0,
    )
    # --- the model endpoint -----------------------------------------------------------------
    openai_base_url: str | None = setting(
        None,
        "OpenAI-compatible endpoint (unset, and no key: the offline demo model)",
        env="OPENAI_BASE_URL",
        read_by=(WORKER,),
    )
    openai_api_key: SecretStr | None = setting(
        None, "model endpoint API key", env="OPENAI_API_KEY", read_by=(WORKER,), secret=True
    )
    model: str = setting(
        "gpt-4o-mini",
        "model name for the openai provider",
        env="SEAWALL_MODEL",
        read_by=(WORKER,),
        min_length=1,
    )
    model_temperature: float | None = setting(
        None,
        "sampling temperature, 0-2 (unset: the endpoint's default)",
        env="SEAWALL_MODEL_TEMPERATURE",
        read_by=(WORKER,),
        ge=0,
        le=2,
    )
    model_max_tokens: int | None = setting(
        None,
        "completion token limit (unset: the endpoint's default)",
        env="SEAWALL_MODEL_MAX_TOKENS",
        read_by=(WORKER,),
        gt=0,
    )
    # Below the model activity's five-minute start-to-close timeout, so the SDK's own
    # timeout (a retryable error) fires before Temporal's.
    model_timeout_seconds: float = setting(
        180.0,
        "timeout of one model request",
        env="SEAWALL_MODEL_TIMEOUT_SECONDS",
        read_by=(WORKER,),
        gt=0,
        le=3600,
    )
    # --- MCP tool servers -------------------------------------------------------------------
    # The JSON object of servers; activities.mcp checks each server.
    mcp_servers: dict[str, Any] | None = setting(
        None,
        "MCP servers, a JSON object (in the user config directory: mcp.json)",
        env="SEAWALL_MCP_SERVERS",
        read_by=(WORKER,),
        secret=True,
        config_file=MCP_FILE_NAME,
    )
    mcp_tool_timeout_seconds: float | None = setting(
        None,
        "timeout of one MCP tool call (the prompt's tool timeout still bounds it)",
        env="SEAWALL_MCP_TOOL_TIMEOUT_SECONDS",
        read_by=(WORKER,),
        gt=0,
    )
    mcp_connect_timeout_seconds: float = setting(
        20.0,
        "bound on starting an MCP server and listing its tools",
        env="SEAWALL_MCP_CONNECT_TIMEOUT_SECONDS",
        read_by=(WORKER,),
        gt=0,
    )
    mcp_stderr: Literal["discard", "inherit"] = setting(
        "discard",
        "a stdio MCP server's stderr: discard | inherit",
        env="SEAWALL_MCP_STDERR",
        read_by=(WORKER,),
    )
    # --- the sandbox of model-chosen processes (docs/security-sandbox.md) ------------------
    # Every shell command and stdio MCP server runs under bubblewrap with the session's
    # workspace as its only writable path (activities/sandbox/). ``none`` runs them bare:
    # only for single-user local use.
    sandbox: Literal["bwrap", "none"] = setting(
        "bwrap",
        "how shell commands and stdio MCP servers are confined: bwrap | none (bare, "
        "single-user local use only)",
        env="SEAWALL_SANDBOX",
        read_by=(WORKER,),
    )
    sandbox_network: Literal["off", "on"] = setting(
        "off",
        "network of sandboxed processes: off (none at all) | on (through slirp4netns; the "
        "host's loopback services stay unreachable)",
        env="SEAWALL_SANDBOX_NETWORK",
        read_by=(WORKER,),
    )
    sandbox_cpu_seconds: int = setting(
        600,
        "CPU time of one sandboxed process, in seconds (RLIMIT_CPU)",
        env="SEAWALL_SANDBOX_CPU_SECONDS",
        read_by=(WORKER,),
        ge=1,
        le=86400,
    )
    sandbox_memory_mb: int = setting(
        8192,
        "address space of one sandboxed process, in MiB (RLIMIT_AS)",
        env="SEAWALL_SANDBOX_MEMORY_MB",
        read_by=(WORKER,),
        ge=64,
        le=1048576,
    )
    sandbox_file_size_mb: int = setting(
        1024,
        "largest file a sandboxed process may write, in MiB (RLIMIT_FSIZE)",
        env="SEAWALL_SANDBOX_FILE_SIZE_MB",
        read_by=(WORKER,),
        ge=1,
        le=1048576,
    )
    sandbox_max_processes: int = setting(
        256,
        "processes (and threads) one sandbox may run at once (pids cgroup, else RLIMIT_NPROC)",
        env="SEAWALL_SANDBOX_MAX_PROCESSES",
        read_by=(WORKER,),
        ge=2,
        le=65536,
    )
    sandbox_env_passthrough: str = setting(
        "",
        "extra environment variables a sandboxed process inherits from the worker, "
        "comma-separated names (secrets are withheld all the same)",
        env="SEAWALL_SANDBOX_ENV_PASSTHROUGH",
        read_by=(WORKER,),
    )

    @field_validator("sandbox", "sandbox_network", mode="before")
    @classmethod
    def _sandbox_word(cls, value: Any) -> Any:
        if value is False:
            return "off"  # YAML 1.1 reads a bare ``off`` as false
        if value is True:
            return "on"
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("sandbox_env_passthrough")
    @classmethod
    def _env_names(cls, value: str) -> str:
        names = [n.strip() for n in value.split(",") if n.strip()]
        for name in names:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"{name[:40]!r} is not an environment variable name")
        return ",".join(names)

    # --- the gateway and its clients --------------------------------------------------------
    gateway_host: str = setting(
        "127.0.0.1",
        "address the gateway listens on",
        env="SEAWALL_GATEWAY_HOST",
        read_by=(GATEWAY, PROMPT),
        min_length=1,
    )
    gateway_port: int = setting(
        8000,
        "port the gateway listens on",
        env="SEAWALL_GATEWAY_PORT",
        read_by=(GATEWAY, UP, PROMPT),
        ge=0,
        le=65535,
    )
    gateway_token: SecretStr | None = setting(
        None,
        "gateway bearer token (environment only)",
        env="SEAWALL_GATEWAY_TOKEN",
        read_by=(GATEWAY, PROMPT),
        secret=True,
        config_file=None,
    )
    gateway_url: str | None = setting(
        None,
        "gateway base URL for seawall prompt (unset: from gateway_host and gateway_port)",
        env="SEAWALL_GATEWAY_URL",
        read_by=(PROMPT,),
    )
    workspaces: Path | None = setting(
        None,
        "directory of the sessions' workspaces (unset: <data_dir>/workspaces); the worker "
        "refuses a workspace outside it",
        env="SEAWALL_WORKSPACES",
        read_by=(GATEWAY, UP, WORKER),
    )
    # The session workflow takes no more than MAX_PROMPT_CHARS, so neither may the gateway.
    max_prompt_chars: int = setting(
        MAX_PROMPT_CHARS,
        "longest prompt the gateway accepts",
        env="SEAWALL_MAX_PROMPT_CHARS",
        read_by=(GATEWAY, ACP),
        ge=1,
        le=MAX_PROMPT_CHARS,
    )
    approval_mode: ApprovalMode = setting(
        ApprovalMode.DEFAULT,
        "default approval mode of a session: default | auto_edit | yolo",
        env="SEAWALL_APPROVAL_MODE",
        read_by=(GATEWAY, ACP),
    )
    permission_timeout_seconds: float = setting(
        DEFAULT_PERMISSION_TIMEOUT_SECONDS,
        "how long a permission request waits for an answer",
        env="SEAWALL_PERMISSION_TIMEOUT_SECONDS",
        read_by=(GATEWAY, ACP),
        gt=0,
    )
    # Off by default: a scripted session runs tools the client chose. The worker checks it
    # too (docs/security-trust.md): a workflow started directly on Temporal is no exception.
    allow_scripted_models: bool = setting(
        False,
        "let a client script its session's model and fixture tools (simulations, end-to-end "
        "tests); the worker refuses them without it",
        env="SEAWALL_ALLOW_SCRIPTED_MODELS",
        read_by=(GATEWAY, ACP, WORKER),
    )
    # docs/architecture.md, "Per-owner prompt limit": counted across every replica.
    max_concurrent_prompts_per_owner: int = setting(
        16,
        "prompts one owner of the tokens file may have running or queued at once, over all "
        "its sessions (0: no limit)",
        env="SEAWALL_MAX_CONCURRENT_PROMPTS_PER_OWNER",
        read_by=(GATEWAY,),
        ge=0,
        le=1000,
    )
    # --- per-owner quotas (docs/architecture.md, "Per-owner quotas") ------------------------
    # Counted, like the prompt limit, in the owner's admission workflow: across every replica.
    max_open_sessions_per_owner: int = setting(
        100,
        "sessions one owner of the tokens file may have open at once (0: no limit)",
        env="SEAWALL_MAX_OPEN_SESSIONS_PER_OWNER",
        read_by=(GATEWAY,),
        ge=0,
    )
    max_client_metadata_bytes: int = setting(
        16 * 1024,
        "largest client_metadata (as JSON, in bytes) a session may be created with; every "
        "prompt's input carries it again",
        env="SEAWALL_MAX_CLIENT_METADATA_BYTES",
        read_by=(GATEWAY,),
        ge=2,
        le=1024 * 1024,
    )
    max_stored_bytes_per_owner: int = setting(
        128 * 1024 * 1024,
        "bytes of prompt and input texts and client_metadata one owner's open sessions may "
        "hold, the metadata counted at the start and again with every prompt (0: no limit)",
        env="SEAWALL_MAX_STORED_BYTES_PER_OWNER",
        read_by=(GATEWAY,),
        ge=0,
    )
    # --- seawall up -------------------------------------------------------------------------
    data_dir: Path = setting(
        Path(".data"),
        "the dev server's database, logs, workspaces and stored payloads (seawall acp "
        "--embedded, when unset: $XDG_DATA_HOME/seawall)",
        env="SEAWALL_DATA_DIR",
        read_by=(UP, GATEWAY, WORKER, RUN, ACP),
    )
    stack_host: str = setting(
        "127.0.0.1",
        "address seawall up binds its servers to",
        env="SEAWALL_HOST",
        read_by=(UP,),
        min_length=1,
    )
    temporal_port: int = setting(
        7233,
        "seawall up's Temporal port",
        env="SEAWALL_TEMPORAL_PORT",
        read_by=(UP,),
        ge=1,
        le=65535,
    )
    ui_port: int = setting(
        8233, "seawall up's Temporal UI port", env="SEAWALL_UI_PORT", read_by=(UP,), ge=1, le=65535
    )
    # --- logs, metrics, tracing -------------------------------------------------------------
    log_format: LogFormat = setting(
        "json", "json | console", env="SEAWALL_LOG_FORMAT", read_by=(WORKER, GATEWAY, RUN, ACP)
    )
    log_level: str = setting(
        "INFO",
        "DEBUG | INFO | WARNING | ERROR | CRITICAL (seawall run: WARNING when unset)",
        env="SEAWALL_LOG_LEVEL",
        read_by=(WORKER, GATEWAY, RUN, ACP),
    )
    metrics_host: str = setting(
        "127.0.0.1", "Prometheus endpoint address", env="SEAWALL_METRICS_HOST", read_by=(WORKER,)
    )
    metrics_port: int | None = setting(
        None,
        "Prometheus endpoint port (unset: no endpoint)",
        env="SEAWALL_METRICS_PORT",
        read_by=(WORKER,),
        ge=0,
        le=65535,
    )
    otlp_endpoint: str | None = setting(
        None,
        "OTLP collector for metrics and spans",
        env="SEAWALL_OTLP_ENDPOINT",
        read_by=(WORKER,),
    )
    otel_tracing: bool = setting(
        False,
        "Temporal's OpenTelemetry tracing interceptor",
        env="SEAWALL_OTEL_TRACING",
        read_by=(WORKER,),
    )
    otel_resource_attributes: str | None = setting(
        None,
        "deployment.environment=…,service.version=… (metric and span attributes)",
        env="OTEL_RESOURCE_ATTRIBUTES",
        read_by=(WORKER,),
    )
    deployment_environment: str | None = setting(
        None,
        "deployment.environment (overrides OTEL_RESOURCE_ATTRIBUTES)",
        env="SEAWALL_DEPLOYMENT_ENVIRONMENT",
        read_by=(WORKER,),
    )
    service_version: str | None = setting(
        None,
        "service.version (overrides OTEL_RESOURCE_ATTRIBUTES)",
        env="SEAWALL_SERVICE_VERSION",
        read_by=(WORKER,),
    )

    # --- rollout: owners and cohorts (docs/architecture.md, "Rollout cohorts") -------------
    gateway_tokens_file: Path | None = setting(
        None,
        "YAML file of owner ids and their gateway bearer tokens (several owners)",
        env="SEAWALL_GATEWAY_TOKENS_FILE",
        read_by=(GATEWAY,),
    )
    owner_id: str | None = setting(
        None,
        "owner id of a local client's sessions (unset: local:<user name>)",
        env="SEAWALL_OWNER_ID",
        read_by=(ACP,),
    )
    guard_rollout_salt: str | None = setting(
        None,
        "salt of the owner hash that assigns rollout cohorts (required with guard_rollout)",
        env="SEAWALL_GUARD_ROLLOUT_SALT",
        read_by=(WORKER,),
    )
    guard_rollout_version: str | None = setting(
        None,
        "service version the rollout policy is pinned to (other versions: the guard mode)",
        env="SEAWALL_GUARD_ROLLOUT_VERSION",
        read_by=(WORKER,),
    )
    guard_rollout_allow_wide_enforce: bool = setting(
        False,
        "allow a rollout policy to enforce for more than 5% of owners",
        env="SEAWALL_GUARD_ROLLOUT_ALLOW_WIDE_ENFORCE",
        read_by=(WORKER,),
    )
    # Last: its validator checks the fields above (and the deployment environment).
    guard_rollout: str | None = setting(
        None,
        "rollout policy, e.g. enforce:5%,warn:rest or internal=enforce:5%,warn:rest;public=…",
        env="SEAWALL_GUARD_ROLLOUT",
        read_by=(WORKER,),
    )

    # --- payload storage (docs/architecture.md, "Long prompts") --------------------------
    payload_storage: PayloadStorageKind = setting(
        "filesystem",
        "filesystem | s3 | off: where payloads past the threshold live",
        env="SEAWALL_PAYLOAD_STORAGE",
        read_by=(WORKER, GATEWAY, RUN, ACP),
    )
    payload_storage_threshold_bytes: int = setting(
        DEFAULT_THRESHOLD_BYTES,
        "payloads of at least this many bytes are stored outside Temporal's history",
        env="SEAWALL_PAYLOAD_STORAGE_THRESHOLD_BYTES",
        read_by=(WORKER, GATEWAY, RUN, ACP),
        ge=0,
        le=2_000_000,
    )
    payload_storage_dir: Path | None = setting(
        None,
        "the filesystem store's directory (unset: <data_dir>/payloads)",
        env="SEAWALL_PAYLOAD_STORAGE_DIR",
        read_by=(WORKER, GATEWAY, RUN, ACP),
    )
    payload_storage_bucket: str | None = setting(
        None,
        "the s3 store's bucket (required with payload_storage=s3)",
        env="SEAWALL_PAYLOAD_STORAGE_BUCKET",
        read_by=(WORKER, GATEWAY, RUN, ACP),
        validate_default=True,
    )
    payload_storage_s3_endpoint: str | None = setting(
        None,
        "S3-compatible endpoint URL, e.g. MinIO's (unset: AWS)",
        env="SEAWALL_PAYLOAD_STORAGE_S3_ENDPOINT",
        read_by=(WORKER, GATEWAY, RUN, ACP),
    )
    payload_storage_s3_region: str | None = setting(
        None,
        "the bucket's region (unset: the AWS SDK's default chain)",
        env="SEAWALL_PAYLOAD_STORAGE_S3_REGION",
        read_by=(WORKER, GATEWAY, RUN, ACP),
    )

    # --- session grants and trusted roots (docs/security-trust.md) -------------------------
    # The starters (gateway, seawall acp, seawall run) sign a session's start with it; the
    # worker refuses a fresh session or root prompt whose grant does not verify. Unset: the
    # key file <data_dir>/session-signing.key (created 0600 by whichever process needs it
    # first), so processes sharing a data directory share the key.
    session_signing_key: SecretStr | None = setting(
        None,
        "HMAC key the gateway and seawall acp sign session starts with and the worker "
        "verifies (environment only; unset: <data_dir>/session-signing.key, made when missing)",
        env="SEAWALL_SESSION_SIGNING_KEY",
        read_by=(WORKER, GATEWAY, UP, RUN, ACP),
        secret=True,
        config_file=None,
        min_length=32,
    )
    session_signing_previous_key: SecretStr | None = setting(
        None,
        "the key before session_signing_key, still accepted by the worker while starters "
        "rotate (environment only)",
        env="SEAWALL_SESSION_SIGNING_PREVIOUS_KEY",
        read_by=(WORKER,),
        secret=True,
        config_file=None,
        min_length=32,
    )
    editor_workspaces: Path | None = setting(
        None,
        "directory holding the folders editors open through seawall acp; the worker also "
        "accepts workspaces under it (unset: seawall acp --embedded, the home directory; "
        "other workers, none)",
        env="SEAWALL_EDITOR_WORKSPACES",
        read_by=(WORKER, ACP),
    )

    # The Temporal UI's codec endpoint (gateway/codec.py; README, "Long prompts and stored
    # payloads"): the credential in its URL and the origins its browser calls come from.
    codec_token: SecretStr | None = setting(
        None,
        "credential of the Temporal UI's codec endpoint, <gateway>/codec/ui/<token> (decode "
        "only; environment only; seawall up makes one when unset)",
        env="SEAWALL_CODEC_TOKEN",
        read_by=(GATEWAY, UP),
        secret=True,
        config_file=None,
    )
    codec_ui_origins: str = setting(
        DEFAULT_CODEC_UI_ORIGINS,
        "origins of the Temporal UI allowed to call the codec endpoint, comma-separated",
        env="SEAWALL_CODEC_UI_ORIGINS",
        read_by=(GATEWAY,),
    )

    @field_validator("codec_ui_origins")
    @classmethod
    def _origins(cls, value: str) -> str:
        origins = [o.strip().rstrip("/") for o in value.split(",") if o.strip()]
        for origin in origins:
            parts = urlsplit(origin)
            if parts.scheme not in {"http", "https"} or not parts.hostname or parts.path:
                raise ValueError(f"{origin!r} is not an origin like http://localhost:8080")
        return ",".join(origins)

    @field_validator("payload_storage", mode="before")
    @classmethod
    def _storage_kind(cls, value: Any) -> Any:
        if value is False:
            return "off"  # YAML 1.1 reads a bare ``off`` as false
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("payload_storage_bucket")
    @classmethod
    def _bucket_with_s3(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("payload_storage") == "s3":
            raise ValueError("required when payload_storage is s3")
        return value

    @field_validator("log_format", "mcp_stderr", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("loop_profile", *RULE_MODE_SETTINGS, mode="before")
    @classmethod
    def _loop_policy(cls, value: Any) -> Any:
        if value is False:
            return GuardMode.OFF.value  # YAML 1.1 reads a bare ``off`` as false
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("log_level", mode="before")
    @classmethod
    def _level(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().upper() in LOG_LEVELS:
            return value.strip().upper()
        raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}")

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _json_object(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                raise ValueError("not valid JSON") from None
        if value is not None and not isinstance(value, dict):
            raise ValueError("must be a JSON object of servers")
        return value

    @field_validator(
        "data_dir", "workspaces", "payload_storage_dir", "editor_workspaces", mode="before"
    )
    @classmethod
    def _expand_user(cls, value: Any) -> Any:
        return Path(value).expanduser() if isinstance(value, str) else value

    @field_validator("gateway_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")

    @field_validator("owner_id")
    @classmethod
    def _owner(cls, value: str | None) -> str | None:
        if value is not None and not OWNER_ID.match(value):
            raise ValueError("must be 1-128 letters, digits or . _ @ : -")
        return value

    @field_validator("gateway_tokens_file", mode="after")
    @classmethod
    def _tokens_file(cls, value: Path | None) -> Path | None:
        if value is not None:
            read_owner_tokens(value)  # raises ValueError naming the problem, never a token
        return value

    @field_validator("guard_rollout", mode="after")
    @classmethod
    def _rollout(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None:
            data = info.data
            check_rollout(
                value,
                salt=data.get("guard_rollout_salt"),
                environment=_environment_of(
                    data.get("deployment_environment"), data.get("otel_resource_attributes")
                ),
                allow_wide_enforce=bool(data.get("guard_rollout_allow_wide_enforce")),
            )
        return value

    @property
    def workspaces_dir(self) -> Path:
        """Where session workspaces live, absolute (relative values are taken from the
        working directory of the process that reads them)."""
        return (self.workspaces or self.data_dir / "workspaces").absolute()

    @property
    def gateway_client_url(self) -> str:
        """The gateway's URL for a client on this machine: ``gateway_url``, else built
        from ``gateway_host`` (a wildcard address means loopback) and ``gateway_port``."""
        if self.gateway_url:
            return self.gateway_url
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(
            self.gateway_host, self.gateway_host
        )
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.gateway_port}"

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
        load = _CURRENT_LOAD.get() or _Load.of(dict(os.environ))
        return (init_settings, _OperatorSource(settings_cls, load))


def _setting_of(name: str, info: FieldInfo) -> Setting:
    extra = info.json_schema_extra
    assert isinstance(extra, dict), name
    env, read_by, config_file = extra["env"], extra["read_by"], extra["config_file"]
    assert isinstance(env, list) and isinstance(read_by, list), name
    return Setting(
        name=name,
        env=tuple(str(e) for e in env),
        help=info.description or "",
        read_by=tuple(str(r) for r in read_by),
        secret=extra["secret"] is True,
        config_file=config_file if isinstance(config_file, str) else None,
    )


SETTINGS: tuple[Setting, ...] = tuple(
    _setting_of(name, info) for name, info in SeawallSettings.model_fields.items()
)
SETTINGS_BY_NAME: Mapping[str, Setting] = {s.name: s for s in SETTINGS}


def default_of(name: str) -> Any:
    """The default of setting ``name``, for views of the settings (the gateway's, the
    stack's) that must not define defaults of their own."""
    return SeawallSettings.model_fields[name].get_default(call_default_factory=True)


@contextmanager
def _loading(load: _Load) -> Iterator[None]:
    token = _CURRENT_LOAD.set(load)
    try:
        yield
    finally:
        _CURRENT_LOAD.reset(token)


@dataclass(frozen=True)
class EffectiveSettings:
    """The settings, where each came from, the files read, and diagnostics."""

    settings: SeawallSettings
    origins: Mapping[str, Origin]
    config: UserConfig
    mcp: UserConfig
    diagnostics: tuple[Diagnostic, ...]

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
        """The value as ``seawall config`` shows it: secrets only as ``set``/``unset``,
        the MCP servers as a count (their names are sensitive), derived defaults resolved."""
        settings = self.settings
        value = getattr(settings, name)
        if name == "mcp_servers":
            if value is None:
                return "unset"
            servers = value.get("mcpServers", value) if set(value) == {"mcpServers"} else value
            count = len(servers) if isinstance(servers, dict) else 0
            return f"set ({count} server{'' if count == 1 else 's'})"
        if SETTINGS_BY_NAME[name].secret:
            return "set" if value is not None else "unset"
        if name == "gateway_url":
            return settings.gateway_client_url
        if name == "workspaces":
            return str(settings.workspaces_dir)
        if name == "payload_storage_dir":
            return str(storage_dir(settings))
        if value is None:
            return "unset"
        if isinstance(value, bool):
            return "true" if value else "false"
        if name == "openai_base_url":
            return _without_userinfo(str(value))
        return str(value.value) if isinstance(value, GuardMode | ApprovalMode) else str(value)

    def as_json(self) -> dict[str, Any]:
        return {
            "user_config": {
                "path": str(self.config.path) if self.config.path else None,
                "found": self.config.found,
            },
            "mcp_config": {
                "path": str(self.mcp.path) if self.mcp.path else None,
                "found": self.mcp.found,
            },
            "settings": {
                s.name: {
                    "value": self.display_value(s.name),
                    "source": self.origins[s.name].source.value,
                    "from": self.origins[s.name].where,
                    "environment": list(s.env),
                    "config_file": s.config_file,
                    "read_by": list(s.read_by),
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
        text = _without_userinfo(text)
    if len(text) > MAX_SHOWN_VALUE_CHARS:
        text = text[: MAX_SHOWN_VALUE_CHARS - 1] + "…"
    return text if text and text.isprintable() and " " not in text else repr(text)


def _message(err: Mapping[str, Any]) -> str:
    short = _SHORT_MESSAGES.get(str(err["type"]))
    if short is not None:
        return short
    message = str(err["msg"]).removeprefix("Value error, ")
    if message.startswith("Input should be "):
        message = "must be " + message.removeprefix("Input should be ")
    return message


def _problem(load: _Load, name: str, message: str) -> str:
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
    config file or an invalid value, naming each; an invalid guard mode is not an error
    (it resolves to ``shadow`` with a diagnostic).
    """
    load = _Load.of(dict(os.environ if environ is None else environ), config_path)
    for broken in (load.config.problem, load.mcp.problem):
        if broken is not None:
            raise SettingsError(broken.message.removesuffix("; ignoring it"))
    try:
        with _loading(load):
            settings = SeawallSettings()
    except ValidationError as exc:
        problems = [
            _problem(load, str(err["loc"][0]) if err["loc"] else "?", _message(err))
            for err in exc.errors(include_url=False, include_input=False)
        ]
        raise SettingsError("; ".join(problems)) from None
    assert load.guard is not None
    diagnostics = [*_config_file_diagnostics(load.config)]
    if load.guard.diagnostic is not None:
        diagnostics.append(load.guard.diagnostic)
    return EffectiveSettings(
        settings=settings,
        origins=dict(load.origins),
        config=load.config,
        mcp=load.mcp,
        diagnostics=tuple(diagnostics),
    )


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
    """Log the diagnostics of a process's settings once at startup, except the guard
    mode's: the worker reports that one with each session that resolves it."""
    for diagnostic in effective.diagnostics:
        if diagnostic.event != "invalid_guard_mode":
            logger.warning(
                diagnostic.event, source=diagnostic.source, diagnostic=diagnostic.message
            )


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
