"""The chaos suite's stack: the Temporal server, the workers and the gateway as processes it
may kill.

Every chaos variant (``scripts/chaos.py``, ``scripts/chaos_fleet.py``) runs a real stack on
free ports: the Temporal dev server on a SQLite file (so a SIGKILLed server restarts with
its state), worker processes (``worker.py``) and the gateway, each in its own session with
its log under the run's directory. :class:`ChaosStack` starts them, SIGKILLs a worker, the
server or a worker's MCP server (only a process it started, found by its pid), and records
every worker it ever started and when each was killed, which the ledgers are read against.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.server_metrics import free_port
from scripts.chaos_mcp import MCP_SERVER_SCRIPT, mcp_servers
from seawall.runtime.devserver import temporal_binary

ROOT = Path(__file__).resolve().parent.parent
TASK_QUEUE = "chaos"
# Each worker process is started with its own id in this variable, which a process it starts
# may inherit (scripts/chaos_fleet_tool.py does, through sandbox_env_passthrough): the id
# names the worker however soon after the worker's death the process looks.
WORKER_ID_VARIABLE = "CHAOS_WORKER_ID"
# Long enough for a loaded machine's streams, short enough that a hung endpoint costs
# seconds: the client timeout of one model request.
MODEL_TIMEOUT_SECONDS = 5


class ChaosStack:
    """The server, the workers (two by default) and the gateway, each a process the suite
    may kill.

    ``model_url`` is the workers' model endpoint (``None``: sessions bring their own
    ``model_script``); ``settings`` are more worker and gateway variables, over the suite's
    own; ``worker_cpus``, when given, pins worker ``i`` (and every process it starts) to the
    CPU ``worker_cpus[i % len(worker_cpus)]``, so each CPU stands for a host of its own."""

    def __init__(
        self,
        data: Path,
        model_url: str | None,
        workers: int = 2,
        *,
        settings: Mapping[str, str] | None = None,
        worker_cpus: Sequence[int] | None = None,
    ) -> None:
        self.data = data
        self.worker_cpus = list(worker_cpus or [])
        self.mcp_ledger = data / "mcp-ledger.jsonl"
        self.temporal_port = free_port()
        self.gateway_port = free_port()
        self.address = f"127.0.0.1:{self.temporal_port}"
        self.workspaces = data / "workspaces"
        self.logs = data / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.server: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes] | None] = [None] * workers
        self.gateway: subprocess.Popen[bytes] | None = None
        # Every worker process ever started (and when each was SIGKILLed): its MCP server
        # is its child, and the ledgers are read against these.
        self.worker_pids: set[int] = set()
        self.worker_kills: dict[int, float] = {}
        # Which worker slot (index) each of those processes filled, and the process of each
        # worker id (the WORKER_ID_VARIABLE it was started with).
        self.worker_slots: dict[int, int] = {}
        self.worker_ids: dict[str, int] = {}
        self.env = {
            **{
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("TEMPORAL_", "SEAWALL_", "OPENAI_"))
            },
            "TEMPORAL_ADDRESS": self.address,
            "SEAWALL_TASK_QUEUE": TASK_QUEUE,
            "SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "enforce",
            "SEAWALL_CONNECT_TIMEOUT_SECONDS": "0",
            "SEAWALL_GATEWAY_PORT": str(self.gateway_port),
            "SEAWALL_WORKSPACES": str(self.workspaces),
            "SEAWALL_ALLOW_SCRIPTED_MODELS": "1",
            # Its sessions run in yolo, which the operator must allow a client to choose.
            "SEAWALL_LOOSEST_APPROVAL_MODE": "yolo",
            # One key for the gateway and both workers (docs/security-trust.md): the gateway
            # signs each session's start, the workers verify it.
            "SEAWALL_SESSION_SIGNING_KEY": secrets.token_urlsafe(32),
            "XDG_CONFIG_HOME": str(data / "config"),
            "SEAWALL_MODEL_TIMEOUT_SECONDS": str(MODEL_TIMEOUT_SECONDS),
            "SEAWALL_MCP_SERVERS": json.dumps(mcp_servers(self.mcp_ledger)),
            # The chaos MCP server reports its host pid (to be SIGKILLed) and appends to a
            # ledger outside any workspace: both need it unsandboxed. Durability, not
            # confinement, is under test here (docs/security-sandbox.md covers that).
            "SEAWALL_SANDBOX": "none",
        }
        if model_url is not None:
            # The model is the suite's endpoint (scripts/chaos_model.py), through the real
            # OpenAI provider; the tools include a real MCP server.
            self.env["OPENAI_BASE_URL"] = model_url
        self.env.update(settings or {})

    def _spawn(
        self, name: str, command: list[str], env: Mapping[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("ab")
        try:
            return subprocess.Popen(
                command,
                cwd=ROOT,
                env={**self.env, **(env or {})},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()

    def start_server(self) -> None:
        self.server = self._spawn(
            "temporal",
            [
                temporal_binary(),
                "server",
                "start-dev",
                "--headless",
                "--db-filename",
                str(self.data / "temporal.db"),
                "--ip",
                "127.0.0.1",
                "--port",
                str(self.temporal_port),
                "--log-level",
                "error",
            ],
        )

    def start_worker(self, index: int) -> None:
        worker_id = f"{index}.{len(self.worker_pids)}"
        worker = self._spawn(
            f"worker-{index}", [sys.executable, "worker.py"], {WORKER_ID_VARIABLE: worker_id}
        )
        if self.worker_cpus:
            # Set before the worker has started anything (its imports take far longer):
            # every process it starts inherits the CPU.
            os.sched_setaffinity(worker.pid, {self.worker_cpus[index % len(self.worker_cpus)]})
        self.workers[index] = worker
        self.worker_pids.add(worker.pid)
        self.worker_slots[worker.pid] = index
        self.worker_ids[worker_id] = worker.pid

    def start(self) -> None:
        self.start_server()
        for index in range(len(self.workers)):
            self.start_worker(index)
        self.gateway = self._spawn("gateway", [sys.executable, "-m", "gateway"])

    def kill_worker(self, index: int) -> None:
        worker = self.workers[index]
        if worker is not None and worker.poll() is None:
            worker.send_signal(signal.SIGKILL)
            self.worker_kills[worker.pid] = time.time()
            worker.wait()

    def kill_mcp_server(self, pid: int) -> bool:
        """SIGKILL the MCP server ``pid`` if it is a live child of one of this suite's
        workers (the ledger names it; never any other process)."""
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent not in self.worker_pids or MCP_SERVER_SCRIPT.name.encode() not in command:
            return False
        os.kill(pid, signal.SIGKILL)
        return True

    def kill_server(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGKILL)
            self.server.wait()

    def stop(self) -> None:
        processes = [self.gateway, *self.workers, self.server]
        for process in processes:
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            if process is None:
                continue
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        # MCP servers of killed workers that have not noticed yet: each is in the process
        # group of the worker that spawned it (its session leader, started here).
        for pid in self.worker_pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
