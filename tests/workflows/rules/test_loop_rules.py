"""The recommended loop profile's rules, batch by batch (docs/protections.md, "Loop profiles").

Each test drives :class:`workflows.seed.protections.BatchProtections` the way ``PromptWorkflow``
and the benchmark simulator do — screen, settle, then :func:`workflows.prompt.batch.after_batch`
(reduce the guard, review the rules, ask what stops) —
and asserts what the model and the operator would see: which calls run, which are refused or
answered, which reminders arrive and which protection stops the prompt. Pure: no server.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from workflows.contracts import (
    ExecutionStatus,
    TerminalStatus,
    ToolCall,
    ToolErrorType,
    ToolOutcome,
)
from workflows.contracts.activity import ToolSpec
from workflows.contracts.prompt import LoopType
from workflows.contracts.prompt_options import PromptOptions
from workflows.contracts.synthetic_outcomes import DENIED_REPEAT_CONTENT, permission_denied_outcome
from workflows.prompt.batch import DrainedInput, after_batch, rule_reminders
from workflows.rules import SEED_SETTINGS, LoopRule, LoopSettings, RuleDecisionKind
from workflows.rules.denied_calls import (
    DENIED_CALL_REMINDER,
    DENIED_CALL_STOP_MESSAGE,
    DENIED_CALL_THRESHOLD,
    PRE_PROGRESS_DENIED_CALL_THRESHOLD,
)
from workflows.rules.failure_cycles import (
    FAILURE_CYCLE_REMINDER,
    FAILURE_CYCLE_STOP_MESSAGE,
    FAILURE_CYCLE_THRESHOLD,
)
from workflows.rules.identical_results import (
    IDENTICAL_RESULT_REMINDER,
    IDENTICAL_RESULT_STOP_MESSAGE,
    IDENTICAL_RESULT_THRESHOLD,
)
from workflows.rules.loop_rules import LoopRules, RelaxReason, RuleDecision
from workflows.rules.profiles import rule_mode
from workflows.seed.failed_call_refusal import MAX_REPEATS, repeat_limit_stop_message
from workflows.seed.guard import DecisionKind, GuardDecision, GuardMode, GuardState
from workflows.seed.protections import Answered, BatchProtections, BatchScreening, LoopStop

WS = "/ws"
TOOLS = {
    "read_file": ToolSpec(name="read_file"),
    "edit_file": ToolSpec(name="edit_file", mutating=True),
    "run_shell_command": ToolSpec(name="run_shell_command", mutating=True),
    "job_status": ToolSpec(name="job_status"),
    "fetch": ToolSpec(name="fetch", tool_type="mcp"),
    "mcp__timer__sleep": ToolSpec(name="mcp__timer__sleep", tool_type="mcp"),
    # A subagent dispatch: it may act, so it is state-changing.
    "task": ToolSpec(name="task", mutating=True),
    "browser_press_key": ToolSpec(name="browser_press_key", tool_type="mcp"),
    "browser_snapshot": ToolSpec(name="browser_snapshot", tool_type="mcp"),
    "search": ToolSpec(name="search", tool_type="mcp"),
    "ask_user": ToolSpec(name="ask_user"),
    "save_memory": ToolSpec(name="save_memory", mutating=True),
    "github_graphql": ToolSpec(name="github_graphql", mutating=True),
    "browser_click": ToolSpec(name="browser_click", tool_type="mcp"),
}
# The batch that first fails, then one batch per recurrence up to the threshold.
CYCLE_REMINDER_AT = FAILURE_CYCLE_THRESHOLD + 1
SAME_REMINDER_AT = IDENTICAL_RESULT_THRESHOLD + 1

Outcome = Callable[[ToolCall], ToolOutcome]


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(call_id="", name=name, arguments=arguments)


def sh(command: str) -> ToolCall:
    return call("run_shell_command", command=command)


def fails(
    text: str = "no such file",
    error_type: ToolErrorType = ToolErrorType.EXECUTION_FAILED,
    execution_status: ExecutionStatus = ExecutionStatus.ERROR,
) -> Outcome:
    """An error outcome; ``execution_status`` ``NOT_STARTED``: the runner refused to start
    the call (a tool-call limit, say)."""

    def outcome(c: ToolCall) -> ToolOutcome:
        return ToolOutcome(
            call_id=c.call_id,
            tool_name=c.name,
            policy_tool_name=c.name,
            status=TerminalStatus.ERROR,
            execution_status=execution_status,
            execution_error_type=error_type,
            error_type=error_type,
            content=text,
            error_message=text,
        )

    return outcome


def works(text: str = "ok") -> Outcome:
    def outcome(c: ToolCall) -> ToolOutcome:
        return ToolOutcome(
            call_id=c.call_id,
            tool_name=c.name,
            policy_tool_name=c.name,
            status=TerminalStatus.SUCCESS,
            execution_status=ExecutionStatus.SUCCESS,
            content=text,
        )

    return outcome


def denied(c: ToolCall) -> ToolOutcome:
    return permission_denied_outcome(c, policy_tool_name=c.name, tool_type="native")


@dataclass
class Round:
    screening: BatchScreening
    outcomes: list[ToolOutcome]
    guard: GuardDecision
    rules: list[RuleDecision]
    stop: LoopStop | None

    @property
    def reminders(self) -> list[str]:
        return rule_reminders(self.rules)

    @property
    def ran(self) -> int:
        return len(self.screening.cleared)

    @property
    def answered(self) -> list[ToolOutcome]:
        return [d.outcome for d in self.screening.decisions if isinstance(d, Answered)]

    def kinds(self, rule: LoopRule) -> list[RuleDecisionKind]:
        return [d.kind for d in self.rules if d.rule is rule]


@dataclass
class Prompt:
    """One prompt's protections, driven batch by batch exactly as the workflow does."""

    mode: GuardMode = GuardMode.ENFORCE
    settings: LoopSettings = field(default_factory=LoopSettings)
    route_forced_off: bool = False
    thresholds: dict[LoopRule, int] | None = None
    nothing_new: bool = True  # False: a prompt started before NOTHING_NEW_PATCH
    moved_counts: bool = True  # False: a prompt started before MOVED_COUNTS_PATCH
    looks_and_ids: bool = True  # False: a prompt started before LOOKS_AND_IDS_PATCH
    world_ids: bool = True  # False: a prompt started before WORLD_IDS_PATCH
    refusals: bool = True  # False: a prompt started before REFUSALS_PATCH

    def __post_init__(self) -> None:
        self.protections = BatchProtections(PromptOptions(), WS)
        self.protections.use_loop_rules(
            LoopRules(
                self.settings,
                self.mode,
                route_forced_off=self.route_forced_off,
                thresholds=self.thresholds,
                nothing_new=self.nothing_new,
                moved_counts=self.moved_counts,
                looks_and_ids=self.looks_and_ids,
                world_ids=self.world_ids,
                refusals=self.refusals,
            )
        )
        self.state = GuardState()
        self.calls = 0
        self.batches = 0

    def batch(self, *steps: tuple[ToolCall, Outcome], user_input: bool = False) -> Round:
        calls = []
        for c, _ in steps:
            self.calls += 1
            calls.append(c.model_copy(update={"call_id": f"c{self.calls}"}))
        self.batches += 1
        screening = self.protections.screen(calls, TOOLS)
        ran = {a.index: steps[a.index][1](a.call) for a in screening.cleared}
        outcomes = self.protections.settle(screening, ran)
        step = after_batch(
            self.protections,
            self.state,
            self.mode,
            outcomes,
            DrainedInput(["more input"] if user_input else []),
            batch=self.batches,
        )
        self.state = step.guard.state
        return Round(screening, outcomes, step.guard, step.rule_decisions, step.stop)

    def repeat(self, times: int, *steps: tuple[ToolCall, Outcome]) -> list[Round]:
        return [self.batch(*steps) for _ in range(times)]


