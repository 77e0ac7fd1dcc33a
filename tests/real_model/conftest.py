"""The real-model tier's fixtures: llama-server with SmolLM2, the fault proxy, the stack.

This tier runs only under ``make test-real-model`` (README, "Real-model tier"), which builds
or reuses llama-server and fetches the model before it sets ``SEAWALL_REAL_MODEL=1``;
without that variable nothing here is collected, so ``make test`` never needs the model.

One llama-server (``deploy/llama/build-llama-server.sh``, with the shipped tool-call chat
template ``deploy/llama/smollm2-tools.jinja``) serves the whole run behind one
:class:`~tests.real_model.fault_proxy.FaultProxy`, healed after each test; the gateway tests
share one ``seawall up`` stack whose worker's endpoint is the proxy. Greedy sampling
(temperature 0) keeps the tiny model's replies repeatable; the tests still assert only what
holds for any reply.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from bench.server_metrics import free_port
from tests.real_model.fault_proxy import FaultProxy

if os.environ.get("SEAWALL_REAL_MODEL") != "1":
    collect_ignore_glob = ["test_*.py"]

REPO = Path(__file__).resolve().parents[2]
LLAMA_DIR = REPO / "deploy" / "llama"
CHAT_TEMPLATE = LLAMA_DIR / "smollm2-tools.jinja"
SEAWALL = str(Path(sys.executable).parent / "seawall")
MODEL_NAME = "SmolLM2-135M-Instruct"
# One model request's SDK timeout: a hung endpoint is given up on after this long.
MODEL_TIMEOUT_SECONDS = 15
# How long the gateway stack's worker retries a failing model request (docs/settings.md,
# ``model_retry_window_seconds``): longer than any outage the gateway tests survive.
GATEWAY_RETRY_WINDOW_SECONDS = 300
STARTUP_SECONDS = 180.0


def model_env(endpoint: str) -> dict[str, str]:
    """The worker settings that point Seawall at the real model behind ``endpoint``, for a
    Seawall process that runs this checkout's code (ahead of any other install)."""
    return {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "OPENAI_BASE_URL": endpoint,
        "SEAWALL_MODEL": MODEL_NAME,
        "SEAWALL_MODEL_TEMPERATURE": "0",
        "SEAWALL_MODEL_MAX_TOKENS": "128",
        "SEAWALL_MODEL_TIMEOUT_SECONDS": str(MODEL_TIMEOUT_SECONDS),
        # The tests' clients choose yolo (unset, only the default approval mode is allowed).
        "SEAWALL_LOOSEST_APPROVAL_MODE": "yolo",
    }


def _cached(script: str) -> str:
    """The path a ``deploy/llama`` script prints last (it builds or fetches only once)."""
    done = subprocess.run(
        ["sh", str(LLAMA_DIR / script)],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"{script} failed (run `make test-real-model`):\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1]


def _amx_cpu() -> bool:
    try:
        return " amx" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


async def _until_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    async with httpx.AsyncClient(timeout=5) as http:
        deadline = asyncio.get_running_loop().time() + STARTUP_SECONDS
        while asyncio.get_running_loop().time() < deadline:
            if process.poll() is not None:
                pytest.fail(f"{url} exited {process.returncode}:\n{log.read_text()[-3000:]}")
            try:
                if (await http.get(url)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.2)
    pytest.fail(f"{url} did not answer within {STARTUP_SECONDS:.0f} s:\n{log.read_text()[-3000:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest_asyncio.fixture(scope="session")
async def llama_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    """llama-server on a free loopback port, serving SmolLM2 with the shipped tool-call
    template; yields its base URL (no ``/v1``)."""
    binary = _cached("build-llama-server.sh")
    model = _cached("fetch-smollm2.sh")
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "llama-server.log"
    args = [
        binary,
        "--model", model,
        "--alias", MODEL_NAME,
        "--jinja",
        "--chat-template-file", str(CHAT_TEMPLATE),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--ctx-size", "8192",
        "--parallel", "2",
        # One thread: on a loaded machine two threads wait on each other (several times slower).
        "--threads", "1",
    ]  # fmt: skip
    if _amx_cpu():
        # llama-server needs it on CPUs with AMX (issue 26): no repacking of the weights.
        args.append("--no-repack")
    with log.open("wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    try:
        await _until_healthy(f"http://127.0.0.1:{port}/health", process, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(process)


@pytest_asyncio.fixture(scope="session")
async def proxy(llama_server: str) -> AsyncIterator[FaultProxy]:
    async with FaultProxy(llama_server) as running:
        yield running


@pytest_asyncio.fixture
async def endpoint(proxy: FaultProxy) -> AsyncIterator[FaultProxy]:
    """The proxy, healthy when a test starts and healed again when it ends."""
    await proxy.heal()
    yield proxy
    await proxy.heal()


@dataclass(frozen=True)
class Stack:
    url: str
    workspaces: Path


@pytest.fixture(scope="session")
def stack(proxy: FaultProxy, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """``seawall up`` (what ``make run`` runs) with its worker's model endpoint the proxy."""
    data = tmp_path_factory.mktemp("stack")
    gateway_port = free_port()
    env = {
        **os.environ,
        **model_env(proxy.url),
        "SEAWALL_MODEL_RETRY_WINDOW_SECONDS": str(GATEWAY_RETRY_WINDOW_SECONDS),
        "SEAWALL_DATA_DIR": str(data / "data"),
        "SEAWALL_TEMPORAL_PORT": str(free_port()),
        "SEAWALL_UI_PORT": str(free_port()),
        "SEAWALL_GATEWAY_PORT": str(gateway_port),
        "XDG_CONFIG_HOME": str(data / "config"),
    }
    env.pop("TEMPORAL_ADDRESS", None)
    env.pop("OPENAI_API_KEY", None)
    out = data / "stack.out"
    with out.open("wb") as sink:
        process = subprocess.Popen([SEAWALL, "up"], env=env, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{gateway_port}"
    try:
        _until_up(out, process)
        yield Stack(url=url, workspaces=data / "data" / "workspaces")
    finally:
        _stop(process)


def _until_up(out: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if "Seawall is up." in out.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.2)
    pytest.fail(f"seawall up did not come up:\n{out.read_text(errors='replace')[-3000:]}")
