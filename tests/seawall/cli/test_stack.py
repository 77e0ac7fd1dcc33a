"""``seawall up`` is placed by the settings, and hands its worker and gateway the same
namespace and task queue (the whole stack runs in tests/e2e/test_stack.py)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from seawall.cli.stack import (
    RestartPolicy,
    StackConfig,
    banner,
    child_environment,
    codec_environment,
    server_command,
    write_ui_codec_env,
)
from seawall.runtime.child_env import gateway_environment, worker_environment
from seawall.runtime.settings import GATEWAY, UP, WORKER, load_settings


def test_the_stack_takes_its_places_from_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    home = {"HOME": str(tmp_path / "home")}
    defaults = StackConfig.from_settings(load_settings(home).settings)
    assert defaults == StackConfig(data_dir=tmp_path / ".data")
    assert defaults.temporal_address == "127.0.0.1:7233"
    assert defaults.gateway_url == "http://127.0.0.1:8000"

    config = tmp_path / "home" / ".config" / "seawall" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(
        "temporal_address: elsewhere:7233\ntemporal_namespace: ns\ntask_queue: q\n"
        "gateway_port: 9000\ndata_dir: stack-data\n"
    )
    stack = StackConfig.from_settings(
        load_settings({**home, "SEAWALL_TEMPORAL_PORT": "7300"}).settings
    )
    assert (stack.namespace, stack.task_queue) == ("ns", "q")
    assert (stack.temporal_port, stack.gateway_port) == (7300, 9000)
    assert stack.data_dir == tmp_path / "stack-data"

    children = child_environment(stack, {**home, "TEMPORAL_ADDRESS": "elsewhere:7233"})
    # The stack's own server, whatever temporal_address says; the rest as configured.
    assert children["TEMPORAL_ADDRESS"] == "127.0.0.1:7300"
    assert children["TEMPORAL_NAMESPACE"] == "ns"
    assert children["SEAWALL_TASK_QUEUE"] == "q"
    assert children["SEAWALL_GATEWAY_PORT"] == "9000"
    assert children["SEAWALL_WORKSPACES"] == str(tmp_path / "stack-data" / "workspaces")
    assert children["HOME"] == home["HOME"]


def test_the_gateway_process_gets_no_model_endpoint_or_key() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-secret",
        "OPENAI_BASE_URL": "http://models.internal/v1",
        "SEAWALL_MCP_SERVERS": "{}",
        "SEAWALL_GATEWAY_TOKEN": "t",
        "TEMPORAL_ADDRESS": "127.0.0.1:7233",
        "PATH": "/usr/bin",
    }
    gateway = gateway_environment(environ)
    assert "OPENAI_API_KEY" not in gateway and "OPENAI_BASE_URL" not in gateway
    assert "SEAWALL_MCP_SERVERS" not in gateway
    # What the gateway does read, and what is not a setting, passes through.
    assert gateway["SEAWALL_GATEWAY_TOKEN"] == "t"
    assert gateway["TEMPORAL_ADDRESS"] == "127.0.0.1:7233"
    assert gateway["PATH"] == "/usr/bin"


def test_a_crashed_process_is_restarted_with_doubling_delays() -> None:
    policy = RestartPolicy(first_delay=1, max_delay=4, max_crashes=10, window=1000)
    assert [policy.crashed(float(t)) for t in range(5)] == [1, 2, 4, 4, 4]


def test_a_crash_loop_gives_up_and_old_crashes_are_forgotten() -> None:
    policy = RestartPolicy(max_crashes=3, window=60)
    assert policy.crashed(0) is not None
    assert policy.crashed(10) is not None
    assert policy.crashed(20) is None  # three crashes within a minute: crash-looping
    fresh = RestartPolicy(max_crashes=3, window=60)
    for t in (0, 100, 200, 300):  # one crash every 100 s is not a loop
        assert fresh.crashed(t) == fresh.first_delay


def test_the_ui_decodes_nothing_unless_the_operator_turns_its_codec_on(tmp_path: Path) -> None:
    # docs/security-codec.md: the dev UI's unauthenticated settings endpoint serves whatever
    # codec endpoint it has, token included; by default it has none, and the gateway no token.
    off = load_settings({"HOME": str(tmp_path)}, reader=UP, also=(WORKER, GATEWAY))
    stack = StackConfig.from_settings(off.settings)
    assert not stack.ui_codec
    assert codec_environment(stack) == {}
    assert "--env-file" not in server_command(stack)
    assert "SEAWALL_UI_CODEC=1 decodes them" in banner(stack, off)
    on = load_settings(
        {"HOME": str(tmp_path), "SEAWALL_UI_CODEC": "1"}, reader=UP, also=(WORKER, GATEWAY)
    )
    turned_on = StackConfig.from_settings(on.settings)
    assert codec_environment(turned_on) == {"SEAWALL_CODEC_TOKEN": turned_on.codec_token}
    assert "its settings endpoint serves the codec token" in banner(turned_on, on)
    assert len(banner(turned_on, on).splitlines()) == len(banner(stack, off).splitlines())


def test_the_stack_shares_its_stored_payloads_and_shows_them_in_the_ui(tmp_path: Path) -> None:
    # docs/settings.md, "Payload storage": the worker and the gateway must use one store.
    stack = StackConfig.from_settings(
        load_settings(
            {
                "HOME": str(tmp_path),
                "SEAWALL_DATA_DIR": str(tmp_path / "d"),
                "SEAWALL_UI_CODEC": "1",
            }
        ).settings
    )
    children = child_environment(stack, {"HOME": str(tmp_path)})
    command = server_command(stack)

    assert children["SEAWALL_DATA_DIR"] == str(tmp_path / "d")
    assert "SEAWALL_DATA_DIR" in gateway_environment(children)
    # The UI's codec endpoint carries the stack's codec token, which the gateway gets too;
    # it reaches the dev server in a 0600 file, not its argv, and never the worker.
    assert stack.codec_token not in " ".join(command)
    env_file = write_ui_codec_env(stack)
    with_codec = server_command(stack, env_file)
    assert stack.codec_token not in " ".join(with_codec)
    assert with_codec[with_codec.index("--env-file") + 1] == str(env_file)
    assert f"{stack.gateway_url}/codec/ui/{stack.codec_token}" in env_file.read_text()
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(env_file.parent.stat().st_mode) == 0o700
    gateway = gateway_environment(children) | codec_environment(stack)
    assert gateway["SEAWALL_CODEC_TOKEN"] == stack.codec_token
    assert gateway["SEAWALL_CODEC_UI_ORIGINS"] == "http://localhost:8233,http://127.0.0.1:8233"
    assert "SEAWALL_CODEC_TOKEN" not in children
    assert "SEAWALL_CODEC_TOKEN" not in worker_environment({**children, **gateway})
    configured = StackConfig.from_settings(
        load_settings({"HOME": str(tmp_path), "SEAWALL_CODEC_TOKEN": "mine"}).settings
    )
    assert configured.codec_token == "mine"
    assert len(stack.codec_token) >= 32  # made for this run when none is configured


def test_a_rollout_policy_in_the_config_file_is_the_workers_alone(tmp_path: Path) -> None:
    # A policy in config.yaml is read by the worker only (docs/settings.md, "Each process
    # reads its own settings"): the gateway, which gets neither its salt nor its environment,
    # neither reads nor checks it, and the worker, which gets both, does.
    config = tmp_path / "home" / ".config" / "seawall" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("guard_rollout: enforce:5%,warn:rest\n")
    environ = {
        "HOME": str(tmp_path / "home"),
        "SEAWALL_GUARD_ROLLOUT_SALT": "s",
        "SEAWALL_DEPLOYMENT_ENVIRONMENT": "internal",
        "OPENAI_API_KEY": "sk-secret",
    }
    gateway = gateway_environment(environ)
    assert not {"OPENAI_API_KEY", "SEAWALL_GUARD_ROLLOUT_SALT"} & set(gateway)
    assert not hasattr(load_settings(gateway, reader=GATEWAY).settings, "guard_rollout")
    worker = load_settings(worker_environment(environ), reader=WORKER).settings
    assert worker.guard_rollout == "enforce:5%,warn:rest"


def banner_of(tmp_path: Path, environ: dict[str, str]) -> list[str]:
    """The lines of ``seawall up``'s banner for these settings."""
    environ = {"HOME": str(tmp_path / "home"), **environ}
    effective = load_settings(environ, reader=UP, also=(WORKER, GATEWAY))
    return banner(StackConfig(data_dir=tmp_path / "data"), effective).splitlines()