# --- R0: progress evidence for the guard ---------------------------------------------------


def build_fails(errors: int) -> Outcome:
    return fails(
        f"Found {errors} errors:\n" + "\n".join(f"src/m{i}.ts: TS2322" for i in range(errors))
    )


def test_a_build_that_fails_differently_after_every_edit_is_progress_not_a_streak() -> None:
    prompt = Prompt()
    rounds = []
    for remaining in range(12, 0, -1):
        rounds.append(prompt.batch((call("edit_file", path=f"src/m{remaining}.ts"), works())))
        rounds.append(prompt.batch((sh("npm run build"), build_fails(remaining))))
    assert all(r.stop is None for r in rounds)
    assert [r.guard.kind for r in rounds[1::2]] == [DecisionKind.TRACKED] + [DecisionKind.NONE] * 11
    assert all(not r.rules for r in rounds)

    # The seeds' rules count the same session as one streak and stop it.
    seed = Prompt(settings=SEED_SETTINGS)
    kinds = []
    for remaining in range(12, 0, -1):
        seed.batch((call("edit_file", path=f"src/m{remaining}.ts"), works()))
        kinds.append(seed.batch((sh("npm run build"), build_fails(remaining))).guard.kind)
    assert DecisionKind.STOP in kinds


def test_the_same_output_again_advances_the_streak_and_drifting_details_do_not_hide_it() -> None:
    prompt = Prompt()
    texts = [
        f"[2026-08-03T10:1{i}:07Z] attempt {i} (pid 3120{i}) connect refused" for i in range(9)
    ]
    kinds = [prompt.batch((sh("sync"), fails(text))).guard.kind for text in texts]
    assert DecisionKind.WARN in kinds and kinds[-1] is DecisionKind.STOP


