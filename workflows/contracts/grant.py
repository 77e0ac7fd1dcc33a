"""Session grants: what a trusted starter signs, and what a workflow hands the worker to check.

docs/security-trust.md. Anyone who reaches the Temporal frontend can start a workflow, so the
worker trusts no start it cannot check. A trusted starter (the gateway, ``seawall acp``,
``seawall run``) signs a start into a :class:`SessionGrant`: the whole start input (its
digest, :func:`input_digest`), with the fields the worker checks against its own settings
spelled out — the session, its owner, its workspace, whether a scripted model runs, whether
the guard is forced off, the operator decisions fixed at start — and, for a session or a root
prompt, the **run** it is valid for. The run's id exists only once the server has started
it, so such a grant reaches the run by the ``grant`` signal (:data:`GRANT_SIGNAL`) right
after the start, whose input says ``grant_follows``. An owner's admission workflow carries
its grant in its input and names its workflow id only: it is started empty, so a replay of
its start starts only what the gateway itself would.

When a fresh session or root prompt (or admission workflow) starts, the workflow hands the
worker those fields as a :class:`StartClaim`; the worker recomputes the signature over
:func:`canonical_claim` with its own key and refuses the start when it does not verify.

Pure data and a pure encoding: workflow code builds claims, the signer
(``seawall.runtime.grants``) and the verifier (``activities.trust``) encode them the same way.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from workflows.rules import LoopSettings
from workflows.seed.guard import GuardMode
from workflows.seed.rollout import RolloutAssignment

# The encoding's version: a change to :func:`canonical_claim` gets a new one. Version 1
# (no input digest, valid for a workflow id rather than a run) no longer verifies.
GRANT_VERSION = 2
# The signal a session or root prompt receives its run's grant by.
GRANT_SIGNAL = "grant"
# How long a start that says ``grant_follows`` waits for its grant: the starter signals it
# at once; a starter that crashed in between leaves a start that fails, never one that runs.
GRANT_WAIT_SECONDS = 60
# Start-input fields the digest leaves out: the grant itself and the note that it follows.
UNSIGNED_INPUT_FIELDS = frozenset({"grant", "grant_follows"})

# The ApplicationError types a refused start fails with (non-retryable, docs/security-trust.md).
GRANT_MISSING = "SessionGrantMissing"
GRANT_INVALID = "SessionGrantInvalid"
GRANT_EXPIRED = "SessionGrantExpired"
GRANT_UNVERIFIABLE = "SessionGrantUnverifiable"
WORKSPACE_OUTSIDE_ROOT = "WorkspaceOutsideRoot"
SCRIPTED_MODELS_DISABLED = "ScriptedModelsDisabled"
GUARD_OFF_NOT_ALLOWED = "GuardOffNotAllowed"
START_REFUSALS = frozenset(
    {
        GRANT_MISSING,
        GRANT_INVALID,
        GRANT_EXPIRED,
        GRANT_UNVERIFIABLE,
        WORKSPACE_OUTSIDE_ROOT,
        SCRIPTED_MODELS_DISABLED,
        GUARD_OFF_NOT_ALLOWED,
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
    ``prompt`` for a root ``PromptWorkflow``, ``admission`` for an ``OwnerAdmissionWorkflow``
    (which has no workspace)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["session", "prompt", "admission"]
    session_id: str | None = None
    owner_id: str | None = None
    workspace_root: str | None = None
    # A model script or fixture tools (the scenario channel).
    scripted: bool = False
    # A channel session or a non-interactive route: the guard is forced off.
    guard_off: bool = False
    guard_mode: GuardMode | None = None
    rollout: RolloutAssignment | None = None
    loop_settings: LoopSettings | None = None
    # The digest of the whole start input (:func:`input_digest`).
    input_sha256: str | None = None
    # The run the grant must be for (the server's ``original_execution_run_id``, so a reset
    # keeps it); None for an admission workflow, whose grant names its workflow id only.
    run_id: str | None = None
    grant: SessionGrant | None = None


def input_digest(start: BaseModel) -> str:
    """SHA-256 (hex) of a start input as sorted, compact, ASCII JSON, without the grant and
    without fields at their defaults, so a field added later with a default changes no
    digest. Two processes that serialize the same input agree on it."""
    dumped = json.loads(
        start.model_dump_json(exclude=set(UNSIGNED_INPUT_FIELDS), exclude_defaults=True)
    )
    text = json.dumps(dumped, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def canonical_claim(claim: StartClaim, *, workflow_id: str, expires_at: int) -> bytes:
    """The bytes a grant signs: the claim's fields (never the grant itself), the workflow id
    and run it is valid for and its expiry, as sorted, compact, ASCII JSON."""
    fields = {
        "v": GRANT_VERSION,
        "kind": claim.kind,
        "workflow_id": workflow_id,
        "run_id": claim.run_id,
        "session_id": claim.session_id,
        "owner_id": claim.owner_id,
        "workspace_root": claim.workspace_root,
        "scripted": claim.scripted,
        "guard_off": claim.guard_off,
        "guard_mode": claim.guard_mode.value if claim.guard_mode else None,
        "rollout": claim.rollout.model_dump(mode="json") if claim.rollout else None,
        "loop_settings": (
            claim.loop_settings.model_dump(mode="json") if claim.loop_settings else None
        ),
        "input_sha256": claim.input_sha256,
        "expires_at": expires_at,
    }
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
