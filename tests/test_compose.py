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


def test_payloads_live_in_minio_with_its_bucket_created_before_worker_and_gateway_start() -> None:
    # docs/settings.md, "Payload storage": every process that talks to Temporal must use the
    # same store, so the worker and the gateway get the same settings.
    done = config({"SEAWALL_GATEWAY_TOKEN": "t0ken"})
    assert done.returncode == 0, done.stderr
    services = yaml.safe_load(done.stdout)["services"]

    assert "healthcheck" in services["minio"]
    setup = services["minio-setup"]
    assert setup["depends_on"]["minio"]["condition"] == "service_healthy"
    assert "mc mb --ignore-existing local/seawall-payloads" in " ".join(setup["entrypoint"])
    storage_keys = (
        "SEAWALL_PAYLOAD_STORAGE",
        "SEAWALL_PAYLOAD_STORAGE_BUCKET",
        "SEAWALL_PAYLOAD_STORAGE_S3_ENDPOINT",
        "SEAWALL_PAYLOAD_STORAGE_THRESHOLD_BYTES",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
    )
    worker, gateway = services["worker"], services["gateway"]
    for service in (worker, gateway):
        assert service["depends_on"]["minio-setup"]["condition"] == (
            "service_completed_successfully"
        )
        assert service["environment"]["SEAWALL_PAYLOAD_STORAGE"] == "s3"
        assert service["environment"]["SEAWALL_PAYLOAD_STORAGE_BUCKET"] == "seawall-payloads"
    assert {k: worker["environment"][k] for k in storage_keys} == {
        k: gateway["environment"][k] for k in storage_keys
    }
    codec = services["temporal-ui"]["environment"]["TEMPORAL_CODEC_ENDPOINT"]
    assert codec.endswith("/codec")


def test_the_compose_storage_settings_are_valid_settings() -> None:
    from seawall.runtime.settings import load_settings

    services = yaml.safe_load(config({"SEAWALL_GATEWAY_TOKEN": "t0ken"}).stdout)["services"]
    environment = {k: str(v) for k, v in services["worker"]["environment"].items()}
    settings = load_settings(environ={**environment, "HOME": "/nonexistent"}).settings

    assert settings.payload_storage == "s3"
    assert settings.payload_storage_s3_endpoint == "http://minio:9000"
