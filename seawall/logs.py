"""structlog configured in one place for the worker, the CLI and (later) the gateway.

Everything goes to stderr as one JSON object per line (or a console rendering for humans),
so ``seawall run --json`` keeps stdout for its single result object. Temporal's own loggers,
``workflow.logger`` included, are routed through the same renderer.
"""

from __future__ import annotations

import logging
import sys
from typing import Literal

import structlog
from temporalio import workflow

LogFormat = Literal["json", "console"]


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
