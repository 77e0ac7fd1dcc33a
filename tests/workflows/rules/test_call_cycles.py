"""R5, call cycles (docs/protections.md, "Loop profiles"): the same few batches coming round
with the same results while nothing moves, and the legitimate neighbours it lets through.

Most tests drive the protections batch by batch as the workflow does (``Prompt`` from
``test_loop_rules``); the workspace-state tests review the counter directly with evidence
carrying file writes, which the file tools report.
"""

from __future__ import annotations

from collections.abc import Sequence

from workflows.contracts import ToolCall
from workflows.contracts.prompt import LoopType
from workflows.rules import LoopRule, LoopSettings, RuleDecisionKind
from workflows.rules.call_cycles import (
    CALL_CYCLE_REMINDER,
    CALL_CYCLE_STOP_MESSAGE,
    CALL_CYCLE_THRESHOLD,
    CallCycles,
)
from workflows.rules.evidence import CallEvidence, ResultKind
from workflows.rules.identical_results import IDENTICAL_RESULT_REMINDER
from workflows.rules.ladder import RuleFinding, RuleReview
from workflows.rules.loop_rules import LoopRules
from workflows.rules.registry import rule_spec
from workflows.seed.guard import GuardMode
from workflows.seed.protections import LoopStop

from .test_loop_rules import Outcome, Prompt, Round, call, fails, sh, works

# Each batch of a cycle: its (call, outcome) steps.
Cycle = Sequence[tuple[tuple[ToolCall, Outcome], ...]]


def inspect_cycle() -> Cycle:
    """A period-3 cycle: two inspection shell commands and a read, the same results each time."""
    return [
        ((sh("git status"), works("nothing to commit, working tree clean")),),
        ((call("read_file", path="src/app.py"), works("def main():\n    return 1\n")),),
        ((sh("ls src"), works("app.py\nutil.py")),),
    ]


def go_round(prompt: Prompt, cycle: Cycle, times: int) -> list[Round]:
    return [prompt.batch(*steps) for _ in range(times) for steps in cycle]


def cycle_kinds(rounds: list[Round]) -> list[tuple[int, RuleDecisionKind]]:
    return [(i + 1, k) for i, r in enumerate(rounds) for k in r.kinds(LoopRule.CALL_CYCLE)]


def test_a_cycle_of_successes_earns_a_reminder_at_its_fourth_time_round_then_a_stop() -> None:
    prompt = Prompt()
    rounds = go_round(prompt, inspect_cycle(), CALL_CYCLE_THRESHOLD + 3)
    period = 3
    # Both shell commands only look (inspection commands), so nothing moved the world: the
    # cycle counts from its first batch.
    reminder_at = period * (CALL_CYCLE_THRESHOLD + 1)
    assert cycle_kinds(rounds) == [
        (reminder_at, RuleDecisionKind.WARN),
        (reminder_at + period, RuleDecisionKind.STOP),
    ]
    assert rounds[reminder_at - 1].reminders == [CALL_CYCLE_REMINDER]
    assert rounds[reminder_at + period - 1].stop == LoopStop(
        LoopType.REPEATED_CALL_CYCLE, CALL_CYCLE_STOP_MESSAGE
    )
    # R3 never saw it: the shell commands changed the world, as far as it knows.
    assert not any(r.kinds(LoopRule.IDENTICAL_RESULT) for r in rounds)


def test_periods_two_to_five_are_cycles_and_the_decision_names_no_tool() -> None:
    for period in range(2, 6):
        cycle = [((sh(f"cat f{i}"), works(f"line {i}")),) for i in range(period)]
        prompt = Prompt()
        rounds = go_round(prompt, cycle, CALL_CYCLE_THRESHOLD + 3)
        assert [k for _, k in cycle_kinds(rounds)] == [
            RuleDecisionKind.WARN,
            RuleDecisionKind.STOP,
        ], period
        assert all(d.tool is None for r in rounds for d in r.rules)
    assert rule_spec(LoopRule.CALL_CYCLE).names_tool is False


