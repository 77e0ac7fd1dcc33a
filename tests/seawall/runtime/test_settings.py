"""The one operator settings model: environment, then the user config file, then defaults;
never a project ``.env``, ``.seawall/`` or workspace settings; ``seawall config``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from seawall.runtime.settings import (
    GUARD_MODE_ENV,
    GUARD_MODE_ENV_ALIAS,
    SETTINGS,
    SeawallSettings,
    SettingsError,
    load_settings,
    render_table,
)
from workflows.activity_io import SettingSource
from workflows.guard import GuardMode

ROOT = Path(__file__).resolve().parents[3]
SECRET_KEY = "sk-SECRET-never-printed-4711"
SECRET_TOKEN = "tok-SECRET-never-printed-0815"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """An environment with a private, empty config home and nothing else set."""
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def config_file(home: dict[str, str]) -> Path:
    return Path(home["XDG_CONFIG_HOME"]) / "seawall" / "config.yaml"


def plant_project_settings(project: Path) -> None:
    """Every project-level place a repository author could try to configure Seawall from,
    for every setting, in both the variable and the config-key spelling."""
    lines = []
    for setting in SETTINGS:
        value = "9999" if setting.name == "metrics_port" else "enforce"
        lines += [f"{name}={value}" for name in setting.env]
        lines.append(f"{setting.name}={value}")
    env_text = "\n".join(lines) + "\n"
    yaml_text = "".join(
        f"{s.name}: {'9999' if s.name == 'metrics_port' else 'enforce'}\n" for s in SETTINGS
    )
    write(project / ".env", env_text)
    write(project / ".seawall" / ".env", env_text)
    write(project / ".seawall" / "config.yaml", yaml_text)
    write(
        project / ".seawall" / "settings.json",
        json.dumps({"env": dict(line.split("=") for line in lines)}),
    )
    write(project / ".qwen" / ".env", env_text)
    write(
        project / ".qwen" / "settings.json",
        json.dumps({"env": dict(line.split("=") for line in lines)}),
    )
    write(project / "config.yaml", yaml_text)


def test_defaults_when_nothing_is_configured(home: dict[str, str]) -> None:
    effective = load_settings(home)
    settings = effective.settings
    assert settings.temporal_address == "localhost:7233"
    assert settings.temporal_namespace == "default"
    assert settings.task_queue == "seawall"
    assert settings.repeated_tool_failure_guard is GuardMode.SHADOW
    assert (settings.log_format, settings.log_level) == ("json", "INFO")
    assert settings.metrics_port is None and settings.otlp_endpoint is None
    assert settings.otel_tracing is False
    assert settings.openai_api_key is None and settings.gateway_token is None
    assert {origin.source for origin in effective.origins.values()} == {SettingSource.DEFAULT}
    assert set(effective.origins) == {s.name for s in SETTINGS} == set(SeawallSettings.model_fields)
    assert effective.diagnostics == ()


def test_environment_wins_over_user_config_which_wins_over_defaults(
    home: dict[str, str],
) -> None:
    write(
        config_file(home),
        "temporal_address: from-config:7233\n"
        "task_queue: config-queue\n"
        "repeated_tool_failure_guard: warn\n"
        "metrics_port: 9100\n"
        "otel_tracing: true\n"
        "log_format: console\n",
    )
    env = {**home, "TEMPORAL_ADDRESS": "from-env:7233", "SEAWALL_METRICS_PORT": " 9464 "}
    effective = load_settings(env)
    settings = effective.settings
    assert settings.temporal_address == "from-env:7233"
    assert settings.task_queue == "config-queue"
    assert settings.repeated_tool_failure_guard is GuardMode.WARN
    assert settings.metrics_port == 9464
    assert settings.otel_tracing is True
    assert settings.log_format == "console"
    assert settings.temporal_namespace == "default"
    origins = effective.origins
    assert origins["temporal_address"].source is SettingSource.ENVIRONMENT
    assert origins["temporal_address"].where == "TEMPORAL_ADDRESS"
    assert origins["metrics_port"].source is SettingSource.ENVIRONMENT
    assert origins["task_queue"].source is SettingSource.USER_CONFIG
    assert origins["task_queue"].where == f"{config_file(home)} key task_queue"
    assert origins["repeated_tool_failure_guard"].source is SettingSource.USER_CONFIG
    assert origins["temporal_namespace"].source is SettingSource.DEFAULT


def test_guard_mode_alias_blank_values_and_invalid_values(home: dict[str, str]) -> None:
    write(config_file(home), "repeated_tool_failure_guard: enforce\n")
    alias = load_settings({**home, GUARD_MODE_ENV: "  ", GUARD_MODE_ENV_ALIAS: "OFF"})
    assert alias.settings.repeated_tool_failure_guard is GuardMode.OFF
    assert alias.origins["repeated_tool_failure_guard"].where == GUARD_MODE_ENV_ALIAS

    invalid = load_settings({**home, GUARD_MODE_ENV: "enforced"})
    # Invalid means shadow; it does not fall through to the config file's enforce.
    assert invalid.settings.repeated_tool_failure_guard is GuardMode.SHADOW
    assert invalid.origins["repeated_tool_failure_guard"].source is SettingSource.DEFAULT
    (diagnostic,) = invalid.diagnostics
    assert diagnostic.event == "invalid_guard_mode"
    assert GUARD_MODE_ENV in diagnostic.message and "enforced" in diagnostic.message


def test_bare_yaml_off_and_broken_config_files(home: dict[str, str]) -> None:
    write(config_file(home), "repeated_tool_failure_guard: off\n")
    assert load_settings(home).settings.repeated_tool_failure_guard is GuardMode.OFF

    write(config_file(home), "temporal_address: [unclosed\n")
    broken = load_settings(home)
    assert broken.settings.temporal_address == "localhost:7233"
    assert broken.settings.repeated_tool_failure_guard is GuardMode.SHADOW
    (diagnostic,) = broken.diagnostics
    assert diagnostic.event == "invalid_operator_config"
    assert "not valid YAML" in diagnostic.message


def test_an_invalid_value_is_an_error_naming_its_source(home: dict[str, str]) -> None:
    with pytest.raises(SettingsError, match="environment SEAWALL_METRICS_PORT"):
        load_settings({**home, "SEAWALL_METRICS_PORT": "lots"})
    write(config_file(home), "log_format: xml\n")
    with pytest.raises(SettingsError, match=r"user config .*config\.yaml key log_format"):
        load_settings(home)


def test_an_invalid_secret_is_never_echoed(home: dict[str, str]) -> None:
    write(config_file(home), f"openai_api_key: {{nested: {SECRET_KEY}}}\n")
    with pytest.raises(SettingsError) as raised:
        load_settings(home)
    assert SECRET_KEY not in str(raised.value)
    assert "openai_api_key" in str(raised.value)


def test_the_gateway_token_comes_from_the_environment_only(home: dict[str, str]) -> None:
    write(config_file(home), f"gateway_token: {SECRET_TOKEN}\n")
    assert load_settings(home).settings.gateway_token is None
    from_env = load_settings({**home, "SEAWALL_GATEWAY_TOKEN": SECRET_TOKEN})
    assert from_env.settings.gateway_token is not None
    assert from_env.settings.gateway_token.get_secret_value() == SECRET_TOKEN


def test_project_files_in_the_working_directory_set_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: dict[str, str]
) -> None:
    project = tmp_path / "project"
    plant_project_settings(project)
    monkeypatch.chdir(project)
    for setting in SETTINGS:
        for name in setting.env:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", home["HOME"])
    monkeypatch.setenv("XDG_CONFIG_HOME", home["XDG_CONFIG_HOME"])
    # Both ways in: load_settings and a plain construction through pydantic-settings.
    for settings in (load_settings().settings, SeawallSettings()):
        assert settings == load_settings(home).settings
        assert settings.repeated_tool_failure_guard is GuardMode.SHADOW
        assert settings.metrics_port is None
    assert SeawallSettings.model_config.get("env_file") is None
    assert SeawallSettings.model_config.get("secrets_dir") is None


def seawall_config(
    *args: str, env: dict[str, str], cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SEAWALL_", "OPENAI_"))}
    for setting in SETTINGS:
        for name in setting.env:
            base.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "seawall.cli.main", "config", *args],
        cwd=cwd,
        env={**base, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_seawall_config_prints_values_sources_and_never_secrets(
    tmp_path: Path, home: dict[str, str]
) -> None:
    write(
        config_file(home),
        f"repeated_tool_failure_guard: warn\nopenai_api_key: {SECRET_KEY}\ntask_queue: q1\n",
    )
    project = tmp_path / "project"
    plant_project_settings(project)
    env = {
        **home,
        "TEMPORAL_ADDRESS": "temporal.internal:7233",
        "SEAWALL_GATEWAY_TOKEN": SECRET_TOKEN,
        "OPENAI_BASE_URL": "https://user:pa55word@llm.internal/v1",
    }
    table = seawall_config(env=env, cwd=project)
    assert table.returncode == 0, table.stderr
    assert SECRET_KEY not in table.stdout + table.stderr
    assert SECRET_TOKEN not in table.stdout + table.stderr
    assert "pa55word" not in table.stdout + table.stderr
    rows = {line.split()[0]: line.split() for line in table.stdout.splitlines()[2:] if line}
    assert rows["temporal_address"][1:4] == [
        "temporal.internal:7233",
        "environment",
        "TEMPORAL_ADDRESS",
    ]
    assert rows["repeated_tool_failure_guard"][1:3] == ["warn", "user_config"]
    assert rows["task_queue"][1:3] == ["q1", "user_config"]
    assert rows["openai_api_key"][1:3] == ["set", "user_config"]
    assert rows["gateway_token"][1:4] == ["set", "environment", "SEAWALL_GATEWAY_TOKEN"]
    assert rows["metrics_port"][1:3] == ["unset", "default"]
    assert rows["temporal_namespace"][1:3] == ["default", "default"]

    as_json = seawall_config("--json", env=env, cwd=project)
    assert as_json.returncode == 0, as_json.stderr
    assert SECRET_KEY not in as_json.stdout and SECRET_TOKEN not in as_json.stdout
    data = json.loads(as_json.stdout)
    assert data["user_config"] == {"path": str(config_file(home)), "found": True}
    settings = data["settings"]
    assert set(settings) == {s.name for s in SETTINGS}
    assert settings["repeated_tool_failure_guard"]["value"] == "warn"
    assert settings["repeated_tool_failure_guard"]["source"] == "user_config"
    assert settings["openai_api_key"] == {
        "value": "set",
        "source": "user_config",
        "from": f"{config_file(home)} key openai_api_key",
        "environment": ["OPENAI_API_KEY"],
        "secret": True,
    }
    assert settings["gateway_token"]["value"] == "set"
    assert settings["openai_base_url"]["value"] == "https://***@llm.internal/v1"
    assert settings["temporal_address"]["source"] == "environment"
    assert settings["metrics_port"] == {
        "value": "unset",
        "source": "default",
        "from": None,
        "environment": ["SEAWALL_METRICS_PORT"],
        "secret": False,
    }
    assert data["diagnostics"] == []


def test_seawall_config_reports_an_invalid_guard_mode_and_bad_values(
    home: dict[str, str],
) -> None:
    result = seawall_config("--json", env={**home, GUARD_MODE_ENV_ALIAS: "loud"})
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["settings"]["repeated_tool_failure_guard"]["value"] == "shadow"
    assert data["settings"]["repeated_tool_failure_guard"]["source"] == "default"
    (diagnostic,) = data["diagnostics"]
    assert GUARD_MODE_ENV_ALIAS in diagnostic and "loud" in diagnostic

    bad = seawall_config(env={**home, "SEAWALL_METRICS_PORT": "many"})
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert "SEAWALL_METRICS_PORT" in bad.stderr


def test_render_table_lists_every_setting_once(home: dict[str, str]) -> None:
    text = render_table(load_settings(home))
    names = [line.split()[0] for line in text.splitlines()[3:] if line.strip()]
    assert names == [s.name for s in SETTINGS]


def test_worker_and_gateway_flags_default_to_the_settings(
    monkeypatch: pytest.MonkeyPatch, home: dict[str, str]
) -> None:
    import worker
    from gateway.__main__ import parse_args as gateway_args

    for setting in SETTINGS:
        for name in setting.env:
            monkeypatch.delenv(name, raising=False)
    for key, value in home.items():
        monkeypatch.setenv(key, value)
    write(
        config_file(home),
        "temporal_address: cfg:7233\nmetrics_port: 9100\nlog_format: console\n"
        "otel_tracing: true\notel_resource_attributes: deployment.environment=internal\n",
    )
    monkeypatch.setenv("SEAWALL_TASK_QUEUE", "env-queue")
    monkeypatch.setenv("SEAWALL_LOG_LEVEL", "debug")
    args = worker.parse_args([])
    assert (args.address, args.task_queue, args.metrics_port) == ("cfg:7233", "env-queue", 9100)
    assert (args.log_format, args.log_level, args.otel_tracing) == ("console", "DEBUG", True)
    assert args.telemetry_environ == {"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=internal"}
    # Flags still win over every source.
    args = worker.parse_args(["--address", "flag:1", "--no-otel-tracing", "--log-format", "json"])
    assert (args.address, args.otel_tracing, args.log_format) == ("flag:1", False, "json")

    assert gateway_args([]).log_format == "console"
    monkeypatch.setenv("SEAWALL_LOG_FORMAT", "json")
    assert gateway_args([]).log_format == "json"
    assert gateway_args(["--log-format", "console"]).log_format == "console"
    with pytest.raises(SystemExit):
        gateway_args(["--log-format", "xml"])
