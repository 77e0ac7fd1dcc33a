"""``OwnerAdmissionWorkflow``: one owner's count of prompts running or queued, kept durable
so that every gateway replica, and a restarted one, enforces the same per-owner limit.

The limit (``max_concurrent_prompts_per_owner``, docs/http-api.md, "Tokens, owners and
limits") has to hold across gateway restarts and replicas, so a counter in the gateway's
memory cannot carry it; and the owner id may not be a search attribute, so "count this
owner's running prompts" cannot be a visibility query. So each owner has one such workflow
per task queue, with the id ``owner-admission-<SHA-256 of the task queue and owner id>``:
every replica finds the same one, the id does not carry the owner, and a deployment moved to
another task queue starts a fresh one there. The gateway calls update ``admit`` (with
update-with-start, so the first call creates the workflow) before it submits a prompt to a
session; the update holds a slot or refuses. Slots are freed lazily: a refusal lists the
held slots, the gateway looks at their sessions (which prompts still run or wait, and which
prompt each admitted submit made) and calls ``admit`` again with what it saw, and the
workflow frees every slot whose prompt has finished, was cancelled, failed, or was never
submitted. So the sessions need not tell this workflow anything, and a slot cannot leak: its
prompt either still runs (and is counted) or is seen to be gone at the next refusal.

The workflow never sees the owner id (its id is a hash of it). Its one activity is the
worker's check of a fresh start (``seawall.check_start``, since ADMISSION_START_CHECK_PATCH):
the gateway signs the start state (docs/security-trust.md), and until the worker has verified
it the workflow answers no update, so a state started by anyone else (slots that never free,
sessions that never close) is never counted. Past that, each message is a pure function of
the state, so it is deterministic by construction.

The slots are freed at a refusal: the gateway first asks each unresolved slot's session for
the outcome of its submit update by id (the prompt it made, or "no such submit"), then the
session's ``status``, and calls ``admit`` again; the pure ``observe`` frees each slot whose
prompt no longer runs or waits (prompt ids are never reused, so a prompt once gone stays gone)
and each slot whose submit the session does not know once it is older than 60 s (a gateway
that crashed or gave up between ``admit`` and the submit; long past the submit's 10 s RPC
timeout), and counts any running or queued prompt of those sessions that has no slot (a
submit that landed late, undelivered input the session queued). A refused submit frees its
slot at once (``release``). A refusal therefore costs the owner's sessions' queries and one
more update; admission after a finished or cancelled prompt is immediate.

Repeats are counted once: a slot is keyed by session and submit update id, and ``admit`` with
a key already held, or freed among the last 1,000, is "admitted, not counted" unless the
request says ``recount``, which the gateway sends once the session has said it does not know
the submit, so a session that forgot a key, or a session id started anew, can never run a
prompt uncounted. ``admit`` carries no Temporal update id, so a client repeating a refused
request is not answered the earlier refusal.

Errors lean one way: an older look never frees a prompt a newer one found (each slot
remembers the refusal time of the look that resolved it), and the remaining imprecisions (a
late submit counted twice until the next look, a stale look re-adding a finished prompt)
over-count, which the next refusal corrects. The one under-count: a submit the server delivers
more than 60 s after the gateway gave up on it is not counted until a look sees its prompt.
Sessions the gateway did not admit to (``seawall acp``'s) are not counted. The limit and the
quotas travel with each request, so replicas configured differently each apply their own.

The quotas (``max_open_sessions_per_owner``, ``max_stored_bytes_per_owner``) are counted
beside the slots (``AdmissionState.sessions``: each open session's id, metadata bytes and the
bytes charged to it), asked by ``admit_session`` before a session starts, ``admit`` (the
prompt's bytes) and ``charge_input``; a refused submit or input gives its bytes back
(``refund``). Sessions are freed lazily too (``observe_sessions``): those seen closed, and
those Temporal does not know once older than the same 60 s grace; a closing session counts
until its last prompt finished. A quota refusal has no ``Retry-After``, since waiting frees
nothing by itself. Every field added for the quotas is optional with the old behaviour as its
default and the new handlers add no command, so histories recorded before replay unchanged.

Alternatives: having the session signal this workflow when a prompt ends would free slots
eagerly, but changes the session's command sequence (a patch, and sessions already running
would never signal), and a lost signal leaks a slot unless the same reconciliation exists
anyway; the lazy look needs no session change and costs only when an owner is at the limit.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Literal

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.contracts.activity import CHECK_START
    from workflows.contracts.owner_admission import (
        RELEASED_KEPT,
        Admission,
        AdmissionState,
        AdmitRequest,
        InputCharge,
        OpenSession,
        OwnerQuotas,
        Refund,
        SessionAdmitRequest,
        SessionObservation,
        Slot,
        SlotRelease,
    )
    from workflows.contracts.start_claims import admission_claim, fresh_start, refused_start

# A fresh admission workflow has the worker check its signed start before it answers
# anything (docs/security-trust.md); workflows started before it answer at once.
ADMISSION_START_CHECK_PATCH = "seawall-admission-start-check-v1"


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


def observe_sessions(
    sessions: list[OpenSession],
    observations: list[SessionObservation],
    as_of: datetime,
    grace: timedelta,
) -> list[OpenSession]:
    """The open sessions after ``observations``: a session seen closed is freed, and so is
    one Temporal does not know once it is older than ``grace`` (its start never happened)."""
    states = {o.session_id: o.state for o in observations if o.state is not None}
    kept: list[OpenSession] = []
    for session in sessions:
        state = states.get(session.session_id)
        if state == "closed" or (state == "unknown" and session.admitted_at <= as_of - grace):
            continue
        kept.append(session)
    return kept


@workflow.defn(name="OwnerAdmissionWorkflow")
class OwnerAdmissionWorkflow:
    @workflow.init
    def __init__(self, state: AdmissionState) -> None:
        self._slots = list(state.slots)
        self._released = list(state.released)
        self._sessions = {session.session_id: session for session in state.sessions}
        self._settings = state  # messages_per_run, unsubmitted_grace
        self._messages = 0
        # Whether the worker has checked this run's start (a run continue-as-new made, or
        # one started before the patch, has nothing to check), and its refusal if any.
        self._checked = not (
            fresh_start(workflow.info()) and workflow.patched(ADMISSION_START_CHECK_PATCH)
        )
        self._refused: ApplicationError | None = None

    async def _start_checked(self) -> None:
        """Return once the start is checked; raise its refusal if it was refused."""
        if not self._checked:
            await workflow.wait_condition(lambda: self._checked)
        if self._refused is not None:
            raise ApplicationError(
                str(self._refused.message), type=self._refused.type, non_retryable=True
            )

    @workflow.update
    async def admit(self, request: AdmitRequest) -> Admission:
        await self._start_checked()
        self._messages += 1
        now = workflow.now()
        self._observe(request.observations, request.as_of)
        key = Slot(session_id=request.session_id, update_id=request.update_id, admitted_at=now).key
        held = len(self._slots)
        seen = key in self._released or any(slot.key == key for slot in self._slots)
        if seen and not request.recount:
            # A repeated request: the session deduplicates the submit itself.
            return Admission(
                admitted=True, counted=False, held=held, limit=request.limit, as_of=now
            )
        if request.limit and held >= request.limit:
            return self._refusal(now, request.limit, None)
        quotas = request.quotas
        if quotas is not None:
            session = self._sessions.get(request.session_id) or OpenSession(
                session_id=request.session_id, admitted_at=now
            )
            charge = request.text_bytes + session.metadata_bytes
            if self._over_bytes(quotas, charge):
                return self._refusal(now, request.limit, "stored_bytes")
            self._charge(session, charge)
        else:
            charge = 0
        if not request.limit:
            return self._admitted(now, request.limit, counted=False, charged=charge)
        self._slots.append(
            Slot(session_id=request.session_id, update_id=request.update_id, admitted_at=now)
        )
        return self._admitted(now, request.limit, counted=True, charged=charge)

    @workflow.update
    async def admit_session(self, request: SessionAdmitRequest) -> Admission:
        """Count a new session against the open-session and byte quotas."""
        await self._start_checked()
        self._messages += 1
        now = workflow.now()
        self._observe(request.observations, request.as_of)
        if request.session_id in self._sessions:
            return self._admitted(now, 0, counted=False)  # a repeated request
        quotas = request.quotas
        if quotas.max_open_sessions and len(self._sessions) >= quotas.max_open_sessions:
            return self._refusal(now, 0, "open_sessions")
        if self._over_bytes(quotas, request.metadata_bytes):
            return self._refusal(now, 0, "stored_bytes")
        session = OpenSession(
            session_id=request.session_id,
            metadata_bytes=request.metadata_bytes,
            admitted_at=now,
        )
        self._charge(session, request.metadata_bytes)
        return self._admitted(now, 0, counted=True, charged=request.metadata_bytes)

    @workflow.update
    async def charge_input(self, request: InputCharge) -> Admission:
        """Charge a mid-turn input's bytes to its session."""
        await self._start_checked()
        self._messages += 1
        now = workflow.now()
        self._observe(request.observations, request.as_of)
        if self._over_bytes(request.quotas, request.text_bytes):
            return self._refusal(now, 0, "stored_bytes")
        session = self._sessions.get(request.session_id) or OpenSession(
            session_id=request.session_id, admitted_at=now
        )
        self._charge(session, request.text_bytes)
        return self._admitted(now, 0, counted=True, charged=request.text_bytes)

    @workflow.signal
    def release(self, release: SlotRelease) -> None:
        """The session refused the submit: it made no prompt."""
        self._messages += 1
        self._slots = [
            slot
            for slot in self._slots
            if (slot.session_id, slot.update_id) != (release.session_id, release.update_id)
        ]

    @workflow.signal
    def refund(self, refund: Refund) -> None:
        """The session refused what the bytes were charged for: it stored nothing."""
        self._messages += 1
        session = self._sessions.get(refund.session_id)
        if session is not None:
            left = max(0, session.stored_bytes - refund.bytes)
            self._sessions[refund.session_id] = session.model_copy(update={"stored_bytes": left})

    @workflow.query
    def state(self) -> AdmissionState:
        return self._settings.model_copy(
            update={
                "slots": list(self._slots),
                "released": list(self._released),
                "sessions": list(self._sessions.values()),
            }
        )

    @workflow.run
    async def run(self, state: AdmissionState) -> None:
        if not self._checked:
            await self._check_start(state)
        await workflow.wait_condition(
            lambda: (
                self._messages >= self._settings.messages_per_run
                or workflow.info().is_continue_as_new_suggested()
            )
        )
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(self.state())

    async def _check_start(self, state: AdmissionState) -> None:
        """Have the worker check the signed start; refused, every update waiting for it
        fails with the refusal, and then the workflow does."""
        try:
            await workflow.execute_activity(
                CHECK_START, admission_claim(state), start_to_close_timeout=timedelta(seconds=30)
            )
        except ActivityError as err:
            refused = refused_start(err)
            if refused is None:
                raise
            self._refused = refused
        self._checked = True
        if self._refused is not None:
            await workflow.wait_condition(workflow.all_handlers_finished)
            raise self._refused

    def _observe(self, observations: list[SessionObservation], as_of: datetime | None) -> None:
        """Free what the gateway's look at the sessions (after a refusal at ``as_of``)
        found finished: prompt slots, and sessions that have closed."""
        if not observations or as_of is None:
            return
        grace = self._settings.unsubmitted_grace
        for observation in observations:
            self._slots, freed = observe(self._slots, observation, as_of, grace)
            self._remember(slot for slot in freed if slot.prompt_id is not None)
        if self._sessions:
            kept = observe_sessions(list(self._sessions.values()), observations, as_of, grace)
            self._sessions = {session.session_id: session for session in kept}

    def _stored_bytes(self) -> int:
        return sum(session.stored_bytes for session in self._sessions.values())

    def _over_bytes(self, quotas: OwnerQuotas, charge: int) -> bool:
        limit = quotas.max_stored_bytes
        return bool(limit) and self._stored_bytes() + charge > limit

    def _charge(self, session: OpenSession, charge: int) -> None:
        self._sessions[session.session_id] = session.model_copy(
            update={"stored_bytes": session.stored_bytes + charge}
        )

    def _admitted(self, now: datetime, limit: int, *, counted: bool, charged: int = 0) -> Admission:
        return Admission(
            charged=charged,
            admitted=True,
            counted=counted,
            held=len(self._slots),
            limit=limit,
            as_of=now,
            open_sessions=len(self._sessions),
            stored_bytes=self._stored_bytes(),
        )

    def _refusal(
        self, now: datetime, limit: int, refused: Literal["open_sessions", "stored_bytes"] | None
    ) -> Admission:
        """A refusal, with everything the gateway should look at before asking again."""
        return Admission(
            admitted=False,
            counted=False,
            held=len(self._slots),
            limit=limit,
            as_of=now,
            to_observe=self._slots,
            refused=refused,
            open_sessions=len(self._sessions),
            stored_bytes=self._stored_bytes(),
            sessions_to_observe=list(self._sessions),
        )

    def _remember(self, freed: Iterable[Slot]) -> None:
        """Keep the newest released submits' keys (see ``RELEASED_KEPT``)."""
        keys = [slot.key for slot in freed if slot.update_id is not None]
        self._released = [*self._released, *keys][-RELEASED_KEPT:]
