"""What makes the ``guard_rollout`` setting usable (docs/rollout.md, "Rollout cohorts").

A rollout policy needs a salt for the owner hash and a deployment environment, and more than
5 % enforcing needs the explicit override. The settings model checks this at startup (the
catalogue's ``guard_rollout`` validator) and the operator-settings activity's per-session
read (``resolve_rollout_settings`` in seawall/runtime/settings/session.py) checks it again
with the same function, on values validated by the same fields, so a policy that started a
worker is the policy its sessions get. The policy's grammar and the cohort assignment are
workflow code (workflows/seed/rollout.py); the report over past sessions is ``seawall rollout``
(seawall/rollout/).
"""

from __future__ import annotations

from typing import Any

from workflows.seed.rollout import (
    MAX_ENFORCE_PERCENT,
    RolloutPolicies,
    RolloutPolicyError,
    label_value,
    parse_rollout_policy,
)


def check_rollout(
    text: str, *, salt: str | None, environment: str | None, allow_wide_enforce: bool
) -> RolloutPolicies:
    """The parsed ``guard_rollout`` policy, or ValueError saying what is wrong with it or
    with what it needs (a salt, a deployment environment, the override above 5 %)."""
    try:
        policies = parse_rollout_policy(text)
    except RolloutPolicyError as err:
        raise ValueError(f"invalid rollout policy: {err}") from None
    if not salt:
        raise ValueError("needs SEAWALL_GUARD_ROLLOUT_SALT (the owner hash's salt)")
    if environment is None:
        raise ValueError(
            "needs a deployment environment (SEAWALL_DEPLOYMENT_ENVIRONMENT, a short name): "
            "the seed's rollout advances per environment"
        )
    widest = policies.max_enforce_percent()
    if widest > MAX_ENFORCE_PERCENT and not allow_wide_enforce:
        raise ValueError(
            f"enforces for {widest}% of owners; more than {MAX_ENFORCE_PERCENT}% needs "
            "SEAWALL_GUARD_ROLLOUT_ALLOW_WIDE_ENFORCE=true"
        )
    return policies


def _resource_value(explicit: Any, resource_attributes: Any, key: str) -> str | None:
    """An OpenTelemetry resource value: the explicit setting, else ``key`` in
    ``otel_resource_attributes``; only a short token (it becomes a search attribute)."""
    if isinstance(explicit, str) and explicit.strip():
        return label_value(explicit.strip())
    for pair in str(resource_attributes or "").split(","):
        name, _, value = pair.partition("=")
        if name.strip() == key and value.strip():
            return label_value(value.strip())
    return None


def deployment_environment(explicit: Any, resource_attributes: Any) -> str | None:
    """``deployment_environment``, else ``deployment.environment`` of the resource attributes."""
    return _resource_value(explicit, resource_attributes, "deployment.environment")


def service_version(explicit: Any, resource_attributes: Any) -> str | None:
    """``service_version``, else ``service.version`` of the resource attributes."""
    return _resource_value(explicit, resource_attributes, "service.version")
