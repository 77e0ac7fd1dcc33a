"""The one operator settings model: environment, then the user config file, then defaults;
never a project ``.env``, ``.seawall/`` or workspace settings; ``seawall config``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import structlog
from structlog.testing import capture_logs

from seawall.runtime.settings import (
    ACP,
    GATEWAY,
    GUARD_MODE_ENV,
    GUARD_MODE_ENV_ALIAS,
    PROMPT,
    ROLLOUT,
    RUN,
    SETTINGS,
    STORAGE,
    UP,
    WORKER,
    Origin,
    SeawallSettings,
    SettingsError,
    default_of,
    display_value,
    load_settings,
    log_startup_diagnostics,
    render_table,
    resolve_guard_mode,
    resolve_model_retry_window,
    user_config_path,
)
from workflows.contracts.activity import SettingSource
from workflows.seed import GuardMode

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

    # An invalid value is refused at startup like any bad value, naming its variable; it
    # does not fall through to the config file's enforce.
    with pytest.raises(SettingsError) as raised:
        load_settings({**home, GUARD_MODE_ENV: "enforced"})
    assert str(raised.value) == (
        f"{GUARD_MODE_ENV}=enforced (environment): must be 'off', 'shadow', 'warn' or 'enforce'"
    )


def test_the_seed_profile_runs_an_invalid_guard_mode_as_shadow_loudly(
    home: dict[str, str],
) -> None:
    """The seed design: an invalid value resolves to shadow, with one diagnostic; startup
    says so in one line (the banner, the worker's start-up line) instead of refusing."""
    write(config_file(home), "repeated_tool_failure_guard: enforce\nloop_profile: seed\n")
    seed = load_settings({**home, GUARD_MODE_ENV: "enforced"})
    # It does not fall through to the config file's enforce.
    assert seed.settings.repeated_tool_failure_guard is GuardMode.SHADOW
    assert seed.origins["repeated_tool_failure_guard"].where == GUARD_MODE_ENV
    line = (
        'repeated_tool_failure_guard: "enforced" is not a mode (off, shadow, warn, enforce); '
        "running shadow as the seed design requires"
    )
    assert seed.guard_notice == line
    (diagnostic,) = seed.diagnostics
    assert (diagnostic.event, diagnostic.message) == ("invalid_guard_mode", line)
    assert seed.invalid == {"repeated_tool_failure_guard": line} and seed.problems == ()
    # A valid guard mode under the seed profile, or none, says nothing.
    assert load_settings(home).guard_notice is None
    assert load_settings({**home, GUARD_MODE_ENV: "warn"}).guard_notice is None
    # An invalid profile is no seed profile: both values are refused, in one line.
    with pytest.raises(SettingsError) as raised:
        load_settings({**home, GUARD_MODE_ENV: "enforced", "SEAWALL_LOOP_PROFILE": "sed"})
    assert str(raised.value) == (
        f"{GUARD_MODE_ENV}=enforced (environment): must be 'off', 'shadow', 'warn' or "
        "'enforce'; SEAWALL_LOOP_PROFILE=sed (environment): must be 'seed' or 'recommended'"
    )


def test_bare_yaml_off_and_broken_config_files(home: dict[str, str]) -> None:
    write(config_file(home), "repeated_tool_failure_guard: off\n")
    assert load_settings(home).settings.repeated_tool_failure_guard is GuardMode.OFF

    # A broken file is an error at startup, not a silent fall-back to the defaults...
    for text, reason in [
        ("temporal_address: [unclosed\n", "is not valid YAML"),
        ("- a list\n", "must be a YAML mapping"),
    ]:
        write(config_file(home), text)
        with pytest.raises(SettingsError) as raised:
            load_settings(home)
        assert str(raised.value) == f"user config {config_file(home)}: {reason}"
    # ...while the guard mode, resolved once per session, falls back to shadow.
    resolved = resolve_guard_mode(home)
    assert resolved.mode is GuardMode.SHADOW
    assert resolved.diagnostic is not None
    assert resolved.diagnostic.event == "invalid_operator_config"


def test_an_invalid_value_is_one_error_naming_the_setting_its_value_and_source(
    home: dict[str, str],
) -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings({**home, "SEAWALL_GATEWAY_PORT": "abc"})
    assert str(raised.value) == "SEAWALL_GATEWAY_PORT=abc (environment): not an integer"

    write(config_file(home), "log_format: xml\ntask_queue: ''\ngateway_port: 99999\n")
    with pytest.raises(SettingsError) as raised:
        load_settings({**home, "SEAWALL_MODEL_TEMPERATURE": "hot", "SEAWALL_OTEL_TRACING": "maybe"})
    problems = str(raised.value).split("; ")
    where = f"(user config {config_file(home)})"
    assert sorted(problems) == sorted(
        [
            f"gateway_port=99999 {where}: must be less than or equal to 65535",
            f"log_format=xml {where}: must be 'json' or 'console'",
            "SEAWALL_MODEL_TEMPERATURE=hot (environment): not a number",
            "SEAWALL_OTEL_TRACING=maybe (environment): not a boolean "
            "(true/false, yes/no, on/off, 1/0)",
        ]
    )
    # A blank value counts as unset, in the file as in the environment.
    assert "task_queue" not in str(raised.value)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("SEAWALL_MAX_CACHED_WORKFLOWS", "-1", "must be greater than or equal to 0"),
        ("SEAWALL_EAGER_CALLS_PER_WORKFLOW_TASK", "-1", "must be greater than or equal to 0"),
        ("SEAWALL_EAGER_CALLS_PER_WORKFLOW_TASK", "1001", "must be less than or equal to 1000"),
        ("SEAWALL_CONTEXT_BUDGET_CHARS", "0", "must be greater than or equal to 10000"),
        ("SEAWALL_CONTEXT_BUDGET_CHARS", "lots", "not an integer"),
        ("SEAWALL_MODEL_MAX_TOKENS", "0", "must be greater than 0"),
        ("SEAWALL_MCP_TOOL_TIMEOUT_SECONDS", "inf", "not a finite number"),
        ("SEAWALL_MCP_STDERR", "tty", "must be 'discard' or 'inherit'"),
        ("SEAWALL_APPROVAL_MODE", "sometimes", "must be 'default', 'auto_edit' or 'yolo'"),
        ("SEAWALL_MAX_PROMPT_CHARS", "100001", "must be less than or equal to 100000"),
        ("SEAWALL_LOG_LEVEL", "loud", "must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
        ("SEAWALL_GATEWAY_URL", "ftp://u:pw@gw", "must be an http:// or https:// URL"),
        ("TEMPORAL_NAMESPACE", "x" * 100, None),
    ],
)
def test_every_kind_of_bad_value_names_its_variable(
    home: dict[str, str], variable: str, value: str, message: str | None
) -> None:
    if message is None:  # any value is fine: no error
        load_settings({**home, variable: value})
        return
    with pytest.raises(SettingsError) as raised:
        load_settings({**home, variable: value})
    text = str(raised.value)
    assert text.startswith(f"{variable}=") and f"(environment): {message}" in text
    assert "pw" not in text  # a credential in a URL never prints