def test_a_different_call_failing_differently_is_not_progress() -> None:
    """Progress is the same call failing differently; a new guess with a new error is not."""
    prompt = Prompt()
    kinds = [
        prompt.batch((sh(f"make target{i}"), fails(f"no rule to make target{i}x"))).guard.kind
        for i in range(9)
    ]
    assert kinds[-2:] == [DecisionKind.WARN, DecisionKind.STOP]


# --- R1: refusal relaxations ---------------------------------------------------------------


def test_without_new_evidence_an_unchanged_repeat_is_refused_as_in_the_seed() -> None:
    prompt = Prompt()
    prompt.batch((call("read_file", path="a"), fails()))
    second = prompt.batch((call("read_file", path="a"), fails()))
    assert second.ran == 0 and second.answered[0].refused_repeat
    assert second.screening.flagged_repeats[0].outcome == "repeat"


@pytest.mark.parametrize(
    ("text", "error_type"),
    [
        ("request timed out after 30s", ToolErrorType.EXECUTION_TIMEOUT),
        ("HTTP 429 Too Many Requests", ToolErrorType.MCP_TOOL_ERROR),
        ("upstream returned status 503", ToolErrorType.MCP_TOOL_ERROR),
        ("Bad Gateway", ToolErrorType.MCP_TOOL_ERROR),
        ("read ECONNRESET", ToolErrorType.MCP_TOOL_ERROR),
        ("rate limit exceeded, retry later", ToolErrorType.MCP_TOOL_ERROR),
        ("Resource temporarily unavailable", ToolErrorType.MCP_TOOL_ERROR),
    ],
)
def test_a_transient_failure_admits_one_identical_retry(
    text: str, error_type: ToolErrorType
) -> None:
    prompt = Prompt()
    prompt.batch((call("fetch", url="https://x/1"), fails(text, error_type)))
    retry = prompt.batch((call("fetch", url="https://x/1"), works()))
    assert retry.ran == 1
    assert retry.screening.flagged_repeats[0].relaxed is RelaxReason.TRANSIENT
    assert retry.screening.flagged_repeats[0].outcome == "admitted_transient"


@pytest.mark.parametrize("text", ["500 Internal Server Error", "line 429: syntax error", "404"])
def test_other_failures_are_not_transient(text: str) -> None:
    prompt = Prompt()
    prompt.batch((call("fetch", url="https://x/1"), fails(text, ToolErrorType.MCP_TOOL_ERROR)))
    assert prompt.batch((call("fetch", url="https://x/1"), works())).ran == 0


