"""The settings the worker reads again at each session's start (docs/settings.md): the guard
mode, the loop profile and its per-rule modes, the context budget, activity summaries, the
model retry window and the rollout policy, for the operator-settings activity
(activities/operator_settings.py).

A running worker picks up an edited config file this way, and a session never fails over
it: a value that stopped validating since the worker started means the setting's default
plus one diagnostic. Each value is found by the same reader as at startup
(:func:`~.sources.find`) and validated by the same field (:func:`read_setting`, through
:func:`~.fields.field_validator_of`), so a value means at a session's start exactly what it
meant at startup — there is no second parser to drift. Only the setting's own sources are
read, so an unrelated bad setting cannot change a session.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from seawall.runtime.rollout_policy import check_rollout, deployment_environment, service_version
from workflows.contracts.conversation import DEFAULT_CONTEXT_BUDGET_CHARS, MIN_CONTEXT_BUDGET_CHARS
from workflows.contracts.prompt_options import (
    DEFAULT_MODEL_RETRY_WINDOW_SECONDS,
    MAX_MODEL_RETRY_WINDOW_SECONDS,
    MIN_MODEL_RETRY_WINDOW_SECONDS,
)
from workflows.rules import DEFAULT_LOOP_PROFILE, LoopProfile, LoopSettings
from workflows.rules.stale_waits import STALE_WAIT_MINUTES
from workflows.seed import GuardMode
from workflows.seed.rollout import RolloutPolicies

from .catalogue import (
    PROGRESS_JUDGE_CONFIG_KEY,
    SETTINGS_BY_NAME,
    STALE_WAIT_MINUTES_CONFIG_KEY,
    default_of,
    validator_of,
)
from .fields import GUARD_MODE_CONFIG_KEY, LOOP_PROFILE_CONFIG_KEY, Diagnostic
from .loading import error_message
from .rule_modes import RULE_MODE_SETTINGS
from .sources import Found, GuardModeResolution, UserConfig, find, read_guard_mode, user_config_path

ROLLOUT_SETTINGS = (
    "guard_rollout",
    "guard_rollout_salt",
    "guard_rollout_version",
    "guard_rollout_allow_wide_enforce",
    "deployment_environment",
    "service_version",
    "otel_resource_attributes",
)
# Every setting read again at a session's start.
SESSION_SETTINGS: tuple[str, ...] = (
    GUARD_MODE_CONFIG_KEY,
    LOOP_PROFILE_CONFIG_KEY,
    *(rule.name for rule in RULE_MODE_SETTINGS),
    PROGRESS_JUDGE_CONFIG_KEY,
    STALE_WAIT_MINUTES_CONFIG_KEY,
    "context_budget_chars",
    "activity_summaries",
    "model_retry_window_seconds",
    *ROLLOUT_SETTINGS,
)


@dataclass(frozen=True)
class SessionRead:
    """One setting as a session's start reads it: the validated value (the default when
    unset or invalid), what was found, and, when it does not validate, why (the text a
    startup error would give)."""

    value: Any
    found: Found | None = None
    error: str | None = None

    @property
    def invalid(self) -> Found | None:
        """What was found, when it does not validate."""
        return self.found if self.error is not None else None

    def diagnostic(self, event: str, what: str, expected: str, instead: str) -> Diagnostic | None:
        """The diagnostic of a found value that does not validate (the start then uses the
        default, ``value``); None when the value is valid or unset."""
        found = self.invalid
        return None if found is None else found.rejected(event, what, expected, instead, found.text)


def read_setting(name: str, environ: Mapping[str, str], config: UserConfig) -> SessionRead:
    """Setting ``name`` from its variable, else its user config key (a file that stopped
    parsing counting as unset), validated by its own field."""
    found = find(SETTINGS_BY_NAME[name], environ, config)
    if found is None:
        return SessionRead(default_of(name))
    try:
        return SessionRead(validator_of(name).validate_python(found.value), found)
    except ValidationError as err:
        return SessionRead(default_of(name), found, error_message(err.errors()[0]))


def _sources(
    environ: Mapping[str, str] | None, config_path: Path | None, *names: str
) -> tuple[Mapping[str, str], UserConfig]:
    """The environment and the user config file, keeping the values of ``names`` only."""
    env = os.environ if environ is None else environ
    path = user_config_path(env) if config_path is None else config_path
    return env, UserConfig.read(path, set(names).__contains__)


# --- the guard mode ---------------------------------------------------------------------------


def resolve_guard_mode(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> GuardModeResolution:
    """The guard mode from ``environ`` (default: this process's environment) and the user
    config file (default: found through ``environ``), with its source and, when a value
    was rejected, why.

    Order: ``SEAWALL_REPEATED_TOOL_FAILURE_GUARD``, its alias, the user config file, then
    ``shadow``. The first non-blank value decides; an invalid one (or an unreadable config
    file) means ``shadow``, it does not fall through to a lower-priority source. Nothing
    here raises: the worker calls this once per session.
    """
    env, config = _sources(environ, config_path, GUARD_MODE_CONFIG_KEY)
    setting = SETTINGS_BY_NAME[GUARD_MODE_CONFIG_KEY]
    return read_guard_mode(setting, validator_of(GUARD_MODE_CONFIG_KEY), env, config)


# --- the loop profile and the per-rule modes --------------------------------------------------


@dataclass(frozen=True)
class LoopSettingsResolution:
    settings: LoopSettings
    diagnostics: tuple[Diagnostic, ...] = ()


def resolve_loop_settings(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> LoopSettingsResolution:
    """The loop profile and per-rule modes from ``environ`` (default: this process's
    environment) and the user config file (default: found through ``environ``).

    Each comes from its variable, else its user config key, else the default (the
    ``recommended`` profile; every rule in the guard's mode). An invalid value means the
    default plus one diagnostic.
    """
    env, config = _sources(
        environ,
        config_path,
        LOOP_PROFILE_CONFIG_KEY,
        PROGRESS_JUDGE_CONFIG_KEY,
        STALE_WAIT_MINUTES_CONFIG_KEY,
        *(rule.name for rule in RULE_MODE_SETTINGS),
    )
    diagnostics: list[Diagnostic] = []
    profile = read_setting(LOOP_PROFILE_CONFIG_KEY, env, config)
    if (found := profile.invalid) is not None:
        allowed = ", ".join(p.value for p in LoopProfile)
        diagnostics.append(
            found.rejected(
                "invalid_loop_profile",
                "loop profile",
                f"one of: {allowed}",
                f"using {DEFAULT_LOOP_PROFILE.value}",
                found.word,
            )
        )
    modes: dict[str, GuardMode] = {}
    allowed_modes = f"one of: {', '.join(m.value for m in GuardMode)}"
    for rule in RULE_MODE_SETTINGS:
        read = read_setting(rule.name, env, config)
        if (found := read.invalid) is not None:
            diagnostics.append(
                found.rejected(
                    "invalid_rule_mode",
                    "rule mode",
                    allowed_modes,
                    "the rule runs in the guard's mode",
                    found.word,
                )
            )
        elif read.value is not None:
            modes[rule.loop_settings_field] = read.value
    judge = read_setting(PROGRESS_JUDGE_CONFIG_KEY, env, config)
    if (found := judge.invalid) is not None:
        diagnostics.append(
            found.rejected(
                "invalid_progress_judge",
                "progress judge mode",
                allowed_modes,
                "the progress judge is off",
                found.word,
            )
        )
    elif judge.value is not GuardMode.OFF:
        # Off is the field's unset (None), so settings without a judge stay as they were.
        modes["progress_judge_mode"] = judge.value
    minutes = read_setting(STALE_WAIT_MINUTES_CONFIG_KEY, env, config)
    rejected = minutes.diagnostic(
        "invalid_stale_wait_minutes",
        "stale-wait minutes",
        "a whole number of minutes, at least 1",
        f"using {STALE_WAIT_MINUTES}",
    )
    if rejected is not None:
        diagnostics.append(rejected)
    elif minutes.value != STALE_WAIT_MINUTES:
        # The default is the field's unset (None), so settings without it stay as they were.
        modes["stale_wait_minutes"] = minutes.value
    return LoopSettingsResolution(
        LoopSettings.model_validate({"profile": profile.value, **modes}), tuple(diagnostics)
    )


# --- the context budget -----------------------------------------------------------------------


@dataclass(frozen=True)
class ContextBudgetResolution:
    chars: int
    diagnostic: Diagnostic | None = None


def resolve_context_budget(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> ContextBudgetResolution:
    """The operator's context budget (workflows/contracts/conversation.py) from
    ``SEAWALL_CONTEXT_BUDGET_CHARS``, else the user config key ``context_budget_chars``, else
    the default; a value that stopped validating means the default plus one diagnostic."""
    read = read_setting(
        "context_budget_chars", *_sources(environ, config_path, "context_budget_chars")
    )
    return ContextBudgetResolution(
        read.value,
        read.diagnostic(
            "invalid_context_budget",
            "context budget",
            f"a whole number of characters, at least {MIN_CONTEXT_BUDGET_CHARS}",
            f"using {DEFAULT_CONTEXT_BUDGET_CHARS}",
        ),
    )


# --- activity summaries -----------------------------------------------------------------------


@dataclass(frozen=True)
class ActivitySummariesResolution:
    enabled: bool
    diagnostic: Diagnostic | None = None


def resolve_activity_summaries(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> ActivitySummariesResolution:
    """Whether prompts name their activities in the Temporal UI (docs/settings.md,
    ``activity_summaries``), from ``SEAWALL_ACTIVITY_SUMMARIES``, else the user config key,
    else off; a value that stopped validating means off plus one diagnostic."""
    read = read_setting("activity_summaries", *_sources(environ, config_path, "activity_summaries"))
    return ActivitySummariesResolution(
        read.value,
        read.diagnostic(
            "invalid_activity_summaries",
            "activity_summaries",
            "true or false",
            "summaries stay off",
        ),
    )


# --- the model retry window -------------------------------------------------------------------


@dataclass(frozen=True)
class ModelRetryWindowResolution:
    seconds: float
    diagnostic: Diagnostic | None = None


def resolve_model_retry_window(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> ModelRetryWindowResolution:
    """How long prompts retry a failing model request (docs/settings.md,
    ``model_retry_window_seconds``), from ``SEAWALL_MODEL_RETRY_WINDOW_SECONDS``, else the
    user config key, else the default; a value that stopped validating means the default
    plus one diagnostic."""
    read = read_setting(
        "model_retry_window_seconds",
        *_sources(environ, config_path, "model_retry_window_seconds"),
    )
    return ModelRetryWindowResolution(
        read.value,
        read.diagnostic(
            "invalid_model_retry_window",
            "model_retry_window_seconds",
            f"seconds, from {MIN_MODEL_RETRY_WINDOW_SECONDS:g} to "
            f"{MAX_MODEL_RETRY_WINDOW_SECONDS:g}",
            f"using {DEFAULT_MODEL_RETRY_WINDOW_SECONDS:g}",
        ),
    )


# --- the rollout policy (docs/rollout.md, "Rollout cohorts") -----------------------------


@dataclass(frozen=True)
class RolloutSettings:
    """What the operator-settings activity needs to assign a session's cohort."""

    policies: RolloutPolicies | None = None
    salt: str = ""
    pinned_version: str | None = None
    environment: str | None = None
    service_version: str | None = None
    diagnostic: Diagnostic | None = None


def resolve_rollout_settings(
    environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> RolloutSettings:
    """The rollout policy, salt, pinned version, environment and version, checked as at
    startup (seawall/runtime/rollout_policy.py). Never raises: a policy that stopped
    validating since the worker started means no policy (the guard-mode setting applies)
    plus one diagnostic."""
    env, config = _sources(environ, config_path, *ROLLOUT_SETTINGS)
    reads = {name: read_setting(name, env, config) for name in ROLLOUT_SETTINGS}
    values = {name: read.value for name, read in reads.items()}
    attributes = values["otel_resource_attributes"]
    environment = deployment_environment(values["deployment_environment"], attributes)
    version = service_version(values["service_version"], attributes)
    plain = RolloutSettings(environment=environment, service_version=version)
    where = "guard_rollout"
    for read in reads.values():
        if (found := read.invalid) is not None:
            # A value startup would refuse: no policy, as for a policy that stopped validating.
            return dataclasses.replace(
                plain,
                diagnostic=Diagnostic(
                    event="invalid_guard_rollout",
                    source=found.label,
                    value=found.text,
                    message=f"{where}: {found.label}: {read.error}; no rollout policy applies",
                ),
            )
    text = values["guard_rollout"]
    if text is None:
        return plain
    salt = values["guard_rollout_salt"]
    try:
        policies = check_rollout(
            text,
            salt=salt,
            environment=environment,
            allow_wide_enforce=values["guard_rollout_allow_wide_enforce"] is True,
        )
    except ValueError as err:
        return RolloutSettings(
            environment=environment,
            service_version=version,
            diagnostic=Diagnostic(
                event="invalid_guard_rollout",
                source=where,
                value=text,
                message=f"{where}: {err}; no rollout policy applies",
            ),
        )
    return RolloutSettings(
        policies=policies,
        salt=salt or "",
        pinned_version=values["guard_rollout_version"],
        environment=environment,
        service_version=version,
    )
