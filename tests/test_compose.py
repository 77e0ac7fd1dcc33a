"""docker-compose.yml is validated here, not run (no Docker engine on the test machines):
Debian's ``docker-compose config`` parses it for real (tests/compose_helpers.py), and every
service the docs name (README.md, docs/*.md) exists. Its Temporal TLS is run, as far as a
machine without Docker allows, by tests/e2e/test_compose_tls.py."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

# The codec token and the session-signing key are required like the gateway's token: config()
# gives both unless a test overrides them.
from tests.compose_helpers import compose_config as config
from workflows.prompt import telemetry

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"


def test_compose_file_parses_with_a_real_parser() -> None:
    done = config(
        {
            "SEAWALL_GATEWAY_TOKEN": "t0ken",
            "SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "warn",
            "GRAFANA_ADMIN_PASSWORD": "pw",
        }
    )

    assert done.returncode == 0, done.stderr
    resolved = yaml.safe_load(done.stdout)
    assert (
        resolved["services"]["worker"]["environment"]["SEAWALL_REPEATED_TOOL_FAILURE_GUARD"]
        == "warn"
    )
    assert resolved["services"]["gateway"]["environment"]["SEAWALL_GATEWAY_TOKEN"] == "t0ken"


def test_compose_refuses_to_start_the_gateway_without_a_token() -> None:
    env = {k: v for k, v in os.environ.items() if k != "SEAWALL_GATEWAY_TOKEN"}
    done = config({**env, "SEAWALL_GATEWAY_TOKEN": "", "GRAFANA_ADMIN_PASSWORD": "pw"})

    assert done.returncode != 0
    assert "SEAWALL_GATEWAY_TOKEN" in done.stderr


def test_every_service_the_docs_name_exists_with_health_checks() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    named = set(re.findall(r"`compose:([a-z-]+)`", "".join(p.read_text() for p in pages)))

    assert named, "the docs (docs/deploying.md) name the compose services as `compose:<name>`"
    assert named <= set(services)
    assert {
        "postgresql",
        "temporal",
        "temporal-ui",
        "worker",
        "gateway",
        "prometheus",
        "grafana",
    } <= set(services)
    for name in ("postgresql", "temporal", "worker", "gateway", "prometheus", "grafana"):
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
    jobs = {"temporal-certs", "temporal-schema", "temporal-namespace", "minio-setup"}
    for name, service in services.items():
        if name in jobs:
            assert service["restart"].startswith("on-failure"), name
        else:
            assert service.get("restart") == "unless-stopped", name
            assert "healthcheck" in service, name


def test_payloads_live_in_minio_with_its_bucket_created_before_worker_and_gateway_start() -> None:
    # docs/settings.md, "Payload storage": every process that talks to Temporal must use the
    # same store, so the worker and the gateway get the same settings.
    done = config({"SEAWALL_GATEWAY_TOKEN": "t0ken", "GRAFANA_ADMIN_PASSWORD": "pw"})
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


def test_the_ui_decodes_through_the_codec_token_in_its_endpoint() -> None:
    # The browser sends no bearer token: the codec credential is in the endpoint's URL.
    done = config({"SEAWALL_GATEWAY_TOKEN": "t0ken", "GRAFANA_ADMIN_PASSWORD": "pw"})
    assert done.returncode == 0, done.stderr
    services = yaml.safe_load(done.stdout)["services"]
    codec = services["temporal-ui"]["environment"]["TEMPORAL_CODEC_ENDPOINT"]
    gateway = services["gateway"]["environment"]

    assert codec == "http://localhost:8000/codec/ui/c0dec"
    assert gateway["SEAWALL_CODEC_TOKEN"] == "c0dec"
    assert gateway["SEAWALL_CODEC_UI_ORIGINS"].split(",")[0] == "http://localhost:8080"
    assert "SEAWALL_CODEC_TOKEN" not in services["worker"]["environment"]
    refused = config(
        {"SEAWALL_GATEWAY_TOKEN": "t", "GRAFANA_ADMIN_PASSWORD": "pw", "SEAWALL_CODEC_TOKEN": ""}
    )
    assert refused.returncode != 0
    assert "SEAWALL_CODEC_TOKEN" in refused.stderr


def test_the_compose_storage_settings_are_valid_settings() -> None:
    from seawall.runtime.settings import load_settings

    services = yaml.safe_load(
        config({"SEAWALL_GATEWAY_TOKEN": "t0ken", "GRAFANA_ADMIN_PASSWORD": "pw"}).stdout
    )["services"]
    environment = {k: str(v) for k, v in services["worker"]["environment"].items()}
    settings = load_settings(environ={**environment, "HOME": "/nonexistent"}).settings

    assert settings.payload_storage == "s3"
    assert settings.payload_storage_s3_endpoint == "http://minio:9000"


# --- closed by default: mTLS to Temporal, only the gateway and authenticated UIs published ---
# (docs/security-temporal.md, "Compose hardening")

TEMPORAL_CLIENTS = {
    "worker": "tls-worker",
    "gateway": "tls-gateway",
    "temporal-namespace": "tls-admin",
}


def resolved_services() -> dict[str, Any]:
    done = config({"SEAWALL_GATEWAY_TOKEN": "t0ken", "GRAFANA_ADMIN_PASSWORD": "pw"})
    assert done.returncode == 0, done.stderr
    services: dict[str, Any] = yaml.safe_load(done.stdout)["services"]
    return services


def volumes_of(service: dict[str, Any]) -> dict[str, str]:
    """Target -> source of a service's mounts (as written in the compose file)."""
    found = {}
    for volume in service.get("volumes", []):
        source, _, rest = volume.partition(":")
        found[rest.split(":")[0]] = source
    return found