def test_time_passed_admits_the_repeat_a_waiting_call_between_or_a_waiting_repeat() -> None:
    prompt = Prompt()
    prompt.batch((call("job_status", id="7"), fails("pending")))
    # A read-only waiting tool (a shell command would forget the failure outright).
    prompt.batch((call("mcp__timer__sleep", seconds=30), works("")))
    again = prompt.batch((call("job_status", id="7"), fails("pending")))
    assert again.ran == 1
    assert again.screening.flagged_repeats[0].relaxed is RelaxReason.TIME_PASSED
    # Nothing waited since that failure: refused.
    assert prompt.batch((call("job_status", id="7"), fails("pending"))).ran == 0

    waiting = Prompt(settings=LoopSettings(shell_repeats_admitted=False))
    rollout = sh("kubectl rollout status deploy/api --timeout=20s")
    waiting.batch((rollout, fails("timed out waiting for the condition")))
    assert waiting.batch((rollout, works())).ran == 1


def test_a_refresh_of_the_same_path_admits_the_repeat_once() -> None:
    prompt = Prompt()
    edit = call("edit_file", path="src/app.py", old_string="x", new_string="y")
    prompt.batch((edit, fails("String to replace was not found")))
    # Reading another file refreshes nothing.
    prompt.batch((call("read_file", path="src/other.py"), works("...")))
    assert prompt.batch((edit, fails("String to replace was not found"))).ran == 0
    prompt.batch((call("read_file", path="./src/app.py"), works("x = 1")))
    retry = prompt.batch((edit, fails("String to replace was not found")))
    assert retry.ran == 1 and retry.screening.flagged_repeats[0].relaxed is RelaxReason.REFRESHED
    # The refresh bought one retry; the same failure again is refused.
    assert prompt.batch((edit, works())).ran == 0


def test_user_input_refreshes_every_remembered_failure() -> None:
    prompt = Prompt()
    prompt.batch((call("read_file", path="a"), fails()), (call("fetch", url="u"), fails()))
    prompt.batch((call("job_status", id="1"), works()), user_input=True)
    again = prompt.batch((call("read_file", path="a"), works()), (call("fetch", url="u"), works()))
    assert again.ran == 2


def test_failed_shell_commands_are_admitted_again_and_the_benchmark_can_refuse_them() -> None:
    prompt = Prompt()
    prompt.batch((sh("gh pr checks 571"), fails("2 pending checks\nExit code: 8")))
    again = prompt.batch((sh("gh pr checks 571"), works("All checks were successful")))
    assert again.ran == 1 and again.screening.flagged_repeats[0].relaxed is RelaxReason.SHELL

    strict = Prompt(settings=LoopSettings(shell_repeats_admitted=False))
    strict.batch((sh("gh pr checks 571"), fails("2 pending checks\nExit code: 8")))
    assert strict.batch((sh("gh pr checks 571"), works())).ran == 0


# --- R2: failure cycles --------------------------------------------------------------------


def cleanup_cycle(prompt: Prompt, times: int) -> list[Round]:
    rounds = []
    for _ in range(times):
        rounds.append(prompt.batch((sh("./generate.sh"), fails("error: manifest.yaml exists"))))
        rounds.append(prompt.batch((sh("rm -f manifest.yaml"), works(""))))
    return rounds


def test_fail_cleanup_same_failure_cycles_earn_a_reminder_then_a_stop() -> None:
    prompt = Prompt()
    rounds = cleanup_cycle(prompt, CYCLE_REMINDER_AT + 1)
    failures = rounds[::2]
    assert [r.kinds(LoopRule.FAILURE_CYCLE) for r in failures[: CYCLE_REMINDER_AT - 1]] == [[]] * (
        CYCLE_REMINDER_AT - 1
    )
    assert failures[CYCLE_REMINDER_AT - 1].reminders == [FAILURE_CYCLE_REMINDER]
    last = failures[CYCLE_REMINDER_AT]
    assert last.stop == LoopStop(LoopType.REPEATED_FAILURE_CYCLE, FAILURE_CYCLE_STOP_MESSAGE)
    # The seeds' rules never see past one failure: the cleanup resets them every cycle.
    seed = Prompt(settings=SEED_SETTINGS)
    assert all(r.stop is None for r in cleanup_cycle(seed, 30))


