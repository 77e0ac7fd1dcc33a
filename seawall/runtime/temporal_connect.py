"""How every Seawall process reaches Temporal: address, namespace, TLS, mTLS and API key.

The worker, the gateway, ``seawall run``/``acp``/``rollout``/``storage`` and the scripts all
connect with the :class:`TemporalClientConfig` that :func:`temporal_client_config` builds, so
Temporal Cloud or a secured self-hosted cluster is configured once, the way every Temporal SDK
and the ``temporal`` CLI are: the SDK's environment configuration (``temporalio.envconfig``).

Each value comes from the first of (docs/settings.md, "Temporal access"):

1. Seawall's setting, when the operator set it: its ``TEMPORAL_*`` variable (the SDK's own
   names: ``TEMPORAL_ADDRESS``, ``TEMPORAL_API_KEY``, ``TEMPORAL_TLS_CLIENT_CERT_PATH``, …)
   or its key in Seawall's ``config.yaml``;
2. the selected profile (``TEMPORAL_PROFILE``, else ``default``) of the Temporal config file
   (``TEMPORAL_CONFIG_FILE``, else ``~/.config/temporalio/temporal.toml`` when it exists),
   read by ``temporalio.envconfig`` with its own environment lookups off, so the settings
   model stays the one reader of ``TEMPORAL_*`` variables;
3. Seawall's default (``localhost:7233``, namespace ``default``, no TLS).

TLS is on when ``TEMPORAL_TLS`` says so, or (unless it says ``false``) when an API key or
any TLS value is set, as in the SDK. Every file is read and checked here, at startup: a
missing or unreadable file, one that is not PEM, a certificate without its key, an unknown
profile or a broken profile file is one :class:`~seawall.runtime.settings.SettingsError`
naming the setting (or the profile's key) and its source; entry points print it as one line
and exit 2 (:func:`temporal_or_exit`). Secrets (the API key, the key's contents) live only in
the fields the SDK is handed: never in ``repr``, :meth:`TemporalClientConfig.describe` or
``seawall config`` (which shows the auth in use: :func:`auth_summary`).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from temporalio.envconfig import ClientConfig, ClientConfigProfile, ClientConfigTLS
from temporalio.service import TLSConfig

from seawall.runtime.settings import (
    EXIT_BAD_SETTINGS,
    EffectiveSettings,
    SettingsError,
    default_of,
)

Auth = Literal["none", "tls", "mtls", "api key", "api key + mtls"]

DEFAULT_PROFILE = "default"
PEM_MARKER = b"-----BEGIN "

# Seawall setting -> (the profile's TLS field, the key a profile file spells it with).
_TLS_FILES: Mapping[str, tuple[str, str]] = {
    "server_ca_cert": ("server_root_ca_cert", "tls.server_ca_cert"),
    "client_cert": ("client_cert", "tls.client_cert"),
    "client_key": ("client_private_key", "tls.client_key"),
}


def default_config_file(environ: Mapping[str, str]) -> Path:
    """Where the Temporal CLI and SDKs look for their config file on Linux:
    ``$XDG_CONFIG_HOME/temporalio/temporal.toml``, else ``~/.config/temporalio/...``."""
    xdg = environ.get("XDG_CONFIG_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "temporalio" / "temporal.toml"
    home = environ.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".config" / "temporalio" / "temporal.toml"


@dataclass(frozen=True)
class TemporalClientConfig:
    """The resolved connection: ``Client.connect`` keyword arguments (:meth:`connect_kwargs`)
    plus where they came from. The TLS material and the API key are kept out of ``repr``."""

    target_host: str
    namespace: str
    tls: bool | TLSConfig = field(default=False, repr=False)
    api_key: str | None = field(default=None, repr=False)
    rpc_metadata: Mapping[str, str] = field(default_factory=dict, repr=False)
    # The profile used and its file (None: no profile file was read).
    profile: str | None = None
    profile_file: Path | None = None
    # Whether the operator chose the server (a setting or a profile), not the default:
    # ``seawall run`` starts an embedded server otherwise.
    address_configured: bool = False

    @property
    def auth(self) -> Auth:
        mtls = isinstance(self.tls, TLSConfig) and self.tls.client_cert is not None
        if self.api_key:
            return "api key + mtls" if mtls else "api key"
        if mtls:
            return "mtls"
        return "tls" if self.tls else "none"

    def with_target(
        self, address: str | None = None, namespace: str | None = None
    ) -> TemporalClientConfig:
        """This connection with a command-line ``--address``/``--namespace`` in place."""
        return dataclasses.replace(
            self,
            target_host=address or self.target_host,
            namespace=namespace or self.namespace,
            address_configured=self.address_configured or bool(address),
        )

    def connect_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``temporalio.client.Client.connect``."""
        kwargs: dict[str, Any] = {
            "target_host": self.target_host,
            "namespace": self.namespace,
            "tls": self.tls,
        }
        if self.api_key:
            kwargs["api_key"] = self.api_key
        if self.rpc_metadata:
            kwargs["rpc_metadata"] = dict(self.rpc_metadata)
        return kwargs

    def describe(self) -> dict[str, str | None]:
        """What a log line may say about the connection: never a secret."""
        return {
            "temporal_address": self.target_host,
            "namespace": self.namespace,
            "temporal_auth": self.auth,
            "temporal_profile": self.profile,
        }


