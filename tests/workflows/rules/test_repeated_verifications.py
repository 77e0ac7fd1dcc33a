"""R6, repeated verifications (docs/protections.md, "Loop profiles"): a check that passed, run
again and again while nothing changed, and the legitimate re-checks it lets through.

Driven batch by batch as the workflow does (``Prompt`` from ``test_loop_rules``), plus the
classification of shell commands and the counter on evidence with file writes.
"""

from __future__ import annotations

import pytest

from workflows.contracts import ToolCall
from workflows.contracts.prompt import LoopType
from workflows.rules import LoopRule, LoopSettings, RuleDecisionKind
from workflows.rules.evidence import (
    CallEvidence,
    ResultKind,
    verification_key,
)
from workflows.rules.inspection import is_inspection
from workflows.rules.ladder import RuleFinding, RuleReview
from workflows.rules.loop_rules import LoopRules
from workflows.rules.repeated_verifications import (
    REPEATED_VERIFICATION_REMINDER,
    REPEATED_VERIFICATION_STOP_MESSAGE,
    REPEATED_VERIFICATION_THRESHOLD,
    RepeatedVerifications,
)
from workflows.seed.guard import GuardMode
from workflows.seed.protections import LoopStop

from .test_loop_rules import Prompt, Round, call, fails, sh, works

PASSED = works("120 passed")


def kinds(rounds: list[Round]) -> list[tuple[int, RuleDecisionKind]]:
    return [(i + 1, k) for i, r in enumerate(rounds) for k in r.kinds(LoopRule.VERIFICATION)]


def confirm(prompt: Prompt) -> list[Round]:
    """A green suite re-run to confirm, with other flags and selections each time."""
    commands = ["pytest", "pytest -q", "pytest -v", "pytest tests/", "python -m pytest -x"]
    return [prompt.batch((sh(command), PASSED)) for command in commands + commands]


def test_a_green_suite_rerun_with_nothing_changed_earns_a_reminder_then_a_stop() -> None:
    rounds = confirm(Prompt())
    reminder_at = REPEATED_VERIFICATION_THRESHOLD + 1  # the fourth passing run
    assert kinds(rounds) == [
        (reminder_at, RuleDecisionKind.WARN),
        (reminder_at + 1, RuleDecisionKind.STOP),
    ]
    assert rounds[reminder_at - 1].reminders == [REPEATED_VERIFICATION_REMINDER]
    assert rounds[reminder_at].stop == LoopStop(
        LoopType.REPEATED_VERIFICATION, REPEATED_VERIFICATION_STOP_MESSAGE
    )
    assert all(d.tool is None for r in rounds for d in r.rules)


def test_reads_and_read_only_inspections_between_runs_change_nothing() -> None:
    prompt = Prompt()
    rounds = []
    for i in range(REPEATED_VERIFICATION_THRESHOLD + 2):
        rounds.append(prompt.batch((sh("pytest -q"), PASSED)))
        rounds.append(
            prompt.batch(
                (sh("git status"), works("nothing to commit")),
            )
        )
        rounds.append(prompt.batch((call("read_file", path=f"src/m{i}.py"), works("x"))))
    assert [k for _, k in kinds(rounds)] == [RuleDecisionKind.WARN, RuleDecisionKind.STOP]


def test_fix_then_recheck_and_tdd_never_count() -> None:
    prompt = Prompt()
    rounds = []
    for i in range(15):  # the same passing check after every edit
        rounds.append(prompt.batch((call("edit_file", path=f"h{i}.py"), works("Edited"))))
        rounds.append(prompt.batch((sh("pytest -q"), PASSED)))
        rounds.append(prompt.batch((sh("ruff check ."), works("All checks passed!"))))
    prompt = Prompt()  # (a new prompt: under the cap of 100 calls)
    for i in range(12):  # red, green
        rounds.append(prompt.batch((call("edit_file", path="t.py", case=i), works("Edited"))))
        rounds.append(prompt.batch((sh(f"pytest -k c{i}"), fails("1 failed"))))
        rounds.append(prompt.batch((call("edit_file", path="p.py", impl=i), works("Edited"))))
        rounds.append(prompt.batch((sh("pytest -q"), works(f"{i + 30} passed"))))
    # An edit run together with the suite is the change.
    prompt = Prompt()
    for i in range(10):
        rounds.append(
            prompt.batch(
                (call("edit_file", path="x.py", n=i), works("Edited")), (sh("pytest"), PASSED)
            )
        )
    assert not any(r.kinds(LoopRule.VERIFICATION) for r in rounds)


def test_a_shell_command_that_is_not_a_check_or_an_inspection_is_a_change() -> None:
    prompt = Prompt()
    rounds = []
    for i in range(10):
        rounds.append(prompt.batch((sh("pytest -q"), PASSED)))
        rounds.append(prompt.batch((sh(f"sed -i s/a/b/ f{i}.py"), works(""))))
    assert not any(r.kinds(LoopRule.VERIFICATION) for r in rounds)


def test_different_checks_each_once_and_a_flaky_test_being_reproduced_do_not_count() -> None:
    prompt = Prompt()
    checks = ["pytest -q", "ruff check .", "mypy src", "npm test", "cargo test", "tsc --noEmit"]
    rounds = [prompt.batch((sh(c), works("ok"))) for c in checks]
    for _ in range(10):  # pass, fail, pass ... with nothing changed: its result varies
        rounds.append(prompt.batch((sh("pytest -k flaky"), PASSED)))
        rounds.append(prompt.batch((sh("pytest -k flaky"), fails("1 failed"))))
    assert not any(r.kinds(LoopRule.VERIFICATION) for r in rounds)


