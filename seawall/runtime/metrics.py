"""The worker's metrics runtime: a Prometheus endpoint, or OTLP export, or neither.

``deployment.environment`` and ``service.version`` become global attributes only when the
operator sets them (the ``otel_resource_attributes``, ``deployment_environment`` and
``service_version`` settings); Seawall never invents a deployment environment, because a
rollout analysis segmented by a guessed one would be wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from temporalio.runtime import OpenTelemetryConfig, PrometheusConfig, Runtime, TelemetryConfig

from workflows.prompt.telemetry import PROMPT_HISTOGRAM_BUCKETS

if TYPE_CHECKING:
    from seawall.runtime.settings import SeawallSettings

RESOURCE_KEYS = ("deployment.environment", "service.version")


def parse_resource_attributes(text: str | None) -> dict[str, str]:
    """``key=value,key=value`` (the ``OTEL_RESOURCE_ATTRIBUTES`` format), blanks skipped."""
    found: dict[str, str] = {}
    for pair in (text or "").split(","):
        key, _, value = pair.partition("=")
        if key.strip() and value.strip():
            found[key.strip()] = value.strip()
    return found


def resource_attributes(settings: SeawallSettings) -> dict[str, str]:
    """Every resource attribute the operator set (for spans): the pairs of
    ``otel_resource_attributes``, with ``deployment_environment`` and ``service_version``
    over them."""
    found = parse_resource_attributes(settings.otel_resource_attributes)
    explicit = {
        "deployment.environment": settings.deployment_environment,
        "service.version": settings.service_version,
    }
    found.update({key: value for key, value in explicit.items() if value})
    return found


def global_attributes(settings: SeawallSettings) -> dict[str, str]:
    """The resource attributes that become global metric attributes; nothing else."""
    return {k: v for k, v in resource_attributes(settings).items() if k in RESOURCE_KEYS}


def build_runtime(
    *,
    metrics_bind: str | None,
    otlp_endpoint: str | None,
    attributes: Mapping[str, str],
) -> Runtime | None:
    """A runtime exporting metrics, or ``None`` for the SDK default (no export).

    With both a Prometheus address and an OTLP endpoint, metrics go to Prometheus and the
    endpoint is left to spans (``--otel-tracing``).
    """
    metrics: PrometheusConfig | OpenTelemetryConfig | None = None
    if metrics_bind:
        metrics = PrometheusConfig(
            bind_address=metrics_bind,
            histogram_bucket_overrides={k: list(v) for k, v in PROMPT_HISTOGRAM_BUCKETS.items()},
        )
        # Prometheus label names allow no dots: deployment.environment → deployment_environment.
        attributes = {key.replace(".", "_"): value for key, value in attributes.items()}
    elif otlp_endpoint:
        metrics = OpenTelemetryConfig(url=otlp_endpoint)
    if metrics is None:
        return None
    return Runtime(telemetry=TelemetryConfig(metrics=metrics, global_tags=attributes))