class TemporalAccessRefused(RuntimeError):
    """The frontend answered but refused this client: TLS or its credentials. Waiting does
    not help (``seawall.runtime.server_wait`` raises it at once); the message says which
    setting to look at, never a secret."""


# Markers in the SDK core's connect errors -> what they mean and the setting to check.
_CLIENT_CERT_WANTED = (
    "it closed the TLS connection: it wants a client certificate its CA signed "
    "(mTLS: TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)"
)
_REFUSALS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("unknownissuer", "badsignature", "invalidcertificate(expired"),
        "its certificate is not signed by a CA this client trusts, or has expired "
        "(TEMPORAL_TLS_SERVER_CA_CERT_PATH)",
    ),
    (
        ("notvalidforname", "certnotvalidforname"),
        "its certificate is not valid for this name (TEMPORAL_TLS_SERVER_NAME)",
    ),
    # TLS alerts a frontend sends a client whose certificate it does not accept.
    (
        ("certificaterequired", "unknownca", "badcertificate", "certificateunknown"),
        _CLIENT_CERT_WANTED,
    ),
    (
        ("unauthenticated", "unauthorized"),
        "it did not accept this client's credentials (TEMPORAL_API_KEY or the client certificate)",
    ),
    (("permissiondenied",), "this client may not use the namespace"),
)
# The connection was made, then dropped before the first call answered: over TLS, the
# frontend refusing the client's certificate (or the lack of one) after the handshake; in
# plain text, a TLS frontend that cannot read it. An unreachable server never gets this far.
_AFTER_CONNECTING = "callerrorafterconnection"
_DROPPED = ("closed", "canceled", "cancelled", "eof", "closenotify", "brokenpipe", "reset")
_NOT_GRPC = ("frame", "http2", "invalidcontenttype")


def access_refusal(
    err: BaseException, config: TemporalClientConfig
) -> TemporalAccessRefused | None:
    """``err`` from ``Client.connect`` as a :class:`TemporalAccessRefused`, when it is a TLS
    or credentials problem rather than an unreachable server; else ``None``."""
    text = "".join(ch for ch in str(err).lower() if ch.isalnum() or ch in "()")
    refused = f"the Temporal frontend at {config.target_host} refused this client"
    for markers, meaning in _REFUSALS:
        if any(marker in text for marker in markers):
            return TemporalAccessRefused(f"{refused} (auth {config.auth}): {meaning}")
    if _AFTER_CONNECTING in text:
        if config.tls and any(marker in text for marker in _DROPPED):
            return TemporalAccessRefused(f"{refused} (auth {config.auth}): {_CLIENT_CERT_WANTED}")
        if not config.tls and any(marker in text for marker in (*_DROPPED, *_NOT_GRPC)):
            return TemporalAccessRefused(
                f"{refused} (auth none): it dropped a plain connection: it may want TLS "
                "(TEMPORAL_TLS=true, TEMPORAL_TLS_* or a profile)"
            )
    return None


