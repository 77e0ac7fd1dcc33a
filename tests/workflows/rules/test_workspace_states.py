"""R7, workspace revisits (``workflows/rules/workspace_states.py``): file changes that return
the workspace to a state it was already in are no progress (docs/protections.md, "Loop profiles").
Driven batch by batch through the protections, as the workflow does."""

from __future__ import annotations

from workflows.contracts import ToolCall, ToolOutcome
from workflows.contracts.outcome import file_write
from workflows.contracts.prompt import LoopType
from workflows.contracts.prompt_options import PromptOptions
from workflows.rules import LoopRule, LoopSettings, RuleDecisionKind
from workflows.rules.evidence import CallEvidence, ResultKind
from workflows.rules.ladder import RuleReview
from workflows.rules.loop_rules import LoopRules
from workflows.rules.workspace_states import (
    REMEMBERED_FILES,
    WORKSPACE_REVISIT_REMINDER,
    WORKSPACE_REVISIT_STOP_MESSAGE,
    WORKSPACE_REVISIT_THRESHOLD,
    WorkspaceRevisits,
)
from workflows.seed.guard import GuardMode
from workflows.seed.protections import BatchProtections, LoopStop

from .test_loop_rules import Outcome, Prompt, Round, call, fails, sh, works

R7 = LoopRule.WORKSPACE_REVISIT
# The first write makes a new state; then one batch per revisit up to the threshold.
REMINDER_AT = WORKSPACE_REVISIT_THRESHOLD + 1


def wrote(files: dict[str, str | None], text: str = "Wrote the file.") -> Outcome:
    """A successful call that changed ``files`` (path -> content, ``None``: deleted), as a
    built-in file tool reports it."""

    def outcome(c: ToolCall) -> ToolOutcome:
        done = works(text)(c)
        writes = tuple(file_write(path, content) for path, content in files.items())
        return done.model_copy(update={"writes": writes})

    return outcome


def write(path: str, content: str) -> tuple[ToolCall, Outcome]:
    return call("edit_file", path=path), wrote({path: content})


def r7(rounds: list[Round]) -> list[RuleDecisionKind]:
    return [kind for r in rounds for kind in r.kinds(R7)]


# --- what is a revisit ----------------------------------------------------------------------


def test_the_same_file_rewritten_with_the_same_content_earns_a_reminder_then_a_stop() -> None:
    prompt = Prompt()
    rounds = prompt.repeat(REMINDER_AT + 1, write("config.json", '{"a": 1}'))

    assert all(not r.kinds(R7) for r in rounds[: REMINDER_AT - 1])
    assert rounds[REMINDER_AT - 1].reminders == [WORKSPACE_REVISIT_REMINDER]
    assert rounds[-1].stop == LoopStop(
        LoopType.REPEATED_WORKSPACE_STATE, WORKSPACE_REVISIT_STOP_MESSAGE
    )
    assert [d.count for d in rounds[-1].rules if d.rule is R7] == [REMINDER_AT]


def test_an_edit_undone_by_a_formatter_and_made_again_is_a_revisit() -> None:
    """The formatter runs through the shell, which reports no writes: the model's edit
    puts the file back into the content it already had, again and again."""
    prompt = Prompt()
    rounds = []
    for _ in range(REMINDER_AT + 1):
        rounds.append(prompt.batch(write("app.py", "x=1\n")))
        prompt.batch((sh("black app.py"), works("reformatted app.py")))

    assert rounds[REMINDER_AT - 1].reminders == [WORKSPACE_REVISIT_REMINDER]
    assert rounds[-1].stop is not None
    assert rounds[-1].stop.loop_type is LoopType.REPEATED_WORKSPACE_STATE


def test_a_revert_and_redo_cycle_between_two_versions_is_a_revisit() -> None:
    prompt = Prompt()
    versions = ["v = 1\n", "v = 2\n"]
    rounds = [prompt.batch(write("m.py", versions[i % 2])) for i in range(REMINDER_AT + 2)]

    # Two new states, then every batch returns to one of them.
    assert r7(rounds) == [RuleDecisionKind.WARN, RuleDecisionKind.STOP]
    assert rounds[REMINDER_AT].reminders == [WORKSPACE_REVISIT_REMINDER]


def test_a_deletion_is_a_state_and_recreating_the_same_file_returns_to_one() -> None:
    prompt = Prompt()
    create = (call("edit_file", path="tmp.txt"), wrote({"tmp.txt": "scratch"}))
    delete = (call("delete_file", path="tmp.txt"), wrote({"tmp.txt": None}))
    rounds = [prompt.batch(step) for _ in range(REMINDER_AT) for step in (create, delete)]

    assert r7(rounds)[:1] == [RuleDecisionKind.WARN]


# --- what is not ------------------------------------------------------------------------------


def test_a_long_refactor_of_many_files_never_revisits() -> None:
    prompt = Prompt()
    rounds = []
    for i in range(25):
        rounds.append(prompt.batch((call("read_file", path=f"h{i}.py"), works(f"def h{i}(): ..."))))
        rounds.append(prompt.batch(write(f"h{i}.py", f"def h{i}() -> None: ...\n")))
        rounds.append(prompt.batch((sh("pytest -q"), works("42 passed"))))
    # The same file edited again and again, each time into something new.
    rounds += [prompt.batch(write("main.py", f"step {i}\n")) for i in range(20)]

    assert not r7(rounds)


