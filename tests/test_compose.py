"""docker-compose.yml stays a stack the README describes (no Docker engine runs here)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_compose_stack_has_the_production_shaped_services() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]

    assert {"postgresql", "temporal", "temporal-ui", "worker"} <= set(services)
    assert services["worker"]["build"] == "."
    assert (ROOT / "Dockerfile").is_file()
    assert services["worker"]["environment"]["TEMPORAL_ADDRESS"] == "temporal:7233"
    assert "SEAWALL_REPEATED_TOOL_FAILURE_GUARD" in services["worker"]["environment"]
    for name in ("postgresql", "temporal"):
        assert "healthcheck" in services[name], name