def test_mcp_servers_come_from_the_environment_or_mcp_json(home: dict[str, str]) -> None:
    mcp_json = config_file(home).with_name("mcp.json")
    assert load_settings(home).settings.mcp_servers is None
    write(mcp_json, json.dumps({"mcpServers": {"files": {"command": "x"}}}))
    from_file = load_settings(home)
    assert from_file.settings.mcp_servers == {"mcpServers": {"files": {"command": "x"}}}
    assert from_file.origins["mcp_servers"] == Origin(SettingSource.USER_CONFIG, str(mcp_json))
    assert display_value(from_file, "mcp_servers") == "set (1 server)"
    from_env = load_settings({**home, "SEAWALL_MCP_SERVERS": '{"a": {}, "b": {}}'})
    assert from_env.settings.mcp_servers == {"a": {}, "b": {}}
    assert from_env.origins["mcp_servers"].where == "SEAWALL_MCP_SERVERS"
    assert display_value(from_env, "mcp_servers") == "set (2 servers)"

    secret_server = '{"s3cretServer": {"command": "x"}'  # not valid JSON
    with pytest.raises(SettingsError) as raised:
        load_settings({**home, "SEAWALL_MCP_SERVERS": secret_server})
    assert str(raised.value) == "SEAWALL_MCP_SERVERS (environment): not valid JSON"
    write(mcp_json, secret_server)
    with pytest.raises(SettingsError) as raised:
        load_settings(home)
    assert str(raised.value) == f"user config {mcp_json}: is not valid JSON"
    write(mcp_json, '["s3cretServer"]')
    with pytest.raises(SettingsError) as raised:
        load_settings(home)
    assert str(raised.value) == (
        f"mcp_servers (user config {mcp_json}): must be a JSON object of servers"
    )