def test_period_one_is_r3s_business_and_a_flapping_answer_of_one_call_is_a_poll() -> None:
    prompt = Prompt()
    same = prompt.repeat(12, (call("read_file", path="a"), works("same")))
    assert not any(r.kinds(LoopRule.CALL_CYCLE) for r in same)
    assert any(r.reminders == [IDENTICAL_RESULT_REMINDER] for r in same)
    flapping = Prompt()
    rounds = [
        flapping.batch((call("job_status", id="7"), works(f"state {i % 2}"))) for i in range(30)
    ]
    # Neither a cycle nor an identical result; what does see it is the near-repeat rule
    # (R9): after the second poll every answer is one the call already got
    # (docs/protections.md, "Loop profiles", R9).
    assert not any(
        r.kinds(LoopRule.CALL_CYCLE) or r.kinds(LoopRule.IDENTICAL_RESULT) for r in rounds
    )
    assert any(r.kinds(LoopRule.NEAR_REPEAT) for r in rounds)


def test_a_longer_sequence_that_is_a_shorter_cycle_counts_once_as_the_shorter() -> None:
    # A B A B ... is period 2, not also period 4: one reminder, one key.
    prompt = Prompt()
    cycle = [((sh("cat a"), works("a")),), ((sh("cat b"), works("b")),)]
    rounds = go_round(prompt, cycle, 2 * (CALL_CYCLE_THRESHOLD + 2))
    assert [k for _, k in cycle_kinds(rounds)] == [RuleDecisionKind.WARN, RuleDecisionKind.STOP]


def test_a_cycle_resumed_at_another_batch_is_the_same_cycle() -> None:
    counter = CallCycles()
    a, b = evidence("a"), evidence("b")
    found = [review(counter, [x]) for x in [a, b, a, b, a, b]]  # two repetitions
    review(counter, [evidence("other")])  # breaks the run
    found += [review(counter, [x]) for x in [b, a, b, a]]  # resumes at b: the third
    keys = {key for batch in found for key, _, _ in batch}
    assert len(keys) == 1
    assert [kind for batch in found for _, kind, _ in batch][-1] is RuleDecisionKind.WARN


def test_polling_that_waits_is_never_a_cycle() -> None:
    prompt = Prompt()
    cycle = [
        ((sh("sleep 20"), works("")),),
        ((call("job_status", id="build"), works("status: running")),),
    ]
    assert not any(r.rules for r in go_round(prompt, cycle, 20))
    # The same with a waiting tool, or a status call that itself waited long (the evidence's
    # ``waits``, which a long duration also sets).
    counter = CallCycles()
    status = evidence("status")
    for _ in range(20):
        assert review(counter, [evidence("sleep", waits=True)]) == []
        assert review(counter, [status]) == []
    waited = CallCycles()
    for _ in range(20):
        assert review(waited, [evidence("a", waits=True)]) == []
        assert review(waited, [evidence("b", waits=True)]) == []


def test_fix_then_recheck_tdd_paging_and_exploring_are_not_cycles() -> None:
    prompt = Prompt()
    rounds = []
    for i in range(12):  # fix then recheck, the same check and the same output
        rounds.append(prompt.batch((call("edit_file", path=f"h{i}.py"), works("Edited"))))
        rounds.append(prompt.batch((sh("pytest -q"), works("1 failed"))))
    for i in range(12):  # TDD: red, then green
        rounds.append(prompt.batch((call("edit_file", path="t.py", case=i), works("Edited"))))
        rounds.append(prompt.batch((sh(f"pytest -k c{i}"), fails(f"c{i} NotImplementedError"))))
        rounds.append(prompt.batch((call("edit_file", path="p.py", impl=i), works("Edited"))))
        rounds.append(prompt.batch((sh("pytest -q"), works(f"{i + 30} passed"))))
    for page in range(20):  # paging, the same call with a new page each time
        rounds.append(prompt.batch((call("fetch", url="u", page=page), works(f"rows {page}"))))
    for i in range(30):  # exploring
        rounds.append(prompt.batch((call("read_file", path=f"m{i}.py"), works(f"mod {i}"))))
    assert not any(r.kinds(LoopRule.CALL_CYCLE) for r in rounds)


