"""Operator guard-mode resolution: process environment and user config only (docs/architecture.md,
"The prompt loop")."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest
from structlog.testing import capture_logs
from temporalio.testing import ActivityEnvironment

from activities.operator_settings import (
    GUARD_MODE_ENV,
    GUARD_MODE_ENV_ALIAS,
    OperatorSettingsActivities,
    read_guard_mode,
    resolve_guard_mode,
    user_config_path,
)
from workflows.activity_io import ResolveOperatorSettingsInput, SettingSource
from workflows.guard import GuardMode

# As the worker builds it: reading the process environment (and its user config file).
resolve_operator_settings = OperatorSettingsActivities(
    functools.partial(read_guard_mode, os.environ)
).resolve_operator_settings


def write_config(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return tmp_path / "xdg" / "seawall" / "config.yaml"


def test_process_environment_wins_over_alias_and_config(config: Path) -> None:
    write_config(config, "repeated_tool_failure_guard: warn\n")
    env = {GUARD_MODE_ENV: "enforce", GUARD_MODE_ENV_ALIAS: "off"}
    assert resolve_guard_mode(env, config) == (GuardMode.ENFORCE, SettingSource.ENVIRONMENT, None)


def test_alias_is_used_when_the_primary_is_missing_or_blank(config: Path) -> None:
    write_config(config, "repeated_tool_failure_guard: warn\n")
    blank_primary = {GUARD_MODE_ENV: "  ", GUARD_MODE_ENV_ALIAS: "off"}
    for env in ({GUARD_MODE_ENV_ALIAS: " OFF "}, blank_primary):
        assert resolve_guard_mode(env, config) == (GuardMode.OFF, SettingSource.ENVIRONMENT, None)


def test_user_config_is_used_without_environment(config: Path) -> None:
    write_config(config, "repeated_tool_failure_guard: Enforce\nother: 1\n")
    assert resolve_guard_mode({}, config) == (GuardMode.ENFORCE, SettingSource.USER_CONFIG, None)


def test_bare_yaml_off_in_the_config_means_off(config: Path) -> None:
    write_config(config, "repeated_tool_failure_guard: off\n")
    assert resolve_guard_mode({}, config) == (GuardMode.OFF, SettingSource.USER_CONFIG, None)


@pytest.mark.parametrize("text", [None, "", "other: 1\n", "repeated_tool_failure_guard: ''\n"])
def test_nothing_configured_gives_the_shadow_default(config: Path, text: str | None) -> None:
    if text is not None:
        write_config(config, text)
    env = {GUARD_MODE_ENV: "", GUARD_MODE_ENV_ALIAS: "   "}
    assert resolve_guard_mode(env, config) == (GuardMode.SHADOW, SettingSource.DEFAULT, None)
    assert resolve_guard_mode({}, None) == (GuardMode.SHADOW, SettingSource.DEFAULT, None)


def test_invalid_environment_value_gives_shadow_and_a_diagnostic(config: Path) -> None:
    write_config(config, "repeated_tool_failure_guard: enforce\n")
    mode, source, diagnostic = resolve_guard_mode({GUARD_MODE_ENV: "enforced"}, config)
    # An invalid value does not fall through to a lower-priority source.
    assert (mode, source) == (GuardMode.SHADOW, SettingSource.DEFAULT)
    assert diagnostic is not None
    assert GUARD_MODE_ENV in diagnostic
    assert "enforced" in diagnostic


@pytest.mark.parametrize(
    "text", ["repeated_tool_failure_guard: [a\n", "- a list\n", "repeated_tool_failure_guard: 3\n"]
)
def test_malformed_or_invalid_config_gives_shadow_and_a_diagnostic(config: Path, text: str) -> None:
    write_config(config, text)
    mode, source, diagnostic = resolve_guard_mode({}, config)
    assert (mode, source) == (GuardMode.SHADOW, SettingSource.DEFAULT)
    assert diagnostic is not None


def test_user_config_path_follows_xdg_then_home(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    assert user_config_path({"XDG_CONFIG_HOME": str(xdg), "HOME": "/h"}) == (
        xdg / "seawall" / "config.yaml"
    )
    home = Path("/home/op/.config/seawall/config.yaml")
    assert user_config_path({"HOME": "/home/op"}) == home
    assert user_config_path({"XDG_CONFIG_HOME": "relative", "HOME": "/home/op"}) == home


def plant_project_settings(project: Path) -> None:
    """Every project-level place a repository author could try to set the mode from."""
    (project / ".env").write_text(f"{GUARD_MODE_ENV}=enforce\n{GUARD_MODE_ENV_ALIAS}=enforce\n")
    write_config(project / ".seawall" / "config.yaml", "repeated_tool_failure_guard: enforce\n")
    write_config(project / ".qwen" / ".env", f"{GUARD_MODE_ENV_ALIAS}=enforce\n")
    write_config(project / ".seawall" / ".env", f"{GUARD_MODE_ENV}=enforce\n")


def test_project_settings_in_the_working_directory_are_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    plant_project_settings(project)
    monkeypatch.chdir(project)
    environ = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert resolve_guard_mode(environ, user_config_path(environ)) == (
        GuardMode.SHADOW,
        SettingSource.DEFAULT,
        None,
    )


@pytest.fixture
def clean_environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The worker's environment without any guard setting, with a private config home."""
    monkeypatch.delenv(GUARD_MODE_ENV, raising=False)
    monkeypatch.delenv(GUARD_MODE_ENV_ALIAS, raising=False)
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    return xdg / "seawall" / "config.yaml"


