"""structlog configured in one place for the worker, the CLI and the gateway.

Everything goes to stderr as one JSON object per line (or a console rendering for humans),
so ``seawall run --json`` keeps stdout for its single result object. Temporal's own loggers,
``workflow.logger`` included, are routed through the same renderer. The worker's and the
gateway's ``--log-format`` default to ``SEAWALL_LOG_FORMAT`` or the user config file
(:mod:`seawall.runtime.settings`).

The Temporal SDK's DEBUG lines that dump whole payloads (an activity's completion with its
result, heartbeat details, and, when proto logging is on, activations and service calls)
keep their message but lose the payload: with DEBUG on, tool arguments, results, paths and
error text would otherwise reach the log.

A log line that cannot be written (a closed stream, an unserialisable field) is reported by
the logging module's own error handling and dropped; it never raises into the caller, so a
logging failure cannot change a prompt.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import Literal

import structlog
from temporalio import workflow

from seawall.runtime.settings import SETTINGS_BY_NAME, UserConfig, from_environment
from seawall.runtime.settings import user_config_path as _user_config_path

LogFormat = Literal["json", "console"]
LOG_FORMATS: tuple[LogFormat, ...] = ("json", "console")


def _configured(name: str, environ: Mapping[str, str]) -> str | None:
    """One logging setting from the environment, else the user config file (the same
    order as :func:`seawall.runtime.settings.load_settings`, without validating anything else)."""
    found = from_environment(SETTINGS_BY_NAME[name], environ)
    if found is not None:
        return found[1].strip()
    value = UserConfig.read(_user_config_path(environ)).get(name)
    return str(value).strip() if value is not None else None


def default_log_format(environ: Mapping[str, str] | None = None) -> LogFormat:
    """The configured log format; ``json`` when unset or not a known format."""
    value = (_configured("log_format", os.environ if environ is None else environ) or "").lower()
    for known in LOG_FORMATS:
        if value == known:
            return known
    return "json"


PAYLOAD_OMITTED = "<payload omitted>"
# SDK message templates → the index of the argument that is a payload.
_PAYLOAD_MESSAGES: Mapping[str, int] = {
    "Completing activity with completion: %s": 0,
    "Recording heartbeat with details %s": 0,
    "Received workflow activation:\n%s": 0,
    "Sending workflow completion:\n%s": 0,
    "Service %s request to %s: %s": 2,
    "Service %s response from %s: %s": 2,
}


class RedactPayloads(logging.Filter):
    """Replaces the payload argument of the SDK's payload-dumping DEBUG lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("temporalio") or not isinstance(record.msg, str):
            return True
        index = _PAYLOAD_MESSAGES.get(record.msg)
        if index is not None and isinstance(record.args, tuple) and len(record.args) > index:
            args = list(record.args)
            args[index] = PAYLOAD_OMITTED
            record.args = tuple(args)
        return True


def configure_logging(log_format: LogFormat = "json", level: str = "INFO") -> None:
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.stdlib.ExtraAdder(),
    ]
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if log_format == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RedactPayloads())
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    # Workflow context arrives as a structured field; keep the message itself constant.
    workflow.logger.workflow_info_on_message = False
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
