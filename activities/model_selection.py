"""Which model answers a prompt, and the provider's view of the model endpoint settings.

Endpoints, keys and request options are operator settings of the worker (docs/settings.md):
read through the one settings model (:mod:`seawall.runtime.settings`) from the worker's
environment and the operator's user config file, never from workflow history (which only
names the provider) and never from a project or workspace. Reading them is cheap
and has no network access, so the provider re-reads them on every request and an edited
user config file takes effect without a restart.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, SecretStr

from seawall.runtime.settings import (
    WORKER,
    SeawallSettings,
    SettingsError,
    default_of,
    load_settings,
)

DEFAULT_MODEL: str = default_of("model")


class OpenAISettings(BaseModel):
    """The OpenAI-compatible endpoint this worker talks to. ``api_key`` never prints."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str | None
    api_key: SecretStr | None
    model: str
    temperature: float | None
    max_tokens: int | None
    timeout_seconds: float

    @property
    def configured(self) -> bool:
        """True when the operator pointed Seawall at an endpoint (a URL or a key)."""
        return bool(self.base_url) or self.api_key is not None

    @classmethod
    def from_settings(cls, settings: SeawallSettings) -> OpenAISettings:
        return cls(
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key,
            model=settings.model,
            temperature=settings.model_temperature,
            max_tokens=settings.model_max_tokens,
            timeout_seconds=settings.model_timeout_seconds,
        )

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str], config_path: Path | None = None
    ) -> OpenAISettings:
        """The settings from ``environ`` over the user config file (``None``: derive its
        path from ``environ``).

        Raises :class:`~seawall.runtime.settings.SettingsError` for an unreadable file or an
        invalid value; the message never contains the API key.
        """
        return cls.from_settings(load_settings(environ, config_path, reader=WORKER).settings)


def endpoint_configured(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the operator pointed Seawall at a model endpoint (``openai_base_url`` or
    ``openai_api_key``, from ``environ`` or the user config file found through it).

    A config file that has broken since the worker started counts as configured, so the
    endpoint provider reports the bad setting on the request instead of the offline demo
    model answering in its place.
    """
    try:
        settings = load_settings(environ, reader=WORKER).settings
    except SettingsError:
        return True
    return OpenAISettings.from_settings(settings).configured
