"""What a setting is, apart from its value: its name, variables, file, readers and validator,
and which settings one process reads (:class:`Readers`).

Every other module of the package works from these: the catalogue declares its fields with
:func:`setting`, the sources read the variables and files a :class:`Setting` names, the
session-time reads validate with :func:`field_validator_of` — the very field the startup
model validates with, so a value means the same at a session's start as it did at startup —
and the report prints what a :class:`Setting` says. A setting's readers are no
documentation only: a process loads exactly the settings whose ``read_by`` names it
(docs/settings.md, "Each process reads its own settings"), so a secret it does not read is
never in its memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import ConfigDict, Field, TypeAdapter, ValidationInfo
from pydantic.config import JsonDict
from pydantic.fields import FieldInfo

from workflows.contracts.activity import SettingSource

CONFIG_DIR_NAME = "seawall"
CONFIG_FILE_NAME = "config.yaml"
MCP_FILE_NAME = "mcp.json"

# The guard mode: refused at startup like any bad value, except under the seed profile
# (sources.py, "the seed profile's guard mode"); read with the seed's semantics at each
# session's start (session.py).
GUARD_MODE_CONFIG_KEY = "repeated_tool_failure_guard"
GUARD_MODE_ENV = "SEAWALL_REPEATED_TOOL_FAILURE_GUARD"
# The seed's name, accepted so an existing deployment keeps its setting.
GUARD_MODE_ENV_ALIAS = "QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD"
# The loop profile decides what an invalid guard mode does at startup.
LOOP_PROFILE_CONFIG_KEY = "loop_profile"

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

# How the settings model reads a value (and so how a session-time read must read it).
VALUE_CONFIG = ConfigDict(
    str_strip_whitespace=True, coerce_numbers_to_str=True, allow_inf_nan=False
)


@dataclass(frozen=True)
class Readers:
    """Which settings one load reads: those whose ``read_by`` names one of ``roles`` (a
    process, or each role a process plays: ``seawall acp --embedded`` is the bridge and a
    worker), or every setting when ``roles`` is ``None`` (``seawall config``, which reports
    them all); and, of ``also``, the settings that are no secret: ``seawall up`` refuses a
    value its worker or gateway would refuse, and says what they run, without holding their
    secrets."""

    roles: frozenset[str] | None
    also: frozenset[str] = frozenset()

    @classmethod
    def of(cls, roles: str | Iterable[str] | None, also: Iterable[str] = ()) -> Readers:
        if roles is None:
            return cls(None)
        named = frozenset((roles,) if isinstance(roles, str) else roles)
        return cls(named, frozenset(also) - named)

    def reads(self, setting: Setting) -> bool:
        """Whether a load for these readers reads ``setting`` (and keeps its value)."""
        if self.roles is None or not self.roles.isdisjoint(setting.read_by):
            return True
        return not setting.sensitive and not self.also.isdisjoint(setting.read_by)

    def uses(self, role: str) -> bool:
        """Whether these readers play ``role`` (every role, for ``None``)."""
        return self.roles is None or role in self.roles

    def describe(self) -> str:
        """How an error names these readers: ``gateway``, ``seawall acp and worker``."""
        if self.roles is None:
            return "every process"
        return " and ".join(sorted(self.roles))


def readers_of(info: ValidationInfo) -> Readers:
    """The readers a settings model is being validated for (its validation context); every
    reader when none is given, e.g. a field validated on its own (:func:`field_validator_of`)."""
    context = info.context
    return context if isinstance(context, Readers) else Readers(None)


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
    # Not a secret itself but the path of a file of secrets (the tokens file, the mTLS key).
    secret_file: bool = False

    @property
    def sensitive(self) -> bool:
        """A secret, or the path of a file of secrets: it reaches only its readers, neither
        their environment nor their memory (seawall/runtime/child_env.py, loading.py)."""
        return self.secret or self.secret_file


def setting(
    default: Any,
    help: str,
    *,
    env: str | tuple[str, ...],
    read_by: tuple[str, ...],
    secret: bool = False,
    secret_file: bool = False,
    config_file: str | None = CONFIG_FILE_NAME,
    **constraints: Any,
) -> Any:
    """A field of the settings model with what docs/settings.md and ``seawall config`` say
    about it: its variables, which user config file may set it (``None``: only the
    environment may), and the processes that read it (and so the only ones that load it)."""
    names = (env,) if isinstance(env, str) else env
    extra: JsonDict = {
        "env": list(names),
        "read_by": list(read_by),
        "secret": secret,
        "secret_file": secret_file,
        "config_file": config_file,
    }
    return Field(default, description=help, json_schema_extra=extra, **constraints)


def setting_of(name: str, info: FieldInfo) -> Setting:
    """The :class:`Setting` a field declared with :func:`setting` describes."""
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
        secret_file=extra["secret_file"] is True,
        config_file=config_file if isinstance(config_file, str) else None,
    )


def field_validator_of(info: FieldInfo) -> TypeAdapter[Any]:
    """The validator of one field on its own: its type, constraints and the validators its
    type carries, read as the settings model reads values. A setting's whole validation is
    in its type (the catalogue declares no validator beside a field, except the two that
    compare settings), so this accepts, rejects and converts exactly as startup does."""
    field_type: Any = Annotated[info.annotation, info]
    return TypeAdapter(field_type, config=VALUE_CONFIG)


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


# --- how a value is shown in an error or by ``seawall config`` -------------------------------

MAX_SHOWN_VALUE_CHARS = 80


def without_userinfo(url: str) -> str:
    """A URL with any ``user:password@`` replaced, so a credential never prints."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "set (unparseable URL)"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"***@{host}"))


def shown(value: Any) -> str:
    """A (non-secret) value as an error line shows it: without a URL's credential, at most
    :data:`MAX_SHOWN_VALUE_CHARS` long, quoted when it has spaces or is not printable."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if "://" in text:
        text = without_userinfo(text)
    if len(text) > MAX_SHOWN_VALUE_CHARS:
        text = text[: MAX_SHOWN_VALUE_CHARS - 1] + "…"
    return text if text and text.isprintable() and " " not in text else repr(text)
