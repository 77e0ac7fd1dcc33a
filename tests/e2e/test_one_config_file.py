"""One user config file configures every process: a gateway (``python -m gateway``) and a
worker (``python worker.py``) started with nothing but ``HOME`` pointing at a config file
that names a Temporal server, a fresh namespace and a fresh task queue, and ``seawall
prompt`` finding that gateway through the same file. The prompt is served, on that
namespace and task queue, which only happens if all three read the file's values."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from google.protobuf.duration_pb2 import Duration
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest, RegisterNamespaceRequest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from bench.server_metrics import free_port
from seawall.runtime.settings import SETTINGS

ROOT = Path(__file__).resolve().parents[2]
SEAWALL = str(Path(sys.executable).parent / "seawall")
STARTUP_SECONDS = 60.0


def operator_environment(home: Path) -> dict[str, str]:
    """This process's environment with no setting in it, and ``home`` as the home."""
    env = {k: v for k, v in os.environ.items() if k != "XDG_CONFIG_HOME"}
    for setting in SETTINGS:
        for name in setting.env:
            env.pop(name, None)
    return {**env, "HOME": str(home)}


async def wait_for(ready: Callable[[], bool], what: str, process: subprocess.Popen[bytes]) -> None:
    """Poll another process's readiness until a deadline; fail early if it exited."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while not await asyncio.to_thread(ready):
        assert process.poll() is None, f"{what} exited with code {process.returncode}"
        assert time.monotonic() < deadline, f"{what} was not ready within {STARTUP_SECONDS} s"
        await asyncio.sleep(0.1)


@contextmanager
def started(
    command: list[str], env: dict[str, str], log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


async def fresh_namespace(client: Client) -> str:
    """A namespace registered now, once the server answers for it."""
    namespace = f"one-file-{uuid.uuid4().hex[:8]}"
    await client.workflow_service.register_namespace(
        RegisterNamespaceRequest(
            namespace=namespace, workflow_execution_retention_period=Duration(seconds=86_400)
        )
    )

    async def described() -> None:
        while True:
            try:
                await client.workflow_service.describe_namespace(
                    DescribeNamespaceRequest(namespace=namespace)
                )
                return
            except RPCError:
                await asyncio.sleep(0.1)

    await asyncio.wait_for(described(), STARTUP_SECONDS)
    return namespace


async def test_gateway_worker_and_prompt_cli_share_one_config_file(
    temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    address = temporal_env.client.service_client.config.target_host
    namespace = await fresh_namespace(temporal_env.client)
    task_queue = f"one-file-{uuid.uuid4().hex[:8]}"
    gateway_port = free_port()
    home = tmp_path / "home"
    config = home / ".config" / "seawall" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f"temporal_address: {address}\n"
        f"temporal_namespace: {namespace}\n"
        f"task_queue: {task_queue}\n"
        f"gateway_port: {gateway_port}\n"
        f"workspaces: {tmp_path / 'workspaces'}\n"
    )
    env = operator_environment(home)
    worker_log, gateway_log = tmp_path / "worker.log", tmp_path / "gateway.log"

    with (
        started([sys.executable, "worker.py"], env, worker_log) as worker,
        started([sys.executable, "-m", "gateway"], env, gateway_log) as gateway,
    ):
        await wait_for(lambda: "worker_started" in worker_log.read_text(), "the worker", worker)
        await wait_for(lambda: healthy(f"http://127.0.0.1:{gateway_port}"), "the gateway", gateway)

        # No --gateway flag: seawall prompt finds the gateway through the same file.
        done = await asyncio.to_thread(
            subprocess.run,
            [SEAWALL, "prompt", "hello"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == "stop: end_turn"
        prompt_id = next(
            line.split()[1] for line in done.stdout.splitlines() if line.startswith("prompt ")
        )

    # The prompt ran in the file's namespace, on the file's task queue, served by the
    # worker started from the file (no other worker polls that queue).
    client = await Client.connect(
        address, namespace=namespace, data_converter=pydantic_data_converter
    )
    described = await client.get_workflow_handle(prompt_id).describe()
    assert described.status is WorkflowExecutionStatus.COMPLETED
    assert described.task_queue == task_queue
    started_line = next(
        line for line in worker_log.read_text().splitlines() if "worker_started" in line
    )
    assert f'"namespace": "{namespace}"' in started_line
    assert f'"task_queue": "{task_queue}"' in started_line


@pytest.mark.parametrize("setting", ["temporal_address", "task_queue"])
def test_seawall_config_names_the_file_the_processes_read(tmp_path: Path, setting: str) -> None:
    home = tmp_path / "home"
    config = home / ".config" / "seawall" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(f"{setting}: from-the-file\n")
    done = subprocess.run(
        [SEAWALL, "config"],
        env=operator_environment(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    row = next(line.split() for line in done.stdout.splitlines() if line.startswith(setting))
    assert row == [setting, "from-the-file", "user_config", str(config), "key", setting]
