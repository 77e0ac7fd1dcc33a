"""``python -m gateway``: serve the gateway with uvicorn, configured from the environment.

Settings come from ``gateway.settings.from_env``; logs are structlog JSON lines on stderr
(``--log-format console`` or ``SEAWALL_LOG_FORMAT=console`` for humans), uvicorn's own
loggers included.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import structlog
import uvicorn
from fastapi import FastAPI
from temporalio.client import Client

from gateway.app import create_app
from gateway.settings import ConfigurationError, GatewaySettings, from_env
from seawall.runtime.logs import LOG_FORMATS, configure_logging, default_log_format
from seawall.runtime.plugin import connect

EXIT_CONFIG = 2


def build(settings: GatewaySettings) -> FastAPI:
    async def client_factory() -> Client:
        return await connect(settings.temporal_address, settings.temporal_namespace)

    return create_app(settings, client_factory)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
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
        default=default_log_format(),
        help="json (default, or SEAWALL_LOG_FORMAT) or console for humans",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging(args.log_format)
    try:
        settings = from_env()
        app = build(settings)
    except ConfigurationError as err:
        print(f"gateway: error: {err}", file=sys.stderr)
        return EXIT_CONFIG
    structlog.get_logger("seawall.gateway").info(
        "gateway_starting",
        host=settings.host,
        port=settings.port,
        temporal_address=settings.temporal_address,
        namespace=settings.temporal_namespace,
        task_queue=settings.task_queue,
        auth=settings.token is not None,
    )
    # log_config=None keeps uvicorn's loggers on the root handler configure_logging set up.
    uvicorn.run(app, host=settings.host, port=settings.port, log_config=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
