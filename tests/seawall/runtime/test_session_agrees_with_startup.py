"""Startup and a session's start can never disagree about a setting (issue 24).

For every setting the worker reads again at each session's start (``SESSION_SETTINGS``),
over a list of good and bad inputs — as a variable and as a ``config.yaml`` value — the
settings model at startup (``load_settings``) and the session-time read (the ``resolve_*``
the operator-settings activity calls) accept the same values, reject the same values, and
give an accepted value the same meaning. A rejected value is a startup error and, at a
session's start, the default plus a diagnostic.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from seawall.runtime.rollout_policy import check_rollout, deployment_environment, service_version
from seawall.runtime.settings import (
    GUARD_MODE_CONFIG_KEY,
    LOOP_PROFILE_CONFIG_KEY,
    RULE_MODE_SETTINGS,
    SESSION_SETTINGS,
    SETTINGS_BY_NAME,
    SeawallSettings,
    SettingsError,
    load_settings,
    resolve_activity_summaries,
    resolve_context_budget,
    resolve_guard_mode,
    resolve_loop_settings,
    resolve_model_retry_window,
    resolve_rollout_settings,
)
from seawall.runtime.settings.session import ROLLOUT_SETTINGS
from workflows.rules.stale_waits import STALE_WAIT_MINUTES
from workflows.seed import GuardMode

# Words, numbers, policies, blanks and junk: each is good for some settings, bad for others.
VARIABLE_VALUES = [
    "off", "OFF", " warn ", "shadow", "Enforce", "seed", "Recommended", "loud", "",
    "  ", "0", "1", "-5", "9999", "10000", " 20000 ", "20000.0", "1e5", "400000", "abc",
    "true", "No", "y", "T", "maybe", "on", "x" * 200, "prod", "internal-2", "has space",
    "1.2", "deployment.environment=staging,service.version=3.1", "service.version=9",
    "enforce:5%,warn:rest", "enforce:50%,warn:rest", "enforce:5%", "bogus:1%",
    "internal=enforce:5%,warn:rest;public=shadow:rest",
]  # fmt: skip
# As written in config.yaml (YAML 1.1: a bare off is false, 1.5 a float, [1] a list).
CONFIG_VALUES = [
    "off", "on", "true", "no", "Warn", "seed", "loud", "0", "1", "1.5", "10000", "20000",
    "20000.0", "-3", "[1]", "{a: 1}", "''", "prod", "1.2", "2.0", "'enforce:5%,warn:rest'",
    "'enforce:50%,warn:rest'", "'x'", "null",
]  # fmt: skip

# A usable rollout policy, so a rollout setting under test is the only thing that varies.
ROLLOUT_BASE = {
    "guard_rollout": "enforce:5%,warn:rest",
    "guard_rollout_salt": "s",
    "deployment_environment": "prod",
}
RULE_FIELDS = {rule.name: rule.loop_settings_field for rule in RULE_MODE_SETTINGS}


def startup_view(name: str, environ: dict[str, str]) -> tuple[bool, Any]:
    """Whether startup accepts the sources, and the meaning of setting ``name``."""
    try:
        effective = load_settings(environ)
    except SettingsError:
        return False, None
    settings = effective.settings
    if name == GUARD_MODE_CONFIG_KEY:
        guard_problems = [d for d in effective.diagnostics if d.event == "invalid_guard_mode"]
        return not guard_problems, settings.repeated_tool_failure_guard
    if name in ROLLOUT_SETTINGS:
        return True, _rollout_meaning(settings)
    return True, getattr(settings, name)


def _rollout_meaning(settings: SeawallSettings) -> tuple[Any, ...]:
    attributes = settings.otel_resource_attributes
    environment = deployment_environment(settings.deployment_environment, attributes)
    version = service_version(settings.service_version, attributes)
    if settings.guard_rollout is None:
        return (None, None, None, environment, version)
    policies = check_rollout(
        settings.guard_rollout,
        salt=settings.guard_rollout_salt,
        environment=environment,
        allow_wide_enforce=settings.guard_rollout_allow_wide_enforce,
    )
    return (
        policies,
        settings.guard_rollout_salt,
        settings.guard_rollout_version,
        environment,
        version,
    )


def session_view(name: str, environ: dict[str, str]) -> tuple[bool, Any]:
    """Whether a session's start accepts setting ``name``, and its meaning there."""
    if name == GUARD_MODE_CONFIG_KEY:
        guard = resolve_guard_mode(environ)
        return guard.diagnostic is None, guard.mode
    if name == LOOP_PROFILE_CONFIG_KEY or name in RULE_FIELDS:
        loop = resolve_loop_settings(environ)
        field = "profile" if name == LOOP_PROFILE_CONFIG_KEY else RULE_FIELDS[name]
        return not loop.diagnostics, getattr(loop.settings, field)
    if name == "progress_judge":
        loop = resolve_loop_settings(environ)
        # Off is the field unset (None): the judge never follows the guard's mode.
        return not loop.diagnostics, loop.settings.progress_judge_mode or GuardMode.OFF
    if name == "stale_wait_minutes":
        loop = resolve_loop_settings(environ)
        # The default is the field unset (None).
        return not loop.diagnostics, loop.settings.stale_wait_minutes or STALE_WAIT_MINUTES
    if name == "context_budget_chars":
        budget = resolve_context_budget(environ)
        return budget.diagnostic is None, budget.chars
    if name == "activity_summaries":
        summaries = resolve_activity_summaries(environ)
        return summaries.diagnostic is None, summaries.enabled
    if name == "model_retry_window_seconds":
        window = resolve_model_retry_window(environ)
        return window.diagnostic is None, window.seconds
    assert name in ROLLOUT_SETTINGS, name
    rollout = resolve_rollout_settings(environ)
    meaning = (
        rollout.policies,
        rollout.salt or None,
        rollout.pinned_version,
        rollout.environment,
        rollout.service_version,
    )
    return rollout.diagnostic is None, meaning


