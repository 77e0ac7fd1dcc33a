"""R8, the reformulation budget (``workflows/rules/reformulations.py``): a search rephrased
again and again while nothing uses what it found (docs/protections.md, "Loop profiles").
Driven batch by batch through the protections, as the workflow does."""

from __future__ import annotations

from workflows.contracts import ToolCall
from workflows.contracts.prompt import LoopType
from workflows.rules import LoopRule, LoopSettings, RuleDecisionKind
from workflows.rules.reformulations import (
    REFORMULATION_BUDGET,
    REFORMULATION_REMINDER,
    REFORMULATION_STOP_MESSAGE,
)
from workflows.seed.guard import GuardMode
from workflows.seed.protections import LoopStop

from .test_loop_rules import Outcome, Prompt, Round, call, fails, sh, works

R8 = LoopRule.REFORMULATION
# The first search, then one batch per reformulation up to the budget.
REMINDER_AT = REFORMULATION_BUDGET + 1


def r8(rounds: list[Round]) -> list[RuleDecisionKind]:
    return [kind for r in rounds for kind in r.kinds(R8)]


def search_code(q: str) -> tuple[ToolCall, Outcome]:
    return call("mcp__github__search_code", q=q), works(f"total_count: 0 ({q})")


# --- the loop -------------------------------------------------------------------------------


def test_a_search_reformulated_again_and_again_earns_a_reminder_then_a_stop() -> None:
    prompt = Prompt()
    rounds = [prompt.batch(search_code(f"sink{i} repo:acme/api")) for i in range(REMINDER_AT + 1)]

    assert not r8(rounds[: REMINDER_AT - 1])
    assert rounds[REMINDER_AT - 1].reminders == [REFORMULATION_REMINDER]
    assert rounds[-1].stop == LoopStop(LoopType.REPEATED_REFORMULATION, REFORMULATION_STOP_MESSAGE)


def test_grep_after_grep_in_the_shell_is_a_reformulation() -> None:
    prompt = Prompt()
    rounds = [
        prompt.batch((sh(f"grep -rn 'display_plot{i}' src/ | head -20"), works(f"{i}:plot(")))
        for i in range(REMINDER_AT + 1)
    ]

    assert r8(rounds) == [RuleDecisionKind.WARN, RuleDecisionKind.STOP]


def test_built_in_and_web_searches_count_together() -> None:
    prompt = Prompt()
    tools = [
        lambda i: call("grep_search", pattern=f"Foo{i}"),
        lambda i: call("glob", pattern=f"**/*foo{i}*"),
        lambda i: call("web_search", query=f"foo error {i}"),
    ]
    rounds = [
        prompt.batch((tools[i % 3](i), works(f"no match {i}"))) for i in range(REMINDER_AT + 1)
    ]

    assert r8(rounds) == [RuleDecisionKind.WARN, RuleDecisionKind.STOP]


# --- legitimate neighbours ------------------------------------------------------------------


def test_searching_then_reading_what_was_found_never_counts() -> None:
    prompt = Prompt()
    rounds = []
    for i in range(5 * REMINDER_AT):
        rounds.append(prompt.batch((call("grep_search", pattern=f"def h{i}"), works(f"h{i}.py:3"))))
        rounds.append(prompt.batch((call("read_file", path=f"h{i}.py"), works(f"def h{i}(): ..."))))

    assert not r8(rounds)


def test_a_few_searches_then_a_read_start_the_count_over() -> None:
    prompt = Prompt()
    rounds = []
    for run in range(4):
        for i in range(REFORMULATION_BUDGET):
            rounds.append(prompt.batch((call("grep_search", pattern=f"s{run}-{i}"), works("x"))))
        rounds.append(prompt.batch((call("read_file", path=f"r{run}.py"), works("y"))))

    assert not r8(rounds)


def test_paging_through_results_is_the_same_search() -> None:
    prompt = Prompt()
    rounds = [
        prompt.batch(
            (call("search_issues", query="label:bug", page=page), works(f"page {page}: 50"))
        )
        for page in range(1, 4 * REMINDER_AT)
    ]
    rounds += [
        prompt.batch((sh(f"rg -n TODO src | head -n {50 * n}"), works(f"{n} screens")))
        for n in range(1, 4 * REMINDER_AT)
    ]
    rounds += [
        prompt.batch(
            (call("mcp__search__web_search", query="seawall", offset=10 * n), works(f"{n}"))
        )
        for n in range(4 * REMINDER_AT)
    ]

    assert not r8(rounds)


