"""The stale-wait rule (R12, ``workflows/rules/stale_waits.py``), batch by batch: half an hour
of calls in which nothing new came back (waits included) reminds, a second half hour stops;
anything new, new user input and too few stale batches keep it quiet; a failure neither counts
nor resets. Pure: no server (the workflow's test is tests/workflows/prompt/test_stale_waits.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.workflows.rules.test_loop_rules import call, works
from tests.workflows.rules.test_time_evidence import LATENCY, TimedPrompt, poll
from workflows.contracts.prompt import LoopType
from workflows.rules import LoopRule, LoopSettings, RuleDecisionKind
from workflows.rules.evidence import CallEvidence, ResultKind
from workflows.rules.ladder import RuleReview
from workflows.rules.stale_waits import (
    MIN_STALE_BATCHES,
    STALE_WAIT_MINUTES,
    STALE_WAIT_STOP_MESSAGE,
    StaleWaits,
)
from workflows.seed.guard import GuardMode
from workflows.seed.protections import LoopStop

HALF_HOUR = STALE_WAIT_MINUTES * 60
WARN = RuleDecisionKind.WARN
STOP = RuleDecisionKind.STOP


def evidence(answer: str = "running", kind: ResultKind = ResultKind.SUCCESS) -> CallEvidence:
    return CallEvidence(
        tool="run_shell_command",
        digest="sleep-300-pgrep",
        kind=kind,
        fingerprint=answer,
        waits=True,
        paths=frozenset(),
        duration=300.0,
    )


@dataclass
class Clocked:
    """One prompt's R12: each batch's calls take ``seconds``."""

    seconds: float = 300.0
    rule: StaleWaits = field(default_factory=StaleWaits)
    now: float = 0.0

    def batch(
        self, *calls: CallEvidence, user_input: bool = False, mode: GuardMode = GuardMode.ENFORCE
    ) -> list[RuleDecisionKind]:
        self.now += self.seconds
        timed = [call._replace(duration=self.seconds) for call in calls]
        review = RuleReview(
            batch=timed, wait_epoch=0, input_arrived=user_input, mode=mode, now=self.now
        )
        return [kind for _, kind, _ in self.rule.review(review)]

    def polls(self, times: int, answer: str = "running") -> list[list[RuleDecisionKind]]:
        return [self.batch(evidence(answer)) for _ in range(times)]


def first(decisions: list[list[RuleDecisionKind]], kind: RuleDecisionKind) -> int | None:
    """The 1-based batch of the first ``kind``, if any."""
    return next((i + 1 for i, d in enumerate(decisions) if kind in d), None)


def test_half_an_hour_unchanged_reminds_and_an_hour_stops() -> None:
    decisions = Clocked().polls(14)
    # The first poll's answer is new; from it, six five-minute stale polls make half an hour.
    assert first(decisions, WARN) == 7
    assert first(decisions, STOP) == 13
    assert sum(map(len, decisions)) == 2  # one reminder, one stop, nothing else


def test_short_polls_wait_as_long_as_long_ones() -> None:
    decisions = Clocked(seconds=30.0).polls(130)
    assert first(decisions, WARN) == 61
    assert first(decisions, STOP) == 121


def test_a_poll_under_half_an_hour_is_never_counted() -> None:
    assert all(not d for d in Clocked().polls(6))


def test_a_changed_answer_starts_the_half_hour_over() -> None:
    prompt = Clocked()
    before = prompt.polls(6)
    changed = prompt.batch(evidence("running (3 of 5 steps done)"))
    after = prompt.polls(6, "running (3 of 5 steps done)")
    assert not any(before) and not changed
    assert first(after, WARN) == 6


def test_new_user_input_starts_it_over_and_clears_the_reminder() -> None:
    prompt = Clocked()
    assert first(prompt.polls(7), WARN) == 7
    assert prompt.batch(evidence(), user_input=True) == []
    after = prompt.polls(7)
    assert first(after, STOP) is None and first(after, WARN) == 6


def test_a_failure_neither_counts_nor_resets() -> None:
    prompt = Clocked()
    failing = evidence("connection refused", ResultKind.FAILURE)
    assert prompt.batch(evidence()) == [] and prompt.batch(failing) == []  # both new
    # From here every answer was seen before: the stale successes count, the stale failures
    # between them keep the stretch running without counting.
    decisions = [prompt.batch(evidence() if i % 2 == 0 else failing) for i in range(8)]
    assert first(decisions, WARN) == 7  # 35 minutes after the failure's new answer
    assert all(not d for i, d in enumerate(decisions) if i % 2)


def test_one_long_repeat_is_not_a_stretch() -> None:
    prompt = Clocked(seconds=2 * HALF_HOUR)
    # The first answer is new, then fewer stale batches than a stretch needs, each an hour long.
    assert not any(prompt.polls(MIN_STALE_BATCHES))
    assert prompt.batch(evidence()) == [WARN]


def test_a_batch_that_ends_two_spans_at_once_only_reminds() -> None:
    prompt = Clocked(seconds=60.0)
    prompt.polls(MIN_STALE_BATCHES + 1)
    prompt.seconds = 2 * HALF_HOUR + 60.0
    assert prompt.batch(evidence()) == [WARN]
    assert prompt.batch(evidence()) == [STOP]


def test_shadow_and_warn_never_stop() -> None:
    for mode, kinds in (
        (GuardMode.SHADOW, [RuleDecisionKind.WOULD_WARN, RuleDecisionKind.WOULD_STOP]),
        (GuardMode.WARN, [WARN, RuleDecisionKind.WOULD_STOP]),
    ):
        prompt = Clocked()
        seen = [k for _ in range(14) for k in prompt.batch(evidence(), mode=mode)]
        assert seen == kinds


def test_in_a_prompt_it_stops_with_its_loop_type_and_names_no_tool() -> None:
    # A minute's poll: the model's two seconds between polls are not waiting.
    rounds = TimedPrompt(latency=LATENCY).repeat(70, poll(60.0))
    decided = [(i + 1, d.rule, d.kind, d.tool) for i, r in enumerate(rounds) for d in r.rules]
    assert decided == [
        (31, LoopRule.STALE_WAIT, WARN, None),
        (61, LoopRule.STALE_WAIT, STOP, None),
    ]
    assert rounds[60].stop == LoopStop(LoopType.REPEATED_STALE_WAIT, STALE_WAIT_STOP_MESSAGE)


def test_the_operators_minutes_set_when_it_reminds_and_stops() -> None:
    # Two-minute polls: by default reminded at half an hour and stopped at an
    # hour; with SEAWALL_STALE_WAIT_MINUTES=60 at an hour and at two.
    def decided(settings: LoopSettings) -> list[tuple[int, RuleDecisionKind]]:
        rounds = TimedPrompt(latency=LATENCY, settings=settings).repeat(70, poll(120.0))
        return [(i + 1, d.kind) for i, r in enumerate(rounds) for d in r.rules]

    assert decided(LoopSettings()) == [(16, WARN), (31, STOP)]
    assert decided(LoopSettings(stale_wait_minutes=60)) == [(31, WARN), (61, STOP)]


def test_a_poll_with_a_fresh_time_in_its_arguments_asks_the_same_thing() -> None:
    prompt = TimedPrompt(latency=LATENCY)
    rounds = [
        prompt.batch(
            (
                call(
                    "job_status", id="4711", since=f"2026-12-07T{4 + i // 60:02d}:{i % 60:02d}:00Z"
                ),
                works("job 4711: running"),
                120.0,
            )
        )
        for i in range(40)
    ]
    decided = [(i + 1, d.rule, d.kind) for i, r in enumerate(rounds) for d in r.rules]
    assert decided == [(16, LoopRule.STALE_WAIT, WARN), (31, LoopRule.STALE_WAIT, STOP)]


# --- since NOTHING_NEW_PATCH: the waiting's own checks, keyed by what came back ---------


def look(answer: str) -> CallEvidence:
    """An instant call that neither waited nor wrote: ``git status`` between two waits."""
    return evidence(answer)._replace(tool="run_shell_command", digest=answer, waits=False)


def test_a_look_elsewhere_between_waits_neither_counts_nor_resets() -> None:
    since = Clocked(rule=StaleWaits(by_answer=True))
    before = Clocked()
    decisions: dict[str, list[list[RuleDecisionKind]]] = {"since": [], "before": []}
    for n in range(14):
        for name, prompt in (("since", since), ("before", before)):
            decisions[name].append(prompt.batch(evidence()))
            if n % 3 == 2:  # every third poll, a look at something new
                decisions[name].append(prompt.batch(look(f"new commit {n}")))
    assert first(decisions["before"], WARN) is None  # each look started the stretch over
    assert first(decisions["since"], WARN) is not None
    assert first(decisions["since"], STOP) is not None


def test_checks_that_wait_differently_and_answer_alike_are_one_check() -> None:
    prompt = Clocked(rule=StaleWaits(by_answer=True))
    sleeps = ["sleep-30-pgrep", "sleep-60-pgrep", "sleep-90-pgrep"]
    decisions = [prompt.batch(evidence()._replace(digest=sleeps[n % 3])) for n in range(14)]
    assert first(decisions, WARN) == 7  # as if every check had been the same call
    before = Clocked()
    assert (
        first([before.batch(evidence()._replace(digest=sleeps[n % 3])) for n in range(14)], WARN)
        == 9
    )  # before: each sleep is new the first time


def test_an_answer_about_what_was_asked_and_a_write_are_new() -> None:
    prompt = Clocked(rule=StaleWaits(by_answer=True))
    # One answer's words, each about another job it names: every check is new.
    named = [
        prompt.batch(evidence("job queued")._replace(digest=f"job-{n}", echoes=True))
        for n in range(14)
    ]
    assert first(named, WARN) is None
    # A write between the checks starts the stretch over.
    writes = Clocked(rule=StaleWaits(by_answer=True))
    decisions = []
    for n in range(14):
        decisions.append(writes.batch(evidence()))
        if n % 3 == 2:
            decisions.append(writes.batch(look("wrote")._replace(writes=(("p", str(n)),))))
    assert first(decisions, WARN) is None
