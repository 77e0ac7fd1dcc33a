"""Temporal access over TLS and mTLS, end to end: the real dev server behind a TLS proxy that
wants a client certificate (tests/tls_helpers.py), the worker and the gateway configured only
through ``TEMPORAL_TLS_*`` variables or a Temporal profile file, as an operator would.

A prompt runs through the gateway and a worker that both reach Temporal only through the
proxy; a client without the client certificate, or one that does not trust the server's CA,
is refused with an error saying which setting to check; and a worker process so refused exits
at once instead of waiting out its connect timeout."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from gateway.__main__ import build
from gateway.settings import GatewaySettings
from seawall.runtime.plugin import connect
from seawall.runtime.settings import SETTINGS, load_settings
from seawall.runtime.temporal_connect import (
    TemporalAccessRefused,
    TemporalClientConfig,
    temporal_client_config,
)
from seawall.worker.build import build_worker
from tests.tls_helpers import Pki, TlsProxy, make_pki, tls_proxy
from tests.trust_helpers import TEST_SIGNING_KEY, harness_trust

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    return make_pki(tmp_path / "pki")


@pytest_asyncio.fixture
async def mtls_frontend(temporal_env: WorkflowEnvironment, pki: Pki) -> AsyncIterator[TlsProxy]:
    """The session's dev server behind TLS that requires a client certificate of ``pki``."""
    upstream = temporal_env.client.service_client.config.target_host
    async with tls_proxy(pki, upstream, require_client_cert=True) as proxy:
        yield proxy