def test_only_the_gateway_and_authenticated_uis_are_published() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    published = {
        name: [str(p) for p in service["ports"]]
        for name, service in services.items()
        if service.get("ports")
    }
    # The gateway (bearer tokens), the UI behind basic auth, Grafana (its admin password):
    # not Temporal's 7233, not the UI's own port, not Prometheus or the worker's metrics.
    assert published == {
        "gateway": ["8000:8000"],
        "temporal-ui-proxy": ["8080:8080"],
        "grafana": ["3000:3000"],
    }
    assert not any("expose" in service for service in services.values())


def test_the_temporal_frontend_requires_client_certificates_of_the_stacks_ca() -> None:
    services = resolved_services()
    server = services["temporal"]["environment"]
    assert server["TEMPORAL_TLS_REQUIRE_CLIENT_AUTH"] == "true"
    assert server["TEMPORAL_TLS_FRONTEND_CERT"] == "/etc/temporal/tls/cert.pem"
    assert server["TEMPORAL_TLS_CLIENT1_CA_CERT"] == "/etc/temporal/tls/ca.pem"
    assert volumes_of(services["temporal"])["/etc/temporal/tls"] == "tls-temporal"
    certs = services["temporal-certs"]
    assert certs["build"]["context"].endswith("deploy/certs")
    for name in ("temporal", "worker", "gateway", "temporal-ui-proxy"):
        assert services[name]["depends_on"]["temporal-certs"] == {
            "condition": "service_completed_successfully"
        }, name


def test_every_temporal_client_connects_with_its_own_certificate() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    for name, volume in TEMPORAL_CLIENTS.items():
        environment = services[name]["environment"]
        assert environment["TEMPORAL_ADDRESS"] == "temporal:7233", name
        assert environment["TEMPORAL_TLS_CLIENT_CERT_PATH"] == "/run/secrets/temporal/cert.pem"
        assert environment["TEMPORAL_TLS_CLIENT_KEY_PATH"] == "/run/secrets/temporal/key.pem"
        assert environment["TEMPORAL_TLS_SERVER_CA_CERT_PATH"] == "/run/secrets/temporal/ca.pem"
        assert volumes_of(services[name])["/run/secrets/temporal"] == volume, name
    ui = services["temporal-ui"]
    assert ui["environment"]["TEMPORAL_TLS_CERT"] == "/run/secrets/temporal/cert.pem"
    assert ui["environment"]["TEMPORAL_TLS_ENABLE_HOST_VERIFICATION"] == "true"
    assert volumes_of(ui)["/run/secrets/temporal"] == "tls-ui"
    # No service but the job sees the CA key, and no two services share a key.
    mounting = {name: set(volumes_of(service).values()) for name, service in services.items()}
    assert [name for name, used in mounting.items() if "temporal-ca" in used] == ["temporal-certs"]
    for volume in ("tls-temporal", "tls-worker", "tls-gateway", "tls-ui", "tls-admin"):
        holders = [name for name, used in mounting.items() if volume in used]
        assert sorted(holders) == sorted({"temporal-certs", _holder(volume)}), volume


def _holder(volume: str) -> str:
    return {
        "tls-temporal": "temporal",
        "tls-ui": "temporal-ui",
        **{v: k for k, v in TEMPORAL_CLIENTS.items()},
    }[volume]


def test_the_compose_temporal_client_settings_are_valid_settings(tmp_path: Path) -> None:
    from seawall.runtime.settings import load_settings

    environment = {k: str(v) for k, v in resolved_services()["worker"]["environment"].items()}
    settings = load_settings(environ={**environment, "HOME": str(tmp_path)}).settings
    assert settings.temporal_tls_client_cert_path == Path("/run/secrets/temporal/cert.pem")


