"""The stack every attack runs against: `seawall up` as an operator would start it for two
owners (alice and bob), with operator secrets whose values the attacks look for.

One stack serves a test module (tests/attack/conftest.py). Its secrets are random per run,
so a value found in what the attacker saw can only have come from where the attack reached.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.server_metrics import free_port

SEAWALL = str(Path(sys.executable).parent / "seawall")
MCP_SERVER_GIT = str(Path(sys.executable).parent / "mcp-server-git")
# Every prompt of an owner counts against this (workflows/session/owner_admission.py).
PROMPT_LIMIT = 3
TASK_QUEUE = "attack-suite"
NAMESPACE = "default"


@dataclass(frozen=True)
class Secrets:
    """The operator's secrets: none may ever reach what a model, or another owner, sees."""

    alice_token: str
    bob_token: str
    admin_token: str
    codec_token: str
    model_key: str
    db_password: str  # in the worker's environment as MY_DB_PASSWD (the secret filter)
    # The operator's config file's model key (the environment's wins for the worker; every
    # process reads that file), and the git MCP server's own secret (its ``env``).
    config_model_key: str
    mcp_secret: str

    def named(self) -> dict[str, str]:
        return {
            "alice's gateway token": self.alice_token,
            "bob's gateway token": self.bob_token,
            "the admin gateway token": self.admin_token,
            "the codec token": self.codec_token,
            "the model API key": self.model_key,
            "MY_DB_PASSWD": self.db_password,
            "the config file's model API key": self.config_model_key,
            "the MCP server's secret": self.mcp_secret,
        }

    @classmethod
    def fresh(cls) -> Secrets:
        def value(prefix: str) -> str:
            return f"{prefix}-{secrets.token_hex(12)}"

        return cls(
            alice_token=value("alice-token"),
            bob_token=value("bob-token"),
            admin_token=value("admin-token"),
            codec_token=value("codec-token"),
            model_key=value("sk-model-key"),
            db_password=value("db-passwd"),
            config_model_key=value("sk-config-model-key"),
            mcp_secret=value("mcp-secret"),
        )


@dataclass
class AttackStack:
    """A running stack and everything an attack (or its check) needs to know about it."""

    root: Path  # the test's own directory: the stack's data dir and the operator's files
    secrets: Secrets
    gateway_port: int
    temporal_port: int
    ui_port: int
    metrics_port: int
    process: subprocess.Popen[str]
    # The operator's environment ``seawall up`` was started with (its config file included,
    # through XDG_CONFIG_HOME): what a row's own process of the operator's gets.
    environment: dict[str, str] = field(default_factory=dict, repr=False)
    # A unique string for this stack's run: host files and processes an attack leaves
    # carry it, so a check finds exactly what this run made.
    marker: str = field(default_factory=lambda: f"seawall-attack-{secrets.token_hex(6)}")
    # Filled by the module's fixture once bob's data exists (tests/attack/conftest.py).
    bob: dict[str, Any] = field(default_factory=dict)
    # What a module adds around the stack (tests/attack/secured_frontend.py: an mTLS proxy).
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def workspaces(self) -> Path:
        return self.data_dir / "workspaces"

    @property
    def operator_dir(self) -> Path:
        """The operator's configuration: the tokens file, outside the data dir."""
        return self.root / "operator"

    @property
    def tokens_file(self) -> Path:
        return self.operator_dir / "tokens.yaml"

    @property
    def decoy_file(self) -> Path:
        """A host file outside every workspace that attacks try to change."""
        return self.operator_dir / "decoy.txt"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}"

    @property
    def temporal_address(self) -> str:
        return f"127.0.0.1:{self.temporal_port}"

    def pid(self, name: str) -> int:
        """A stack process's pid (``<data_dir>/run/<name>.pid``: worker, gateway, temporal)."""
        return int((self.data_dir / "run" / f"{name}.pid").read_text())

    def host_tmp_file(self) -> Path:
        """The host path an attack tries to create in the host's /tmp."""
        return Path("/tmp") / f"{self.marker}-host-tmp"

    def targets(self) -> dict[str, str]:
        """What the hostile turns' ``@{name}`` placeholders stand for: the layout an
        attacker could learn (the defaults are documented) or guess."""
        return {
            "data": str(self.data_dir),
            "workspaces": str(self.workspaces),
            "tokens_file": str(self.tokens_file),
            "operator_dir": str(self.operator_dir),
            "decoy_file": str(self.decoy_file),
            "worker_pid": str(self.pid("worker")),
            "gateway_pid": str(self.pid("gateway")),
            "temporal_pid": str(self.pid("temporal")),
            "gateway_port": str(self.gateway_port),
            "temporal_port": str(self.temporal_port),
            "ui_port": str(self.ui_port),
            "metrics_port": str(self.metrics_port),
            "marker": self.marker,
            "host_tmp_file": str(self.host_tmp_file()),
            "bob_workspace": str(self.bob.get("workspace", "")),
        }

    def logs(self) -> str:
        """The stack's process logs, for a failing test's message."""
        out = []
        for log in sorted((self.data_dir / "logs").glob("*.log")):
            out.append(f"--- {log.name}\n{log.read_text(errors='replace')[-4000:]}")
        return "\n".join(out)


