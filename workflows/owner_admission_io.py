"""The owner admission workflow's messages: its state (start input and continue-as-new
carry), the ``admit`` update and the ``release`` signal (docs/architecture.md, "Per-owner
prompt limit").

Nothing here names the owner: the workflow id is a hash of the owner id
(:func:`admission_workflow_id`), and the state holds session and prompt ids only.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field

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


class AdmissionState(BaseModel):
    """The start input and the continue-as-new carry."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    slots: list[Slot] = Field(default_factory=list)
    released: list[str] = Field(default_factory=list)
    messages_per_run: int = Field(default=MESSAGES_PER_RUN, ge=1)
    unsubmitted_grace_seconds: float = Field(default=UNSUBMITTED_GRACE_SECONDS, ge=0)

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


class AdmitRequest(BaseModel):
    """Hold a slot for the submit ``update_id`` to ``session_id`` if fewer than ``limit``
    are held; ``observations`` (after a refusal at ``as_of``) first free the slots of
    prompts that have finished."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    update_id: str
    limit: int = Field(ge=1)
    observations: list[SessionObservation] = Field(default_factory=list)
    as_of: datetime | None = None


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


class SlotRelease(BaseModel):
    """Free the slot of a submit that the session refused (signal ``release``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    update_id: str