def test_the_same_failure_of_varied_calls_is_a_recurrence() -> None:
    prompt = Prompt()
    rounds = [
        prompt.batch(
            (call("read_file", path=f"guess{i}.yaml"), fails(f"File not found: guess{i}.yaml")),
            (call("job_status", id="x"), works(f"listing {i}")),
        )
        for i in range(CYCLE_REMINDER_AT + 1)
    ]
    assert rounds[CYCLE_REMINDER_AT - 1].kinds(LoopRule.FAILURE_CYCLE) == [RuleDecisionKind.WARN]
    assert rounds[-1].stop is not None


def test_siblings_failing_together_count_once() -> None:
    prompt = Prompt()
    fetches = [(call("fetch", url=f"https://api/{i}"), fails("upstream 500")) for i in range(4)]
    rounds = prompt.repeat(CYCLE_REMINDER_AT - 1, *fetches)
    assert all(not r.kinds(LoopRule.FAILURE_CYCLE) for r in rounds)


def test_a_changing_failure_never_recurs() -> None:
    prompt = Prompt()
    rounds = [
        prompt.batch((sh(f"pytest -k case{i}"), fails(f"FAILED test_case{i} - AssertionError")))
        for i in range(20)
    ]
    assert all(not r.kinds(LoopRule.FAILURE_CYCLE) for r in rounds)


def test_time_passing_between_the_same_failures_is_waiting_not_a_cycle() -> None:
    prompt = Prompt()
    rounds = []
    for _ in range(2 * CYCLE_REMINDER_AT):
        rounds.append(prompt.batch((call("job_status", id="9"), fails("still deploying"))))
        prompt.batch((sh("sleep 10"), works("")))
    assert all(not r.kinds(LoopRule.FAILURE_CYCLE) for r in rounds)


def test_the_failing_call_working_again_starts_the_tool_over() -> None:
    prompt = Prompt()
    rounds = cleanup_cycle(prompt, CYCLE_REMINDER_AT - 1)
    prompt.batch((sh("./generate.sh"), works("generated")))
    # Counting starts over: every failure after the reset is a recurrence again.
    rounds += cleanup_cycle(prompt, FAILURE_CYCLE_THRESHOLD - 1)
    assert all(not r.kinds(LoopRule.FAILURE_CYCLE) for r in rounds)


def test_user_input_starts_every_tool_over() -> None:
    prompt = Prompt()
    rounds = cleanup_cycle(prompt, CYCLE_REMINDER_AT - 1)
    prompt.batch((call("read_file", path="notes"), works()), user_input=True)
    rounds += cleanup_cycle(prompt, FAILURE_CYCLE_THRESHOLD - 1)
    assert all(not r.kinds(LoopRule.FAILURE_CYCLE) for r in rounds)


# --- R3: identical results -----------------------------------------------------------------


def test_the_same_call_with_the_same_output_earns_a_reminder_then_a_stop() -> None:
    prompt = Prompt()
    rounds = prompt.repeat(SAME_REMINDER_AT + 1, (sh("ls -la out/"), works("total 0")))
    assert all(not r.rules for r in rounds[: SAME_REMINDER_AT - 1])
    assert rounds[SAME_REMINDER_AT - 1].reminders == [IDENTICAL_RESULT_REMINDER]
    assert rounds[-1].stop == LoopStop(
        LoopType.REPEATED_IDENTICAL_RESULT, IDENTICAL_RESULT_STOP_MESSAGE
    )


def test_polling_with_a_wait_between_is_not_a_repeat() -> None:
    prompt = Prompt()
    rounds = []
    for _ in range(3 * SAME_REMINDER_AT):
        prompt.batch((sh("sleep 15"), works("")))
        rounds.append(prompt.batch((call("job_status", id="m"), works("status: running"))))
    assert all(not r.rules for r in rounds)