def plain(address: str, namespace: str = "default") -> TemporalClientConfig:
    """A connection without TLS or credentials (the tests' and benchmarks' dev servers)."""
    return TemporalClientConfig(target_host=address, namespace=namespace)


def temporal_client_config(
    effective: EffectiveSettings, environ: Mapping[str, str] | None = None
) -> TemporalClientConfig:
    """The connection the settings (and the profile file) describe; ``environ`` (default:
    this process's) only locates the default profile file. Raises ``SettingsError``."""
    return _Resolver(effective, os.environ if environ is None else environ).resolve()


def temporal_or_exit(
    program: str, effective: EffectiveSettings, environ: Mapping[str, str] | None = None
) -> TemporalClientConfig:
    """:func:`temporal_client_config` for an entry point: a problem is one line on stderr,
    ``<program>: error: …``, and exit code 2, before anything connects."""
    try:
        return temporal_client_config(effective, environ)
    except SettingsError as err:
        print(f"{program}: error: {err}", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_BAD_SETTINGS) from None


def auth_summary(effective: EffectiveSettings, environ: Mapping[str, str] | None = None) -> str:
    """One line for ``seawall config``: the server, the auth in use and the profile, or
    the problem a client would refuse to start with. Never a secret."""
    try:
        config = temporal_client_config(effective, environ)
    except SettingsError as err:
        return f"temporal access: error: {err}"
    profile = (
        f", profile {config.profile!r} of {config.profile_file}"
        if config.profile is not None
        else ""
    )
    return (
        f"temporal access: {config.target_host} namespace {config.namespace}, "
        f"auth {config.auth}{profile}"
    )


def temporal_access_json(
    effective: EffectiveSettings, environ: Mapping[str, str] | None = None
) -> dict[str, dict[str, str | None]]:
    """``seawall config --json``'s ``temporal_access`` object: what :func:`auth_summary`
    says, as fields (``error`` set, the others null, when a client would refuse to start)."""
    try:
        config = temporal_client_config(effective, environ)
    except SettingsError as err:
        return {"temporal_access": {"error": str(err)}}
    return {
        "temporal_access": {
            "address": config.target_host,
            "namespace": config.namespace,
            "auth": config.auth,
            "profile": config.profile,
            "profile_file": str(config.profile_file) if config.profile_file else None,
            "error": None,
        }
    }


