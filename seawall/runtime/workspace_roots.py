"""Which workspace folders a worker accepts: one rule for the worker that refuses a start
(``activities.trust``) and for ``seawall acp``, which refuses an editor folder at
``session/new`` when its own settings already say the worker would (docs/acp.md,
"Methods"; docs/security-trust.md, "What the worker checks").

Pure functions of paths and settings: no Temporal, no logging.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from seawall.runtime.settings import SeawallSettings

# What a refusal names: the settings that decide the accepted folders.
ROOTS_SETTINGS = (
    "workspaces, SEAWALL_WORKSPACES; editor folders: editor_workspaces, SEAWALL_EDITOR_WORKSPACES"
)


def resolved_roots(roots: Sequence[Path]) -> tuple[Path, ...]:
    return tuple(Path(root).expanduser().resolve() for root in roots)


def inside_roots(workspace_root: str, roots: Sequence[Path]) -> Path | None:
    """``workspace_root`` resolved (symlinks followed) when it lies strictly inside one of
    the resolved ``roots``; else ``None``. A relative path, a NUL byte or a symlink loop is
    outside every root."""
    resolved: Path | None = None
    with contextlib.suppress(ValueError, OSError, RuntimeError):
        if Path(workspace_root).is_absolute():
            resolved = Path(workspace_root).resolve()
    if resolved is None or not any(root in resolved.parents for root in roots):
        return None
    return resolved


def editor_worker_roots(settings: SeawallSettings) -> tuple[Path, ...]:
    """The roots of the worker ``seawall acp --embedded`` runs for an editor: the
    ``workspaces`` directory and the editor folders (``editor_workspaces``, else the home
    directory), resolved."""
    return resolved_roots((settings.workspaces_dir, settings.editor_workspaces or Path.home()))