def home(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def mtls_environment(proxy: TlsProxy, pki: Pki, tmp_path: Path) -> dict[str, str]:
    return {
        **home(tmp_path),
        "TEMPORAL_ADDRESS": proxy.address,
        "TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(pki.ca),
        "TEMPORAL_TLS_CLIENT_CERT_PATH": str(pki.client_cert),
        "TEMPORAL_TLS_CLIENT_KEY_PATH": str(pki.client_key),
    }


def resolved(env: dict[str, str]) -> TemporalClientConfig:
    return temporal_client_config(load_settings(env), env)


async def run_a_prompt(temporal: TemporalClientConfig, tmp_path: Path) -> dict[str, object]:
    """A worker and the gateway's client, both on ``temporal``; one demo prompt's view."""
    queue = f"tls-{uuid.uuid4().hex[:8]}"
    worker_client = await connect(temporal)
    async with build_worker(worker_client, queue, trust=harness_trust()):
        settings = GatewaySettings(
            task_queue=queue,
            workspaces=tmp_path / "workspaces",
            session_signing_key=TEST_SIGNING_KEY,
        )
        app = build(settings, None, temporal)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gw", timeout=60) as http:
            created = await http.post("/v1/sessions")
            assert created.status_code == 201, created.text
            session_id = created.json()["session_id"]
            submitted = await http.post(
                f"/v1/sessions/{session_id}/prompts", json={"text": "hello"}
            )
            assert submitted.status_code == 202, submitted.text
            prompt_id = submitted.json()["prompt_id"]
            while True:  # the test's time-out bounds the wait
                view = await http.get(f"/v1/prompts/{prompt_id}")
                assert view.status_code == 200, view.text
                if view.json()["result"] is not None:
                    result: dict[str, object] = view.json()["result"]
                    return result
                await asyncio.sleep(0.1)


async def test_a_prompt_runs_with_the_worker_and_gateway_on_mtls_from_variables(
    mtls_frontend: TlsProxy, pki: Pki, tmp_path: Path
) -> None:
    temporal = resolved(mtls_environment(mtls_frontend, pki, tmp_path))
    assert temporal.auth == "mtls"

    result = await run_a_prompt(temporal, tmp_path)

    assert result["stop_reason"] == "end_turn"
    # Both clients came through the proxy: it forwarded only what passed its handshake.
    assert mtls_frontend.connections >= 2


async def test_a_prompt_runs_on_mtls_from_a_temporal_profile_file(
    mtls_frontend: TlsProxy, pki: Pki, tmp_path: Path
) -> None:
    profiles = tmp_path / "temporal.toml"
    profiles.write_text(
        f"""
[profile.secured]
address = "{mtls_frontend.address}"
namespace = "default"

[profile.secured.tls]
server_ca_cert_path = "{pki.ca}"
client_cert_path = "{pki.client_cert}"
client_key_path = "{pki.client_key}"
"""
    )
    env = {**home(tmp_path), "TEMPORAL_CONFIG_FILE": str(profiles), "TEMPORAL_PROFILE": "secured"}
    temporal = resolved(env)
    assert (temporal.auth, temporal.profile, temporal.target_host) == (
        "mtls",
        "secured",
        mtls_frontend.address,
    )

    result = await run_a_prompt(temporal, tmp_path)

    assert result["stop_reason"] == "end_turn"


async def test_a_client_without_the_client_certificate_is_refused(
    mtls_frontend: TlsProxy, pki: Pki, tmp_path: Path
) -> None:
    env = mtls_environment(mtls_frontend, pki, tmp_path)
    del env["TEMPORAL_TLS_CLIENT_CERT_PATH"], env["TEMPORAL_TLS_CLIENT_KEY_PATH"]
    temporal = resolved(env)
    assert temporal.auth == "tls"

    with pytest.raises(TemporalAccessRefused) as refused:
        await connect(temporal)

    assert str(refused.value).startswith(
        f"the Temporal frontend at {mtls_frontend.address} refused this client (auth tls): "
        "it closed the TLS connection: it wants a client certificate"
    )
    assert "TEMPORAL_TLS_CLIENT_CERT_PATH" in str(refused.value)
    assert mtls_frontend.connections == 0


async def test_a_client_certificate_of_another_ca_is_refused(
    mtls_frontend: TlsProxy, pki: Pki, tmp_path: Path
) -> None:
    stranger = make_pki(tmp_path / "stranger", "stranger")
    env = {
        **mtls_environment(mtls_frontend, pki, tmp_path),
        "TEMPORAL_TLS_CLIENT_CERT_PATH": str(stranger.client_cert),
        "TEMPORAL_TLS_CLIENT_KEY_PATH": str(stranger.client_key),
    }
    with pytest.raises(TemporalAccessRefused, match="wants a client certificate its CA signed"):
        await connect(resolved(env))
    assert mtls_frontend.connections == 0


async def test_a_server_signed_by_another_ca_is_refused(
    mtls_frontend: TlsProxy, pki: Pki, tmp_path: Path
) -> None:
    stranger = make_pki(tmp_path / "stranger", "stranger")
    env = {
        **mtls_environment(mtls_frontend, pki, tmp_path),
        "TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(stranger.ca),
    }
    with pytest.raises(TemporalAccessRefused) as refused:
        await connect(resolved(env))
    assert "not signed by a CA this client trusts" in str(refused.value)
    assert "TEMPORAL_TLS_SERVER_CA_CERT_PATH" in str(refused.value)


async def test_a_plain_client_of_a_tls_frontend_is_refused(
    mtls_frontend: TlsProxy, tmp_path: Path
) -> None:
    with pytest.raises(TemporalAccessRefused, match="it may want TLS"):
        await connect(resolved({**home(tmp_path), "TEMPORAL_ADDRESS": mtls_frontend.address}))


def clean_environ() -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SEAWALL_", "OPENAI_"))}
    for setting in SETTINGS:
        for name in setting.env:
            base.pop(name, None)
    return base


async def test_a_refused_worker_exits_at_once_naming_the_setting(
    mtls_frontend: TlsProxy, pki: Pki, tmp_path: Path
) -> None:
    env = {**clean_environ(), **mtls_environment(mtls_frontend, pki, tmp_path)}
    del env["TEMPORAL_TLS_CLIENT_CERT_PATH"], env["TEMPORAL_TLS_CLIENT_KEY_PATH"]
    # An hour's connect timeout: only a refusal that is not retried ends it in time.
    env["SEAWALL_CONNECT_TIMEOUT_SECONDS"] = "3600"
    worker = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "worker.py"),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    # The proxy runs on this loop: wait for the worker without blocking it.
    _, stderr = await asyncio.wait_for(worker.communicate(), timeout=120)

    assert worker.returncode == 1
    last = stderr.decode().strip().splitlines()[-1]
    assert last.startswith("worker: error: the Temporal frontend at ")
    assert "TEMPORAL_TLS_CLIENT_CERT_PATH" in last


# --- an API key, on the wire ----------------------------------------------------------------

API_KEY = "tmprl-test-key-0123456789abcdef"


async def test_the_api_key_reaches_the_frontend_over_tls_and_a_refusal_names_it(
    pki: Pki, tmp_path: Path
) -> None:
    pytest.importorskip("grpc")
    from tests.tls_helpers import recording_frontend

    async with recording_frontend(pki) as frontend:
        env = {
            **home(tmp_path),
            "TEMPORAL_ADDRESS": frontend.address,
            "TEMPORAL_API_KEY": API_KEY,
            "TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(pki.ca),
        }
        temporal = resolved(env)
        assert temporal.auth == "api key"
        with pytest.raises(TemporalAccessRefused) as refused:
            await connect(temporal)

    # The SDK's first call carried the key as a bearer token, over TLS (this server has no
    # other port), and the refusal says which setting to look at, without the key.
    method, metadata = frontend.calls[0]
    assert method == "/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo"
    assert metadata["authorization"] == f"Bearer {API_KEY}"
    assert "TEMPORAL_API_KEY" in str(refused.value)
    assert API_KEY not in str(refused.value)