def test_time_passing_and_user_input_start_over() -> None:
    prompt = Prompt()
    rounds = []
    for _ in range(6):
        rounds += [prompt.batch((sh("pytest -q"), PASSED)) for _ in range(3)]
        rounds.append(prompt.batch((sh("sleep 30"), works(""))))
    assert not any(r.kinds(LoopRule.VERIFICATION) for r in rounds)
    other = Prompt()
    rounds = [other.batch((sh("pytest -q"), PASSED)) for _ in range(3)]
    rounds.append(other.batch((sh("pytest -v"), PASSED), user_input=True))
    rounds += [other.batch((sh("pytest -q"), PASSED)) for _ in range(3)]
    assert not any(r.kinds(LoopRule.VERIFICATION) for r in rounds)


def test_a_long_check_is_not_a_wait_but_writes_are_changes() -> None:
    counter = RepeatedVerifications()
    long_run = check(waits=True)  # a two-minute suite: its own duration is no progress
    found = [review(counter, [long_run]) for _ in range(REPEATED_VERIFICATION_THRESHOLD + 2)]
    assert [kind for batch in found for _, kind, _ in batch] == [
        RuleDecisionKind.WARN,
        RuleDecisionKind.STOP,
    ]
    written = RepeatedVerifications()
    wrote = CallEvidence(
        tool="write_file",
        digest="w",
        kind=ResultKind.SUCCESS,
        fingerprint="f",
        waits=False,
        paths=frozenset(),
        changes=True,
        writes=(("a.py", "digest"),),
    )
    for _ in range(10):
        assert review(written, [check()]) == []
        assert review(written, [wrote]) == []


def test_modes_latch_and_the_patch() -> None:
    shadow = confirm(Prompt(mode=GuardMode.SHADOW))
    assert [k for _, k in kinds(shadow)] == [
        RuleDecisionKind.WOULD_WARN,
        RuleDecisionKind.WOULD_STOP,
    ]  # then latched: nothing more in this prompt
    warn = confirm(Prompt(mode=GuardMode.WARN))
    assert [k for _, k in kinds(warn)] == [RuleDecisionKind.WARN, RuleDecisionKind.WOULD_STOP]
    assert all(r.stop is None for r in warn)
    off = confirm(Prompt(settings=LoopSettings(verification_mode=GuardMode.OFF)))
    assert not any(r.rules for r in off)
    rules = LoopRules(
        LoopSettings(), GuardMode.ENFORCE, route_forced_off=False, progress_rules=False
    )
    assert rules.modes[LoopRule.VERIFICATION] is GuardMode.OFF


@pytest.mark.parametrize(
    "command",
    [
        "pytest",
        "pytest -q tests/test_api.py",
        "python3 -m pytest -x",
        "uv run pytest",
        "cd web && npm test",
        "npm run lint",
        "pnpm typecheck",
        "ruff check .",
        "mypy src && pytest -q",
        "pytest 2>&1 | tail -20",
        "go test ./...",
        "cargo clippy",
        "black --check .",
        "tsc --noEmit",
        "make test",
        "CI=1 npx jest",
    ],
)
def test_checks_are_recognized_whatever_their_flags(command: str) -> None:
    assert verification_key(sh(command))


@pytest.mark.parametrize(
    "command",
    [
        "ruff check --fix .",
        "black .",
        "npx jest -u",
        "eslint --fix src",
        "pytest > out.txt",
        "pytest | tee out.txt",
        "sleep 5 && pytest",
        "pip install -e . && pytest",
        "make",
        "npm install",
        "echo pytest",
        "git commit -am wip",
    ],
)
def test_commands_that_change_or_do_more_are_not_checks(command: str) -> None:
    assert verification_key(sh(command)) == ""


def test_flags_and_selection_are_one_check_and_tools_are_recognized_by_name() -> None:
    assert len({verification_key(sh(c)) for c in ["pytest -q", "pytest -v", "pytest tests/"]}) == 1
    assert verification_key(sh("pytest")) != verification_key(sh("ruff check"))
    assert verification_key(ToolCall(call_id="", name="mcp__ci__run_tests", arguments={}))
    assert verification_key(ToolCall(call_id="", name="read_file", arguments={})) == ""


def test_read_only_inspections() -> None:
    assert all(
        is_inspection(sh(c)) for c in ["git status", "git diff --stat", "ls -la", "cat a | head"]
    )
    assert not any(
        is_inspection(sh(c))
        for c in ["git checkout .", "cat a > b", "rm x", "ls $(pwd)", "sed -i s/a/b/ f"]
    )


# --- helpers ------------------------------------------------------------------------------


def check(*, waits: bool = False) -> CallEvidence:
    return CallEvidence(
        tool="run_shell_command",
        digest="pytest",
        kind=ResultKind.SUCCESS,
        fingerprint="120 passed",
        waits=waits,
        paths=frozenset(),
        changes=True,
        verifies="key of pytest",
    )


def review(counter: RepeatedVerifications, batch: list[CallEvidence]) -> list[RuleFinding]:
    return counter.review(
        RuleReview(batch=batch, wait_epoch=0, input_arrived=False, mode=GuardMode.ENFORCE)
    )