def test_keys_that_set_nothing_are_diagnostics(home: dict[str, str]) -> None:
    write(
        config_file(home),
        "task_queu: typo\ngateway_token: t\nmcp_servers: {}\ntask_queue: q\n",
    )
    effective = load_settings(home)
    assert effective.settings.task_queue == "q"
    messages = [d.message for d in effective.diagnostics]
    where = f"user config {config_file(home)}"
    assert messages == [
        f"{where}: key 'task_queu' is not a setting; ignoring it",
        f"{where}: key 'gateway_token' may only be set in the environment; ignoring it",
        f"{where}: key 'mcp_servers' belongs in mcp.json; ignoring it",
    ]
    assert {d.event for d in effective.diagnostics} == {"ignored_operator_config_key"}


def test_processes_log_settings_diagnostics_at_startup_but_not_the_guard_modes(
    home: dict[str, str],
) -> None:
    write(config_file(home), "task_queu: typo\nloop_profile: seed\n")
    effective = load_settings({**home, GUARD_MODE_ENV: "loud"})
    assert len(effective.diagnostics) == 2
    with capture_logs() as logs:
        log_startup_diagnostics(effective, structlog.get_logger("test"))
    # The seed profile's guard-mode notice is the worker's to report: in its worker_started
    # line, and once per session that resolves the value.
    assert [(entry["event"], entry["log_level"]) for entry in logs] == [
        ("ignored_operator_config_key", "warning")
    ]
    assert "task_queu" in logs[0]["diagnostic"]


