"""What this worker trusts of a workflow's input: its own settings, nothing the input says
(docs/security-trust.md, "What the worker checks").

Anyone who reaches the Temporal frontend can start a workflow with any input, so every
activity that acts on an input it can check checks it here, against the worker's own
settings:

- a scripted model or fixture tools run only when the worker's ``allow_scripted_models``
  allows them;
- a workspace root must lie, after resolving symlinks, strictly inside one of the worker's
  workspace roots (``workspaces``, and ``editor_workspaces`` for editor folders);
- a fresh session's (or root prompt's, or owner admission workflow's) start must carry a
  grant a trusted starter signed with a key the worker holds, over its whole input and, for a
  session or prompt, for this very run (``seawall.runtime.grants``);
- a session or prompt that runs with the guard forced off (a channel session, a
  non-interactive route) must belong to an owner of the worker's ``channel_owners``.

A refusal is a non-retryable ``ApplicationError`` whose type names what was wrong
(``workflows.contracts.grant``) and whose message names the setting, never a key, a path or an
owner id; the log line says only which refusal it was.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from temporalio import activity
from temporalio.exceptions import ApplicationError

from seawall.runtime.grants import GrantProblem, verify_grant, verifying_keys
from seawall.runtime.owners import owner_list, owner_listed
from seawall.runtime.settings import WORKER, SeawallSettings, load_settings
from seawall.runtime.workspace_roots import ROOTS_SETTINGS, inside_roots, resolved_roots
from workflows.contracts.activity import CHECK_START
from workflows.contracts.grant import (
    GRANT_EXPIRED,
    GRANT_INVALID,
    GRANT_MISSING,
    GRANT_UNVERIFIABLE,
    GUARD_OFF_NOT_ALLOWED,
    SCRIPTED_MODELS_DISABLED,
    WORKSPACE_OUTSIDE_ROOT,
    StartClaim,
)
from workflows.session import session_workflow_id

_log = structlog.get_logger(__name__)

_GRANT_REFUSALS: Mapping[GrantProblem, tuple[str, str]] = {
    GrantProblem.MISSING: (
        GRANT_MISSING,
        "the {kind} carries no session grant: start it through the gateway or seawall acp "
        "(docs/security-trust.md)",
    ),
    GrantProblem.INVALID: (
        GRANT_INVALID,
        "the {kind}'s session grant does not verify: it was signed for another workflow or "
        "run, its start input (owner, workspace, scenario, options) was changed, its starter "
        "signs with another key than this worker's session_signing_key, or its starter is "
        "older than this worker (grants now name their run: upgrade it)",
    ),
    GrantProblem.EXPIRED: (
        GRANT_EXPIRED,
        "the {kind}'s session grant has expired: start it again",
    ),
    GrantProblem.NO_KEY: (
        GRANT_UNVERIFIABLE,
        "this worker has no session_signing_key to verify the {kind}'s grant with",
    ),
}


def refusal(kind: str, message: str) -> ApplicationError:
    """The non-retryable failure of a refused input; logged by its type only."""
    with contextlib.suppress(Exception):  # a failing log handler must not hide the refusal
        _log.warning("worker_refused_input", refusal=kind)
    return ApplicationError(message, type=kind, non_retryable=True)


@dataclass(frozen=True)
class WorkerTrust:
    """One worker's allowances. ``workspace_roots`` are resolved on construction; ``keys``
    are the session-signing keys it accepts (never printed)."""

    allow_scripted_models: bool
    workspace_roots: tuple[Path, ...]
    keys: tuple[str, ...] = field(default=(), repr=False)
    # Owners whose sessions and prompts may run with the guard forced off ("*": any).
    channel_owners: tuple[str, ...] = ()
    clock: Callable[[], float] = field(default=time.time, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "workspace_roots", resolved_roots(self.workspace_roots))

    @classmethod
    def from_settings(
        cls, settings: SeawallSettings, *, extra_roots: Sequence[Path] = ()
    ) -> WorkerTrust:
        """The worker's own settings: ``allow_scripted_models``, the ``workspaces`` directory
        (plus ``editor_workspaces`` and ``extra_roots``) and the signing keys."""
        roots = [settings.workspaces_dir, *extra_roots]
        if settings.editor_workspaces is not None:
            roots.append(settings.editor_workspaces)
        return cls(
            allow_scripted_models=settings.allow_scripted_models,
            workspace_roots=tuple(roots),
            keys=verifying_keys(settings),
            channel_owners=owner_list(settings.channel_owners or ""),
        )

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> WorkerTrust:
        return cls.from_settings(load_settings(environ, reader=WORKER).settings)

    # --- the checks -----------------------------------------------------------------------

    def check_scripted(self) -> None:
        """Refuse a scripted model or fixture tool unless this worker allows them."""
        if not self.allow_scripted_models:
            raise refusal(
                SCRIPTED_MODELS_DISABLED,
                "scripted models and fixture tools are disabled on this worker "
                "(allow_scripted_models, SEAWALL_ALLOW_SCRIPTED_MODELS)",
            )

    def workspace(self, workspace_root: str) -> Path:
        """``workspace_root`` resolved (symlinks followed), when it lies strictly inside one
        of this worker's workspace roots; else the refusal."""
        # The one rule, shared with seawall acp's check at session/new.
        resolved = inside_roots(workspace_root, self.workspace_roots)
        if resolved is None:
            raise refusal(
                WORKSPACE_OUTSIDE_ROOT,
                "the workspace is not inside this worker's workspaces directory "
                f"({ROOTS_SETTINGS})",
            )
        return resolved

    def check_start(self, claim: StartClaim, workflow_id: str) -> None:
        """Everything a fresh session, root prompt or admission workflow claims: its
        workspace, its scenario, its grant for ``workflow_id`` (a session's also names the
        session's own id; a session's or prompt's names its run), and a guard forced off."""
        if claim.kind != "admission":
            self.workspace(claim.workspace_root or "")
        if claim.scripted:
            self.check_scripted()
        if (
            claim.kind == "session"
            and (claim.session_id is None or session_workflow_id(claim.session_id) != workflow_id)
        ) or (claim.kind != "admission" and claim.run_id is None):
            problem: GrantProblem | None = GrantProblem.INVALID
        else:
            problem = verify_grant(claim, workflow_id=workflow_id, keys=self.keys, now=self.clock())
        if problem is not None:
            kind, message = _GRANT_REFUSALS[problem]
            raise refusal(kind, message.format(kind=claim.kind))
        if claim.guard_off and not owner_listed(self.channel_owners, claim.owner_id):
            raise refusal(
                GUARD_OFF_NOT_ALLOWED,
                f"the {claim.kind} runs with the guard off (a channel session or a "
                "non-interactive route), which this worker allows only for the owners in its "
                "channel_owners (SEAWALL_CHANNEL_OWNERS)",
            )

    def check_start_in_activity(self, claim: StartClaim | None) -> None:
        """:meth:`check_start` for the workflow running this activity (``None``: nothing is
        claimed, as in a session's prompts and a continued session)."""
        if claim is not None:
            self.check_start(claim, activity.info().workflow_id or "")


# What an activity class trusts unless its worker says otherwise: no scripted model, no
# workspace, no start (seawall.worker.build.build_activities hands every class the worker's
# own trust).
DENY_ALL = WorkerTrust(allow_scripted_models=False, workspace_roots=())


class StartCheckActivities:
    """``seawall.check_start``: the worker's check of a fresh start that runs no other
    activity first (an owner's admission workflow). Sessions and root prompts are checked
    inside the activity they begin with anyway (the operator settings, the tool listing)."""

    def __init__(self, trust: WorkerTrust = DENY_ALL) -> None:
        self._trust = trust

    def activities(self) -> list[Callable[..., Any]]:
        return [self.check_start]

    @activity.defn(name=CHECK_START)
    async def check_start(self, claim: StartClaim) -> None:
        """Refuse the start (non-retryable, by its type) unless ``claim`` holds."""
        self._trust.check_start_in_activity(claim)