def test_rerunning_a_check_after_a_change_verifies_the_change() -> None:
    prompt = Prompt()
    rounds = []
    for i in range(3 * SAME_REMINDER_AT):
        prompt.batch((call("edit_file", path=f"h{i}.py"), works("Edited")))
        rounds.append(prompt.batch((sh("pytest -q"), works("42 passed"))))
    assert all(not r.rules for r in rounds)


def test_a_changing_output_is_progress_and_failures_are_not_counted_here() -> None:
    prompt = Prompt()
    changing = [
        prompt.batch((call("job_status", id="b"), works(f"{i} of 40 jobs done")))
        for i in range(3 * SAME_REMINDER_AT)
    ]
    assert all(not r.rules for r in changing)
    # An answer that only flips between two values is not new after the second poll: R3
    # sees a change every time, the near-repeat rule (R9) sees nothing new.
    flipping = Prompt()
    flips = [
        flipping.batch((call("job_status", id="b"), works(f"state {'AB'[i % 2]}")))
        for i in range(3 * SAME_REMINDER_AT)
    ]
    assert not any(r.kinds(LoopRule.IDENTICAL_RESULT) for r in flips)
    assert any(r.kinds(LoopRule.NEAR_REPEAT) for r in flips)
    other = Prompt(settings=LoopSettings(failure_cycle_mode=GuardMode.OFF))
    failing = other.repeat(3 * SAME_REMINDER_AT, (call("fetch", url="u"), fails("down")))
    assert all(not r.kinds(LoopRule.IDENTICAL_RESULT) for r in failing)


def test_user_input_resets_identical_results() -> None:
    prompt = Prompt()
    rounds = prompt.repeat(SAME_REMINDER_AT - 1, (sh("echo noop"), works("noop")))
    prompt.batch((sh("echo noop"), works("noop")), user_input=True)
    # Counting starts over: the threshold's worth of repeats again before a reminder.
    rounds += prompt.repeat(IDENTICAL_RESULT_THRESHOLD - 1, (sh("echo noop"), works("noop")))
    assert all(not r.rules for r in rounds)


# --- R4: denied calls ----------------------------------------------------------------------


def test_a_denied_call_asked_again_is_answered_without_asking() -> None:
    prompt = Prompt()
    command = sh("sudo rm -rf /var/cache")
    prompt.batch((command, denied))
    again = prompt.batch((command, denied))
    assert again.ran == 0
    (outcome,) = again.answered
    assert outcome.denied and outcome.content == DENIED_REPEAT_CONTENT
    assert outcome.status == TerminalStatus.CANCELLED
    assert prompt.protections.counts.denied_repeats == 1
    assert again.screening.denied_repeats[0].decision.kind is RuleDecisionKind.ANSWERED


def test_in_shadow_the_denied_call_is_asked_again_and_only_counted() -> None:
    prompt = Prompt(mode=GuardMode.SHADOW)
    command = sh("sudo rm -rf /var/cache")
    prompt.batch((command, denied))
    again = prompt.batch((command, denied))
    assert again.ran == 1
    assert again.screening.denied_repeats[0].decision.kind is RuleDecisionKind.WOULD_ANSWER


def test_consecutive_denial_rounds_earn_a_reminder_then_a_stop() -> None:
    prompt = Prompt()
    rounds = [
        prompt.batch((sh(f"git push origin b{i}"), denied), (sh(f"git tag v{i}"), denied))
        for i in range(DENIED_CALL_THRESHOLD + 1)
    ]
    assert all(not r.rules for r in rounds[: DENIED_CALL_THRESHOLD - 1])
    assert rounds[DENIED_CALL_THRESHOLD - 1].reminders == [DENIED_CALL_REMINDER]
    assert rounds[-1].stop == LoopStop(LoopType.REPEATED_DENIED_CALL, DENIED_CALL_STOP_MESSAGE)


