"""The gateway's settings, read from the environment in one place.

A plain pydantic model (no pydantic-settings) so a test can build one directly and
``python -m gateway`` can build one from ``os.environ`` with the same validation. A bad
value is a ``ConfigurationError`` naming the variable, raised before anything listens.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from workflows.prompt_options import DEFAULT_PERMISSION_TIMEOUT_SECONDS, ApprovalMode
from workflows.session_io import MAX_PROMPT_CHARS


class ConfigurationError(ValueError):
    """The gateway was configured in a way it refuses to run with."""


class GatewaySettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    temporal_address: str = "localhost:7233"
    temporal_namespace: str = "default"
    task_queue: str = "seawall"
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    # None: no authentication, which is allowed on a loopback address only.
    token: str | None = None
    workspaces: Path = Field(default=Path(".data/workspaces"), validate_default=True)
    # The session workflow takes no more than MAX_PROMPT_CHARS, so neither may the gateway.
    max_prompt_chars: int = Field(default=MAX_PROMPT_CHARS, ge=1, le=MAX_PROMPT_CHARS)
    approval_mode: ApprovalMode = ApprovalMode.DEFAULT
    permission_timeout_seconds: float = Field(default=DEFAULT_PERMISSION_TIMEOUT_SECONDS, gt=0)
    # Lets a client script the model of its session (simulations, end-to-end tests).
    # Off by default: a scripted session runs tools the client chose.
    allow_scripted_models: bool = False

    @field_validator("workspaces")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        # Workers resolve workspace roots themselves, possibly from another directory.
        return value.expanduser().absolute()

    @field_validator("token")
    @classmethod
    def _empty_is_none(cls, value: str | None) -> str | None:
        return value or None


# Environment variable → settings field.
ENVIRONMENT = {
    "TEMPORAL_ADDRESS": "temporal_address",
    "TEMPORAL_NAMESPACE": "temporal_namespace",
    "SEAWALL_TASK_QUEUE": "task_queue",
    "SEAWALL_GATEWAY_HOST": "host",
    "SEAWALL_GATEWAY_PORT": "port",
    "SEAWALL_GATEWAY_TOKEN": "token",
    "SEAWALL_WORKSPACES": "workspaces",
    "SEAWALL_MAX_PROMPT_CHARS": "max_prompt_chars",
    "SEAWALL_APPROVAL_MODE": "approval_mode",
    "SEAWALL_PERMISSION_TIMEOUT_SECONDS": "permission_timeout_seconds",
    "SEAWALL_ALLOW_SCRIPTED_MODELS": "allow_scripted_models",
}


def from_env(environ: Mapping[str, str] | None = None) -> GatewaySettings:
    """Settings from ``environ`` (default ``os.environ``); unset or empty means the default."""
    env = os.environ if environ is None else environ
    values = {field: env[name] for name, field in ENVIRONMENT.items() if env.get(name, "")}
    try:
        return GatewaySettings.model_validate(values)
    except ValidationError as err:
        first = err.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        name = next((n for n, f in ENVIRONMENT.items() if f == field), field)
        raise ConfigurationError(f"{name}={env.get(name)!r}: {first['msg']}") from None


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    host = host.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_exposure(settings: GatewaySettings) -> None:
    """Refuse to serve without a token anywhere but on a loopback address."""
    if settings.token is None and not is_loopback(settings.host):
        raise ConfigurationError(
            f"refusing to listen on {settings.host!r} without a token: set "
            "SEAWALL_GATEWAY_TOKEN, or bind to a loopback address (127.0.0.1, ::1, localhost)"
        )
