"""Session grants: what a trusted starter signs, and what a workflow hands the worker to check.

docs/security-trust.md. Anyone who reaches the Temporal frontend can start a workflow, so the
worker trusts no start it cannot check. The fields only a trusted starter (the gateway,
``seawall acp``, ``seawall run``) may decide — the session, its owner, its workspace,
whether a scripted model runs, and any operator decision fixed at start — are signed by that
starter into a :class:`SessionGrant` carried by ``SessionInput`` / ``PromptInput``. At a
session's fresh start (and a root prompt's start) the workflow hands the worker those fields
as a :class:`StartClaim`; the worker recomputes the signature over
:func:`canonical_claim` with its own key and refuses the start when it does not verify.

Pure data and a pure encoding: workflow code builds claims, the signer
(``seawall.runtime.grants``) and the verifier (``activities.trust``) encode them the same way.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from workflows.rules import LoopSettings
from workflows.seed.guard import GuardMode
from workflows.seed.rollout import RolloutAssignment

# The encoding's version: a change to :func:`canonical_claim` gets a new one.
GRANT_VERSION = 1

# The ApplicationError types a refused start fails with (non-retryable, docs/security-trust.md).
GRANT_MISSING = "SessionGrantMissing"
GRANT_INVALID = "SessionGrantInvalid"
GRANT_EXPIRED = "SessionGrantExpired"
GRANT_UNVERIFIABLE = "SessionGrantUnverifiable"
WORKSPACE_OUTSIDE_ROOT = "WorkspaceOutsideRoot"
SCRIPTED_MODELS_DISABLED = "ScriptedModelsDisabled"
START_REFUSALS = frozenset(
    {
        GRANT_MISSING,
        GRANT_INVALID,
        GRANT_EXPIRED,
        GRANT_UNVERIFIABLE,
        WORKSPACE_OUTSIDE_ROOT,
        SCRIPTED_MODELS_DISABLED,
    }
)


class SessionGrant(BaseModel):
    """A trusted starter's signature over a start (HMAC-SHA256, hex), valid until
    ``expires_at`` (Unix seconds). Not a secret: it proves the start, and only for the
    workflow id it names."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    expires_at: int
    signature: str = Field(min_length=64, max_length=64, pattern=r"^[0-9a-f]{64}$")


class StartClaim(BaseModel):
    """What a workflow started with that only a trusted starter may decide, with the grant
    that signs it (``None``: unsigned). ``kind`` is ``session`` for a ``SessionWorkflow``,
    ``prompt`` for a root ``PromptWorkflow``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["session", "prompt"]
    session_id: str | None = None
    owner_id: str | None = None
    workspace_root: str
    # A model script or fixture tools (the scenario channel).
    scripted: bool = False
    guard_mode: GuardMode | None = None
    rollout: RolloutAssignment | None = None
    loop_settings: LoopSettings | None = None
    grant: SessionGrant | None = None


def canonical_claim(claim: StartClaim, *, workflow_id: str, expires_at: int) -> bytes:
    """The bytes a grant signs: the claim's fields (never the grant itself), the workflow id
    it is valid for and its expiry, as sorted, compact, ASCII JSON."""
    fields = {
        "v": GRANT_VERSION,
        "kind": claim.kind,
        "workflow_id": workflow_id,
        "session_id": claim.session_id,
        "owner_id": claim.owner_id,
        "workspace_root": claim.workspace_root,
        "scripted": claim.scripted,
        "guard_mode": claim.guard_mode.value if claim.guard_mode else None,
        "rollout": claim.rollout.model_dump(mode="json") if claim.rollout else None,
        "loop_settings": (
            claim.loop_settings.model_dump(mode="json") if claim.loop_settings else None
        ),
        "expires_at": expires_at,
    }
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