def test_a_prompt_from_before_the_progress_rules_keeps_three_denial_rounds() -> None:
    """The progress rules raised the threshold from three rounds to four; a prompt replaying
    from before them decides as it did."""
    assert PRE_PROGRESS_DENIED_CALL_THRESHOLD == 3 < DENIED_CALL_THRESHOLD
    old = LoopRules(LoopSettings(), GuardMode.ENFORCE, route_forced_off=False, progress_rules=False)
    new = LoopRules(LoopSettings(), GuardMode.ENFORCE, route_forced_off=False)
    assert old.counters[LoopRule.DENIED_CALL].threshold == PRE_PROGRESS_DENIED_CALL_THRESHOLD
    assert new.counters[LoopRule.DENIED_CALL].threshold == DENIED_CALL_THRESHOLD
    # Every other rule's threshold is the same either way.
    for rule in LoopRule:
        if rule is not LoopRule.DENIED_CALL:
            assert old.counters[rule].threshold == new.counters[rule].threshold


def test_a_success_or_user_input_ends_the_run_of_denials() -> None:
    prompt = Prompt()
    rounds = []
    for i in range(3 * DENIED_CALL_THRESHOLD):
        rounds.append(prompt.batch((sh(f"npm publish --tag t{i}"), denied)))
        if i % 2:
            rounds.append(prompt.batch((call("read_file", path="README"), works())))
    assert all(not r.rules for r in rounds)

    forgetting = Prompt()
    command = sh("sudo systemctl restart api")
    forgetting.batch((command, denied))
    forgetting.batch((call("job_status", id="1"), fails()), user_input=True)
    # The user spoke: the earlier denial is forgotten and the call is asked for again.
    assert forgetting.batch((command, works())).ran == 1


def test_refusals_and_failures_are_not_denials() -> None:
    prompt = Prompt()
    prompt.batch((call("read_file", path="a"), fails()))
    rounds = prompt.repeat(2 * DENIED_CALL_THRESHOLD, (call("read_file", path="a"), fails()))
    assert all(not r.kinds(LoopRule.DENIED_CALL) for r in rounds)


# --- modes, overrides and the seed profile -------------------------------------------------


def test_shadow_records_would_warn_and_would_stop_and_changes_nothing() -> None:
    prompt = Prompt(mode=GuardMode.SHADOW)
    rounds = cleanup_cycle(prompt, CYCLE_REMINDER_AT + 3)
    kinds = [k for r in rounds for k in r.kinds(LoopRule.FAILURE_CYCLE)]
    assert kinds == [RuleDecisionKind.WOULD_WARN, RuleDecisionKind.WOULD_STOP]
    assert all(r.stop is None and r.reminders == [] for r in rounds)


def test_warn_reminds_and_never_stops() -> None:
    prompt = Prompt(mode=GuardMode.WARN)
    rounds = cleanup_cycle(prompt, CYCLE_REMINDER_AT + 3)
    kinds = [k for r in rounds for k in r.kinds(LoopRule.FAILURE_CYCLE)]
    assert kinds == [RuleDecisionKind.WARN, RuleDecisionKind.WOULD_STOP]
    assert all(r.stop is None for r in rounds)
    assert sum(r.reminders == [FAILURE_CYCLE_REMINDER] for r in rounds) == 1


def test_a_per_rule_override_beats_the_guards_mode() -> None:
    prompt = Prompt(
        mode=GuardMode.SHADOW, settings=LoopSettings(failure_cycle_mode=GuardMode.ENFORCE)
    )
    assert any(r.stop for r in cleanup_cycle(prompt, CYCLE_REMINDER_AT + 1))
    off = Prompt(settings=LoopSettings(failure_cycle_mode=GuardMode.OFF))
    assert all(not r.kinds(LoopRule.FAILURE_CYCLE) for r in cleanup_cycle(off, 30))


