"""``observe``, the admission workflow's one rule for freeing slots
(workflows/session/owner_admission.py): what one look at a session frees, keeps and adds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from workflows.contracts.owner_admission import OpenSession, SessionObservation, Slot
from workflows.session.owner_admission import observe, observe_sessions

T0 = datetime(2026, 1, 1, tzinfo=UTC)
GRACE = timedelta(seconds=60)


def slot(session: str, update: str | None, prompt: str | None = None, **fields: object) -> Slot:
    return Slot.model_validate(
        {"session_id": session, "update_id": update, "prompt_id": prompt, "admitted_at": T0}
        | fields
    )


def seen(session: str, live: list[str], **submits: str | None) -> SessionObservation:
    return SessionObservation(session_id=session, live_prompt_ids=live, submits=submits)


def test_a_submit_found_is_kept_while_its_prompt_runs_or_waits_and_freed_after() -> None:
    slots = [slot("s", "u1"), slot("s", "u2")]
    kept, freed = observe(
        slots, seen("s", ["s-prompt-2"], u1="s-prompt-1", u2="s-prompt-2"), T0, GRACE
    )
    assert [(s.update_id, s.prompt_id) for s in kept] == [("u2", "s-prompt-2")]
    assert [(s.update_id, s.prompt_id) for s in freed] == [("u1", "s-prompt-1")]


def test_a_submit_the_session_does_not_know_is_freed_only_after_the_grace() -> None:
    slots = [slot("s", "old"), slot("s", "new", admitted_at=T0 + timedelta(seconds=50))]
    as_of = T0 + timedelta(seconds=70)
    kept, freed = observe(slots, seen("s", [], old=None, new=None), as_of, GRACE)
    assert [s.update_id for s in kept] == ["new"]
    assert [s.update_id for s in freed] == ["old"]


def test_a_submit_not_found_out_stays() -> None:
    kept, freed = observe([slot("s", "u")], seen("s", []), T0 + 10 * GRACE, GRACE)
    assert [s.update_id for s in kept] == ["u"] and not freed


def test_a_prompt_with_no_slot_of_its_own_is_counted_once() -> None:
    slots = [slot("s", "u", "s-prompt-1", known_as_of=T0)]
    kept, _ = observe(slots, seen("s", ["s-prompt-1", "s-prompt-2"]), T0, GRACE)
    assert sorted(s.prompt_id or "" for s in kept) == ["s-prompt-1", "s-prompt-2"]
    again, _ = observe(kept, seen("s", ["s-prompt-1", "s-prompt-2"]), T0, GRACE)
    assert len(again) == 2


def test_an_older_look_never_frees_what_a_newer_one_found() -> None:
    found = slot("s", "u", "s-prompt-3", known_as_of=T0 + timedelta(seconds=5))
    kept, freed = observe([found], seen("s", []), T0, GRACE)
    assert kept == [found] and not freed
    kept, freed = observe([found], seen("s", []), T0 + timedelta(seconds=5), GRACE)
    assert freed == [found] and not kept


def test_other_sessions_are_left_alone() -> None:
    other = slot("t", "u", "t-prompt-1", known_as_of=T0)
    kept, freed = observe([other], seen("s", []), T0 + GRACE, GRACE)
    assert kept == [other] and not freed


def open_session(session: str, admitted_at: datetime = T0) -> OpenSession:
    return OpenSession(session_id=session, stored_bytes=10, admitted_at=admitted_at)


def looked_at(session: str, state: str) -> SessionObservation:
    return SessionObservation.model_validate(
        {"session_id": session, "live_prompt_ids": [], "state": state}
    )


def test_a_closed_session_is_freed_and_an_unknown_one_only_after_the_grace() -> None:
    """``observe_sessions``: the quotas' rule (docs/security-gateway.md, "Per-owner quotas")."""
    sessions = [
        open_session("closed"),
        open_session("open"),
        open_session("never-started"),
        open_session("starting", admitted_at=T0 + timedelta(seconds=50)),
        open_session("not-looked-at"),
    ]
    observations = [
        looked_at("closed", "closed"),
        looked_at("open", "open"),
        looked_at("never-started", "unknown"),
        looked_at("starting", "unknown"),
    ]
    kept = observe_sessions(sessions, observations, T0 + timedelta(seconds=70), GRACE)
    assert [s.session_id for s in kept] == ["open", "starting", "not-looked-at"]
