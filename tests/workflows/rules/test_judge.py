"""The progress judge's trigger and ladder (docs/protections.md, "The progress judge"), pure:
which stretches are stale, when the judge is asked and how often, and what its verdicts lead
to in each mode. The workflow and the simulator drive the same objects
(tests/workflows/prompt/test_progress_judge.py runs them for real)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from workflows.contracts import ToolCall, ToolOutcome
from workflows.contracts.activity import JudgeVerdict
from workflows.contracts.prompt import LoopType, RuleEntry
from workflows.prompt.batch import after_judgement
from workflows.rules import LoopProfile, LoopRules, LoopSettings
from workflows.rules.evidence import CallEvidence, ResultKind
from workflows.rules.judge import (
    JUDGE_AFTER_BATCHES,
    JUDGE_MAX_CALLS,
    JUDGE_REMINDER,
    JUDGE_RULE,
    JUDGE_STOP_MESSAGE,
    ProgressJudge,
    judge_mode,
)
from workflows.seed.guard import GuardMode


def evidence(
    tool: str = "run_shell_command",
    digest: str = "d-poll",
    fingerprint: str = "f-running",
    *,
    kind: ResultKind = ResultKind.SUCCESS,
    waits: bool = False,
    writes: tuple[tuple[str, str], ...] = (),
) -> CallEvidence:
    return CallEvidence(
        tool=tool,
        digest=digest,
        kind=kind,
        fingerprint=fingerprint,
        waits=waits,
        paths=frozenset(),
        writes=writes,
    )


POLL = evidence(waits=True)


def feed(judge: ProgressJudge, batches: Sequence[Sequence[CallEvidence]]) -> list[int]:
    """The batches (numbered from 1) after which the judge was asked."""
    return [
        number
        for number, batch in enumerate(batches, start=1)
        if judge.due(batch, input_arrived=False)
    ]


def test_a_stretch_of_batches_with_nothing_new_asks_at_six_then_every_six_more() -> None:
    judge = ProgressJudge(GuardMode.WARN)
    # The first poll is new; from the second on every batch is stale.
    asked = feed(judge, [[POLL]] * 40)
    first = 1 + JUDGE_AFTER_BATCHES
    assert asked == [first, first + JUDGE_AFTER_BATCHES, first + 2 * JUDGE_AFTER_BATCHES]
    assert judge.asks == JUDGE_MAX_CALLS == 3


def test_a_call_that_waited_is_not_new_to_the_judge() -> None:
    """Unlike R11, a wait that keeps answering the same is stale: that is the judge's case."""
    waiting = ProgressJudge(GuardMode.WARN)
    instant = ProgressJudge(GuardMode.WARN)
    assert feed(waiting, [[evidence(waits=True)]] * 7) == [7]
    assert feed(instant, [[evidence(waits=False)]] * 7) == [7]


def test_anything_new_in_a_batch_ends_the_stretch() -> None:
    judge = ProgressJudge(GuardMode.WARN)
    new_answer = [POLL, evidence("read_file", "d-read", "f-page-2")]
    batches = [[POLL]] * 5 + [new_answer] + [[POLL]] * 5
    assert feed(judge, batches) == []
    assert judge.stretch == 5
    # A call asked before, answering something new, is new too; so is a new write.
    assert not judge.due([evidence(fingerprint="f-done")], input_arrived=False)
    assert judge.stretch == 0
    assert not judge.due([evidence(writes=(("p", "c1"),))], input_arrived=False)
    assert not judge.due([evidence(writes=(("p", "c2"),))], input_arrived=False)
    assert judge.due([evidence(writes=(("p", "c1"),))], input_arrived=False) is False
    assert judge.stretch == 1  # the first write again: nothing new


def test_the_same_call_twice_in_its_first_batch_is_new() -> None:
    judge = ProgressJudge(GuardMode.WARN)
    assert not judge.due([POLL, POLL], input_arrived=False)
    assert judge.stretch == 0


def test_user_input_resets_the_stretch_and_the_ladder_but_not_the_cap() -> None:
    judge = ProgressJudge(GuardMode.ENFORCE)
    assert feed(judge, [[POLL]] * 7) == [7]
    assert judge.decide(JudgeVerdict.NO_PROGRESS, enforcement_disabled=False).warns
    # Input with the next batch: no question, a fresh stretch, and the reminder forgotten.
    assert not judge.due([POLL], input_arrived=True)
    assert judge.stretch == 0 and not judge.rung.warned
    assert feed(judge, [[POLL]] * 6) == [6]
    # After the input, the next no_progress is a reminder again, not a stop.
    assert judge.decide(JudgeVerdict.NO_PROGRESS, enforcement_disabled=False).warns
    assert feed(judge, [[POLL]] * 6) == [6]
    assert judge.decide(JudgeVerdict.NO_PROGRESS, enforcement_disabled=False).stops
    # Three questions asked: never a fourth, whatever comes.
    assert not judge.due([POLL], input_arrived=True)
    assert feed(judge, [[POLL]] * 30) == []
    assert judge.asks == JUDGE_MAX_CALLS