def test_the_banner_says_which_guard_mode_profile_and_sandbox_run(tmp_path: Path) -> None:
    lines = banner_of(tmp_path, {})
    assert lines[0] == "Seawall is up."
    assert "  guard: shadow (default) · profile: recommended · sandbox: bwrap" in lines
    assert not any("warning" in line for line in lines)

    configured = tmp_path / "home" / ".config" / "seawall" / "config.yaml"
    configured.parent.mkdir(parents=True)
    configured.write_text("loop_profile: seed\nsandbox: none\n")
    lines = banner_of(tmp_path, {"SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "Enforce"})
    assert "  guard: enforce (environment) · profile: seed · sandbox: none" in lines

    configured.write_text(
        "repeated_tool_failure_guard: warn\nguard_rollout: enforce:5%,warn:rest\n"
    )
    rollout = {"SEAWALL_GUARD_ROLLOUT_SALT": "s", "SEAWALL_DEPLOYMENT_ENVIRONMENT": "prod"}
    lines = banner_of(tmp_path, rollout)
    # Each owner's cohort decides its sessions' mode: the banner says a policy applies.
    assert (
        "  guard: warn (user config) + rollout policy · profile: recommended · sandbox: bwrap"
        in lines
    )


def test_the_banner_names_the_disk_quotas_in_force(tmp_path: Path) -> None:
    """The workspace's quota always; the owner's with its size, or that there is none."""
    (limits,) = [line for line in banner_of(tmp_path, {}) if "sandbox limits:" in line]
    assert limits.endswith("disk by a watched quota per workspace and per owner (20480 MB)")
    (limits,) = [
        line
        for line in banner_of(tmp_path, {"SEAWALL_SANDBOX_OWNER_DISK_MB": "0"})
        if "sandbox limits:" in line
    ]
    assert limits.endswith("disk by a watched quota per workspace, none per owner")


def test_the_banner_says_the_seed_profile_runs_an_invalid_guard_mode_as_shadow(
    tmp_path: Path,
) -> None:
    environ = {"SEAWALL_LOOP_PROFILE": "seed", "SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "banana"}
    lines = banner_of(tmp_path, environ)
    guard = lines.index(
        "  guard: shadow (seed profile: invalid value) · profile: seed · sandbox: bwrap"
    )
    assert lines[guard + 1] == (
        '  warning: repeated_tool_failure_guard: "banana" is not a mode (off, shadow, warn, '
        "enforce); running shadow as the seed design requires"
    )
