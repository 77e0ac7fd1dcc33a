"""structlog configured in one place for the worker, the CLI and the gateway.

Everything goes to stderr as one JSON object per line (or a console rendering for humans),
so ``seawall run --json`` keeps stdout for its single result object. Temporal's own loggers,
``workflow.logger`` included, are routed through the same renderer. The format and level
are settings (``log_format``, ``log_level`` in :mod:`seawall.runtime.settings`); each
entry point passes them in.

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
import sys
from collections.abc import Mapping

import structlog
from temporalio import workflow

from seawall.runtime.settings import LogFormat

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