async def test_activity_ignores_project_settings_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_environ: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    plant_project_settings(project)
    monkeypatch.chdir(project)
    settings = await ActivityEnvironment().run(
        resolve_operator_settings, ResolveOperatorSettingsInput()
    )
    assert settings.guard_mode == GuardMode.SHADOW
    assert settings.guard_mode_source == SettingSource.DEFAULT
    assert GUARD_MODE_ENV not in os.environ


async def test_activity_reads_the_process_environment_and_user_config(
    monkeypatch: pytest.MonkeyPatch, clean_environ: Path
) -> None:
    env = ActivityEnvironment()
    write_config(clean_environ, "repeated_tool_failure_guard: warn\n")
    settings = await env.run(resolve_operator_settings, ResolveOperatorSettingsInput())
    assert (settings.guard_mode, settings.guard_mode_source) == (
        GuardMode.WARN,
        SettingSource.USER_CONFIG,
    )
    monkeypatch.setenv(GUARD_MODE_ENV, "off")
    settings = await env.run(resolve_operator_settings, ResolveOperatorSettingsInput())
    assert (settings.guard_mode, settings.guard_mode_source) == (
        GuardMode.OFF,
        SettingSource.ENVIRONMENT,
    )


async def test_activity_logs_one_diagnostic_for_an_invalid_value(
    monkeypatch: pytest.MonkeyPatch, clean_environ: Path
) -> None:
    monkeypatch.setenv(GUARD_MODE_ENV_ALIAS, "loud")
    with capture_logs() as logs:
        settings = await ActivityEnvironment().run(
            resolve_operator_settings, ResolveOperatorSettingsInput()
        )
    assert settings.guard_mode == GuardMode.SHADOW
    assert len(logs) == 1
    (entry,) = logs
    assert entry["event"] == "invalid_guard_mode"
    assert entry["log_level"] == "warning"
    assert GUARD_MODE_ENV_ALIAS in entry["source"]
    assert entry["value"] == "loud"
    assert entry["value_length"] == 4
    json.dumps(entry)


async def test_activity_logs_nothing_for_a_valid_setting(
    monkeypatch: pytest.MonkeyPatch, clean_environ: Path
) -> None:
    monkeypatch.setenv(GUARD_MODE_ENV, "enforce")
    with capture_logs() as logs:
        await ActivityEnvironment().run(resolve_operator_settings, ResolveOperatorSettingsInput())
    assert logs == []