@dataclass
class _Resolver:
    effective: EffectiveSettings
    environ: Mapping[str, str]

    def resolve(self) -> TemporalClientConfig:
        settings = self.effective.settings
        profile, profile_name, profile_file = self._profile()
        where = f"profile {profile_name!r} of {profile_file}"

        def chosen(name: str, from_profile: Any) -> Any:
            if self.effective.is_set(name):
                return getattr(settings, name)
            return from_profile

        address = chosen("temporal_address", profile.address) or settings.temporal_address
        namespace = chosen("temporal_namespace", profile.namespace) or default_of(
            "temporal_namespace"
        )
        api_key_setting = settings.temporal_api_key
        api_key = (
            api_key_setting.get_secret_value()
            if self.effective.is_set("temporal_api_key") and api_key_setting is not None
            else profile.api_key
        )
        tls = self._tls(profile.tls or ClientConfigTLS(), where)
        if self.effective.is_set("temporal_tls"):
            tls = dataclasses.replace(tls, disabled=not settings.temporal_tls)
        merged = ClientConfigProfile(
            address=address,
            namespace=namespace,
            api_key=api_key or None,
            tls=None if tls == ClientConfigTLS() else tls,
            grpc_meta=profile.grpc_meta,
        )
        connect = merged.to_client_connect_config()
        return TemporalClientConfig(
            target_host=address,
            namespace=namespace,
            tls=connect.get("tls", False),
            api_key=connect.get("api_key"),
            rpc_metadata=connect.get("rpc_metadata", {}),
            profile=profile_name if profile_file is not None else None,
            profile_file=profile_file,
            address_configured=self.effective.is_set("temporal_address")
            or profile.address is not None,
        )

    def _profile(self) -> tuple[ClientConfigProfile, str, Path | None]:
        """The selected profile, its name and its file (``None``: no file, an empty one)."""
        effective = self.effective
        explicit_file = effective.is_set("temporal_config_file")
        path = effective.settings.temporal_config_file
        if path is None:
            path = default_config_file(self.environ)
        name = effective.settings.temporal_profile or DEFAULT_PROFILE
        file_label = (
            effective.labelled("temporal_config_file")
            if explicit_file
            else f"Temporal config file {path} (default location)"
        )
        if not path.exists() and not explicit_file:
            if effective.is_set("temporal_profile"):
                raise SettingsError(
                    f"{effective.labelled('temporal_profile')}: there is no Temporal config "
                    f"file (TEMPORAL_CONFIG_FILE is unset and {path} does not exist)"
                )
            return ClientConfigProfile(), name, None
        try:
            data = path.read_bytes()
        except OSError as err:
            raise SettingsError(f"{file_label}: cannot read it ({err.strerror})") from None
        try:
            profiles = ClientConfig.load(config_source=data, override_env_vars={}).profiles
        except Exception as err:  # the bridge's ConfigError, a RuntimeError subclass
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise SettingsError(f"{file_label}: not a Temporal config file ({first})") from None
        if name not in profiles:
            if not effective.is_set("temporal_profile"):
                return ClientConfigProfile(), name, None
            known = ", ".join(sorted(profiles)) or "none"
            raise SettingsError(
                f"{effective.labelled('temporal_profile')}: no such profile in {path} "
                f"(its profiles: {known})"
            )
        return profiles[name], name, path.absolute()

    def _tls(self, tls: ClientConfigTLS, where: str) -> ClientConfigTLS:
        """The profile's TLS settings with the operator's over them, every file read now."""
        effective, settings = self.effective, self.effective.settings
        if effective.is_set("temporal_tls_server_name"):
            tls = dataclasses.replace(tls, server_name=settings.temporal_tls_server_name)
        read: dict[str, bytes | None] = {}
        for part, (tls_field, profile_key) in _TLS_FILES.items():
            path_setting, data_setting = f"temporal_tls_{part}_path", f"temporal_tls_{part}_data"
            if effective.is_set(data_setting):
                secret = getattr(settings, data_setting)
                read[part] = _pem(
                    secret.get_secret_value().encode(), effective.labelled(data_setting)
                )
            elif effective.is_set(path_setting):
                label = effective.labelled(path_setting)
                read[part] = _pem(_read(getattr(settings, path_setting), label), label)
            else:
                source = getattr(tls, tls_field)
                if isinstance(source, Path):
                    label = f"{where} key {profile_key}_path={source}"
                    read[part] = _pem(_read(source, label), label)
                elif source is not None:
                    data = source.encode() if isinstance(source, str) else source
                    read[part] = _pem(data, f"{where} key {profile_key}_data")
                else:
                    read[part] = None
        if (read["client_cert"] is None) != (read["client_key"] is None):
            missing = "KEY" if read["client_key"] is None else "CERT"
            raise SettingsError(
                f"TEMPORAL_TLS_CLIENT_{missing}_PATH (unset): mTLS needs both a client "
                f"certificate and its key, and only one is set"
            )
        return dataclasses.replace(
            tls,
            server_root_ca_cert=read["server_ca_cert"],
            client_cert=read["client_cert"],
            client_private_key=read["client_key"],
        )


def _read(path: Path, label: str) -> bytes:
    try:
        return path.expanduser().read_bytes()
    except OSError as err:
        raise SettingsError(f"{label}: cannot read it ({err.strerror or err})") from None


def _pem(data: bytes, label: str) -> bytes:
    """``data`` when it holds PEM; an error naming ``label`` otherwise (never the data)."""
    if PEM_MARKER in data:
        return data
    raise SettingsError(f"{label}: not PEM (no '-----BEGIN' line)")
