"""``OwnerAdmissionWorkflow``: one owner's count of prompts running or queued, kept durable
so that every gateway replica, and a restarted one, enforces the same per-owner limit.

docs/architecture.md, "Per-owner prompt limit". The gateway calls update ``admit`` (with
update-with-start, so the first call creates the workflow) before it submits a prompt to a
session; the update holds a slot or refuses. Slots are freed lazily: a refusal lists the
held slots, the gateway looks at their sessions (which prompts still run or wait, and which
prompt each admitted submit made) and calls ``admit`` again with what it saw, and the
workflow frees every slot whose prompt has finished, was cancelled, failed, or was never
submitted. So the sessions need not tell this workflow anything, and a slot cannot leak: its
prompt either still runs (and is counted) or is seen to be gone at the next refusal.

The workflow never sees the owner id (its id is a hash of it) and runs no activity: each
message is a pure function of the state, so it is deterministic by construction.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.owner_admission_io import (
        RELEASED_KEPT,
        Admission,
        AdmissionState,
        AdmitRequest,
        SessionObservation,
        Slot,
        SlotRelease,
    )


def observe(
    slots: list[Slot], observation: SessionObservation, as_of: datetime, grace: timedelta
) -> tuple[list[Slot], list[Slot]]:
    """The slots after ``observation`` (made after a refusal at ``as_of``), and the slots
    it frees; a slot whose submit the session does not know is freed once older than
    ``grace``. Another session's slots are returned unchanged."""
    live = set(observation.live_prompt_ids)
    kept: list[Slot] = []
    freed: list[Slot] = []
    for slot in slots:
        if slot.session_id != observation.session_id:
            kept.append(slot)
            continue
        if slot.prompt_id is None and slot.update_id in observation.submits:
            made = observation.submits[slot.update_id]
            if made is None:
                # No such submit: in flight if recent, else it never happened.
                (kept if slot.admitted_at > as_of - grace else freed).append(slot)
                continue
            slot = slot.model_copy(update={"prompt_id": made, "known_as_of": as_of})
        if slot.prompt_id is None or slot.prompt_id in live:
            kept.append(slot)
        elif slot.known_as_of is not None and slot.known_as_of > as_of:
            kept.append(slot)  # an older observation than the one that found this prompt
        else:
            freed.append(slot)  # finished, cancelled or failed: prompt ids are never reused
    # A prompt with no slot of its own still runs or waits for this owner: count it.
    counted = {slot.prompt_id for slot in kept}
    kept.extend(
        Slot(
            session_id=observation.session_id,
            update_id=None,
            prompt_id=prompt_id,
            admitted_at=as_of,
            known_as_of=as_of,
        )
        for prompt_id in observation.live_prompt_ids
        if prompt_id not in counted
    )
    return kept, freed


@workflow.defn(name="OwnerAdmissionWorkflow")
class OwnerAdmissionWorkflow:
    @workflow.init
    def __init__(self, state: AdmissionState) -> None:
        self._slots = list(state.slots)
        self._released = list(state.released)
        self._settings = state  # messages_per_run, unsubmitted_grace
        self._messages = 0

    @workflow.update
    def admit(self, request: AdmitRequest) -> Admission:
        self._messages += 1
        now = workflow.now()
        if request.observations and request.as_of is not None:
            for observation in request.observations:
                self._slots, freed = observe(
                    self._slots, observation, request.as_of, self._settings.unsubmitted_grace
                )
                self._remember(slot for slot in freed if slot.prompt_id is not None)
        key = Slot(session_id=request.session_id, update_id=request.update_id, admitted_at=now).key
        held = len(self._slots)
        if key in self._released or any(slot.key == key for slot in self._slots):
            # A repeated request: the session deduplicates the submit itself.
            return Admission(
                admitted=True, counted=False, held=held, limit=request.limit, as_of=now
            )
        if held >= request.limit:
            return Admission(
                admitted=False,
                counted=False,
                held=held,
                limit=request.limit,
                as_of=now,
                to_observe=self._slots,
            )
        self._slots.append(
            Slot(session_id=request.session_id, update_id=request.update_id, admitted_at=now)
        )
        return Admission(admitted=True, counted=True, held=held + 1, limit=request.limit, as_of=now)

    @workflow.signal
    def release(self, release: SlotRelease) -> None:
        """The session refused the submit: it made no prompt."""
        self._messages += 1
        self._slots = [
            slot
            for slot in self._slots
            if (slot.session_id, slot.update_id) != (release.session_id, release.update_id)
        ]

    @workflow.query
    def state(self) -> AdmissionState:
        return self._settings.model_copy(
            update={"slots": list(self._slots), "released": list(self._released)}
        )

    @workflow.run
    async def run(self, state: AdmissionState) -> None:
        await workflow.wait_condition(
            lambda: (
                self._messages >= self._settings.messages_per_run
                or workflow.info().is_continue_as_new_suggested()
            )
        )
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(self.state())

    def _remember(self, freed: Iterable[Slot]) -> None:
        """Keep the newest released submits' keys (see ``RELEASED_KEPT``)."""
        keys = [slot.key for slot in freed if slot.update_id is not None]
        self._released = [*self._released, *keys][-RELEASED_KEPT:]
