"""What ``seawall config`` prints: each setting's value as it may be shown, its source and
where it came from, as an aligned table or one JSON object (docs/settings.md, "Checking the
settings").

Secrets print as ``set``/``unset``, the MCP servers as a count (their names can be
sensitive), a credential inside a URL as ``***``; derived defaults are shown resolved.
"""

from __future__ import annotations

from typing import Any

from seawall.runtime.storage import storage_dir
from workflows.contracts.prompt_options import ApprovalMode
from workflows.seed import GuardMode

from .catalogue import SETTINGS, SETTINGS_BY_NAME
from .fields import without_userinfo
from .loading import EffectiveSettings


def display_value(effective: EffectiveSettings, name: str) -> str:
    """The value of ``name`` as ``seawall config`` shows it."""
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
    config, mcp, origins = effective.config, effective.mcp, effective.origins
    return {
        "user_config": {"path": str(config.path) if config.path else None, "found": config.found},
        "mcp_config": {"path": str(mcp.path) if mcp.path else None, "found": mcp.found},
        "settings": {
            s.name: {
                "value": display_value(effective, s.name),
                "source": origins[s.name].source.value,
                "from": origins[s.name].where,
                "environment": list(s.env),
                "config_file": s.config_file,
                "read_by": list(s.read_by),
                "secret": s.secret,
            }
            for s in SETTINGS
        },
        "diagnostics": [d.message for d in effective.diagnostics],
    }


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
