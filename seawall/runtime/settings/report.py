"""What ``seawall config`` prints: each setting's value as it may be shown, its source and
where it came from, as an aligned table or one JSON object (docs/settings.md, "Checking the
settings"); and the protections the settings select, as ``seawall up``'s banner and the
worker's start-up line show them.

Secrets print as ``set``/``unset``, the MCP servers as a count (their names can be
sensitive), a credential inside a URL as ``***``; derived defaults are shown resolved; a
value that does not validate as ``invalid``.
"""

from __future__ import annotations

from typing import Any

from seawall.runtime.storage import storage_dir
from workflows.contracts.prompt_options import ApprovalMode
from workflows.seed import GuardMode

from .catalogue import SETTINGS, SETTINGS_BY_NAME
from .fields import GUARD_MODE_CONFIG_KEY, Setting, without_userinfo
from .loading import EffectiveSettings

INVALID = "invalid"


def display_value(effective: EffectiveSettings, name: str) -> str:
    """The value of ``name`` as ``seawall config`` shows it."""
    if name in effective.invalid:
        return INVALID
    settings = effective.settings
    value = getattr(settings, name)
    if name == "mcp_servers":
        if value is None:
            return "unset"
        servers = value.get("mcpServers", value) if set(value) == {"mcpServers"} else value
        count = len(servers) if isinstance(servers, dict) else 0
        return f"set ({count} server{'' if count == 1 else 's'})"
    if SETTINGS_BY_NAME[name].secret:
        return "set" if value is not None else "unset"
    if name == "gateway_url":
        return settings.gateway_client_url
    if name == "workspaces":
        return str(settings.workspaces_dir)
    if name == "payload_storage_dir":
        return str(storage_dir(settings))
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if name == "openai_base_url":
        return without_userinfo(str(value))
    return str(value.value) if isinstance(value, GuardMode | ApprovalMode) else str(value)


def config_json(effective: EffectiveSettings) -> dict[str, Any]:
    """``seawall config --json``'s settings part."""
    config, mcp = effective.config, effective.mcp
    return {
        "user_config": {"path": str(config.path) if config.path else None, "found": config.found},
        "mcp_config": {"path": str(mcp.path) if mcp.path else None, "found": mcp.found},
        "settings": {s.name: _row(effective, s) for s in SETTINGS},
        "diagnostics": [d.message for d in effective.diagnostics],
    }


def _row(effective: EffectiveSettings, setting: Setting) -> dict[str, Any]:
    origin = effective.origins[setting.name]
    row = {
        "value": display_value(effective, setting.name),
        "source": origin.source.value,
        "from": origin.where,
        "environment": list(setting.env),
        "config_file": setting.config_file,
        "read_by": list(setting.read_by),
        "secret": setting.secret,
    }
    problem = effective.invalid.get(setting.name)
    # Only an invalid value's row says why: the setting, its value, source and accepted words.
    return row if problem is None else {**row, "problem": problem}


def render_table(effective: EffectiveSettings) -> str:
    """The settings as an aligned text table with the source of each value."""
    rows = [("setting", "value", "source", "from")]
    for setting in SETTINGS:
        origin = effective.origins[setting.name]
        rows.append(
            (
                setting.name,
                display_value(effective, setting.name),
                origin.source.value,
                origin.where or "",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = []
    config = effective.config
    state = "found" if config.found else "not found"
    lines.append(f"user config: {config.path} ({state})")
    lines.append("")
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(3)]
        lines.append("  ".join([*cells, row[3]]).rstrip())
    for diagnostic in effective.diagnostics:
        lines.append(f"warning: {diagnostic.message}")
    return "\n".join(lines)


# --- the protections, as seawall up and the worker announce them ------------------------------


def protections(effective: EffectiveSettings) -> dict[str, str]:
    """The guard mode and where it came from, the loop profile, the rollout policy when one
    is set, and the seed profile's notice for an invalid guard mode: the fields the worker's
    ``worker_started`` line carries. The worker resolves the guard mode again at each
    session's start; this is what the settings say when the process starts."""
    settings = effective.settings
    fields = {
        "guard_mode": settings.repeated_tool_failure_guard.value,
        "guard_mode_source": effective.origins[GUARD_MODE_CONFIG_KEY].source.value,
        "loop_profile": settings.loop_profile.value,
    }
    if settings.guard_rollout is not None:
        fields["guard_rollout"] = settings.guard_rollout
    if (notice := effective.guard_notice) is not None:
        fields["guard_mode_problem"] = notice
    return fields


def protections_line(effective: EffectiveSettings) -> str:
    """``guard: enforce (environment) · profile: recommended · sandbox: bwrap``: what the
    settings select, for ``seawall up``'s banner. The sandbox is the ``sandbox`` setting;
    whether bubblewrap could start is the worker's to find (its ``sandbox_ready`` or
    ``sandbox_unavailable`` log line): with ``bwrap`` selected nothing runs unconfined."""
    fields = protections(effective)
    source = fields["guard_mode_source"].replace("_", " ")
    guard = f"{fields['guard_mode']} ({source})"
    if "guard_mode_problem" in fields:
        guard = f"{fields['guard_mode']} (seed profile: {INVALID} value)"
    if "guard_rollout" in fields:
        guard += " + rollout policy"
    sandbox = effective.settings.sandbox
    return f"guard: {guard} · profile: {fields['loop_profile']} · sandbox: {sandbox}"
