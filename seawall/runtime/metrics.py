"""The worker's metrics runtime: a Prometheus endpoint, or OTLP export, or neither.

``deployment.environment`` and ``service.version`` become global attributes only when the
operator sets them (``OTEL_RESOURCE_ATTRIBUTES`` or the SEAWALL_* variables); Seawall never
invents a deployment environment, because a rollout analysis segmented by a guessed one
would be wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from temporalio.runtime import OpenTelemetryConfig, PrometheusConfig, Runtime, TelemetryConfig

if TYPE_CHECKING:
    from seawall.runtime.settings import SeawallSettings

RESOURCE_KEYS = ("deployment.environment", "service.version")


def telemetry_environ(settings: SeawallSettings) -> dict[str, str]:
    """The resource variables of ``settings`` (environment or user config) in the shape
    :func:`global_attributes` reads, so both sources give the same attributes."""
    values = {
        "OTEL_RESOURCE_ATTRIBUTES": settings.otel_resource_attributes,
        "SEAWALL_DEPLOYMENT_ENVIRONMENT": settings.deployment_environment,
        "SEAWALL_SERVICE_VERSION": settings.service_version,
    }
    return {name: value for name, value in values.items() if value}


def global_attributes(environ: Mapping[str, str]) -> dict[str, str]:
    """Resource attributes the operator set; nothing else."""
    found: dict[str, str] = {}
    for pair in environ.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","):
        key, _, value = pair.partition("=")
        if key.strip() in RESOURCE_KEYS and value.strip():
            found[key.strip()] = value.strip()
    explicit = {
        "deployment.environment": environ.get("SEAWALL_DEPLOYMENT_ENVIRONMENT", ""),
        "service.version": environ.get("SEAWALL_SERVICE_VERSION", ""),
    }
    found.update({key: value.strip() for key, value in explicit.items() if value.strip()})
    return found


def build_runtime(
    *,
    metrics_bind: str | None,
    otlp_endpoint: str | None,
    environ: Mapping[str, str],
) -> Runtime | None:
    """A runtime exporting metrics, or ``None`` for the SDK default (no export).

    With both a Prometheus address and an OTLP endpoint, metrics go to Prometheus and the
    endpoint is left to spans (``--otel-tracing``).
    """
    metrics: PrometheusConfig | OpenTelemetryConfig | None = None
    attributes = global_attributes(environ)
    if metrics_bind:
        metrics = PrometheusConfig(bind_address=metrics_bind)
        # Prometheus label names allow no dots: deployment.environment → deployment_environment.
        attributes = {key.replace(".", "_"): value for key, value in attributes.items()}
    elif otlp_endpoint:
        metrics = OpenTelemetryConfig(url=otlp_endpoint)
    if metrics is None:
        return None
    return Runtime(telemetry=TelemetryConfig(metrics=metrics, global_tags=attributes))
