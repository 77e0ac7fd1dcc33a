"""Each process Seawall starts inherits only the secrets it reads (seawall/runtime/child_env.py;
the whole stack's processes are read in tests/e2e/test_stack_secrets.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from seawall.runtime.child_env import (
    DEV_SERVER_VARIABLES,
    TEMPORAL_ACCESS,
    WHY_WITHHELD,
    dev_server_environment,
    environment_for,
    gateway_environment,
    stack_environment,
    worker_environment,
)
from seawall.runtime.devserver import write_clean_launcher
from seawall.runtime.settings import ACP, RUN, SETTINGS, WORKER

OPERATOR = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/op",
    "LC_ALL": "C.UTF-8",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "OPENAI_API_KEY": "sk-model-key",
    "OPENAI_BASE_URL": "http://models.internal/v1",
    "OPENAI_ORG_ID": "org-secret",
    "SEAWALL_MCP_SERVERS": '{"db": {"command": "db-mcp", "env": {"PASSWORD": "x"}}}',
    "SEAWALL_GATEWAY_TOKEN": "admin-token",
    "SEAWALL_GATEWAY_TOKENS_FILE": "/etc/seawall/tokens.yaml",
    "SEAWALL_CODEC_TOKEN": "codec-token",
    "TEMPORAL_ADDRESS": "127.0.0.1:7233",
    "TEMPORAL_API_KEY": "temporal-cloud-key",
    "SEAWALL_TASK_QUEUE": "q",
}


def test_every_secret_setting_says_why_it_is_withheld() -> None:
    sensitive = {s.name for s in SETTINGS if s.sensitive}
    assert sensitive >= {"openai_api_key", "gateway_token", "gateway_tokens_file", "codec_token"}
    assert sensitive - set(WHY_WITHHELD) == set()


def test_the_worker_gets_its_model_key_but_no_gateway_or_codec_credential() -> None:
    worker = worker_environment(OPERATOR)
    for name in ("SEAWALL_GATEWAY_TOKEN", "SEAWALL_CODEC_TOKEN"):
        assert name not in worker
    # What it reads, and what is no setting of ours (its S3 store's credentials), stays;
    # the tokens file's path too, which its sandbox hides (it never opens the file).
    assert worker["SEAWALL_GATEWAY_TOKENS_FILE"] == "/etc/seawall/tokens.yaml"
    assert worker["OPENAI_API_KEY"] == "sk-model-key"
    assert worker["SEAWALL_MCP_SERVERS"] == OPERATOR["SEAWALL_MCP_SERVERS"]
    assert worker["AWS_SECRET_ACCESS_KEY"] == "aws-secret"
    assert worker["TEMPORAL_ADDRESS"] == "127.0.0.1:7233"


def test_the_gateway_gets_its_tokens_but_no_model_secret() -> None:
    gateway = gateway_environment(OPERATOR)
    assert not [name for name in gateway if name.startswith("OPENAI_")]
    assert "SEAWALL_MCP_SERVERS" not in gateway
    assert gateway["SEAWALL_GATEWAY_TOKEN"] == "admin-token"
    assert gateway["SEAWALL_GATEWAY_TOKENS_FILE"] == "/etc/seawall/tokens.yaml"
    assert gateway["SEAWALL_CODEC_TOKEN"] == "codec-token"


def test_the_dev_server_gets_the_allowlist_only() -> None:
    server = dev_server_environment(OPERATOR)
    assert server == {"PATH": "/usr/bin:/bin", "HOME": "/home/op", "LC_ALL": "C.UTF-8"}
    assert set(server) - DEV_SERVER_VARIABLES == {"LC_ALL"}


def test_seawall_up_keeps_what_its_children_get_but_no_temporal_access() -> None:
    supervisor = stack_environment(OPERATOR)
    assert not set(supervisor) & TEMPORAL_ACCESS
    assert "TEMPORAL_API_KEY" in TEMPORAL_ACCESS
    for name in ("OPENAI_API_KEY", "SEAWALL_GATEWAY_TOKEN", "SEAWALL_CODEC_TOKEN"):
        assert supervisor[name] == OPERATOR[name]


def test_seawall_run_keeps_its_workers_secrets_but_no_gateway_credential() -> None:
    run = environment_for(OPERATOR, RUN, WORKER)
    alone = environment_for(OPERATOR, RUN)  # --external-worker
    assert run["OPENAI_API_KEY"] == "sk-model-key" and "OPENAI_API_KEY" not in alone
    for env in (run, alone):
        assert "SEAWALL_GATEWAY_TOKEN" not in env and "SEAWALL_CODEC_TOKEN" not in env
        assert env["TEMPORAL_API_KEY"] == "temporal-cloud-key"  # a Temporal client


def test_an_embedded_worker_keeps_the_model_key_a_bare_bridge_does_not() -> None:
    embedded = environment_for(OPERATOR, ACP, WORKER)
    bridge = environment_for(OPERATOR, ACP)
    assert embedded["OPENAI_API_KEY"] == "sk-model-key"
    assert "OPENAI_API_KEY" not in bridge and "SEAWALL_MCP_SERVERS" not in bridge
    for env in (embedded, bridge):
        assert "SEAWALL_GATEWAY_TOKEN" not in env and "SEAWALL_CODEC_TOKEN" not in env


def test_the_launcher_runs_its_binary_in_the_allowlisted_environment(tmp_path: Path) -> None:
    # The launcher the SDK starts the dev server through (seawall/runtime/devserver.py),
    # here launching ``env`` itself, which prints what it got.
    env_binary = "/usr/bin/env"
    launcher = write_clean_launcher(tmp_path, env_binary, {**OPERATOR, "HOME": "/it's here"})
    assert launcher.stat().st_mode & 0o777 == 0o700
    shown = subprocess.run(
        [str(launcher)], env=OPERATOR, capture_output=True, text=True, check=True
    ).stdout
    assert sorted(shown.splitlines()) == ["HOME=/it's here", "LC_ALL=C.UTF-8", "PATH=/usr/bin:/bin"]
    assert "admin-token" not in launcher.read_text()


def test_a_process_starts_itself_again_without_what_it_does_not_read() -> None:
    # As seawall acp does: same pid, and /proc/<pid>/environ no longer has the token.
    program = (
        "import os\n"
        "from seawall.runtime.child_env import exec_without_withheld\n"
        "print(os.getpid(), flush=True)\n"
        "exec_without_withheld('seawall acp', 'worker')\n"
        "print(os.getpid(), flush=True)\n"
        "print(open('/proc/self/environ', 'rb').read().decode(), flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        env={**OPERATOR, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    first, again, second, environ = done.stdout.split("\n", 3)
    # The program ran twice (the first run re-executed itself), in one process.
    assert first == again == second
    variables = dict(v.split("=", 1) for v in environ.strip("\n\0").split("\0"))
    assert "SEAWALL_GATEWAY_TOKEN" not in variables
    assert "SEAWALL_CODEC_TOKEN" not in variables
    assert variables["OPENAI_API_KEY"] == "sk-model-key"
