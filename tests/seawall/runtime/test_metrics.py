"""Global metric attributes come from the operator only; Seawall never invents them."""

from __future__ import annotations

from pathlib import Path

from seawall.runtime.metrics import (
    global_attributes,
    parse_resource_attributes,
    resource_attributes,
)
from seawall.runtime.settings import SeawallSettings, load_settings


def settings(tmp_path: Path, **environ: str) -> SeawallSettings:
    return load_settings({"HOME": str(tmp_path), **environ}).settings


def test_only_operator_set_resource_attributes_become_global_attributes(tmp_path: Path) -> None:
    assert global_attributes(settings(tmp_path)) == {}
    otel = "deployment.environment=internal, service.version=1.2.3,host.name=box-7,team=guard"
    configured = settings(tmp_path, OTEL_RESOURCE_ATTRIBUTES=otel)
    assert global_attributes(configured) == {
        "deployment.environment": "internal",
        "service.version": "1.2.3",
    }
    # Spans carry every attribute the operator set.
    assert resource_attributes(configured)["team"] == "guard"
    # The explicit settings win over OTEL_RESOURCE_ATTRIBUTES; blank ones are ignored.
    explicit = settings(
        tmp_path,
        OTEL_RESOURCE_ATTRIBUTES=otel,
        SEAWALL_DEPLOYMENT_ENVIRONMENT="public",
        SEAWALL_SERVICE_VERSION=" ",
    )
    assert global_attributes(explicit) == {
        "deployment.environment": "public",
        "service.version": "1.2.3",
    }
    blank = settings(tmp_path, OTEL_RESOURCE_ATTRIBUTES="deployment.environment=")
    assert global_attributes(blank) == {}


def test_resource_attributes_from_the_user_config_file(tmp_path: Path) -> None:
    config = tmp_path / "xdg" / "seawall" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(
        "otel_resource_attributes: deployment.environment=internal\nservice_version: 1.4\n"
    )
    configured = load_settings({"XDG_CONFIG_HOME": str(tmp_path / "xdg")}).settings
    assert global_attributes(configured) == {
        "deployment.environment": "internal",
        "service.version": "1.4",
    }


def test_parse_resource_attributes_skips_blanks() -> None:
    assert parse_resource_attributes(None) == {}
    assert parse_resource_attributes("a=1,,b=, c = 3,=x") == {"a": "1", "c": "3"}
