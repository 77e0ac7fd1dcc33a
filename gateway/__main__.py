"""``python -m gateway``: serve the gateway with uvicorn.

Settings come from the one settings model (the environment, then the operator's user config
file, then defaults; docs/settings.md): a bad one is a single line on stderr and exit code
2 before anything listens. Logs are structlog JSON lines on stderr (``--log-format
console`` or the ``log_format`` setting for humans), uvicorn's own loggers included.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from types import FrameType

import structlog
import uvicorn
from fastapi import FastAPI
from temporalio.client import Client
from temporalio.converter import ExternalStorage

from gateway.app import MAX_HEADER_BYTES, create_app
from gateway.settings import ConfigurationError, GatewaySettings
from seawall.runtime.grants import signing_key
from seawall.runtime.logs import configure_logging
from seawall.runtime.plugin import connect
from seawall.runtime.settings import (
    EXIT_BAD_SETTINGS,
    GATEWAY,
    LOG_FORMATS,
    SeawallSettings,
    log_startup_diagnostics,
    settings_or_exit,
)
from seawall.runtime.storage import payload_storage
from seawall.runtime.temporal_connect import TemporalClientConfig, plain, temporal_or_exit


def build(
    settings: GatewaySettings,
    storage: ExternalStorage | None = None,
    temporal: TemporalClientConfig | None = None,
) -> FastAPI:
    """The app, connecting with ``temporal`` (TLS, mTLS, API key: seawall/runtime/
    temporal_connect.py), else plainly to the settings' address and namespace."""
    connection = temporal or plain(settings.temporal_address, settings.temporal_namespace)

    async def client_factory() -> Client:
        return await connect(connection, storage=storage)

    return create_app(settings, client_factory)


def parse_args(
    argv: Sequence[str] | None = None, settings: SeawallSettings | None = None
) -> argparse.Namespace:
    """The gateway's flags, defaulting to the settings (``settings``, else loaded now)."""
    if settings is None:
        settings = settings_or_exit("gateway", reader=GATEWAY).settings
    parser = argparse.ArgumentParser(
        prog="python -m gateway",
        description="Serve the Seawall HTTP gateway: the API that creates sessions, submits "
        "prompts, forwards input, cancellations and permission answers, and streams agent "
        "updates (OpenAPI docs at /docs).",
        epilog="Host, port, token, Temporal address and the other settings come from the "
        "environment or the user config file; `seawall config` shows the effective values "
        "and docs/settings.md lists them all.",
    )
    parser.add_argument(
        "--log-format",
        choices=list(LOG_FORMATS),
        default=settings.log_format,
        help="json (default; the log_format setting) or console for humans",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    effective = settings_or_exit("gateway", reader=GATEWAY)
    args = parse_args(argv, effective.settings)
    configure_logging(args.log_format, effective.settings.log_level)
    log = structlog.get_logger("seawall.gateway")
    log_startup_diagnostics(effective, log)
    temporal = temporal_or_exit("gateway", effective)
    settings = GatewaySettings.from_settings(effective.settings).model_copy(
        update={"temporal_address": temporal.target_host, "temporal_namespace": temporal.namespace}
    )
    if settings.session_signing_key is None:
        # The data directory's key file, made now when missing (docs/security-trust.md).
        key = signing_key(effective.settings)
        settings = settings.model_copy(update={"session_signing_key": key})
    try:
        app = build(settings, payload_storage(effective.settings), temporal)
    except ConfigurationError as err:
        print(f"gateway: error: {err}", file=sys.stderr)
        return EXIT_BAD_SETTINGS
    log.info(
        "gateway_starting",
        host=settings.host,
        port=settings.port,
        **temporal.describe(),
        task_queue=settings.task_queue,
        auth=settings.token is not None,
    )
    # uvicorn shuts down gracefully on SIGTERM/SIGINT and then re-raises the signal to the
    # handler it found; with this one that is a no-op, so an orderly stop exits 0 (a
    # supervisor reads -15 as a crash).
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, _stopped)
    # log_config=None keeps uvicorn's loggers on the root handler configure_logging set up.
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        # An incomplete head (slow or endless) is not buffered past the app's header limit.
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
    log.info("gateway_stopped")
    return 0


def _stopped(signum: int, frame: FrameType | None) -> None:
    """Stand-in for the default handler while uvicorn runs: it has already shut down."""


if __name__ == "__main__":
    from seawall.runtime.process_exit import run_then_exit

    # The Temporal client's core threads outlive the event loop (see process_exit).
    run_then_exit(main)