def test_reverting_an_experiment_once_then_moving_on_is_not_a_loop() -> None:
    prompt = Prompt()
    rounds = [
        prompt.batch(write("a.py", "original\n")),
        prompt.batch(write("a.py", "experiment\n")),
        prompt.batch(write("a.py", "original\n")),  # reverted: one return
        prompt.batch(write("a.py", "original\n")),  # written again "to be sure": two
        prompt.batch(write("b.py", "the real fix\n")),  # a new state: back to the bottom
        prompt.batch(write("a.py", "experiment\n")),
        prompt.batch(write("a.py", "original\n")),
    ]

    assert not r7(rounds)


def test_batches_without_writes_neither_count_nor_reset() -> None:
    prompt = Prompt()
    prompt.batch(write("a.py", "x"))
    rounds = []
    for _ in range(REMINDER_AT):
        rounds.append(prompt.batch(write("a.py", "x")))
        rounds.append(prompt.batch((call("read_file", path="a.py"), works("x"))))

    assert r7(rounds) == [RuleDecisionKind.WARN, RuleDecisionKind.STOP]


def test_several_writes_in_one_batch_are_one_revisit() -> None:
    prompt = Prompt()
    both = (call("edit_file", path="a.py"), wrote({"a.py": "1", "b.py": "2"}))
    rounds = prompt.repeat(REMINDER_AT, both, write("a.py", "1"), write("b.py", "2"))

    assert [d.count for r in rounds for d in r.rules if d.rule is R7] == [
        WORKSPACE_REVISIT_THRESHOLD
    ]


def test_a_failed_call_writes_nothing() -> None:
    prompt = Prompt(settings=LoopSettings(failure_cycle_mode=GuardMode.OFF))
    prompt.batch(write("a.py", "x"))

    def failed_with_writes(c: ToolCall) -> ToolOutcome:
        return fails("disk full")(c).model_copy(update={"writes": (file_write("a.py", "x"),)})

    rounds = prompt.repeat(3 * REMINDER_AT, (call("edit_file", path="a.py"), failed_with_writes))
    assert not r7(rounds)


def test_user_input_resets_the_count() -> None:
    prompt = Prompt()
    prompt.batch(write("a.py", "x"))
    rounds = prompt.repeat(WORKSPACE_REVISIT_THRESHOLD - 1, write("a.py", "x"))
    # The user asks to put it back: a revisit, but the count starts over.
    rounds.append(prompt.batch(write("a.py", "x"), user_input=True))
    rounds += prompt.repeat(WORKSPACE_REVISIT_THRESHOLD - 1, write("a.py", "x"))

    assert not r7(rounds)
    assert prompt.batch(write("a.py", "x")).reminders == [WORKSPACE_REVISIT_REMINDER]


# --- modes ------------------------------------------------------------------------------------


def test_shadow_and_warn_never_stop_and_off_never_counts() -> None:
    for mode, kinds in (
        (GuardMode.SHADOW, [RuleDecisionKind.WOULD_WARN, RuleDecisionKind.WOULD_STOP]),
        (GuardMode.WARN, [RuleDecisionKind.WARN, RuleDecisionKind.WOULD_STOP]),
    ):
        prompt = Prompt(settings=LoopSettings(workspace_revisit_mode=mode))
        rounds = prompt.repeat(REMINDER_AT + 3, write("a.py", "x"))
        assert r7(rounds) == kinds
        assert all(r.stop is None for r in rounds)
        reminded = sum(r.reminders == [WORKSPACE_REVISIT_REMINDER] for r in rounds)
        assert reminded == (1 if mode is GuardMode.WARN else 0)
    off = Prompt(settings=LoopSettings(workspace_revisit_mode=GuardMode.OFF))
    assert not r7(off.repeat(3 * REMINDER_AT, write("a.py", "x")))


def test_the_rule_follows_the_guards_mode_and_is_off_for_prompts_from_before_it() -> None:
    shadow = Prompt(mode=GuardMode.SHADOW)
    assert r7(shadow.repeat(REMINDER_AT, write("a.py", "x"))) == [RuleDecisionKind.WOULD_WARN]
    protections = BatchProtections(PromptOptions(), "/ws")
    rules = LoopRules(
        LoopSettings(), GuardMode.ENFORCE, route_forced_off=False, progress_rules=False
    )
    protections.use_loop_rules(rules)
    assert rules.modes[R7] is GuardMode.OFF


# --- the counter itself -----------------------------------------------------------------------


def evidence(*writes: tuple[str, str]) -> CallEvidence:
    return CallEvidence(
        tool="edit_file",
        digest="d",
        kind=ResultKind.SUCCESS,
        fingerprint="f",
        waits=False,
        paths=frozenset(),
        writes=writes,
    )


def test_past_its_file_limit_the_rule_starts_over_instead_of_seeing_false_returns() -> None:
    counter = WorkspaceRevisits()

    def review(*calls: CallEvidence) -> list[object]:
        return list(counter.review(RuleReview(list(calls), 0, False, GuardMode.ENFORCE)))

    review(evidence(file_write("a", "1")))
    many = tuple(file_write(f"f{i}", "x") for i in range(REMEMBERED_FILES))
    review(evidence(*many))
    assert len(counter.files) == REMEMBERED_FILES  # the overflow started over
    assert not review(evidence(file_write("a", "1")))
    # Only digests are kept: the state holds no path.
    assert list(counter.files) == [file_write("a", "1")[0]]
