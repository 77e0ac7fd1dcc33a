"""The gateway's view of the one settings model, and its refusal to run exposed.

:class:`GatewaySettings` is what :func:`gateway.app.create_app` takes: the handful of
settings the gateway uses, under the names the app uses. ``python -m gateway`` builds it
from :func:`seawall.runtime.settings.load_settings` (:meth:`GatewaySettings.from_settings`),
so the gateway reads the same environment and user config file, with the same precedence
and errors, as the worker and the CLI; a test builds one directly. Its defaults are the
settings model's own, so there is one place to change a default.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from seawall.runtime.grants import existing_signing_key
from seawall.runtime.owners import owner_list, read_owner_tokens
from seawall.runtime.settings import SeawallSettings, default_of, redacted_names
from workflows.contracts.prompt_options import DEFAULT_REDACTED_ARGUMENTS, ApprovalMode


class ConfigurationError(ValueError):
    """The gateway was configured in a way it refuses to run with."""


def _default_workspaces() -> Path:
    data_dir: Path = default_of("data_dir")
    return (data_dir / "workspaces").absolute()


class GatewaySettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    temporal_address: str = default_of("temporal_address")
    temporal_namespace: str = default_of("temporal_namespace")
    task_queue: str = default_of("task_queue")
    host: str = default_of("gateway_host")
    port: int = default_of("gateway_port")
    # None (and no owners): no authentication, which is allowed on a loopback address only.
    token: str | None = None
    # Token -> owner id, from the operator's tokens file (``gateway_tokens_file``): several
    # principals, each session recorded with its owner (docs/rollout.md, "Rollout cohorts"). Kept
    # out of repr so a token never reaches a log line.
    owner_tokens: dict[str, str] = Field(default_factory=dict, repr=False)
    # Absolute: workers resolve workspace roots themselves, possibly from another directory.
    workspaces: Path = Field(default_factory=_default_workspaces)
    max_prompt_chars: int = default_of("max_prompt_chars")
    approval_mode: ApprovalMode = default_of("approval_mode")
    # What a client may choose (gateway/session_policy.py): the loosest approval mode
    # (None: approval_mode), and the owners whose sessions may be channel sessions ("*":
    # every caller).
    loosest_approval_mode: ApprovalMode | None = default_of("loosest_approval_mode")
    channel_owners: tuple[str, ...] = ()
    permission_timeout_seconds: float = default_of("permission_timeout_seconds")
    # What a permission request never shows: the built-in names and the operator's.
    redacted_arguments: tuple[str, ...] = DEFAULT_REDACTED_ARGUMENTS
    # Lets a client script the model of its session (simulations, end-to-end tests).
    allow_scripted_models: bool = default_of("allow_scripted_models")
    # Per owner of ``owner_tokens``, over all its sessions and every replica (0: no limit).
    max_concurrent_prompts_per_owner: int = default_of("max_concurrent_prompts_per_owner")
    # Per-owner quotas (docs/security-gateway.md, "Per-owner quotas"; 0: off) and the one cap
    # on a session's client_metadata, for every caller.
    max_open_sessions_per_owner: int = default_of("max_open_sessions_per_owner")
    max_client_metadata_bytes: int = default_of("max_client_metadata_bytes")
    max_stored_bytes_per_owner: int = default_of("max_stored_bytes_per_owner")
    # The Temporal UI's codec endpoint (gateway/codec.py): its credential, kept out of repr,
    # and the UI origins a browser may call it from.
    codec_token: str | None = Field(default=None, repr=False)
    codec_ui_origins: tuple[str, ...] = tuple(default_of("codec_ui_origins").split(","))
    # The key the gateway signs its sessions' starts with, for the worker to verify
    # (docs/security-trust.md, "Session grants"); None: unsigned, which workers refuse.
    session_signing_key: str | None = Field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: SeawallSettings) -> GatewaySettings:
        token = settings.gateway_token
        return cls(
            temporal_address=settings.temporal_address,
            temporal_namespace=settings.temporal_namespace,
            task_queue=settings.task_queue,
            host=settings.gateway_host,
            port=settings.gateway_port,
            token=token.get_secret_value() if token is not None else None,
            owner_tokens=(
                read_owner_tokens(settings.gateway_tokens_file)
                if settings.gateway_tokens_file is not None
                else {}
            ),
            workspaces=settings.workspaces_dir,
            max_prompt_chars=settings.max_prompt_chars,
            approval_mode=settings.approval_mode,
            loosest_approval_mode=settings.loosest_approval_mode,
            channel_owners=owner_list(settings.channel_owners or ""),
            permission_timeout_seconds=settings.permission_timeout_seconds,
            redacted_arguments=redacted_names(settings.redacted_arguments),
            allow_scripted_models=settings.allow_scripted_models,
            max_concurrent_prompts_per_owner=settings.max_concurrent_prompts_per_owner,
            max_open_sessions_per_owner=settings.max_open_sessions_per_owner,
            max_client_metadata_bytes=settings.max_client_metadata_bytes,
            max_stored_bytes_per_owner=settings.max_stored_bytes_per_owner,
            codec_token=(settings.codec_token.get_secret_value() if settings.codec_token else None),
            codec_ui_origins=tuple(o for o in settings.codec_ui_origins.split(",") if o),
            session_signing_key=existing_signing_key(settings),
        )


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
    if settings.token is None and not settings.owner_tokens and not is_loopback(settings.host):
        raise ConfigurationError(
            f"refusing to listen on {settings.host!r} without a token: set "
            "SEAWALL_GATEWAY_TOKEN or SEAWALL_GATEWAY_TOKENS_FILE, or bind to a loopback "
            "address (127.0.0.1, ::1, localhost)"
        )
