"""The validators a setting's type carries: each setting's whole validation is its type.

The catalogue gives every field one of these types (or a plain type with constraints), so the
field validated on its own (:func:`~.fields.field_validator_of`, the session-time reads)
accepts, rejects and converts exactly as the settings model does at startup.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator, ValidationInfo

from seawall.runtime.approval_rules import load_approval_rules
from seawall.runtime.owners import OWNER_ID, owner_list, read_owner_tokens
from seawall.runtime.storage import PayloadStorageKind
from workflows.contracts.prompt_options import DEFAULT_REDACTED_ARGUMENTS
from workflows.rules import LoopProfile
from workflows.seed import GuardMode

from .fields import GATEWAY, readers_of

LogFormat = Literal["json", "console"]
LOG_FORMATS: tuple[LogFormat, ...] = ("json", "console")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _word_or_off(value: Any) -> Any:
    """A mode or profile word in any case; YAML 1.1 reads a bare ``off`` as false."""
    if value is False:
        return GuardMode.OFF.value
    return value.strip().lower() if isinstance(value, str) else value


def _on_off_word(value: Any) -> Any:
    if value is False:
        return "off"  # YAML 1.1 reads a bare ``off`` as false
    if value is True:
        return "on"
    return value.strip().lower() if isinstance(value, str) else value


def _storage_word(value: Any) -> Any:
    if value is False:
        return "off"  # YAML 1.1 reads a bare ``off`` as false
    return value.strip().lower() if isinstance(value, str) else value


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def _level(value: Any) -> Any:
    if isinstance(value, str) and value.strip().upper() in LOG_LEVELS:
        return value.strip().upper()
    raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}")


def _json_object(value: Any) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("not valid JSON") from None
    if value is not None and not isinstance(value, dict):
        raise ValueError("must be a JSON object of servers")
    return value


def _expand_user(value: Any) -> Any:
    return Path(value).expanduser() if isinstance(value, str) else value


def _env_names(value: str) -> str:
    names = [n.strip() for n in value.split(",") if n.strip()]
    for name in names:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"{name[:40]!r} is not an environment variable name")
    return ",".join(names)


def _http_url(value: str | None) -> str | None:
    if value is None:
        return None
    if not value.startswith(("http://", "https://")):
        raise ValueError("must be an http:// or https:// URL")
    return value.rstrip("/")


def _owner(value: str | None) -> str | None:
    if value is not None and not OWNER_ID.match(value):
        raise ValueError("must be 1-128 letters, digits or . _ @ : -")
    return value


def _owner_list(value: str | None) -> str | None:
    return ",".join(owner_list(value)) if value is not None else None


def _tokens_file(value: Path | None, info: ValidationInfo) -> Path | None:
    # Opened only where the tokens are used: the gateway (and seawall config, which checks
    # every setting). The worker reads the path alone, to hide the file from its sandbox.
    if value is not None and readers_of(info).uses(GATEWAY):
        read_owner_tokens(value)  # raises ValueError naming the problem, never a token
    return value


def _approval_rules_file(value: Path | None) -> Path | None:
    if value is not None:
        load_approval_rules(value)  # raises ValueError naming each bad rule
    return value


def _origins(value: str) -> str:
    origins = [o.strip().rstrip("/") for o in value.split(",") if o.strip()]
    for origin in origins:
        parts = urlsplit(origin)
        if parts.scheme not in {"http", "https"} or not parts.hostname or parts.path:
            raise ValueError(f"{origin!r} is not an origin like http://localhost:8080")
    return ",".join(origins)


def redacted_names(value: str | None) -> tuple[str, ...]:
    """What a permission request never shows: the built-in names, then those of the
    ``redacted_arguments`` setting (comma-separated)."""
    extra = tuple(name.strip() for name in (value or "").split(",") if name.strip())
    return DEFAULT_REDACTED_ARGUMENTS + extra


T = TypeVar("T")
ModeWord = Annotated[GuardMode, BeforeValidator(_word_or_off)]
RuleModeWord = Annotated[GuardMode | None, BeforeValidator(_word_or_off)]
ProfileWord = Annotated[LoopProfile, BeforeValidator(_word_or_off)]
OnOffWord = Annotated[T, BeforeValidator(_on_off_word)]
Lowered = Annotated[T, BeforeValidator(_lower)]
UserPath = Annotated[T, BeforeValidator(_expand_user)]
StorageKind = Annotated[PayloadStorageKind, BeforeValidator(_storage_word)]
LogLevel = Annotated[str, BeforeValidator(_level)]
McpServers = Annotated[dict[str, Any] | None, BeforeValidator(_json_object)]
VariableNames = Annotated[str, AfterValidator(_env_names)]
HttpUrl = Annotated[str | None, AfterValidator(_http_url)]
OwnerId = Annotated[str | None, AfterValidator(_owner)]
OwnerList = Annotated[str | None, AfterValidator(_owner_list)]
OwnerTokensFile = Annotated[Path | None, AfterValidator(_tokens_file)]
Origins = Annotated[str, AfterValidator(_origins)]
ApprovalRulesFile = Annotated[Path | None, AfterValidator(_approval_rules_file)]
