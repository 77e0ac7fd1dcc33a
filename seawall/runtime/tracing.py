"""Temporal's OpenTelemetry tracing interceptor, behind ``--otel-tracing``.

Off by default. With it, the worker's client carries
``temporalio.contrib.opentelemetry.TracingInterceptor``: workflow, activity, signal, query
and update spans, propagated through Temporal headers. Spans go to the OTLP collector at
``SEAWALL_OTLP_ENDPOINT`` when one is set (gRPC), otherwise nowhere (useful only with a
collector). The span resource carries the operator's ``OTEL_RESOURCE_ATTRIBUTES`` and
``service.name`` ``seawall-worker``; a deployment environment is never invented.

The OpenTelemetry SDK is an optional extra (``pip install 'seawall[otel]'``); asking for
tracing without it is a one-line startup error, not a silent no-op. Exporting is done on a
background thread with a bounded queue, so a collector that is down only loses spans.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from temporalio.client import Interceptor

SERVICE_NAME = "seawall-worker"
INSTALL_HINT = "pip install 'seawall[otel]'"
EXPORT_TIMEOUT_SECONDS = 3


class TracingUnavailable(RuntimeError):
    """Tracing was asked for but cannot be set up; the message says what to install."""


@dataclass
class Tracing:
    """The interceptor to add to a client, and the provider to flush on shutdown."""

    interceptor: Interceptor
    provider: Any

    def shutdown(self) -> None:
        with contextlib.suppress(Exception):
            self.provider.shutdown()


def build_tracing(
    *,
    otlp_endpoint: str | None,
    resource_attributes: Mapping[str, str] | None = None,
    span_exporter: Any = None,
) -> Tracing:
    """A tracing interceptor with its own tracer provider.

    ``span_exporter`` (an SDK ``SpanExporter``) replaces the OTLP exporter, for tests.
    Raises :class:`TracingUnavailable` when the SDK (or, with an endpoint, the OTLP
    exporter) is not installed.
    """
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
        from temporalio.contrib.opentelemetry import TracingInterceptor
    except ImportError as exc:
        raise TracingUnavailable(
            f"--otel-tracing needs the OpenTelemetry SDK ({exc.name or exc} is missing): "
            f"{INSTALL_HINT}"
        ) from None
    resource = Resource.create({"service.name": SERVICE_NAME, **(resource_attributes or {})})
    provider = TracerProvider(resource=resource)
    if span_exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    elif otlp_endpoint:
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        except ImportError as exc:
            raise TracingUnavailable(
                f"SEAWALL_OTLP_ENDPOINT needs the OTLP exporter ({exc.name or exc} is "
                f"missing): {INSTALL_HINT}"
            ) from None
        provider.add_span_processor(
            BatchSpanProcessor(
                OTLPSpanExporter(
                    endpoint=otlp_endpoint,
                    insecure=not otlp_endpoint.startswith("https://"),
                    # Best effort: a dead collector delays a worker's exit by this at most.
                    timeout=EXPORT_TIMEOUT_SECONDS,
                )
            )
        )
    return Tracing(
        interceptor=TracingInterceptor(provider.get_tracer("seawall")), provider=provider
    )