def test_the_ui_is_published_only_behind_basic_auth() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    proxy = services["temporal-ui-proxy"]
    conf = mounted(proxy, "/etc/nginx/nginx.conf").read_text()
    assert "proxy_pass http://temporal-ui:8080;" in conf
    assert "auth_basic_user_file /etc/temporal-ui-auth/htpasswd;" in conf
    # Only the health check is open, and it says nothing.
    open_locations = conf.count("auth_basic off;")
    assert open_locations == 1 and "location = /healthz" in conf
    assert volumes_of(proxy)["/etc/temporal-ui-auth"] == "temporal-ui-auth"
    assert services["temporal-ui"]["environment"]["TEMPORAL_CORS_ORIGINS"].endswith(":8080")


def test_the_worker_may_make_the_sandboxs_namespaces() -> None:
    # bubblewrap needs user/pid/mount namespaces and a fresh /proc inside the container.
    worker = yaml.safe_load(COMPOSE.read_text())["services"]["worker"]
    assert {"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"} <= set(
        worker["security_opt"]
    )
    others = yaml.safe_load(COMPOSE.read_text())["services"]
    assert [name for name, s in others.items() if "security_opt" in s] == ["worker"]


# --- Prometheus and Grafana (docs/rollout.md, "Rollout cohorts") --------------------

DEPLOY = ROOT / "deploy"


def mounted(service: dict[str, Any], target: str) -> Path:
    """The repository path a service mounts at ``target``."""
    for volume in service["volumes"]:
        source, _, rest = volume.partition(":")
        if rest.split(":")[0] == target:
            assert source.startswith("./"), volume
            return ROOT / source
    raise AssertionError(f"nothing mounted at {target}")


def test_grafana_needs_an_admin_password() -> None:
    done = config({"SEAWALL_GATEWAY_TOKEN": "t0ken", "GRAFANA_ADMIN_PASSWORD": ""})
    assert done.returncode != 0
    assert "GRAFANA_ADMIN_PASSWORD" in done.stderr


def test_prometheus_scrapes_the_workers_metrics_port() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    prometheus = services["prometheus"]
    config_file = mounted(prometheus, "/etc/prometheus/prometheus.yml")
    scrape = yaml.safe_load(config_file.read_text())["scrape_configs"]
    targets = [t for job in scrape for c in job["static_configs"] for t in c["targets"]]
    port = services["worker"]["environment"]["SEAWALL_METRICS_PORT"]
    assert targets == [f"worker:{port}"]
    assert services["worker"]["environment"]["SEAWALL_METRICS_HOST"] == "0.0.0.0"
    assert "--config.file=/etc/prometheus/prometheus.yml" in prometheus["command"]