@pytest.mark.parametrize(
    ("mode", "first", "second"),
    [
        (GuardMode.SHADOW, "would_warn", "would_stop"),
        (GuardMode.WARN, "warn", "would_stop"),
        (GuardMode.ENFORCE, "warn", "stop"),
    ],
)
def test_two_no_progress_verdicts_remind_then_stop_as_the_mode_allows(
    mode: GuardMode, first: str, second: str
) -> None:
    judge = ProgressJudge(mode)
    decisions = []
    for number, batch in enumerate([[POLL]] * 40, start=1):
        if judge.due(batch, input_arrived=False):
            after = after_judgement(
                judge, JudgeVerdict.NO_PROGRESS, batch=number, enforcement_disabled=False
            )
            decisions.append(after)
    assert [d.entry for d in decisions] == [
        RuleEntry(batch=7, rule=JUDGE_RULE, decision=first, mode=mode.value, count=6),
        RuleEntry(batch=13, rule=JUDGE_RULE, decision=second, mode=mode.value, count=12),
    ]
    # Latched: not asked a third time.
    assert judge.asks == 2
    reminded, ended = decisions
    assert reminded.reminders == ([JUDGE_REMINDER] if first == "warn" else [])
    assert reminded.stop is None
    if second == "stop":
        assert ended.stop is not None
        assert ended.stop.loop_type is LoopType.JUDGED_NO_PROGRESS
        assert ended.stop.message == JUDGE_STOP_MESSAGE
        assert [m.content for m in ended.messages] == [JUDGE_STOP_MESSAGE]
    else:
        assert ended.stop is None and ended.messages == []


def test_progress_returns_the_ladder_to_the_bottom_and_unknown_changes_nothing() -> None:
    judge = ProgressJudge(GuardMode.ENFORCE)
    verdicts = iter([JudgeVerdict.NO_PROGRESS, JudgeVerdict.PROGRESS, JudgeVerdict.NO_PROGRESS])
    entries = [
        after_judgement(judge, next(verdicts), batch=n, enforcement_disabled=False).entry
        for n, batch in enumerate([[POLL]] * 30, start=1)
        if judge.due(batch, input_arrived=False)
    ]
    assert [(e.batch, e.decision) for e in entries if e] == [
        (7, "warn"),
        (13, "progress"),
        (19, "warn"),
    ]
    unsure = ProgressJudge(GuardMode.ENFORCE)
    feed(unsure, [[POLL]] * 7)
    after = after_judgement(unsure, JudgeVerdict.UNKNOWN, batch=7, enforcement_disabled=False)
    assert after.entry is not None and after.entry.decision == "unknown"
    assert (after.reminders, after.messages, after.stop) == ([], [], None)
    assert unsure.rung.count == 0


def test_enforce_acts_as_warn_once_enforcement_is_disabled() -> None:
    judge = ProgressJudge(GuardMode.ENFORCE)
    feed(judge, [[POLL]] * 7)
    after_judgement(judge, JudgeVerdict.NO_PROGRESS, batch=7, enforcement_disabled=True)
    feed(judge, [[POLL]] * 6)
    after = after_judgement(judge, JudgeVerdict.NO_PROGRESS, batch=13, enforcement_disabled=True)
    assert after.entry is not None
    assert (after.entry.decision, after.entry.mode, after.stop) == ("would_stop", "warn", None)


def test_off_never_asks() -> None:
    judge = ProgressJudge(GuardMode.OFF)
    assert feed(judge, [[POLL]] * 40) == []
    assert judge.asks == 0 and judge.seen == {}


@pytest.mark.parametrize(
    ("settings", "forced_off", "normalized", "expected"),
    [
        (LoopSettings(), False, True, GuardMode.OFF),  # unset is off, not the guard's mode
        (LoopSettings(progress_judge_mode=GuardMode.WARN), False, True, GuardMode.WARN),
        (LoopSettings(progress_judge_mode=GuardMode.WARN), True, True, GuardMode.OFF),
        (LoopSettings(progress_judge_mode=GuardMode.WARN), False, False, GuardMode.OFF),
        (
            LoopSettings(profile=LoopProfile.SEED, progress_judge_mode=GuardMode.ENFORCE),
            False,
            True,
            GuardMode.OFF,
        ),
    ],
)
def test_the_mode_is_the_operators_and_off_where_the_judge_may_not_ask(
    settings: LoopSettings, forced_off: bool, normalized: bool, expected: GuardMode
) -> None:
    assert judge_mode(settings, route_forced_off=forced_off, normalized=normalized) is expected


def test_the_rules_hand_the_judge_the_batch_they_reviewed() -> None:
    """``LoopRules.reviewed`` is the evidence of the last review: a ``sleep; pgrep`` poll
    that waited counts as stale, as the workflow reads it."""
    rules = LoopRules(LoopSettings(), GuardMode.ENFORCE, route_forced_off=False)
    judge = ProgressJudge(GuardMode.WARN)
    command = 'sleep 30; pgrep -f "vite build" > /dev/null && echo running || echo done'
    asked = []
    for n in range(1, 8):
        call = ToolCall(call_id=f"c{n}", name="run_shell_command", arguments={"command": command})
        outcome = ToolOutcome(
            call_id=f"c{n}",
            tool_name="run_shell_command",
            policy_tool_name="run_shell_command",
            status="success",
            execution_status="success",
            content="running",
        )
        rules.settle([call], [f"digest-{command}"], [outcome], durations=[30.1])
        rules.review(input_arrived=False, enforcement_disabled=False, now=31.0 * n)
        assert [e.waits for e in rules.reviewed] == [True]
        if judge.due(rules.reviewed, input_arrived=False):
            asked.append(n)
    assert asked == [7]
