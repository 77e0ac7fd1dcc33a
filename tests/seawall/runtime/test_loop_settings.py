"""The loop profile and per-rule mode settings (docs/protections.md, "Loop profiles"): read
like the guard mode, from the environment, then the user config file, then the defaults; an
invalid value never fails a prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.runtime.settings import LOOP_PROFILE_ENV, load_settings, resolve_loop_settings
from workflows.rules import LoopProfile, LoopSettings
from workflows.rules.stale_waits import STALE_WAIT_MINUTES
from workflows.seed import GuardMode


def config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def test_the_default_is_the_recommended_profile_in_the_guards_mode(tmp_path: Path) -> None:
    resolved = resolve_loop_settings({}, tmp_path / "missing.yaml")
    assert resolved.settings == LoopSettings()
    assert resolved.settings.profile is LoopProfile.RECOMMENDED
    assert resolved.diagnostics == ()


def test_the_environment_wins_over_the_user_config(tmp_path: Path) -> None:
    user = config(
        tmp_path,
        "loop_profile: seed\nfailure_cycle_guard: off\nidentical_result_guard: shadow\n",
    )
    assert resolve_loop_settings({}, user).settings == LoopSettings(
        profile=LoopProfile.SEED,
        failure_cycle_mode=GuardMode.OFF,
        identical_result_mode=GuardMode.SHADOW,
    )
    environ = {LOOP_PROFILE_ENV: " Recommended ", "SEAWALL_DENIED_CALL_GUARD": "WARN"}
    assert resolve_loop_settings(environ, user).settings == LoopSettings(
        failure_cycle_mode=GuardMode.OFF,
        identical_result_mode=GuardMode.SHADOW,
        denied_call_mode=GuardMode.WARN,
    )


@pytest.mark.parametrize(
    ("environ", "event"),
    [
        ({LOOP_PROFILE_ENV: "strictest"}, "invalid_loop_profile"),
        ({"SEAWALL_FAILURE_CYCLE_GUARD": "sometimes"}, "invalid_rule_mode"),
    ],
)
def test_an_invalid_value_means_the_default_with_one_diagnostic(
    tmp_path: Path, environ: dict[str, str], event: str
) -> None:
    resolved = resolve_loop_settings(environ, tmp_path / "missing.yaml")
    assert resolved.settings == LoopSettings()
    assert [d.event for d in resolved.diagnostics] == [event]
    assert next(iter(environ)) in resolved.diagnostics[0].message


def test_the_settings_model_lists_them_with_their_sources(tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    effective = load_settings({**home, "SEAWALL_IDENTICAL_RESULT_GUARD": "Off"})
    settings = effective.settings
    assert settings.loop_profile is LoopProfile.RECOMMENDED
    assert settings.identical_result_guard is GuardMode.OFF
    assert settings.failure_cycle_guard is None and settings.denied_call_guard is None
    assert effective.origins["identical_result_guard"].where == "SEAWALL_IDENTICAL_RESULT_GUARD"


def test_each_rule_mode_setting_is_one_field_that_sets_one_loop_settings_field() -> None:
    """The per-rule mode settings are declared once (``RULE_MODE_SETTINGS``): each row is a
    field of the settings model, with its variable, and names a ``LoopSettings`` field."""
    from seawall.runtime.settings import RULE_MODE_SETTINGS, SETTINGS_BY_NAME
    from workflows.rules import LoopSettings

    for rule in RULE_MODE_SETTINGS:
        assert SETTINGS_BY_NAME[rule.name].env == (rule.env,)
        assert rule.loop_settings_field in LoopSettings.model_fields
    modes = {
        n for n in SETTINGS_BY_NAME if n.endswith("_guard") and n != "repeated_tool_failure_guard"
    }
    assert modes == {rule.name for rule in RULE_MODE_SETTINGS}


def test_the_progress_judge_is_off_unless_the_operator_sets_it(tmp_path: Path) -> None:
    """docs/settings.md, ``progress_judge``: off by default (the field unset, whatever the
    guard's mode); one error naming the setting at startup; at a session's start an invalid
    value is off plus one diagnostic."""
    from seawall.runtime.settings import PROGRESS_JUDGE_ENV, SettingsError

    home = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert load_settings(home).settings.progress_judge is GuardMode.OFF
    assert resolve_loop_settings({}, tmp_path / "missing.yaml").settings.progress_judge_mode is None
    user = config(tmp_path, "progress_judge: shadow\n")
    assert resolve_loop_settings({}, user).settings == LoopSettings(
        progress_judge_mode=GuardMode.SHADOW
    )
    environ = {PROGRESS_JUDGE_ENV: " Enforce "}
    assert resolve_loop_settings(environ, user).settings.progress_judge_mode is GuardMode.ENFORCE
    assert resolve_loop_settings({PROGRESS_JUDGE_ENV: "off"}, user).settings == LoopSettings()
    with pytest.raises(SettingsError) as raised:
        load_settings({**home, PROGRESS_JUDGE_ENV: "sometimes"})
    assert str(raised.value).startswith(f"{PROGRESS_JUDGE_ENV}=sometimes (environment): ")
    resolved = resolve_loop_settings({PROGRESS_JUDGE_ENV: "sometimes"}, user)
    assert resolved.settings == LoopSettings()
    assert [d.event for d in resolved.diagnostics] == ["invalid_progress_judge"]
    assert PROGRESS_JUDGE_ENV in resolved.diagnostics[0].message


def test_the_stale_wait_minutes_are_the_operators_and_a_bad_value_is_refused(
    tmp_path: Path,
) -> None:
    from seawall.runtime.settings import SettingsError

    home = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    variable = "SEAWALL_STALE_WAIT_MINUTES"
    assert load_settings(home).settings.stale_wait_minutes == STALE_WAIT_MINUTES
    # The default stays the field's unset, so settings without it are those recorded before.
    assert resolve_loop_settings({variable: str(STALE_WAIT_MINUTES)}, None).settings == (
        LoopSettings()
    )
    user = config(tmp_path, "stale_wait_minutes: 90\n")
    assert resolve_loop_settings({}, user).settings == LoopSettings(stale_wait_minutes=90)
    assert resolve_loop_settings({variable: "45"}, user).settings.stale_wait_minutes == 45
    for bad in ("0", "lots"):
        with pytest.raises(SettingsError) as raised:
            load_settings({**home, variable: bad})
        assert str(raised.value).startswith(f"{variable}={bad} (environment): ")
        resolved = resolve_loop_settings({variable: bad}, user)
        assert resolved.settings == LoopSettings()
        assert [d.event for d in resolved.diagnostics] == ["invalid_stale_wait_minutes"]
        assert variable in resolved.diagnostics[0].message
