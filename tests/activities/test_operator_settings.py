"""The operator settings activity: the guard mode from the worker's process environment and
user config only, resolved once per session (docs/architecture.md, "The life of a prompt"). The
resolution rules themselves are tested with the settings model
(tests/seawall/runtime/test_settings.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs
from temporalio.testing import ActivityEnvironment

from activities.operator_settings import OperatorSettingsActivities
from seawall.runtime.settings import GUARD_MODE_ENV, GUARD_MODE_ENV_ALIAS
from workflows.contracts.activity import (
    OperatorSettings,
    ResolveOperatorSettingsInput,
    SettingSource,
)
from workflows.seed import GuardMode

# The activity as a worker registers it, reading this process's settings sources.
resolve_operator_settings = OperatorSettingsActivities().resolve_operator_settings


def write_config(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def plant_project_settings(project: Path) -> None:
    """Every project-level place a repository author could try to set the mode from."""
    (project / ".env").write_text(f"{GUARD_MODE_ENV}=enforce\n{GUARD_MODE_ENV_ALIAS}=enforce\n")
    write_config(project / ".seawall" / "config.yaml", "repeated_tool_failure_guard: enforce\n")
    write_config(project / ".qwen" / ".env", f"{GUARD_MODE_ENV_ALIAS}=enforce\n")
    write_config(project / ".seawall" / ".env", f"{GUARD_MODE_ENV}=enforce\n")


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


async def test_the_owners_cohort_is_assigned_and_only_the_cohort_returned(
    tmp_path: Path,
) -> None:
    """docs/rollout.md, "Rollout cohorts": the activity hashes the owner into a cohort
    whose mode replaces the guard mode; an invalid policy means no policy, one diagnostic."""
    from functools import partial

    from seawall.runtime.settings import resolve_rollout_settings

    environ = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "SEAWALL_GUARD_ROLLOUT": "warn:100%",
        "SEAWALL_GUARD_ROLLOUT_SALT": "s",
        "SEAWALL_DEPLOYMENT_ENVIRONMENT": "internal",
    }
    activity = OperatorSettingsActivities(
        read_rollout=partial(resolve_rollout_settings, environ)
    ).resolve_operator_settings
    owned = await ActivityEnvironment().run(
        activity, ResolveOperatorSettingsInput(owner_id="alice")
    )
    assert owned.guard_mode == GuardMode.WARN
    assert owned.rollout is not None and owned.rollout.cohort == "warn"
    assert owned.rollout.environment == "internal"
    assert "alice" not in owned.model_dump_json()

    broken = OperatorSettingsActivities(
        read_rollout=partial(
            resolve_rollout_settings, {**environ, "SEAWALL_GUARD_ROLLOUT": "warn:50%"}
        )
    ).resolve_operator_settings
    with capture_logs() as logs:
        fallback = await ActivityEnvironment().run(
            broken, ResolveOperatorSettingsInput(owner_id="alice")
        )
    assert fallback.rollout is not None and fallback.rollout.cohort == "unassigned"
    assert [line["event"] for line in logs] == ["invalid_guard_rollout"]
    assert all("alice" not in json.dumps(line) for line in logs)


async def resolved_with(
    reader: str, resolve: Callable[..., Any], environ: dict[str, str]
) -> OperatorSettings:
    """The activity's result when its reader ``reader`` (a keyword of
    :class:`OperatorSettingsActivities`) is ``resolve`` over ``environ``."""
    activity = OperatorSettingsActivities(**{reader: partial(resolve, environ)})
    return await ActivityEnvironment().run(
        activity.resolve_operator_settings, ResolveOperatorSettingsInput()
    )


def private_home(tmp_path: Path) -> dict[str, str]:
    """An environment with nothing set but a private home and config home under ``tmp_path``."""
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


async def test_the_context_budget_comes_from_the_operator_and_a_broken_one_means_the_default(
    tmp_path: Path,
) -> None:
    """docs/settings.md, ``context_budget_chars``: resolved with the guard mode for prompts
    that set no budget; a value that stopped validating since startup never fails a session."""
    from seawall.runtime.settings import resolve_context_budget
    from workflows.contracts.conversation import DEFAULT_CONTEXT_BUDGET_CHARS

    async def budget(environ: dict[str, str]) -> OperatorSettings:
        return await resolved_with("read_context_budget", resolve_context_budget, environ)

    home = private_home(tmp_path)
    unset = await budget(home)
    assert unset.context_budget_chars == DEFAULT_CONTEXT_BUDGET_CHARS

    write_config(tmp_path / "xdg" / "seawall" / "config.yaml", "context_budget_chars: 60000\n")
    configured = await budget(home)
    assert configured.context_budget_chars == 60_000

    environ = {**home, "SEAWALL_CONTEXT_BUDGET_CHARS": "25000"}
    assert (await budget(environ)).context_budget_chars == 25_000

    with capture_logs() as logs:
        broken = await budget({**home, "SEAWALL_CONTEXT_BUDGET_CHARS": "lots"})
    assert broken.context_budget_chars == DEFAULT_CONTEXT_BUDGET_CHARS
    [entry] = logs
    assert entry["event"] == "invalid_context_budget"
    assert "SEAWALL_CONTEXT_BUDGET_CHARS" in entry["source"]


async def test_activity_summaries_come_from_the_operator_and_a_broken_value_means_off(
    tmp_path: Path,
) -> None:
    """docs/settings.md, ``activity_summaries``: off unless the environment or the user
    config turns them on; a value that stopped validating since startup means off and one
    diagnostic, never a failed session."""
    from seawall.runtime.settings import resolve_activity_summaries

    async def summaries(environ: dict[str, str]) -> OperatorSettings:
        return await resolved_with("read_activity_summaries", resolve_activity_summaries, environ)

    home = private_home(tmp_path)
    assert (await summaries(home)).activity_summaries is False

    write_config(tmp_path / "xdg" / "seawall" / "config.yaml", "activity_summaries: true\n")
    configured = await summaries(home)
    assert configured.activity_summaries is True

    environ = {**home, "SEAWALL_ACTIVITY_SUMMARIES": "false"}
    assert (await summaries(environ)).activity_summaries is False

    with capture_logs() as logs:
        broken = await summaries({**home, "SEAWALL_ACTIVITY_SUMMARIES": "sometimes"})
    assert broken.activity_summaries is False
    [entry] = logs
    assert entry["event"] == "invalid_activity_summaries"
    assert "SEAWALL_ACTIVITY_SUMMARIES" in entry["source"]