def test_grafana_is_provisioned_with_prometheus_and_the_seawall_dashboard() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    grafana = services["grafana"]
    provisioning = mounted(grafana, "/etc/grafana/provisioning")
    dashboards = mounted(grafana, "/var/lib/grafana/dashboards")
    sources = yaml.safe_load((provisioning / "datasources" / "prometheus.yml").read_text())
    (source,) = sources["datasources"]
    assert source["type"] == "prometheus" and source["url"] == "http://prometheus:9090"
    providers = yaml.safe_load((provisioning / "dashboards" / "seawall.yml").read_text())
    assert providers["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"

    dashboard = json.loads((dashboards / "seawall.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    uids = {p["datasource"]["uid"] for p in dashboard["panels"]}
    assert uids == {source["uid"]}
    # Every counter the dashboard reads is one the worker emits, with labels it emits.
    emitted = {
        telemetry.GUARD_TRANSITIONS,
        telemetry.LOOP_STOPS,
        telemetry.FAILED_CALL_REFUSALS,
        telemetry.LOOP_RULE_DECISIONS,
        telemetry.PROMPTS_FINISHED,
        # Histograms, read as their series (tests/test_grafana_dashboard.py).
        f"{telemetry.PROMPT_LATENCY}_bucket",
        f"{telemetry.PROMPT_TOKENS}_sum",
        f"{telemetry.PROMPT_TOKENS}_count",
        f"{telemetry.PROMPT_ROUNDS}_sum",
        f"{telemetry.PROMPT_ROUNDS}_count",
    }
    used = {m for e in exprs for m in re.findall(r"\b(seawall_[a-z_]+)\{", e)}
    assert used == emitted
    grouped = {
        label.strip()
        for e in exprs
        for by in re.findall(r"by \(([^)]*)\)", e)
        for label in by.split(",")
    }
    assert grouped <= {
        "decision",
        "reset_reason",
        "loop_type",
        "outcome",
        "cohort",
        "mode",
        "deployment_environment",
        "rule",
        "stop_reason",
        "le",
    }
    # The panels: transitions by decision and reset reason, loop stops by type,
    # refusals, per environment and cohort.
    assert {"decision", "reset_reason", "loop_type", "outcome", "cohort"} <= grouped
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    # The gate panels compare a treatment cohort with a control (Phase 3: enforce vs warn).
    assert variables == {"environment", "cohort", "treatment", "control"}
    assert all(
        'deployment_environment=~"$environment"' in e
        and re.search(r'cohort=~"\$(cohort|treatment|control)"', e)
        for e in exprs
    )
    # Privacy: nothing groups by an identifier.
    assert not any(word in " ".join(exprs) for word in ("owner", "prompt_id", "tool_name"))


def test_the_gateway_and_the_worker_share_one_signing_key() -> None:
    # docs/security-trust.md: the gateway signs each session's start, the worker verifies it,
    # and the worker accepts only the gateway's workspaces.
    done = config({"SEAWALL_GATEWAY_TOKEN": "t", "GRAFANA_ADMIN_PASSWORD": "pw"})
    assert done.returncode == 0, done.stderr
    services = yaml.safe_load(done.stdout)["services"]
    worker, gateway = services["worker"]["environment"], services["gateway"]["environment"]
    assert worker["SEAWALL_SESSION_SIGNING_KEY"] == gateway["SEAWALL_SESSION_SIGNING_KEY"]
    assert worker["SEAWALL_WORKSPACES"] == gateway["SEAWALL_WORKSPACES"]
    refused = config(
        {
            "SEAWALL_GATEWAY_TOKEN": "t",
            "GRAFANA_ADMIN_PASSWORD": "pw",
            "SEAWALL_SESSION_SIGNING_KEY": "",
        }
    )
    assert refused.returncode != 0
    assert "SEAWALL_SESSION_SIGNING_KEY" in refused.stderr


# --- owners: the gateway's tokens file, so cohorts work (docs/rollout.md, "Owners") ---


def test_the_gateway_gets_the_owners_tokens_file_mounted_so_sessions_have_owners(
    tmp_path: Path,
) -> None:
    from gateway.settings import GatewaySettings
    from seawall.runtime.settings import load_settings

    tokens = tmp_path / "tokens.yaml"
    tokens.write_text("alice: " + "a" * 24 + "\nci-bot: [" + "b" * 24 + ", " + "c" * 24 + "]\n")
    done = config(
        {
            "SEAWALL_GATEWAY_TOKEN": "t0ken",
            "GRAFANA_ADMIN_PASSWORD": "pw",
            "SEAWALL_GATEWAY_TOKENS_FILE_HOST": str(tokens),
            "SEAWALL_GUARD_ROLLOUT": "enforce:5%,warn:rest",
            "SEAWALL_GUARD_ROLLOUT_SALT": "s",
            "SEAWALL_DEPLOYMENT_ENVIRONMENT": "internal",
        }
    )
    assert done.returncode == 0, done.stderr
    services = yaml.safe_load(done.stdout)["services"]
    gateway, worker = services["gateway"], services["worker"]
    inside = gateway["environment"]["SEAWALL_GATEWAY_TOKENS_FILE"]
    mounts = {}
    for volume in gateway["volumes"]:
        source, target, *mode = volume.split(":")
        mounts[target] = (source, mode)
    assert mounts[inside] == (str(tokens), ["ro"])
    # The worker that assigns the cohorts gets the rollout settings.
    assert worker["environment"]["SEAWALL_GUARD_ROLLOUT"] == "enforce:5%,warn:rest"
    assert worker["environment"]["SEAWALL_DEPLOYMENT_ENVIRONMENT"] == "internal"

    # What the gateway would load there: every owner's tokens, alongside the single token.
    environment = {k: str(v) for k, v in gateway["environment"].items()}
    environment["SEAWALL_GATEWAY_TOKENS_FILE"] = str(tokens)  # the mount, outside Docker
    settings = load_settings(environ={**environment, "HOME": "/nonexistent"}).settings
    owners = GatewaySettings.from_settings(settings).owner_tokens
    assert sorted(set(owners.values())) == ["alice", "ci-bot"] and len(owners) == 3

    # By default the file is deploy/gateway/tokens.yaml (git-ignored), from the example.
    default = config({"SEAWALL_GATEWAY_TOKEN": "t0ken", "GRAFANA_ADMIN_PASSWORD": "pw"})
    volumes = yaml.safe_load(default.stdout)["services"]["gateway"]["volumes"]
    assert f"{ROOT}/deploy/gateway/tokens.yaml:{inside}:ro" in volumes
    assert "deploy/gateway/tokens.yaml" in (ROOT / ".gitignore").read_text()
    example = ROOT / "deploy" / "gateway" / "tokens.example.yaml"
    environment["SEAWALL_GATEWAY_TOKENS_FILE"] = str(example)
    settings = load_settings(environ={**environment, "HOME": "/nonexistent"}).settings
    assert set(GatewaySettings.from_settings(settings).owner_tokens.values()) == {
        "alice",
        "ci-bot",
    }
