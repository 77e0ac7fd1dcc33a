"""Time as evidence in the recommended profile's rules (``workflows/rules/evidence.py``, "Time as
evidence").

Driven batch by batch like ``test_loop_rules.py`` (whose helpers these tests share), with
each call's duration on the prompt's clock and the clock itself handed to the rules as the
workflow and the simulator do: a poll that waited is not a spin, one that answers at once
is, and the clock between two calls (the model's latency) excuses nothing. Pure: no server.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import Field

from tests.workflows.rules.test_loop_rules import (
    CYCLE_REMINDER_AT,
    SAME_REMINDER_AT,
    TOOLS,
    WS,
    Outcome,
    Round,
    call,
    denied,
    fails,
    sh,
    works,
)
from workflows.contracts import ToolCall
from workflows.contracts.prompt import LoopType
from workflows.contracts.prompt_options import PromptOptions
from workflows.prompt.batch import DrainedInput, after_batch
from workflows.rules import LoopRule, LoopSettings, RuleDecisionKind
from workflows.rules.denied_calls import DENIED_CALL_THRESHOLD
from workflows.rules.evidence import LONG_CALL_SECONDS
from workflows.rules.failure_cycles import FAILURE_CYCLE_REMINDER
from workflows.rules.identical_results import (
    IDENTICAL_RESULT_REMINDER,
    IDENTICAL_RESULT_STOP_MESSAGE,
    IdenticalResults,
)
from workflows.rules.ladder import RuleFinding, RuleReview
from workflows.rules.loop_rules import LoopRules, RelaxReason
from workflows.seed.guard import GuardMode, GuardState
from workflows.seed.protections import BatchProtections, LoopStop

POLL_SECONDS = 30.0
LATENCY = 2.0


@dataclass
class TimedPrompt:
    """One prompt's protections with a clock: each step is (call, outcome, seconds), the
    model takes ``latency`` per turn, and the batch moves the clock by its longest call."""

    latency: float = 0.0
    progress_rules: bool = True
    settings: LoopSettings = field(default_factory=LoopSettings)

    def __post_init__(self) -> None:
        self.protections = BatchProtections(PromptOptions(), WS)
        self.rules = LoopRules(
            self.settings,
            GuardMode.ENFORCE,
            route_forced_off=False,
            progress_rules=self.progress_rules,
        )
        self.protections.use_loop_rules(self.rules)
        self.state = GuardState()
        self.calls = 0
        self.batches = 0
        self.clock = 0.0

    def batch(self, *steps: tuple[ToolCall, Outcome, float]) -> Round:
        calls = []
        for c, _, _ in steps:
            self.calls += 1
            calls.append(c.model_copy(update={"call_id": f"c{self.calls}"}))
        self.batches += 1
        self.clock += self.latency
        screening = self.protections.screen(calls, TOOLS)
        ran = {a.index: steps[a.index][1](a.call) for a in screening.cleared}
        durations = {a.index: steps[a.index][2] for a in screening.cleared}
        self.clock += max(durations.values(), default=0.0)
        outcomes = self.protections.settle(screening, ran, durations=durations)
        step = after_batch(
            self.protections,
            self.state,
            GuardMode.ENFORCE,
            outcomes,
            DrainedInput([]),
            batch=self.batches,
            now=self.clock,
        )
        self.state = step.guard.state
        return Round(screening, outcomes, step.guard, step.rule_decisions, step.stop)

    def repeat(self, times: int, *steps: tuple[ToolCall, Outcome, float]) -> list[Round]:
        return [self.batch(*steps) for _ in range(times)]


def poll(seconds: float) -> tuple[ToolCall, Outcome, float]:
    return call("job_status", id="4711"), works("job 4711: running"), seconds


def assert_reminded_then_stopped(rounds: list[Round]) -> None:
    assert all(not r.rules for r in rounds[: SAME_REMINDER_AT - 1])
    assert rounds[SAME_REMINDER_AT - 1].reminders == [IDENTICAL_RESULT_REMINDER]
    assert rounds[SAME_REMINDER_AT].stop == LoopStop(
        LoopType.REPEATED_IDENTICAL_RESULT, IDENTICAL_RESULT_STOP_MESSAGE
    )


# --- a call that waited ---------------------------------------------------------------------


def test_a_status_call_that_waits_each_time_is_monitoring_not_a_loop() -> None:
    prompt = TimedPrompt(latency=LATENCY)
    rounds = prompt.repeat(30, poll(POLL_SECONDS))
    assert all(not r.rules and r.stop is None for r in rounds)
    assert prompt.clock == 30 * (LATENCY + POLL_SECONDS)


def test_the_same_poll_answering_at_once_spins_and_is_stopped() -> None:
    assert_reminded_then_stopped(TimedPrompt(latency=LATENCY).repeat(30, poll(0.0)))


def test_a_poll_just_under_the_threshold_did_not_wait() -> None:
    rounds = TimedPrompt().repeat(SAME_REMINDER_AT + 1, poll(LONG_CALL_SECONDS - 0.5))
    assert_reminded_then_stopped(rounds)


def test_time_between_identical_calls_alone_excuses_nothing() -> None:
    # A slow model (a minute a turn) spinning on an instant poll is as stuck as a fast one.
    assert_reminded_then_stopped(TimedPrompt(latency=60.0).repeat(30, poll(0.0)))


def test_a_separate_call_that_took_long_lets_time_pass_for_the_next_poll() -> None:
    prompt = TimedPrompt()
    rounds = []
    for _ in range(3 * SAME_REMINDER_AT):
        # A tool whose name says nothing about waiting, which held for 30 s.
        prompt.batch((call("job_status", id="wait-for-runner"), works("ready"), POLL_SECONDS))
        rounds.append(prompt.batch(poll(0.0)))
    assert all(not r.rules for r in rounds)


def test_a_long_success_admits_an_unchanged_repeat_of_a_failed_call() -> None:
    prompt = TimedPrompt()
    prompt.batch((call("fetch", url="https://ci/run/7"), fails("not found"), 0.0))
    prompt.batch((call("job_status", id="7"), works("queued"), POLL_SECONDS))
    again = prompt.batch((call("fetch", url="https://ci/run/7"), fails("not found"), 0.0))
    assert again.ran == 1
    assert again.screening.flagged_repeats[0].relaxed is RelaxReason.TIME_PASSED


def test_a_slow_failure_coming_back_is_still_a_cycle() -> None:
    prompt = TimedPrompt()
    rounds = []
    for _ in range(CYCLE_REMINDER_AT + 1):
        # The dev server times out the same way after a minute, every restart.
        rounds.append(prompt.batch((sh("npm run dev"), fails("timed out after 60s"), 60.0)))
        prompt.batch((sh("pkill -f vite"), works(""), 0.0))
    assert rounds[CYCLE_REMINDER_AT - 1].reminders == [FAILURE_CYCLE_REMINDER]
    stop = rounds[CYCLE_REMINDER_AT].stop
    assert stop is not None and stop.loop_type is LoopType.REPEATED_FAILURE_CYCLE


# --- prompts from before the clock ------------------------------------------------------------


def test_without_the_progress_rules_durations_are_not_evidence() -> None:
    """A prompt replaying from before PROGRESS_RULES_PATCH decides as it did, whatever
    durations it is handed: the waiting poll is stopped like an instant one."""
    rounds = TimedPrompt(progress_rules=False).repeat(30, poll(POLL_SECONDS))
    assert_reminded_then_stopped(rounds)


class _RecordingClock(IdenticalResults):
    seen: list[float] = Field(default_factory=list)

    def review(self, review: RuleReview) -> list[RuleFinding]:
        self.seen.append(review.now)
        return super().review(review)


def test_every_rule_reads_the_prompts_clock_when_the_batch_settled() -> None:
    for progress_rules, expected in ((True, [32.0, 64.0, 96.0]), (False, [0.0, 0.0, 0.0])):
        prompt = TimedPrompt(latency=LATENCY, progress_rules=progress_rules)
        recorder = _RecordingClock(threshold=7)
        prompt.rules.counters[LoopRule.IDENTICAL_RESULT] = recorder
        prompt.repeat(3, poll(POLL_SECONDS))
        assert recorder.seen == expected


def test_the_clock_changes_no_decision_kind_of_the_other_rules() -> None:
    """Denials do not expire with time: denial rounds a minute apart still remind."""
    prompt = TimedPrompt(latency=60.0)
    rounds = [
        prompt.batch((sh(f"sudo reboot --now {i}"), denied, POLL_SECONDS))
        for i in range(DENIED_CALL_THRESHOLD)
    ]
    assert rounds[-1].kinds(LoopRule.DENIED_CALL) == [RuleDecisionKind.WARN]
