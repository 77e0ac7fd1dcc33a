"""The gateway against its own OpenAPI schema, fuzzed by schemathesis with all its checks.

Not only "no 5xx": every status and header the gateway answers must be declared, bodies must
match their schemas, invalid input must be rejected and valid input accepted, and requests
without the bearer token must be refused. The gateway runs in-process (ASGI) on a real
Temporal dev server with a real worker process polling its task queue, so the routes reach
real workflows; the number of examples is bounded so the test stays a few minutes at most.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config._checks import NegativeDataRejectionConfig
from temporalio.client import Client

from gateway.app import create_app
from gateway.settings import GatewaySettings
from seawall.runtime.devserver import temporal_binary
from seawall.runtime.plugin import connect
from tests.telemetry_helpers import free_port

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "fuzz-token-0123456789"


@pytest.fixture(scope="module")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dev server and a worker process, for this module only."""
    port = free_port()
    address = f"127.0.0.1:{port}"
    server = subprocess.Popen(
        [
            temporal_binary(),
            "server",
            "start-dev",
            "--headless",
            "--ip",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "error",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    home = tmp_path_factory.mktemp("fuzz-home")
    worker = subprocess.Popen(
        [sys.executable, str(ROOT / "worker.py"), "--address", address, "--task-queue", "fuzz"],
        cwd=ROOT,
        env={**os.environ, "XDG_CONFIG_HOME": str(home), "SEAWALL_CONNECT_TIMEOUT_SECONDS": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stderr is not None
        # The worker waits for the server (with backoff) and says when it serves.
        next(line for line in worker.stderr if "worker_started" in line)
        yield address
    finally:
        worker.terminate()
        worker.communicate(timeout=60)
        server.terminate()
        server.wait(timeout=60)


# The schema is loaded when the module is imported (schemathesis parametrizes at collection;
# its fixture-based loader does not support this pytest), so the app is built then, and its
# Temporal client connects on first use to the server the module fixture starts.
WHERE: dict[str, str] = {}


async def _client() -> Client:
    return await connect(WHERE["address"], "default")


APP = create_app(
    GatewaySettings(task_queue="fuzz", token=TOKEN, workspaces=Path(tempfile.mkdtemp())),
    _client,
)
schema = schemathesis.openapi.from_asgi(
    "/openapi.json", APP, headers={"Authorization": f"Bearer {TOKEN}"}
)
# A prompt longer than SEAWALL_MAX_PROMPT_CHARS is refused with 413 Content Too Large (as
# documented) rather than 422: a rejection all the same.
schema.config.checks.negative_data_rejection = NegativeDataRejectionConfig(
    expected_statuses=["400", "401", "403", "404", "409", "413", "422"]
)


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_the_gateway_keeps_every_promise_of_its_schema(
    case: schemathesis.Case, temporal_address: str
) -> None:
    WHERE["address"] = temporal_address
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"})
