"""``seawall config`` prints exactly what it printed before the settings became a package.

A characterization test (issue 24): each case below is a fixed setup of the sources (the
environment, ``config.yaml``, ``mcp.json``, other files a setting names) and the expected
output of ``seawall config`` and ``seawall config --json`` — exit code, stdout and stderr,
byte for byte — captured from the code before the refactor and kept in
``config_output/<case>.{table,json}.txt``. Any change to a setting's name, default, source,
precedence, displayed value or error text fails here. (Issue 36 changed, on purpose, what an
invalid value prints: the whole table with each invalid row marked, the same error line on
stderr, exit code 2; and an invalid guard mode is no longer shown as ``shadow``.)

The scratch directory is made with a fixed-length name and printed as ``/tmp/swcfg-XXXXXXXX``
so the table's column alignment is compared too. ``python -m tests.seawall.cli.test_config_output
--write`` rewrites the expected files; only do that for a change users are meant to see.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EXPECTED = Path(__file__).with_name("config_output")
SCRATCH_SHOWN = "/tmp/swcfg-XXXXXXXX"

# A rollout salt and a signing key that validate, and secrets that must never print.
SIGNING_KEY = "k" * 40
SECRET = "sk-SECRET-never-printed-4711"


@dataclass(frozen=True)
class Case:
    """One setup of the sources: variables (``{scratch}`` is replaced by the scratch
    directory) and files under the scratch directory (``xdg/seawall/config.yaml`` is the
    user config)."""

    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)


USER_CONFIG = "xdg/seawall/config.yaml"
MCP_CONFIG = "xdg/seawall/mcp.json"

CASES: dict[str, Case] = {
    "defaults": Case(),
    "environment": Case(
        env={
            "TEMPORAL_ADDRESS": "temporal.internal:7233",
            "TEMPORAL_NAMESPACE": "prod",
            "SEAWALL_TASK_QUEUE": "q-env",
            "QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD": "warn",
            "SEAWALL_LOOP_PROFILE": "SEED",
            "SEAWALL_FAILURE_CYCLE_GUARD": "Enforce",
            "SEAWALL_CONTEXT_BUDGET_CHARS": " 20000 ",
            "SEAWALL_ACTIVITY_SUMMARIES": "yes",
            "OPENAI_BASE_URL": "https://user:pa55word@llm.internal/v1",
            "OPENAI_API_KEY": SECRET,
            "SEAWALL_MODEL_TEMPERATURE": "0.5",
            "SEAWALL_GATEWAY_TOKEN": SECRET,
            "SEAWALL_GATEWAY_HOST": "::",
            "SEAWALL_GATEWAY_PORT": "9001",
            "SEAWALL_LOG_LEVEL": "debug",
            "SEAWALL_LOG_FORMAT": "Console",
            "SEAWALL_SANDBOX": "NONE",
            "SEAWALL_SANDBOX_ENV_PASSTHROUGH": " FOO, BAR_2 ,",
            "SEAWALL_MCP_SERVERS": json.dumps({"mcpServers": {"a": {"command": "x"}}}),
            "SEAWALL_CODEC_UI_ORIGINS": "https://ui.example:8443/, http://localhost:8233",
            "SEAWALL_DATA_DIR": "/srv/seawall",
            "SEAWALL_SESSION_SIGNING_KEY": SIGNING_KEY,
            "SEAWALL_METRICS_PORT": "9100",
            "SEAWALL_PAYLOAD_STORAGE": "S3",
            "SEAWALL_PAYLOAD_STORAGE_BUCKET": "b",
            "SEAWALL_OWNER_ID": "alice@example",
            # Blank counts as unset.
            "SEAWALL_MODEL": "  ",
        }
    ),
    "user_config": Case(
        env={"SEAWALL_TASK_QUEUE": "env-wins", "SEAWALL_DATA_DIR": "/srv/seawall"},
        files={
            USER_CONFIG: (
                "task_queue: file-loses\n"
                "repeated_tool_failure_guard: off\n"
                "loop_profile: seed\n"
                "identical_result_guard: off\n"
                "denied_call_guard: Warn\n"
                "context_budget_chars: 50000\n"
                "activity_summaries: on\n"
                "gateway_host: 0.0.0.0\n"
                "gateway_port: 8123\n"
                "workspaces: /srv/ws\n"
                "sandbox_network: on\n"
                "payload_storage: off\n"
                "model: ''\n"
                f"gateway_token: {SECRET}\n"
                "no_such_setting: 1\n"
                "mcp_servers: {}\n"
                f"openai_api_key: {SECRET}\n"
                "model_max_tokens: 512\n"
            ),
            MCP_CONFIG: json.dumps({"one": {"command": "a"}, "two": {"url": "http://b"}}),
        },
    ),
    "rollout": Case(
        env={
            "SEAWALL_GUARD_ROLLOUT": "enforce:5%,warn:rest",
            "SEAWALL_GUARD_ROLLOUT_SALT": "salty",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod,service.version=1.2",
            "SEAWALL_GUARD_ROLLOUT_ALLOW_WIDE_ENFORCE": "off",
            "SEAWALL_GATEWAY_TOKENS_FILE": "{scratch}/tokens.yaml",
        },
        files={"tokens.yaml": "alice: abcdefghijklmnopqrstuvwx\nbob: [bcdefghijklmnopqrstuvwxy]\n"},
    ),
    "invalid_guard_mode": Case(
        env={"SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "loud"},
        files={USER_CONFIG: "repeated_tool_failure_guard: enforce\n"},
    ),
    # The seed profile runs it as shadow (issue 36): still marked invalid, exit code 2.
    "invalid_guard_mode_seed": Case(
        env={"SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "loud"},
        files={USER_CONFIG: "repeated_tool_failure_guard: enforce\nloop_profile: seed\n"},
    ),
    "bad_environment_value": Case(env={"SEAWALL_GATEWAY_PORT": "abc"}),
    "bad_values_together": Case(
        env={
            "SEAWALL_CONTEXT_BUDGET_CHARS": "5",
            "SEAWALL_ACTIVITY_SUMMARIES": "maybe",
            "SEAWALL_FAILURE_CYCLE_GUARD": "loud",
            "SEAWALL_LOOP_PROFILE": "fancy",
            "SEAWALL_SESSION_SIGNING_KEY": "short",
            "SEAWALL_SANDBOX_ENV_PASSTHROUGH": "OK,1BAD",
            "SEAWALL_MODEL_TEMPERATURE": "nan",
        },
        files={USER_CONFIG: "gateway_port: abc\nmax_cached_workflows: -1\nlog_level: loud\n"},
    ),
    "bad_user_config_value": Case(files={USER_CONFIG: "context_budget_chars: 1.5\n"}),
    "broken_yaml": Case(files={USER_CONFIG: "task_queue: [\n"}),
    "yaml_not_a_mapping": Case(files={USER_CONFIG: "- a\n- b\n"}),
    "broken_mcp_json": Case(files={MCP_CONFIG: "{not json"}),
    "bad_mcp_servers": Case(env={"SEAWALL_MCP_SERVERS": "[1, 2]"}),
    "rollout_without_salt": Case(
        env={
            "SEAWALL_GUARD_ROLLOUT": "enforce:5%,warn:rest",
            "SEAWALL_DEPLOYMENT_ENVIRONMENT": "prod",
        }
    ),
    "rollout_too_wide": Case(
        env={
            "SEAWALL_GUARD_ROLLOUT": "enforce:50%,warn:rest",
            "SEAWALL_GUARD_ROLLOUT_SALT": "s",
            "SEAWALL_DEPLOYMENT_ENVIRONMENT": "prod",
        }
    ),
    "bad_tokens_file": Case(
        env={"SEAWALL_GATEWAY_TOKENS_FILE": "{scratch}/tokens.yaml"},
        files={"tokens.yaml": "alice: short\n"},
    ),
    "missing_tls_file": Case(env={"TEMPORAL_TLS_CLIENT_CERT_PATH": "{scratch}/client.pem"}),
    "s3_without_bucket": Case(files={USER_CONFIG: "payload_storage: s3\n"}),
}

# Variable prefixes that are (or might be) settings: none of this process's reach the cases.
SETTING_PREFIXES = ("SEAWALL_", "OPENAI_", "TEMPORAL_", "OTEL_", "QWEN_", "XDG_")


def _base_environ(scratch: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(SETTING_PREFIXES)}
    base.pop("HOME", None)
    return {
        **base,
        "HOME": str(scratch / "home"),
        "XDG_CONFIG_HOME": str(scratch / "xdg"),
        "XDG_DATA_HOME": str(scratch / "data"),
        "PYTHONPATH": str(ROOT),
    }


# What bounds a sandbox depends on the host's cgroups (seawall/runtime/cgroups.py); the line
# is kept, its host-dependent part is not.
SANDBOX_LIMITS = re.compile(r"^sandbox limits: [^\n]*", re.MULTILINE)


def _shown(text: str, scratch: Path) -> str:
    text = SANDBOX_LIMITS.sub("sandbox limits: (this host's)", text)
    return text.replace(str(scratch), SCRATCH_SHOWN)


def _run(case: Case, scratch: Path, *args: str) -> str:
    for relative, text in case.files.items():
        path = scratch / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    cwd = scratch / "cwd"
    cwd.mkdir(exist_ok=True)
    env = {k: v.replace("{scratch}", str(scratch)) for k, v in case.env.items()}
    done = subprocess.run(
        [sys.executable, "-m", "seawall.cli.main", "config", *args],
        cwd=cwd,
        env={**_base_environ(scratch), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    stdout = done.stdout
    if args == ("--json",) and stdout:
        # One compact line on stdout; stored indented so a difference reads as one line.
        document = json.loads(stdout)
        assert stdout == json.dumps(document) + "\n"
        stdout = json.dumps(document, indent=1) + "\n"
    return _shown(
        f"exit: {done.returncode}\n--- stdout\n{stdout}--- stderr\n{done.stderr}", scratch
    )


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A directory whose name has a fixed length (``/tmp/swcfg-`` and 8 characters)."""
    path = Path(tempfile.mkdtemp(prefix="swcfg-", dir="/tmp"))
    assert len(str(path)) == len(SCRATCH_SHOWN)
    try:
        yield path
    finally:
        shutil.rmtree(path)


FORMS: dict[str, tuple[str, ...]] = {"table": (), "json": ("--json",)}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", CASES)
def test_seawall_config_output_is_unchanged(name: str, form: str, scratch: Path) -> None:
    expected = (EXPECTED / f"{name}.{form}.txt").read_text()
    assert _run(CASES[name], scratch, *FORMS[form]) == expected


def test_every_expected_output_belongs_to_a_case() -> None:
    files = {p.name for p in EXPECTED.iterdir()}
    assert files == {f"{name}.{form}.txt" for name in CASES for form in FORMS}


def _write_expected(run: Callable[[Case, Path, tuple[str, ...]], str]) -> None:
    EXPECTED.mkdir(exist_ok=True)
    for name, case in CASES.items():
        for form, args in FORMS.items():
            path = Path(tempfile.mkdtemp(prefix="swcfg-", dir="/tmp"))
            try:
                (EXPECTED / f"{name}.{form}.txt").write_text(run(case, path, args))
            finally:
                shutil.rmtree(path)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    _write_expected(lambda case, path, args: _run(case, path, *args))
