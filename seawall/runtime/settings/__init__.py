"""The one settings model of every Seawall process, and the one reader of its sources
(docs/settings.md).

The worker, the gateway, ``seawall run``, ``seawall up``, ``seawall prompt`` and ``seawall
acp`` all call :func:`load_settings`; nothing else in the code base reads a ``SEAWALL_*``,
``OPENAI_*``, ``TEMPORAL_*`` or ``OTEL_*`` variable as a setting, or the user config
directory. The package's modules, each one job:

- ``fields``: what a setting is (its variables, file, readers) and its field's validator;
- ``catalogue``: every setting, its type, its default and its readers (the model);
- ``value_types``: the validator each setting's type carries (its one validator);
- ``rule_modes``: the per-rule mode settings of the loop profile, declared in one place;
- ``sources``: the environment, then the user config directory, then the default;
- ``loading``: startup — one process's settings (its ``read_by``) built once, a bad value one
  error naming its source (and ``seawall config``'s view, each bad value marked);
- ``session``: what the worker reads again at each session's start, through the same fields;
- ``report``: ``seawall config``'s table and JSON, and the protections a start announces.

Owners and their tokens file are seawall/runtime/owners.py; what a usable rollout policy
needs is seawall/runtime/rollout_policy.py.
"""

from .catalogue import (
    DEFAULT_CODEC_UI_ORIGINS,
    LOOP_PROFILE_ENV,
    PROGRESS_JUDGE_ENV,
    SETTINGS,
    SETTINGS_BY_NAME,
    SeawallSettings,
    default_of,
)
from .fields import (
    ACP,
    CONFIG_FILE_NAME,
    EXIT_BAD_SETTINGS,
    GATEWAY,
    GUARD_MODE_CONFIG_KEY,
    GUARD_MODE_ENV,
    GUARD_MODE_ENV_ALIAS,
    LOOP_PROFILE_CONFIG_KEY,
    MCP_FILE_NAME,
    PROMPT,
    ROLLOUT,
    RUN,
    STORAGE,
    TEMPORAL_CLIENTS,
    UP,
    WORKER,
    Diagnostic,
    Origin,
    Readers,
    Setting,
    SettingsError,
)
from .loading import (
    EffectiveSettings,
    flag_type,
    inspect_settings,
    load_settings,
    log_startup_diagnostics,
    settings_or_exit,
)
from .report import config_json, display_value, protections, protections_line, render_table
from .rule_modes import RULE_MODE_SETTINGS, RuleModeSetting
from .session import (
    SESSION_SETTINGS,
    ActivitySummariesResolution,
    ContextBudgetResolution,
    LoopSettingsResolution,
    ModelRetryWindowResolution,
    RolloutSettings,
    read_setting,
    resolve_activity_summaries,
    resolve_context_budget,
    resolve_guard_mode,
    resolve_loop_settings,
    resolve_model_retry_window,
    resolve_rollout_settings,
)
from .sources import (
    DEFAULT_GUARD_MODE,
    GuardModeResolution,
    UserConfig,
    user_config_dir,
    user_config_path,
    user_data_dir,
)
from .value_types import LOG_FORMATS, LOG_LEVELS, LogFormat, redacted_names

__all__ = [
    "ACP",
    "CONFIG_FILE_NAME",
    "DEFAULT_CODEC_UI_ORIGINS",
    "DEFAULT_GUARD_MODE",
    "EXIT_BAD_SETTINGS",
    "GATEWAY",
    "GUARD_MODE_CONFIG_KEY",
    "GUARD_MODE_ENV",
    "GUARD_MODE_ENV_ALIAS",
    "LOG_FORMATS",
    "LOG_LEVELS",
    "LOOP_PROFILE_CONFIG_KEY",
    "LOOP_PROFILE_ENV",
    "MCP_FILE_NAME",
    "PROGRESS_JUDGE_ENV",
    "PROMPT",
    "ROLLOUT",
    "RULE_MODE_SETTINGS",
    "RUN",
    "SESSION_SETTINGS",
    "SETTINGS",
    "SETTINGS_BY_NAME",
    "STORAGE",
    "TEMPORAL_CLIENTS",
    "UP",
    "WORKER",
    "ActivitySummariesResolution",
    "ContextBudgetResolution",
    "Diagnostic",
    "EffectiveSettings",
    "GuardModeResolution",
    "LogFormat",
    "LoopSettingsResolution",
    "ModelRetryWindowResolution",
    "Origin",
    "Readers",
    "RolloutSettings",
    "RuleModeSetting",
    "SeawallSettings",
    "Setting",
    "SettingsError",
    "UserConfig",
    "config_json",
    "default_of",
    "display_value",
    "flag_type",
    "inspect_settings",
    "load_settings",
    "log_startup_diagnostics",
    "protections",
    "protections_line",
    "read_setting",
    "redacted_names",
    "render_table",
    "resolve_activity_summaries",
    "resolve_context_budget",
    "resolve_guard_mode",
    "resolve_loop_settings",
    "resolve_model_retry_window",
    "resolve_rollout_settings",
    "settings_or_exit",
    "user_config_dir",
    "user_config_path",
    "user_data_dir",
]