def test_writes_to_new_states_are_progress_and_back_to_an_earlier_state_is_not() -> None:
    # An edit made and undone (a formatter reverting it): the workspace goes round too.
    counter = CallCycles()
    edit = evidence("edit a->b", changes=True, writes=(("a.py", "b"),))
    undo = evidence("format", changes=True, writes=(("a.py", "a"),))
    found = [review(counter, [x]) for x in [edit, undo] * (CALL_CYCLE_THRESHOLD + 3)]
    kinds = [kind for batch in found for _, kind, _ in batch]
    assert kinds == [RuleDecisionKind.WARN, RuleDecisionKind.STOP]
    # Both states were new the first time round; the cycle starts at the second.
    assert next(i + 1 for i, batch in enumerate(found) if batch) == 1 + 2 * (
        CALL_CYCLE_THRESHOLD + 1
    )
    # The same call writing a new content every time (an append) moves the workspace on.
    growing = CallCycles()
    for i in range(20):
        grew = evidence("append", changes=True, writes=(("log.md", f"v{i}"),))
        assert review(growing, [grew]) == []
        assert review(growing, [evidence("cat log.md")]) == []


def test_a_change_reported_for_the_first_time_is_progress() -> None:
    counter = CallCycles()
    a = evidence("a")
    # Each round makes a change never seen before (a tool that reports no writes).
    for i in range(20):
        assert review(counter, [evidence(f"migrate {i}", changes=True)]) == []
        assert review(counter, [a]) == []


def test_failures_break_the_run_and_are_r2s_business() -> None:
    counter = CallCycles()
    fail = CallEvidence(
        tool="t",
        digest="f",
        kind=ResultKind.FAILURE,
        fingerprint="x",
        waits=False,
        paths=frozenset(),
    )
    for _ in range(20):
        assert review(counter, [evidence("cleanup")]) == []
        assert review(counter, [fail]) == []


def test_user_input_resets_and_a_stopped_cycle_is_latched() -> None:
    prompt = Prompt()
    cycle = inspect_cycle()
    rounds = go_round(prompt, cycle, CALL_CYCLE_THRESHOLD)  # two repetitions short of a warn
    prompt.batch((call("read_file", path="notes"), works("n")), user_input=True)
    rounds += go_round(prompt, cycle, CALL_CYCLE_THRESHOLD)
    assert not any(r.kinds(LoopRule.CALL_CYCLE) for r in rounds)
    # In shadow the cycle would warn, would stop, then decides nothing more.
    shadow = Prompt(mode=GuardMode.SHADOW)
    kinds = [k for _, k in cycle_kinds(go_round(shadow, cycle, 3 * CALL_CYCLE_THRESHOLD))]
    assert kinds == [RuleDecisionKind.WOULD_WARN, RuleDecisionKind.WOULD_STOP]


def test_modes_off_warn_and_the_override() -> None:
    cycle = inspect_cycle()
    off = Prompt(settings=LoopSettings(call_cycle_mode=GuardMode.OFF))
    assert not cycle_kinds(go_round(off, cycle, 3 * CALL_CYCLE_THRESHOLD))
    warn = Prompt(mode=GuardMode.WARN)
    rounds = go_round(warn, cycle, 3 * CALL_CYCLE_THRESHOLD)
    assert [k for _, k in cycle_kinds(rounds)] == [
        RuleDecisionKind.WARN,
        RuleDecisionKind.WOULD_STOP,
    ]
    assert all(r.stop is None for r in rounds)
    overridden = Prompt(
        mode=GuardMode.SHADOW, settings=LoopSettings(call_cycle_mode=GuardMode.ENFORCE)
    )
    assert any(r.stop for r in go_round(overridden, cycle, CALL_CYCLE_THRESHOLD + 3))


def test_a_prompt_from_before_the_progress_rules_runs_without_it() -> None:
    rules = LoopRules(
        LoopSettings(), GuardMode.ENFORCE, route_forced_off=False, progress_rules=False
    )
    assert rules.modes[LoopRule.CALL_CYCLE] is GuardMode.OFF


# --- helpers ------------------------------------------------------------------------------


def evidence(
    name: str,
    *,
    waits: bool = False,
    changes: bool = False,
    writes: tuple[tuple[str, str], ...] = (),
) -> CallEvidence:
    return CallEvidence(
        tool="t",
        digest=f"digest of {name}",
        kind=ResultKind.SUCCESS,
        fingerprint=f"output of {name}",
        waits=waits,
        paths=frozenset(),
        changes=changes,
        writes=writes,
    )


def review(counter: CallCycles, batch: list[CallEvidence]) -> list[RuleFinding]:
    return counter.review(
        RuleReview(batch=batch, wait_epoch=0, input_arrived=False, mode=GuardMode.ENFORCE)
    )
