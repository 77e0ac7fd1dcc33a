"""docker-compose.yml is validated here, not run (no Docker engine on the test machines):
Debian's ``docker-compose config`` parses it for real, and every service the README
names exists."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"


def config(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.skip("Debian's docker-compose is not installed (.ci/run installs it)")
    return subprocess.run(
        [binary, "-f", str(COMPOSE), "config"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )


def test_compose_file_parses_with_a_real_parser() -> None:
    done = config({"SEAWALL_GATEWAY_TOKEN": "t0ken", "SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "warn"})

    assert done.returncode == 0, done.stderr
    resolved = yaml.safe_load(done.stdout)
    assert (
        resolved["services"]["worker"]["environment"]["SEAWALL_REPEATED_TOOL_FAILURE_GUARD"]
        == "warn"
    )
    assert resolved["services"]["gateway"]["environment"]["SEAWALL_GATEWAY_TOKEN"] == "t0ken"


def test_compose_refuses_to_start_the_gateway_without_a_token() -> None:
    env = {k: v for k, v in os.environ.items() if k != "SEAWALL_GATEWAY_TOKEN"}
    done = config({**env, "SEAWALL_GATEWAY_TOKEN": ""})

    assert done.returncode != 0
    assert "SEAWALL_GATEWAY_TOKEN" in done.stderr


def test_every_service_the_readme_names_exists_with_health_checks() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"`compose:([a-z-]+)`", readme))

    assert named, "the README names the compose services as `compose:<name>`"
    assert named <= set(services)
    assert {"postgresql", "temporal", "temporal-ui", "worker", "gateway"} <= set(services)
    for name in ("postgresql", "temporal", "worker", "gateway"):
        assert "healthcheck" in services[name], name
    assert services["worker"]["build"] == services["gateway"]["build"] == "."
    assert (ROOT / "Dockerfile").is_file()


def test_only_the_worker_is_handed_model_keys() -> None:
    # The worker chooses the model (docs/architecture.md, "Layers"); the gateway never needs it.
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    assert "OPENAI_API_KEY" in services["worker"]["environment"]
    for name, service in services.items():
        if name != "worker":
            assert not any(key.startswith("OPENAI_") for key in service.get("environment", {}))


def test_the_server_is_set_up_the_way_temporal_recommends_with_pinned_images() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    images = {name: service.get("image", "") for name, service in services.items()}
    # No deprecated auto-setup image: an admin-tools job sets the schema up first.
    assert not any("auto-setup" in image for image in images.values())
    assert images["temporal"].startswith("temporalio/server:")
    assert images["temporal-schema"].startswith("temporalio/admin-tools:")
    assert services["temporal"]["depends_on"]["temporal-schema"] == {
        "condition": "service_completed_successfully"
    }
    assert services["worker"]["depends_on"]["temporal-namespace"] == {
        "condition": "service_completed_successfully"
    }
    for script in ("setup-schema.sh", "create-namespace.sh"):
        assert (ROOT / "deploy" / "temporal" / script).is_file()
    # Every image is pinned to a version, never "latest" or a bare name.
    for name, image in images.items():
        if image:
            tag = image.rsplit(":", 1)[-1]
            assert ":" in image and tag != "latest" and re.search(r"\d", tag), name


def test_long_running_services_restart_and_report_health_and_jobs_retry() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    jobs = {"temporal-schema", "temporal-namespace"}
    for name, service in services.items():
        if name in jobs:
            assert service["restart"].startswith("on-failure"), name
        else:
            assert service.get("restart") == "unless-stopped", name
            assert "healthcheck" in service, name