def test_derived_defaults_follow_the_settings_they_derive_from(
    home: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    defaults = load_settings(home).settings
    assert defaults.gateway_client_url == "http://127.0.0.1:8000"
    assert defaults.workspaces_dir == tmp_path / ".data" / "workspaces"
    write(config_file(home), "gateway_host: 0.0.0.0\ngateway_port: 9000\ndata_dir: ~/d\n")
    configured = load_settings(home).settings
    assert configured.gateway_client_url == "http://127.0.0.1:9000"
    assert configured.workspaces_dir == Path("~/d/workspaces").expanduser()
    assert load_settings({**home, "SEAWALL_GATEWAY_HOST": "::"}).settings.gateway_client_url == (
        "http://[::1]:9000"
    )
    explicit = load_settings({**home, "SEAWALL_GATEWAY_URL": "https://gw.internal/"})
    assert explicit.settings.gateway_client_url == "https://gw.internal"
    assert default_of("gateway_port") == 8000


def test_every_setting_has_its_own_variable_and_known_readers() -> None:
    variables = [name for s in SETTINGS for name in s.env]
    assert len(variables) == len(set(variables))
    for setting in SETTINGS:
        assert setting.env and setting.help and setting.read_by, setting.name
        assert set(setting.read_by) <= {WORKER, GATEWAY, RUN, UP, PROMPT, ACP, ROLLOUT, STORAGE}, (
            setting.name
        )


def test_docs_settings_md_documents_every_setting_and_variable() -> None:
    docs = (ROOT / "docs" / "settings.md").read_text()
    for setting in SETTINGS:
        assert f"`{setting.name}`" in docs, setting.name
        for name in setting.env:
            assert f"`{name}`" in docs, name


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
    # Both ways in: load_settings and a plain construction (the defaults: it reads nothing).
    for settings in (load_settings().settings, SeawallSettings()):
        assert settings == load_settings(home).settings
        assert settings.repeated_tool_failure_guard is GuardMode.SHADOW
        assert settings.metrics_port is None
    assert SeawallSettings.model_config.get("env_file") is None
    assert SeawallSettings.model_config.get("secrets_dir") is None


def clean_environ() -> dict[str, str]:
    """This process's environment without any setting's variable."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SEAWALL_", "OPENAI_"))}
    for setting in SETTINGS:
        for name in setting.env:
            base.pop(name, None)
    return base


def seawall_config(
    *args: str, env: dict[str, str], cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    base = clean_environ()
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
        "config_file": "config.yaml",
        "read_by": ["worker"],
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
        "config_file": "config.yaml",
        "read_by": ["worker"],
        "secret": False,
    }
    assert settings["gateway_token"]["config_file"] is None
    assert settings["mcp_servers"]["config_file"] == "mcp.json"
    assert data["mcp_config"] == {
        "path": str(config_file(home).with_name("mcp.json")),
        "found": False,
    }
    assert data["diagnostics"] == []


def table_rows(stdout: str) -> dict[str, list[str]]:
    """``seawall config``'s rows by setting: value, source, from."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("setting "))
    rows = lines[start + 1 : start + 1 + len(SETTINGS)]
    return {line.split()[0]: line.split()[1:] for line in rows}


def test_seawall_config_marks_an_invalid_guard_mode_and_bad_values(
    home: dict[str, str],
) -> None:
    refused = (
        f"{GUARD_MODE_ENV_ALIAS}=loud (environment): must be 'off', 'shadow', 'warn' or 'enforce'"
    )
    result = seawall_config("--json", env={**home, GUARD_MODE_ENV_ALIAS: "loud"})
    assert result.returncode == 2
    assert result.stderr == f"seawall: error: {refused}\n"
    data = json.loads(result.stdout)
    row = data["settings"]["repeated_tool_failure_guard"]
    assert [row["value"], row["source"], row["from"]] == [
        "invalid",
        "environment",
        GUARD_MODE_ENV_ALIAS,
    ]
    assert row["problem"] == refused
    assert "problem" not in data["settings"]["loop_profile"]

    table = seawall_config(env={**home, GUARD_MODE_ENV: "banana"})
    assert table.returncode == 2
    rows = table_rows(table.stdout)
    assert rows["repeated_tool_failure_guard"] == ["invalid", "environment", GUARD_MODE_ENV]
    assert rows["loop_profile"] == ["recommended", "default"]
    assert table.stderr == (
        f"seawall: error: {GUARD_MODE_ENV}=banana (environment): must be 'off', 'shadow', "
        "'warn' or 'enforce'\n"
    )

    # Under the seed profile the processes run shadow; seawall config still marks the value.
    write(config_file(home), "loop_profile: seed\n")
    seed = seawall_config(env={**home, GUARD_MODE_ENV: "banana"})
    assert seed.returncode == 2 and seed.stderr == ""
    assert table_rows(seed.stdout)["repeated_tool_failure_guard"][0] == "invalid"
    assert (
        'warning: repeated_tool_failure_guard: "banana" is not a mode (off, shadow, warn, '
        "enforce); running shadow as the seed design requires"
    ) in seed.stdout.splitlines()

    bad = seawall_config(env={**home, "SEAWALL_METRICS_PORT": "many"})
    assert bad.returncode == 2
    metrics_port = table_rows(bad.stdout)["metrics_port"]
    assert metrics_port == ["invalid", "environment", "SEAWALL_METRICS_PORT"]
    assert bad.stderr == "seawall: error: SEAWALL_METRICS_PORT=many (environment): not an integer\n"

    broken = write(config_file(home), "task_queue: [\n")
    unreadable = seawall_config(env=home)
    assert (unreadable.returncode, unreadable.stdout) == (2, "")
    assert unreadable.stderr == f"seawall: error: user config {broken}: is not valid YAML\n"


def test_render_table_lists_every_setting_once(home: dict[str, str]) -> None:
    text = render_table(load_settings(home))
    names = [line.split()[0] for line in text.splitlines()[3:] if line.strip()]
    assert names == [s.name for s in SETTINGS]


def test_worker_and_gateway_flags_default_to_the_settings(
    monkeypatch: pytest.MonkeyPatch, home: dict[str, str]
) -> None:
    from gateway.__main__ import parse_args as gateway_args
    from seawall.worker.main import parse_args as worker_args

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
    args = worker_args([])
    assert (args.address, args.task_queue, args.metrics_port) == ("cfg:7233", "env-queue", 9100)
    assert (args.log_format, args.log_level, args.otel_tracing) == ("console", "DEBUG", True)
    assert args.settings.otel_resource_attributes == "deployment.environment=internal"
    # Flags still win over every source.
    args = worker_args(["--address", "flag:1", "--no-otel-tracing", "--log-format", "json"])
    assert (args.address, args.otel_tracing, args.log_format) == ("flag:1", False, "json")
    assert worker_args([]).eager_calls_per_workflow_task == 16
    monkeypatch.setenv("SEAWALL_EAGER_CALLS_PER_WORKFLOW_TASK", "0")
    assert worker_args([]).eager_calls_per_workflow_task == 0
    assert worker_args(["--eager-calls-per-workflow-task", "4"]).eager_calls_per_workflow_task == 4
    for bad in ("-1", "1001"):
        with pytest.raises(SystemExit):
            worker_args(["--eager-calls-per-workflow-task", bad])

    assert gateway_args([]).log_format == "console"
    monkeypatch.setenv("SEAWALL_LOG_FORMAT", "json")
    assert gateway_args([]).log_format == "json"
    assert gateway_args(["--log-format", "console"]).log_format == "console"
    with pytest.raises(SystemExit):
        gateway_args(["--log-format", "xml"])


# --- the guard mode: resolved once per session, never an error ------------------------------


def guard(environ: dict[str, str], config: Path | None) -> tuple[GuardMode, SettingSource, bool]:
    """Mode, source, and whether there was a diagnostic."""
    resolved = resolve_guard_mode(environ, config)
    return resolved.mode, resolved.source, resolved.diagnostic is not None


def test_guard_mode_environment_wins_over_alias_and_config(home: dict[str, str]) -> None:
    config = write(config_file(home), "repeated_tool_failure_guard: warn\n")
    env = {GUARD_MODE_ENV: "enforce", GUARD_MODE_ENV_ALIAS: "off"}
    assert guard(env, config) == (GuardMode.ENFORCE, SettingSource.ENVIRONMENT, False)
    # The alias is used when the primary variable is missing or blank.
    for env in (
        {GUARD_MODE_ENV_ALIAS: " OFF "},
        {GUARD_MODE_ENV: "  ", GUARD_MODE_ENV_ALIAS: "off"},
    ):
        assert guard(env, config) == (GuardMode.OFF, SettingSource.ENVIRONMENT, False)
    assert guard({}, config) == (GuardMode.WARN, SettingSource.USER_CONFIG, False)
    write(config, "repeated_tool_failure_guard: Enforce\nother: 1\n")
    assert guard({}, config) == (GuardMode.ENFORCE, SettingSource.USER_CONFIG, False)
    # YAML reads a bare off as false; the operator meant off.
    write(config, "repeated_tool_failure_guard: off\n")
    assert guard({}, config) == (GuardMode.OFF, SettingSource.USER_CONFIG, False)


@pytest.mark.parametrize("text", [None, "", "other: 1\n", "repeated_tool_failure_guard: ''\n"])
def test_guard_mode_unset_is_shadow(home: dict[str, str], text: str | None) -> None:
    config = config_file(home)
    if text is not None:
        write(config, text)
    env = {GUARD_MODE_ENV: "", GUARD_MODE_ENV_ALIAS: "   "}
    assert guard(env, config) == (GuardMode.SHADOW, SettingSource.DEFAULT, False)


def test_an_invalid_guard_mode_is_shadow_with_one_diagnostic(home: dict[str, str]) -> None:
    config = write(config_file(home), "repeated_tool_failure_guard: enforce\n")
    resolved = resolve_guard_mode({GUARD_MODE_ENV: "enforced"}, config)
    # An invalid value does not fall through to a lower-priority source.
    assert (resolved.mode, resolved.source) == (GuardMode.SHADOW, SettingSource.DEFAULT)
    assert resolved.diagnostic is not None
    assert resolved.diagnostic.event == "invalid_guard_mode"
    assert GUARD_MODE_ENV in resolved.diagnostic.message
    assert resolved.diagnostic.value == "enforced"
    for text in [
        "repeated_tool_failure_guard: [a\n",
        "- a list\n",
        "repeated_tool_failure_guard: 3\n",
    ]:
        write(config, text)
        assert guard({}, config) == (GuardMode.SHADOW, SettingSource.DEFAULT, True)


def test_user_config_path_follows_xdg_then_home(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    assert user_config_path({"XDG_CONFIG_HOME": str(xdg), "HOME": "/h"}) == (
        xdg / "seawall" / "config.yaml"
    )
    home = Path("/home/op/.config/seawall/config.yaml")
    assert user_config_path({"HOME": "/home/op"}) == home
    # The XDG spec: a relative XDG_CONFIG_HOME is ignored.
    assert user_config_path({"XDG_CONFIG_HOME": "relative", "HOME": "/home/op"}) == home


def test_project_files_cannot_set_the_guard_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: dict[str, str]
) -> None:
    project = tmp_path / "project"
    plant_project_settings(project)
    monkeypatch.chdir(project)
    assert guard(home, None) == (GuardMode.SHADOW, SettingSource.DEFAULT, False)


# --- every entry point: a bad setting is one line and exit code 2 ---------------------------

SEAWALL = str(Path(sys.executable).parent / "seawall")


# Each entry point checks the settings it reads (docs/settings.md, "Each process reads its
# own settings"): a bad value of one of them. ``seawall up`` also refuses a bad value of a
# setting its worker reads, which its worker would refuse.
@pytest.mark.parametrize(
    ("command", "program", "bad"),
    [
        ([sys.executable, str(ROOT / "worker.py")], "worker", ("log_level", "loud")),
        ([sys.executable, "-m", "gateway"], "gateway", ("gateway_port", "abc")),
        (
            [SEAWALL, "run", str(ROOT / "scenarios" / "queued-prompt.yaml")],
            "seawall",
            ("log_level", "loud"),
        ),
        ([SEAWALL, "up"], "seawall", ("gateway_port", "abc")),
        ([SEAWALL, "up"], "seawall", ("sandbox_cpu_seconds", "abc")),
        ([SEAWALL, "prompt", "hello"], "seawall", ("gateway_port", "abc")),
        ([SEAWALL, "acp"], "seawall", ("log_level", "loud")),
    ],
    ids=[
        "worker",
        "gateway",
        "seawall run",
        "seawall up",
        "seawall up, its worker's",
        "seawall prompt",
        "seawall acp",
    ],
)
def test_a_bad_setting_stops_every_entry_point_with_one_line(
    home: dict[str, str], command: list[str], program: str, bad: tuple[str, str]
) -> None:
    name, value = bad
    write(config_file(home), f"task_queue: q\n{name}: {value}\n")
    done = subprocess.run(
        command,
        cwd=ROOT,
        env={**clean_environ(), **home},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    message = load_error(home)
    assert done.stderr == f"{program}: error: {message}\n"
    assert message.startswith(f"{name}={value} (user config {config_file(home)}): ")


def load_error(environ: dict[str, str]) -> str:
    with pytest.raises(SettingsError) as raised:
        load_settings(environ)
    return str(raised.value)


# Every entry point that reads the guard mode: the worker's, and those that run one (seawall
# up reads its worker's settings). The gateway does not read it (docs/settings.md, "Each
# process reads its own settings"): its worker refuses the value.
@pytest.mark.parametrize(
    ("command", "program"),
    [
        ([sys.executable, str(ROOT / "worker.py")], "worker"),
        ([SEAWALL, "run", str(ROOT / "scenarios" / "queued-prompt.yaml")], "seawall"),
        ([SEAWALL, "up"], "seawall"),
        ([SEAWALL, "acp", "--embedded"], "seawall"),
    ],
    ids=["worker", "seawall run", "seawall up", "seawall acp"],
)
@pytest.mark.parametrize("place", ["environment", "config"])
def test_an_invalid_guard_mode_stops_every_entry_point_before_it_starts_anything(
    tmp_path: Path, home: dict[str, str], command: list[str], program: str, place: str
) -> None:
    data = tmp_path / "data"
    environ = {**clean_environ(), **home, "SEAWALL_DATA_DIR": str(data)}
    if place == "environment":
        environ[GUARD_MODE_ENV] = "banana"
        named = f"{GUARD_MODE_ENV}=banana (environment)"
    else:
        write(config_file(home), "repeated_tool_failure_guard: banana\n")
        named = f"repeated_tool_failure_guard=banana (user config {config_file(home)})"
    done = subprocess.run(
        command, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"{program}: error: {named}: must be 'off', 'shadow', 'warn' or 'enforce'\n"
    )
    # Nothing was started: no data directory, no Temporal database, no logs.
    assert not data.exists()


def test_the_model_retry_window_is_checked_at_startup_and_read_per_session(
    home: dict[str, str],
) -> None:
    """docs/settings.md, ``model_retry_window_seconds``: one error naming the setting's
    source at startup; at a session's start a value that stopped validating is the default
    plus a diagnostic."""
    assert load_settings(home).settings.model_retry_window_seconds == 600
    environ = {**home, "SEAWALL_MODEL_RETRY_WINDOW_SECONDS": "90"}
    assert load_settings(environ).settings.model_retry_window_seconds == 90
    assert resolve_model_retry_window(environ).seconds == 90
    write(config_file(home), "model_retry_window_seconds: 0\n")
    with pytest.raises(SettingsError) as raised:
        load_settings(home)
    assert str(raised.value).startswith(
        f"model_retry_window_seconds=0 (user config {config_file(home)}): "
    )
    resolved = resolve_model_retry_window(home)
    assert resolved.seconds == 600
    assert resolved.diagnostic is not None
    assert resolved.diagnostic.event == "invalid_model_retry_window"


def test_a_bad_approval_rule_stops_the_start_naming_the_rule_and_the_field(
    home: dict[str, str], tmp_path: Path
) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "rules:\n"
        "  - {name: fine, decision: allow, tool: read_file}\n"
        "  - {name: typo, decision: permit, comand: 'git push*'}\n"
    )
    with pytest.raises(SettingsError) as raised:
        load_settings({**home, "SEAWALL_APPROVAL_RULES": str(rules)})
    message = str(raised.value)
    assert message.startswith(f"SEAWALL_APPROVAL_RULES={rules} (environment): rule 2 ('typo'): ")
    assert "decision: Input should be 'allow', 'ask' or 'deny'" in message
    assert "comand: Extra inputs are not permitted" in message
    assert "rule 1" not in message
    rules.write_text("rules:\n  - {name: fine, decision: deny, command: 'rm *'}\n")
    loaded = load_settings({**home, "SEAWALL_APPROVAL_RULES": str(rules)})
    assert loaded.settings.approval_rules == rules