def stack_environment(stack_root: Path, found: Secrets, ports: dict[str, int]) -> dict[str, str]:
    data = stack_root / "data"
    env = {
        **os.environ,
        "SEAWALL_DATA_DIR": str(data),
        "SEAWALL_TEMPORAL_PORT": str(ports["temporal"]),
        "SEAWALL_UI_PORT": str(ports["ui"]),
        "SEAWALL_GATEWAY_PORT": str(ports["gateway"]),
        "SEAWALL_METRICS_PORT": str(ports["metrics"]),
        "SEAWALL_TASK_QUEUE": TASK_QUEUE,
        "TEMPORAL_NAMESPACE": NAMESPACE,
        "SEAWALL_GATEWAY_TOKENS_FILE": str(stack_root / "operator" / "tokens.yaml"),
        "SEAWALL_GATEWAY_TOKEN": found.admin_token,
        "SEAWALL_CODEC_TOKEN": found.codec_token,
        "OPENAI_API_KEY": found.model_key,
        # Never reached: every session of the suite has a scripted model.
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "MY_DB_PASSWD": found.db_password,
        # Read by the gateway and the worker alike (the same environment).
        "SEAWALL_ALLOW_SCRIPTED_MODELS": "1",
        # A client may choose yolo (the most a hostile model can get); no owner may open a
        # channel session (the guard off): SEAWALL_CHANNEL_OWNERS is unset.
        "SEAWALL_LOOSEST_APPROVAL_MODE": "yolo",
        "SEAWALL_MAX_CONCURRENT_PROMPTS_PER_OWNER": str(PROMPT_LIMIT),
        # The attacks fail tool calls on purpose; the guard must not stop them early.
        "SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "off",
        "SEAWALL_MCP_SERVERS": json.dumps(
            {
                "git": {
                    "command": MCP_SERVER_GIT,
                    "args": [],
                    "trust": True,
                    "env": {"GIT_MCP_SECRET": found.mcp_secret},
                    # Its install prefix and interpreter, read-only: without them it cannot
                    # start in the sandbox (docs/security-sandbox.md, "MCP servers").
                    "sandbox": {"read_only_paths": sorted({sys.prefix, sys.base_prefix})},
                }
            }
        ),
        "XDG_CONFIG_HOME": str(stack_root / "config"),
    }
    env.pop("TEMPORAL_ADDRESS", None)
    return env


@contextmanager
def running_stack(root: Path, extra_env: dict[str, str] | None = None) -> Iterator[AttackStack]:
    """`seawall up` with a two-owner tokens file and the admin token (and ``extra_env``, a
    module's own operator settings); stopped on exit."""
    found = Secrets.fresh()
    operator = root / "operator"
    operator.mkdir(parents=True)
    (operator / "tokens.yaml").write_text(
        f"alice: {found.alice_token}\nbob: {found.bob_token}\n", encoding="utf-8"
    )
    (operator / "decoy.txt").write_text("the operator's original content\n")
    config = root / "config" / "seawall" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(f"openai_api_key: {found.config_model_key}\n")
    ports = {name: free_port() for name in ("gateway", "temporal", "ui", "metrics")}
    environment = {**stack_environment(root, found, ports), **(extra_env or {})}
    process = subprocess.Popen(
        [SEAWALL, "up"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    banner = [process.stdout.readline() for _ in range(7)]
    assert banner[0].startswith("Seawall is up."), "".join(banner)
    output: list[str] = []
    # The supervisor's later lines (restarts) are kept, so its pipe never fills.
    drain = threading.Thread(target=lambda: output.extend(process.stdout or []), daemon=True)
    drain.start()
    stack = AttackStack(
        root=root,
        secrets=found,
        gateway_port=ports["gateway"],
        temporal_port=ports["temporal"],
        ui_port=ports["ui"],
        metrics_port=ports["metrics"],
        process=process,
        environment=environment,
    )
    try:
        yield stack
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=90)
        drain.join(timeout=10)
