"""What the identical-result rule (R3) reads as evidence beyond its own call, with the
progress rules (docs/protections.md, "Loop profiles", R3): a change *observed* by another
call, the runner's refusals, and why a long call that acts is not a wait.

Each case is a real incident's shape from the corpus (``bench/corpus``): scrolling a feed
with a key press that answers the same each time while the snapshot after it moves on; a
model ignoring a tool-call limit and asking for the same searches again; an orchestrator
re-dispatching a subagent that already answered, each dispatch taking minutes. Each is also
driven without the progress rules, as a prompt replaying from before them decides. Pure.
"""

from __future__ import annotations

from tests.workflows.rules.test_loop_rules import (
    SAME_REMINDER_AT,
    Round,
    call,
    denied,
    fails,
    works,
)
from tests.workflows.rules.test_time_evidence import TimedPrompt, assert_reminded_then_stopped
from workflows.contracts import (
    ExecutionStatus,
    ToolErrorType,
)
from workflows.contracts.prompt import LoopType
from workflows.rules import LoopSettings
from workflows.rules.evidence import LONG_CALL_SECONDS, ResultKind, call_evidence, waited
from workflows.seed import GuardMode

PRESS = call("browser_press_key", key="PageDown")
SNAPSHOT = call("browser_snapshot")


def scroll(prompt: TimedPrompt, pages: int) -> list[Round]:
    """Press PageDown and take a snapshot, ``pages`` times; each snapshot shows a new page."""
    return [
        prompt.batch(
            (PRESS, works("Pressed PageDown"), 0.3),
            (SNAPSHOT, works(f"- heading: page {page}"), 0.9),
        )
        for page in range(pages)
    ]


def test_a_key_press_whose_snapshot_moves_on_is_scrolling_not_a_repeat() -> None:
    rounds = scroll(TimedPrompt(), 3 * SAME_REMINDER_AT)
    assert all(not r.rules and r.stop is None for r in rounds)


def test_without_the_progress_rules_the_scroll_is_a_repeat() -> None:
    rounds = scroll(TimedPrompt(progress_rules=False), SAME_REMINDER_AT + 1)
    assert_reminded_then_stopped(rounds)


def test_an_observation_that_stops_changing_no_longer_excuses_the_repeat() -> None:
    """Once the snapshot answers the same too (the end of the feed), the key press repeats.

    The press of the second page repeated already (no snapshot had changed yet); each
    later press follows a snapshot that changed, up to the first end-of-feed one, so the
    press counts again from the third end-of-feed batch on: with the one before, the
    reminder comes at the threshold, the stop at the next repeat.
    """
    prompt = TimedPrompt()
    scroll(prompt, 3)
    end = (SNAPSHOT, works("- text: End of history"), 0.9)
    rounds = prompt.repeat(SAME_REMINDER_AT + 1, (PRESS, works("Pressed PageDown"), 0.3), end)
    assert not rounds[1].rules  # the second end-of-feed batch: the last one excused
    assert_reminded_then_stopped(rounds)


LIMIT = fails(
    "Tool call limit reached. Tool call search not executed. Don't try again.",
    ToolErrorType.UNKNOWN,
    ExecutionStatus.NOT_STARTED,
)


def test_the_same_refusal_of_the_runner_again_is_a_repeat() -> None:
    prompt = TimedPrompt()
    prompt.batch((call("search", query="refunds"), works("[1] Billing FAQ"), 0.7))
    rounds = prompt.repeat(SAME_REMINDER_AT + 2, (call("search", query="refunds"), LIMIT, 0.0))
    # The first refusal differs from the success before it: counting starts after it.
    assert_reminded_then_stopped(rounds[1:])
    assert rounds[-1].stop is not None
    assert rounds[-1].stop.loop_type is LoopType.REPEATED_IDENTICAL_RESULT


def test_without_the_progress_rules_a_refusal_counts_for_nothing() -> None:
    prompt = TimedPrompt(progress_rules=False)
    rounds = prompt.repeat(3 * SAME_REMINDER_AT, (call("search", query="refunds"), LIMIT, 0.0))
    assert all(r.stop is None for r in rounds)


def test_a_denial_is_not_a_refusal_of_the_runner() -> None:
    c = call("search", query="x").model_copy(update={"call_id": "c"})
    evidence = call_evidence(c, "d", denied(c))
    assert evidence.kind is ResultKind.DENIED and not evidence.refused
    assert call_evidence(c, "d", LIMIT(c)).refused


DISPATCH = call("task", subagent_type="researcher", prompt="List the files.")
ANSWER = works("The directory contains README.md, setup.py")


def test_a_long_call_that_acts_did_not_wait() -> None:
    assert not waited(DISPATCH, ResultKind.SUCCESS, 5 * LONG_CALL_SECONDS, acts=True)
    assert waited(DISPATCH, ResultKind.SUCCESS, 5 * LONG_CALL_SECONDS)


def test_a_subagent_redispatched_for_the_same_answer_is_a_repeat_however_long_it_runs() -> None:
    # Five minutes a round: past half an hour the stale-wait rule (R12) would remind of the
    # same rounds too; this is about R3's evidence, so R12 is off.
    settings = LoopSettings(stale_wait_mode=GuardMode.OFF)
    rounds = TimedPrompt(settings=settings).repeat(SAME_REMINDER_AT + 1, (DISPATCH, ANSWER, 300.0))
    assert_reminded_then_stopped(rounds)


def test_a_long_read_only_status_call_still_waited() -> None:
    rounds = TimedPrompt().repeat(
        3 * SAME_REMINDER_AT, (call("job_status", id="7"), works("running"), 30.0)
    )
    assert all(not r.rules for r in rounds)
