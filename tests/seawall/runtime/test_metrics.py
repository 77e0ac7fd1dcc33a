"""Global metric attributes come from the operator only; Seawall never invents them."""

from __future__ import annotations

from pathlib import Path

from seawall.runtime.metrics import global_attributes, telemetry_environ
from seawall.runtime.settings import load_settings
from seawall.runtime.tracing import parse_resource_attributes


def test_only_operator_set_resource_attributes_become_global_attributes() -> None:
    assert global_attributes({}) == {}
    environ = {
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=internal, service.version=1.2.3,"
        "host.name=box-7,team=guard",
    }
    assert global_attributes(environ) == {
        "deployment.environment": "internal",
        "service.version": "1.2.3",
    }
    # The explicit variables win over OTEL_RESOURCE_ATTRIBUTES; blank ones are ignored.
    environ |= {"SEAWALL_DEPLOYMENT_ENVIRONMENT": "public", "SEAWALL_SERVICE_VERSION": " "}
    assert global_attributes(environ) == {
        "deployment.environment": "public",
        "service.version": "1.2.3",
    }
    assert global_attributes({"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment="}) == {}


def test_resource_attributes_from_the_user_config_file(tmp_path: Path) -> None:
    config = tmp_path / "xdg" / "seawall" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("otel_resource_attributes: deployment.environment=internal\n")
    settings = load_settings({"XDG_CONFIG_HOME": str(tmp_path / "xdg")}).settings
    environ = telemetry_environ(settings)
    assert environ == {"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=internal"}
    assert global_attributes(environ) == {"deployment.environment": "internal"}
    assert telemetry_environ(load_settings({"HOME": str(tmp_path)}).settings) == {}


def test_parse_resource_attributes_skips_blanks() -> None:
    assert parse_resource_attributes(None) == {}
    assert parse_resource_attributes("a=1,,b=, c = 3,=x") == {"a": "1", "c": "3"}