def test_a_fan_out_of_parallel_searches_is_one_decision() -> None:
    prompt = Prompt()
    fan = [(call("grep_search", pattern=f"p{i}"), works(f"{i}")) for i in range(3 * REMINDER_AT)]
    rounds = [prompt.batch(*fan[i : i + 3]) for i in range(0, 3 * (REMINDER_AT - 1), 3)]
    rounds.append(prompt.batch((call("read_file", path="found.py"), works("z"))))

    assert not r8(rounds)


def test_identical_repeats_and_failed_searches_neither_count_nor_end_the_run() -> None:
    prompt = Prompt(
        settings=LoopSettings(identical_result_mode=GuardMode.OFF, failure_cycle_mode=GuardMode.OFF)
    )
    rounds = [prompt.batch((call("grep_search", pattern="first"), works("none")))]
    for i in range(REFORMULATION_BUDGET - 1):
        rounds.append(prompt.batch((call("grep_search", pattern=f"new{i}"), works("none"))))
        rounds.append(prompt.batch((call("grep_search", pattern=f"new{i}"), works("none"))))
        rounds.append(prompt.batch((sh(f"grep -rn miss{i} ."), fails("Exit code: 1"))))
    assert not r8(rounds)
    # The run went on through all of it: one more new search is the budget.
    reminded = prompt.batch((call("grep_search", pattern="last"), works("none")))
    assert reminded.reminders == [REFORMULATION_REMINDER]


def test_any_other_call_ends_the_run_whatever_its_outcome() -> None:
    prompt = Prompt()
    rounds = []
    others = [
        (call("read_file", path="missing.py"), fails("no such file")),
        (sh("ls src"), works("a.py")),
        (call("edit_file", path="a.py"), works("Edited")),
        (call("job_status", id="7"), works("done")),
    ]
    for other in others:
        for i in range(REFORMULATION_BUDGET):
            rounds.append(prompt.batch((call("glob", pattern=f"{other}{i}"), works("x"))))
        rounds.append(prompt.batch((call("grep_search", pattern="with"), works("x")), other))

    assert not r8(rounds)


def test_user_input_resets_the_run() -> None:
    prompt = Prompt()
    rounds = [
        prompt.batch((call("grep_search", pattern=f"a{i}"), works("x")))
        for i in range(REFORMULATION_BUDGET)
    ]
    rounds.append(prompt.batch((call("grep_search", pattern="hint"), works("x")), user_input=True))
    rounds += [
        prompt.batch((call("grep_search", pattern=f"b{i}"), works("x")))
        for i in range(REFORMULATION_BUDGET)
    ]

    assert not r8(rounds)


# --- modes ----------------------------------------------------------------------------------


def churn(prompt: Prompt, batches: int) -> list[Round]:
    return [
        prompt.batch((call("grep_search", pattern=f"q{i}"), works(f"{i}"))) for i in range(batches)
    ]


def test_shadow_and_warn_never_stop_and_off_never_counts() -> None:
    for mode, kinds in (
        (GuardMode.SHADOW, [RuleDecisionKind.WOULD_WARN, RuleDecisionKind.WOULD_STOP]),
        (GuardMode.WARN, [RuleDecisionKind.WARN, RuleDecisionKind.WOULD_STOP]),
    ):
        prompt = Prompt(settings=LoopSettings(reformulation_mode=mode))
        rounds = churn(prompt, REMINDER_AT + 3)
        assert r8(rounds) == kinds
        assert all(r.stop is None for r in rounds)
        reminded = sum(r.reminders == [REFORMULATION_REMINDER] for r in rounds)
        assert reminded == (1 if mode is GuardMode.WARN else 0)
    off = Prompt(settings=LoopSettings(reformulation_mode=GuardMode.OFF))
    assert not r8(churn(off, 3 * REMINDER_AT))
    shadow_guard = Prompt(mode=GuardMode.SHADOW)
    assert r8(churn(shadow_guard, REMINDER_AT)) == [RuleDecisionKind.WOULD_WARN]


def test_decisions_name_no_tool() -> None:
    prompt = Prompt()
    decisions = [d for r in churn(prompt, REMINDER_AT + 1) for d in r.rules if d.rule is R8]
    assert decisions and all(d.tool is None for d in decisions)