def test_rule_modes_follow_the_guard_unless_overridden_and_are_off_on_forced_routes() -> None:
    settings = LoopSettings(identical_result_mode=GuardMode.SHADOW)
    assert rule_mode(settings, LoopRule.FAILURE_CYCLE, GuardMode.WARN, route_forced_off=False) is (
        GuardMode.WARN
    )
    assert rule_mode(
        settings, LoopRule.IDENTICAL_RESULT, GuardMode.WARN, route_forced_off=False
    ) is (GuardMode.SHADOW)
    for rule in LoopRule:
        assert rule_mode(settings, rule, GuardMode.ENFORCE, route_forced_off=True) is (
            GuardMode.OFF
        )
        assert rule_mode(SEED_SETTINGS, rule, GuardMode.ENFORCE, route_forced_off=False) is (
            GuardMode.OFF
        )
    forced = Prompt(route_forced_off=True, mode=GuardMode.OFF)
    assert all(not r.rules for r in cleanup_cycle(forced, 3 * CYCLE_REMINDER_AT))


def test_once_enforcement_is_disabled_a_rule_reminds_but_does_not_stop() -> None:
    prompt = Prompt()
    # An outcome without an execution status: the contract cannot be trusted.
    unknown = works().__call__(sh("x")).model_copy(update={"execution_status": None})
    prompt.batch((sh("probe"), lambda c: unknown.model_copy(update={"call_id": c.call_id})))
    assert prompt.state.enforcement_disabled
    rounds = cleanup_cycle(prompt, CYCLE_REMINDER_AT + 1)
    kinds = [k for r in rounds for k in r.kinds(LoopRule.FAILURE_CYCLE)]
    assert kinds == [RuleDecisionKind.WARN, RuleDecisionKind.WOULD_STOP]
    assert all(r.stop is None for r in rounds)


def test_the_seed_profile_has_no_rules_no_relaxations_and_no_progress() -> None:
    prompt = Prompt(settings=SEED_SETTINGS)
    assert prompt.protections.loop_rules is None
    prompt.batch((sh("gh pr checks 1"), fails("pending")))
    assert prompt.batch((sh("gh pr checks 1"), fails("pending"))).ran == 0
    command = sh("sudo reboot")
    prompt.batch((command, denied))
    assert prompt.batch((command, denied)).ran == 1
    rounds = prompt.repeat(3 * SAME_REMINDER_AT, (sh("ls"), works("a b")))
    assert all(not r.rules and not any(prompt.protections.progress) for r in rounds)


def test_every_rule_is_a_loop_type() -> None:
    assert {rule.value for rule in LoopRule} <= {loop_type.value for loop_type in LoopType}


def test_the_messages_are_fixed_and_name_no_tool_or_argument() -> None:
    for text in (
        FAILURE_CYCLE_REMINDER,
        FAILURE_CYCLE_STOP_MESSAGE,
        IDENTICAL_RESULT_REMINDER,
        IDENTICAL_RESULT_STOP_MESSAGE,
        DENIED_CALL_REMINDER,
        DENIED_CALL_STOP_MESSAGE,
    ):
        assert text.startswith("System: ")
        assert "{" not in text and "run_shell_command" not in text


def test_admitted_repeats_that_fail_unchanged_meet_the_refusals_limit() -> None:
    """A relaxed repeat that fails exactly as before shows nothing had changed: past
    MAX_REPEATS of them in a row, the refusal's own stop ends the prompt."""
    prompt = Prompt()
    grep = sh('grep -rn "def resolve_tenant" src/')
    rounds = prompt.repeat(MAX_REPEATS + 2, (grep, fails("Exit code: 1")))
    assert all(r.ran == 1 for r in rounds)
    assert [r.stop is not None for r in rounds] == [False] * (MAX_REPEATS + 1) + [True]
    assert rounds[-1].stop == LoopStop(
        LoopType.REPEATED_FAILED_CALL, repeat_limit_stop_message(MAX_REPEATS)
    )


def test_a_repeat_that_fails_differently_or_after_waiting_does_not_count() -> None:
    prompt = Prompt()
    build = sh("npm run build")
    rounds = [prompt.batch((build, build_fails(n))) for n in range(12, 0, -1)]
    assert all(r.stop is None for r in rounds)
    waiting = Prompt()
    poll = sh("kubectl rollout status deploy/api --timeout=20s")
    rounds = waiting.repeat(3 * MAX_REPEATS, (poll, fails("timed out waiting")))
    assert all(
        r.stop is None or r.stop.loop_type is not LoopType.REPEATED_FAILED_CALL for r in rounds
    )
