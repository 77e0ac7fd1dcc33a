"""The owner admission workflow's messages: its state (start input and continue-as-new
carry), the ``admit`` update and the ``release`` signal (workflows/session/owner_admission.py).

Nothing here names the owner: the workflow id is a hash of the owner id
(:func:`admission_workflow_id`), and the state holds session and prompt ids only.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from workflows.contracts.grant import SessionGrant

# A slot admitted for a submit the gateway never made (it crashed, or lost its connection,
# between ``admit`` and ``submit_prompt``) is freed once it is this old and the session
# knows no such submit. Far longer than a submit takes (its RPC timeout is 10 s).
UNSUBMITTED_GRACE_SECONDS = 60.0
# Remembered released slots, so that a client repeating a finished prompt's request (same
# Idempotency-Key) is answered as before instead of being counted again.
RELEASED_KEPT = 1000
# Continue as new after this many messages (or sooner when Temporal suggests it).
MESSAGES_PER_RUN = 1000


def admission_workflow_id(owner_id: str, task_queue: str) -> str:
    """The owner's admission workflow for the deployment serving ``task_queue``: a SHA-256
    of both, so the id (which visibility lists) does not carry the owner id, every gateway
    replica of the deployment finds the same workflow, and one whose task queue changed
    starts afresh on the new queue instead of waiting for a worker that is gone."""
    named = f"seawall-owner-admission\n{task_queue}\n{owner_id}"
    return f"owner-admission-{hashlib.sha256(named.encode()).hexdigest()[:32]}"


class Slot(BaseModel):
    """One prompt held against the owner's limit."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    # The update id of the ``submit_prompt`` this slot was admitted for; None for a prompt
    # found running or queued in one of the owner's sessions with no slot of its own (a
    # submit that arrived late, or a mid-turn input the session queued as its next prompt).
    update_id: str | None
    # The prompt the submit made, once the gateway has found it out.
    prompt_id: str | None = None
    admitted_at: datetime
    # The time of the refusal the observation that named ``prompt_id`` followed: an older
    # observation cannot release it.
    known_as_of: datetime | None = None

    @property
    def key(self) -> str:
        """The submit this slot is for (or, with no submit of its own, its prompt)."""
        if self.update_id is None:
            return f"{self.session_id}\n#{self.prompt_id}"
        return f"{self.session_id}\n{self.update_id}"


class OpenSession(BaseModel):
    """One of the owner's sessions counted against its quotas (docs/security-gateway.md, "Per-owner
    quotas"), until it is seen closed."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    # Its client_metadata's bytes: charged at its start and again with each prompt, whose
    # input carries it.
    metadata_bytes: int = 0
    # The bytes charged for it so far (see ``OwnerQuotas.max_stored_bytes``).
    stored_bytes: int = 0
    admitted_at: datetime


class OwnerQuotas(BaseModel):
    """The quotas a request is admitted against (0: that quota is off), sent by the gateway
    with each request so that the settings stay the operator's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_open_sessions: int = Field(default=0, ge=0)
    # Over the owner's open sessions: each one's client_metadata (JSON) at its start, and
    # with every prompt its text plus that metadata again, and every mid-turn input's text.
    max_stored_bytes: int = Field(default=0, ge=0)


class AdmissionState(BaseModel):
    """The start input and the continue-as-new carry."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    slots: list[Slot] = Field(default_factory=list)
    # The owner's sessions counted against its quotas (only with quotas on).
    sessions: list[OpenSession] = Field(default_factory=list)
    released: list[str] = Field(default_factory=list)
    messages_per_run: int = Field(default=MESSAGES_PER_RUN, ge=1)
    unsubmitted_grace_seconds: float = Field(default=UNSUBMITTED_GRACE_SECONDS, ge=0)
    # The gateway's signature over this start (docs/security-trust.md): the worker checks it
    # at a fresh start, before the workflow answers anything; not in the runs continue-as-new
    # makes, which carry it unchecked.
    grant: SessionGrant | None = None

    @property
    def unsubmitted_grace(self) -> timedelta:
        return timedelta(seconds=self.unsubmitted_grace_seconds)


class SessionObservation(BaseModel):
    """What the gateway saw in one session after a refusal: the prompts running or queued,
    and what became of each unresolved slot's submit (update id -> the prompt it made, or
    None when the session knows no such submit). An update id left out was not found out."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    live_prompt_ids: list[str]
    submits: dict[str, str | None] = Field(default_factory=dict)
    # Whether the session still runs ("open"), has completed ("closed"), or is unknown to
    # Temporal (not started yet, or never); None: not looked at (older gateways).
    state: Literal["open", "closed", "unknown"] | None = None


class AdmitRequest(BaseModel):
    """Hold a slot for the submit ``update_id`` to ``session_id`` if fewer than ``limit``
    are held; ``observations`` (after a refusal at ``as_of``) first free the slots of
    prompts that have finished."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    update_id: str
    # 0: no limit on prompts (only the quotas apply; no slot is held).
    limit: int = Field(ge=0)
    observations: list[SessionObservation] = Field(default_factory=list)
    as_of: datetime | None = None
    # The session does not know this submit (the gateway asked it): hold a slot even if one
    # is held, or was released, for the same key, so that a submit the session has
    # forgotten can never run uncounted.
    recount: bool = False
    # The prompt's text in bytes (UTF-8), charged with the session's metadata against
    # ``quotas`` (None: no quotas).
    text_bytes: int = Field(default=0, ge=0)
    quotas: OwnerQuotas | None = None


class SessionAdmitRequest(BaseModel):
    """Count a new session against the owner's quotas (update ``admit_session``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    metadata_bytes: int = Field(ge=0)
    quotas: OwnerQuotas
    observations: list[SessionObservation] = Field(default_factory=list)
    as_of: datetime | None = None


class InputCharge(BaseModel):
    """Charge a mid-turn input's bytes to its session (update ``charge_input``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    text_bytes: int = Field(ge=0)
    quotas: OwnerQuotas
    observations: list[SessionObservation] = Field(default_factory=list)
    as_of: datetime | None = None


class Refund(BaseModel):
    """Give back bytes charged for something the session refused (signal ``refund``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    bytes: int = Field(ge=0)


class Admission(BaseModel):
    model_config = ConfigDict(frozen=True)

    admitted: bool
    # False for a repeated request: the submit already held (or had held) a slot.
    counted: bool
    held: int
    limit: int
    # On a refusal: its time, and the slots whose prompts the gateway should look at.
    as_of: datetime
    to_observe: list[Slot] = Field(default_factory=list)
    # What was refused: the prompt limit (None, as before quotas), or which quota.
    refused: Literal["open_sessions", "stored_bytes"] | None = None
    # The owner's open sessions and stored bytes as counted, and the sessions to look at
    # after a quota refusal (all of them: which have closed).
    open_sessions: int = 0
    stored_bytes: int = 0
    # The bytes this request was charged (what a refund gives back).
    charged: int = 0
    sessions_to_observe: list[str] = Field(default_factory=list)


class SlotRelease(BaseModel):
    """Free the slot of a submit that the session refused (signal ``release``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    update_id: str
