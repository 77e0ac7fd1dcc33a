"""The sandbox as an operator policy (docs/security-sandbox.md): its settings, the
allowlisted environment, the startup probe and failing closed.

Where the sandbox cannot start, shell commands are refused with a clear tool error (an
outcome, not a crash) and one startup line names the setting; ``sandbox: none`` runs them
bare.
"""

from __future__ import annotations

import dataclasses
import os
import stat
import sys
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from activities.mcp.pool import McpPool
from activities.sandbox import (
    NetworkPolicy,
    SandboxMode,
    load_policy,
    log_sandbox_status,
    probe,
)
from activities.sandbox.environment import looks_secret, sandbox_environment
from activities.tool_runner import ToolActivities
from activities.tools import BUILTIN_TOOLS
from seawall.runtime.settings import SettingsError, load_settings, render_table
from tests.activities.sandbox_helpers import real_sandbox, shell
from tests.trust_helpers import harness_trust
from workflows.contracts import ToolCall
from workflows.contracts.activity import RunToolInput

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


def environ(tmp_path: Path, **values: str) -> dict[str, str]:
    """An environment with a private user config directory and these settings."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        **values,
    }


# --- settings ----------------------------------------------------------------------------


def test_defaults_confine_with_the_network_off(tmp_path: Path) -> None:
    policy = load_policy(environ(tmp_path))
    assert policy.mode is SandboxMode.BWRAP
    assert policy.network is NetworkPolicy.OFF
    limits = policy.limits
    assert (limits.cpu_seconds, limits.memory_mb, limits.file_size_mb) == (600, 8192, 1024)
    assert limits.max_processes == 256


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SEAWALL_SANDBOX", "docker"),
        ("SEAWALL_SANDBOX_NETWORK", "maybe"),
        ("SEAWALL_SANDBOX_CPU_SECONDS", "0"),
        ("SEAWALL_SANDBOX_MEMORY_MB", "lots"),
        ("SEAWALL_SANDBOX_FILE_SIZE_MB", "-1"),
        ("SEAWALL_SANDBOX_MAX_PROCESSES", "1"),
        ("SEAWALL_SANDBOX_ENV_PASSTHROUGH", "GOOD,not-a-name"),
    ],
)
def test_bad_values_are_startup_errors_naming_the_setting(
    tmp_path: Path, variable: str, value: str
) -> None:
    with pytest.raises(SettingsError, match=rf"{variable}=.*\(environment\)"):
        load_settings(environ(tmp_path, **{variable: value}))


def test_seawall_config_shows_the_mode(tmp_path: Path) -> None:
    table = render_table(load_settings(environ(tmp_path, SEAWALL_SANDBOX="none")))
    row = next(line for line in table.splitlines() if line.startswith("sandbox "))
    assert row.split()[1:3] == ["none", "environment"]


# --- the environment ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "MY_DB_PASSWD",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "DB_PASS",
        "SEAWALL_CODEC_TOKEN",
        "AWS_REGION",
        "SSH_AUTH_SOCK",
        "PGPASSWORD",
        "GPG_PRIVATE",
        "SESSION_COOKIE",
    ],
)
def test_secret_looking_names_are_withheld_even_when_passed_through(name: str) -> None:
    assert looks_secret(name)
    env = sandbox_environment({name: "x", "LANG": "C"}, passthrough=[name])
    assert name not in env and env["LANG"] == "C"


async def test_only_allowlisted_and_passed_through_variables_reach_a_command(
    tmp_path: Path, ws: Path
) -> None:
    base = real_sandbox()
    policy = base.policy.model_copy(update={"env_passthrough": ("PROJECT_FLAVOUR", "MY_DB_PASSWD")})
    env = {
        **os.environ,
        "PROJECT_FLAVOUR": "vanilla",
        "MY_DB_PASSWD": "pw-SENTINEL",
        "UNLISTED": "un-SENTINEL",
    }
    sandbox = dataclasses.replace(probe(policy), environ=env)
    ok, text = await shell(ws, "env", sandbox)
    assert ok and "PROJECT_FLAVOUR=vanilla" in text
    assert "SENTINEL" not in text
    assert "HOME=/tmp" in text


# --- failing closed ----------------------------------------------------------------------


def _no_bwrap(tmp_path: Path) -> dict[str, str]:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    return environ(tmp_path, PATH=str(empty))


async def test_without_bubblewrap_the_shell_is_refused(tmp_path: Path, ws: Path) -> None:
    sandbox = probe(load_policy(_no_bwrap(tmp_path)))
    assert not sandbox.usable and "not installed" in (sandbox.problem or "")
    activities = ToolActivities(BUILTIN_TOOLS, McpPool(), sandbox=sandbox, trust=harness_trust())
    call = ToolCall(call_id="c1", name="run_shell_command", arguments={"command": "touch ran"})
    outcome = await activities.execute(RunToolInput(call=call, workspace_root=str(ws)))
    assert outcome.status == "error"
    assert outcome.error_type == "execution_denied"
    assert "sandbox" in (outcome.error_message or "") and "sandbox: none" in outcome.content
    assert not (ws / "ran").exists()


async def test_a_bubblewrap_that_cannot_start_refuses_the_shell(tmp_path: Path, ws: Path) -> None:
    """As in a container whose profile forbids user namespaces."""
    fake = tmp_path / "fake-bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    sandbox = probe(load_policy(environ(tmp_path, PATH=f"{fake.parent}:/usr/bin:/bin")))
    assert not sandbox.usable
    assert "No permissions to create new namespace" in (sandbox.problem or "")
    ok, text = await shell(ws, "touch ran", sandbox)
    assert not ok and "refused" in text
    assert not (ws / "ran").exists()


def test_network_on_without_slirp4netns_is_a_problem(tmp_path: Path) -> None:
    bwrap_only = tmp_path / "bwrap-only"
    bwrap_only.mkdir()
    real = real_sandbox().policy.bwrap
    assert real is not None
    (bwrap_only / "bwrap").symlink_to(real)
    env = environ(tmp_path, PATH=str(bwrap_only), SEAWALL_SANDBOX_NETWORK="on")
    sandbox = probe(load_policy(env))
    assert not sandbox.usable and "slirp4netns" in (sandbox.problem or "")


def test_one_startup_line_names_the_setting(tmp_path: Path) -> None:
    import structlog

    sandbox = probe(load_policy(_no_bwrap(tmp_path)))
    with capture_logs() as logs:
        log_sandbox_status(sandbox, structlog.get_logger("test"))
    assert len(logs) == 1
    assert logs[0]["event"] == "sandbox_unavailable" and logs[0]["setting"] == "sandbox"
    assert logs[0]["log_level"] == "error"


def test_a_working_sandbox_says_how_it_is_enforced() -> None:
    import structlog

    with capture_logs() as logs:
        log_sandbox_status(real_sandbox(), structlog.get_logger("test"))
    assert [entry["event"] for entry in logs] == ["sandbox_ready"]
    assert logs[0]["mode"] == "bwrap" and logs[0]["network"] == "off"


async def test_none_runs_bare_even_without_bubblewrap(tmp_path: Path, ws: Path) -> None:
    sandbox = probe(load_policy({**_no_bwrap(tmp_path), "SEAWALL_SANDBOX": "none"}))
    assert sandbox.usable
    ok, text = await shell(ws, f"cat /proc/{os.getpid()}/status | head -1", sandbox)
    assert ok and text.startswith("Name:")


@pytest.mark.parametrize("workspace", ["/", "/usr", "/usr/local/bin", "/etc", "DATA"])
async def test_a_workspace_that_would_expose_the_host_is_refused(
    tmp_path: Path, workspace: str
) -> None:
    """The workspace comes from workflow input: bound writable at ``/``, inside ``/usr`` or
    above the worker's data directory it would undo the sandbox, so it is refused."""
    data = tmp_path / "data"
    (data / "workspaces").mkdir(parents=True)
    base = real_sandbox()
    policy = base.policy.model_copy(update={"hidden_paths": (str(data),)})
    sandbox = dataclasses.replace(base, policy=policy)
    root = tmp_path if workspace == "DATA" else Path(workspace)
    ok, text = await shell(root, "echo ran", sandbox)
    assert not ok and "would expose" in text
    # A session workspace under the data directory is where workspaces live: fine.
    ok, text = await shell((data / "workspaces").resolve(), "echo ran", sandbox)
    assert ok and text.startswith("ran")