def _sources(
    name: str, home: Path, *, variable: str | None = None, configured: str | None = None
) -> dict[str, str]:
    """An environment (and config.yaml under ``home``) where ``name`` is the value under
    test: in its variable, or as its config key."""
    environ = {"HOME": str(home / "home"), "XDG_CONFIG_HOME": str(home / "xdg")}
    config = home / "xdg" / "seawall" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("" if configured is None else f"{name}: {configured}\n")
    if name in ROLLOUT_SETTINGS:
        for other, value in ROLLOUT_BASE.items():
            if other != name:
                environ[SETTINGS_BY_NAME[other].env[0]] = value
    if variable is not None:
        environ[SETTINGS_BY_NAME[name].env[0]] = variable
    return environ


def test_every_session_setting_is_a_setting() -> None:
    assert set(SESSION_SETTINGS) <= set(SETTINGS_BY_NAME)
    assert len(SESSION_SETTINGS) == len(set(SESSION_SETTINGS))


@pytest.mark.parametrize("name", SESSION_SETTINGS)
def test_startup_and_a_sessions_start_agree(name: str, tmp_path: Path) -> None:
    disagreements = []
    accepted = rejected = 0
    cases = [("variable", v) for v in VARIABLE_VALUES] + [("config", v) for v in CONFIG_VALUES]
    for place, value in cases:
        environ = _sources(
            name,
            tmp_path,
            variable=value if place == "variable" else None,
            configured=value if place == "config" else None,
        )
        at_startup, at_session = startup_view(name, environ), session_view(name, environ)
        if at_startup[0] != at_session[0] or (at_startup[0] and at_startup[1] != at_session[1]):
            disagreements.append((place, value, at_startup, at_session))
        accepted += at_startup[0]
        rejected += not at_startup[0]
    assert disagreements == []
    # The inputs exercise both sides of every setting.
    assert accepted and rejected
