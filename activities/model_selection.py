"""Which model answers a prompt, and the operator's settings for a real model endpoint.

Endpoints, keys and request options are operator settings of the worker: they are read from
the worker's environment and the operator's user-level config file, never from workflow
history (which only names the provider) and never from a project or workspace. Reading
them is cheap and has no network access, so the provider re-reads them on every
request and a changed environment takes effect without a restart.

Settings, environment first, then ``~/.config/seawall/config.yaml``
(``$XDG_CONFIG_HOME/seawall/config.yaml``):

==============================  ==========================  ===========================
environment                     config file key             default
==============================  ==========================  ===========================
``OPENAI_BASE_URL``             ``openai_base_url``         the OpenAI API
``OPENAI_API_KEY``              ``openai_api_key``          none (a placeholder is sent)
``SEAWALL_MODEL``               ``model``                   ``gpt-4o-mini``
``SEAWALL_MODEL_TEMPERATURE``   ``model_temperature``       the endpoint's default
``SEAWALL_MODEL_MAX_TOKENS``    ``model_max_tokens``        the endpoint's default
``SEAWALL_MODEL_TIMEOUT_SECONDS`` ``model_timeout_seconds`` 180
==============================  ==========================  ===========================
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from activities.operator_settings import user_config_path

BASE_URL_ENV = "OPENAI_BASE_URL"
API_KEY_ENV = "OPENAI_API_KEY"
MODEL_ENV = "SEAWALL_MODEL"
TEMPERATURE_ENV = "SEAWALL_MODEL_TEMPERATURE"
MAX_TOKENS_ENV = "SEAWALL_MODEL_MAX_TOKENS"
TIMEOUT_ENV = "SEAWALL_MODEL_TIMEOUT_SECONDS"

DEFAULT_MODEL = "gpt-4o-mini"
# Below the model activity's five-minute start-to-close timeout, so the SDK's own timeout
# (a retryable error) fires before Temporal's.
DEFAULT_TIMEOUT_SECONDS = 180.0

# (environment variable, config file key, settings field)
_SOURCES: tuple[tuple[str, str, str], ...] = (
    (BASE_URL_ENV, "openai_base_url", "base_url"),
    (API_KEY_ENV, "openai_api_key", "api_key"),
    (MODEL_ENV, "model", "model"),
    (TEMPERATURE_ENV, "model_temperature", "temperature"),
    (MAX_TOKENS_ENV, "model_max_tokens", "max_tokens"),
    (TIMEOUT_ENV, "model_timeout_seconds", "timeout_seconds"),
)


class ModelSettingsError(ValueError):
    """An operator setting has an unusable value; the message names the setting only."""


class OpenAISettings(BaseModel):
    """The OpenAI-compatible endpoint this worker talks to. ``api_key`` never prints."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str | None = None
    api_key: SecretStr | None = None
    model: str = Field(default=DEFAULT_MODEL, min_length=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    timeout_seconds: float = Field(default=DEFAULT_TIMEOUT_SECONDS, gt=0, le=3600)

    @property
    def configured(self) -> bool:
        """True when the operator pointed Seawall at an endpoint (a URL or a key)."""
        return bool(self.base_url) or self.api_key is not None

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str], config_path: Path | None = None
    ) -> OpenAISettings:
        """The settings from ``environ`` over the user config file (``None``: derive its
        path from ``environ``). Blank values count as unset.

        Raises :class:`ModelSettingsError` for an unreadable file or an invalid value; the
        message never contains the API key.
        """
        path = user_config_path(environ) if config_path is None else config_path
        from_file = _config_values(path)
        values: dict[str, Any] = {}
        origin: dict[str, str] = {}
        for env_name, key, field in _SOURCES:
            env_value = environ.get(env_name, "").strip()
            if env_value:
                values[field] = env_value
                origin[field] = f"environment {env_name}"
            elif from_file.get(key) not in (None, ""):
                values[field] = from_file[key]
                origin[field] = f"user config {path} key {key}"
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = []
            for err in exc.errors(include_url=False, include_input=False):
                field = str(err["loc"][0]) if err["loc"] else "?"
                problems.append(f"{origin.get(field, field)}: {err['msg']}")
            raise ModelSettingsError("invalid model settings: " + "; ".join(problems)) from None


def _config_values(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelSettingsError(
            f"user config {path}: cannot be read ({type(exc).__name__})"
        ) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        raise ModelSettingsError(f"user config {path}: is not valid YAML") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ModelSettingsError(f"user config {path}: must be a YAML mapping")
    return {key: data[key] for _env, key, _field in _SOURCES if key in data}


def endpoint_configured(environ: Mapping[str, str], config_path: Path | None = None) -> bool:
    """Whether ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` (or their config file keys) are set.

    Only those two are looked at, so an unrelated bad value elsewhere in the file does not
    hide a configured endpoint (the provider reports it on the first request instead).
    """
    if any(environ.get(name, "").strip() for name in (BASE_URL_ENV, API_KEY_ENV)):
        return True
    path = user_config_path(environ) if config_path is None else config_path
    try:
        values = _config_values(path)
    except ModelSettingsError:
        return False
    return any(str(values.get(key) or "").strip() for key in ("openai_base_url", "openai_api_key"))
