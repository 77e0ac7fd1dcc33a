"""R9 near repeats, R10 reworded rewrites and R11 no new state (docs/protections.md, "Loop
profiles"): the loops each stops, the legitimate neighbours each lets through, and that a prompt
replaying from before the normalizer runs none of them.

Driven batch by batch through the protections exactly as the workflow drives them
(``Prompt`` from ``test_loop_rules``).
"""

from __future__ import annotations

from workflows.contracts import ToolCall
from workflows.contracts.outcome import ExecutionStatus, ToolErrorType
from workflows.rules import LoopRule, RuleDecisionKind
from workflows.rules.loop_rules import LoopRules
from workflows.rules.near_repeats import NEAR_REPEAT_REMINDER, NEAR_REPEAT_THRESHOLD
from workflows.rules.registry import RULES
from workflows.rules.rewrites import REWRITE_REMINDER, REWRITE_THRESHOLD
from workflows.rules.stagnation import STAGNATION_THRESHOLD
from workflows.seed.guard import GuardMode

from .test_loop_rules import Outcome, Prompt, Round, call, fails, sh, works

QUESTIONS = [
    "Which database should the new service use, Postgres or MySQL?",
    "Postgres or MySQL: which database should I set up for the new service?",
    "Should the new service use Postgres or MySQL as its database?",
]
ANSWERS = ["Postgres.", "Postgres, as I said.", "postgres", "Use Postgres please."]


def kinds(rounds: list[Round], rule: LoopRule) -> list[tuple[int, RuleDecisionKind]]:
    return [(i + 1, k) for i, r in enumerate(rounds) for k in r.kinds(rule)]


def status(i: int, state: str = "pending") -> str:
    return f"[2026-12-06T08:{i:02d}:07Z] approval {state} (request {8800 + i}, took {i * 7 % 90}ms)"


# --- R9 -------------------------------------------------------------------------------------


def test_a_question_asked_again_in_other_words_is_reminded_then_stopped() -> None:
    prompt = Prompt()
    rounds = [
        prompt.batch((call("ask_user", question=QUESTIONS[i % 3]), works(ANSWERS[i % 4])))
        for i in range(NEAR_REPEAT_THRESHOLD + 3)
    ]
    assert kinds(rounds, LoopRule.NEAR_REPEAT) == [
        (NEAR_REPEAT_THRESHOLD + 1, RuleDecisionKind.WARN),
        (NEAR_REPEAT_THRESHOLD + 2, RuleDecisionKind.STOP),
    ]
    assert rounds[NEAR_REPEAT_THRESHOLD].reminders == [NEAR_REPEAT_REMINDER]
    stop = rounds[NEAR_REPEAT_THRESHOLD + 1].stop
    assert stop is not None and stop.loop_type.value == LoopRule.NEAR_REPEAT.value
    assert all(d.tool is None for r in rounds for d in r.rules)  # keys are private


def test_a_status_with_a_fresh_id_and_time_is_a_repeat_and_one_that_moves_is_not() -> None:
    spinning = Prompt()
    rounds = [
        spinning.batch(
            (call("check_approval", since=f"2026-12-06T08:{i:02d}:00Z"), works(status(i)))
        )
        for i in range(12)
    ]
    assert (NEAR_REPEAT_THRESHOLD + 1, RuleDecisionKind.WARN) in kinds(rounds, LoopRule.NEAR_REPEAT)

    moving = Prompt()
    states = ["pending", *(f"running {p}%" for p in range(10, 100, 10)), "approved"]
    rounds = [
        moving.batch(
            (call("check_approval", since=f"2026-12-06T08:{i:02d}:00Z"), works(status(i, s)))
        )
        for i, s in enumerate(states)
    ]
    assert not kinds(rounds, LoopRule.NEAR_REPEAT)


def test_a_clarifying_question_asked_once_more_then_new_input_resets() -> None:
    prompt = Prompt()
    rounds = [prompt.batch((call("ask_user", question=QUESTIONS[0]), works("the usual one")))]
    rounds.append(prompt.batch((call("ask_user", question=QUESTIONS[1]), works("Postgres."))))
    rounds += [
        prompt.batch(
            (call("ask_user", question=QUESTIONS[i % 3]), works("Postgres.")),
            user_input=i == 3,
        )
        for i in range(NEAR_REPEAT_THRESHOLD)
    ]
    assert not kinds(rounds, LoopRule.NEAR_REPEAT)


def test_paging_with_new_items_is_not_a_near_repeat() -> None:
    prompt = Prompt()
    rounds = [
        prompt.batch(
            (
                call("fetch", url=f"https://api.example.com/invoices?page={p}"),
                works(f"page {p} of 60: INV-{p * 3} INV-{p * 3 + 1} INV-{p * 3 + 2} overdue"),
            )
        )
        for p in range(1, 61)
    ]
    assert not any(r.rules for r in rounds)


# --- R10 ------------------------------------------------------------------------------------

DRAFT = [
    "## Install\nRun the installer and accept the defaults.",
    "## Usage\nCall the client with your token and a region.",
    "## Limits\nOne hundred requests a minute per token.",
    "## Support\nOpen an issue with the request id.",
]


def test_drafts_that_shuffle_the_same_sections_are_reminded_then_stopped() -> None:
    prompt = Prompt()
    rounds = []
    for i in range(REWRITE_THRESHOLD + 3):
        order = DRAFT[i % 4 :] + DRAFT[: i % 4]
        content = "# Client\n\n" + "\n\n".join(order)
        rounds.append(
            prompt.batch(
                (call("edit_file", path="README.md", content=content), works("Wrote README.md"))
            )
        )
    assert kinds(rounds, LoopRule.REWRITE)[:2] == [
        (REWRITE_THRESHOLD + 1, RuleDecisionKind.WARN),
        (REWRITE_THRESHOLD + 2, RuleDecisionKind.STOP),
    ]
    assert REWRITE_REMINDER in rounds[REWRITE_THRESHOLD].reminders


def test_drafts_that_grow_and_an_edit_test_cycle_that_learns_are_not_rewrites() -> None:
    growing = Prompt()
    rounds = [
        growing.batch(
            (
                call(
                    "edit_file",
                    path="README.md",
                    content="\n\n".join(DRAFT[: i + 1]) + f"\n{'new section text ' * i}{i}",
                ),
                works("Wrote README.md"),
            )
        )
        for i in range(4)
    ]
    assert not kinds(rounds, LoopRule.REWRITE)

    learning = Prompt()
    rounds = []
    for i in range(8):
        body = f"def retry(n):\n    return n * {i} if n else default_backoff(n, limit=3)\n"
        rounds.append(
            learning.batch(
                (call("edit_file", path="retry.py", content=body * 3), works("Wrote retry.py"))
            )
        )
        rounds.append(learning.batch((sh("pytest -q"), works(f"{8 - i} failed, {40 + i} passed"))))
    assert not kinds(rounds, LoopRule.REWRITE)


def test_a_memory_tool_fed_the_same_facts_in_new_words_is_a_rewrite() -> None:
    facts = [
        "The user prefers Postgres, deploys on Fridays, and their team is called Atlas.",
        "Team Atlas deploys on Fridays; the user prefers Postgres.",
        "Prefers Postgres. Deploys Fridays. Team name: Atlas.",
    ]
    prompt = Prompt()
    rounds = [
        prompt.batch((call("save_memory", fact=facts[i % 3]), works(f"Memory saved (id: {i})")))
        for i in range(REWRITE_THRESHOLD + 2)
    ]
    assert (REWRITE_THRESHOLD + 1, RuleDecisionKind.WARN) in kinds(rounds, LoopRule.REWRITE)


# --- R11 ------------------------------------------------------------------------------------


def test_a_sweep_that_wraps_round_is_stopped_once_nothing_is_new() -> None:
    prompt = Prompt()
    pages = 8
    rounds = [
        prompt.batch(
            (
                call("list_invoices", status="overdue", page=p),
                works(f'{{"page": {p}, "items": ["INV-{p}"], "took_ms": {p * 37 % 300}}}'),
            )
        )
        for p in list(range(1, pages + 1)) * 4
    ]
    assert kinds(rounds, LoopRule.STAGNATION) == [
        (pages + STAGNATION_THRESHOLD, RuleDecisionKind.WARN),
        (pages + STAGNATION_THRESHOLD + 1, RuleDecisionKind.STOP),
    ]


def test_a_wait_input_or_anything_new_starts_the_count_again() -> None:
    prompt = Prompt()
    rounds = [prompt.batch((call("job_status", id="7"), works(f"state {i % 2}"))) for i in range(2)]
    for i in range(3 * STAGNATION_THRESHOLD):
        if i % (STAGNATION_THRESHOLD - 1) == 0:
            rounds.append(prompt.batch((sh("sleep 30"), works(""))))  # time passed
        rounds.append(prompt.batch((call("job_status", id="7"), works(f"state {i % 2}"))))
    assert not kinds(rounds, LoopRule.STAGNATION)
    more = [
        prompt.batch((call("job_status", id="7"), works(f"state {i % 2}")), user_input=i == 5)
        for i in range(STAGNATION_THRESHOLD + 2)
    ]
    assert not kinds(more, LoopRule.STAGNATION)


def heartbeats(prompt: Prompt, rounds: int) -> list[Round]:
    """A model waiting on a reply that never comes, keeping itself busy: ``echo idle``,
    ``sleep 5; echo ok`` and ``echo "waiting"`` in turn, each answered with its own words."""
    cycle = [("echo idle", "idle"), ("sleep 5; echo ok", "ok"), ('echo "waiting"', "waiting")]
    return [prompt.batch((sh(cycle[i % 3][0]), works(cycle[i % 3][1]))) for i in range(rounds)]


def test_waits_between_commands_that_look_at_nothing_are_nothing_new() -> None:
    """Since LOOKS_AND_IDS_PATCH a wait is news only when the world was looked at since the
    last wait that was: heartbeats that only echo learn nothing from their sleeps (R11); since
    WORLD_IDS_PATCH their answers, the model's own words, are not news even the first time."""
    now, since, before = Prompt(), Prompt(world_ids=False), Prompt(looks_and_ids=False)
    opening = (call("send_message", to="reviewer", text="Please review PR 412"), works("sent"))
    for prompt in (now, since, before):
        prompt.batch(opening)
    # Only the first wait, after the message was sent, is news.
    assert kinds(heartbeats(now, 3 * STAGNATION_THRESHOLD), LoopRule.STAGNATION) == [
        (2 + STAGNATION_THRESHOLD, RuleDecisionKind.WARN),
        (2 + STAGNATION_THRESHOLD + 1, RuleDecisionKind.STOP),
    ]
    # The three commands are new once each; from the fourth batch on nothing is.
    assert kinds(heartbeats(since, 3 * STAGNATION_THRESHOLD), LoopRule.STAGNATION) == [
        (3 + STAGNATION_THRESHOLD, RuleDecisionKind.WARN),
        (3 + STAGNATION_THRESHOLD + 1, RuleDecisionKind.STOP),
    ]
    assert not kinds(heartbeats(before, 3 * STAGNATION_THRESHOLD), LoopRule.STAGNATION)


def test_the_same_answer_about_the_same_thing_asked_another_way_is_nothing_new() -> None:
    """An answer that names what its call asked about (the pod) is keyed by that, since
    WORLD_IDS_PATCH, not by the whole call: the same log lines of the same pod fetched with
    a limit one higher each time are nothing new (R11). Before it, each new limit was a new
    question; and the same words about another pod are still another answer."""
    lines = "\n".join(
        f"2026-12-07T10:0{n}:00Z ERROR payments-api-7d9f: db pool exhausted" for n in range(6)
    )

    def fetch(pod: str, limit: int) -> tuple[ToolCall, Outcome]:
        return call("fetch_pod_logs", pod=pod, namespace="prod", limit=limit), works(
            f"Logs of {pod}:\n" + lines.replace("payments-api-7d9f", pod)
        )

    since, before = Prompt(), Prompt(world_ids=False)
    rounds = {
        name: [prompt.batch(fetch("payments-api-7d9f", 100 + n)) for n in range(20)]
        for name, prompt in (("since", since), ("before", before))
    }
    assert kinds(rounds["since"], LoopRule.STAGNATION) == [
        (STAGNATION_THRESHOLD + 1, RuleDecisionKind.WARN),
        (STAGNATION_THRESHOLD + 2, RuleDecisionKind.STOP),
    ]
    assert not kinds(rounds["before"], LoopRule.STAGNATION)
    pods = Prompt()
    others = [pods.batch(fetch(f"payments-api-{n:04x}", 100)) for n in range(20)]
    assert not kinds(others, LoopRule.STAGNATION)


def test_the_model_s_own_words_echoed_back_are_never_news() -> None:
    """Since WORLD_IDS_PATCH an echo's answer is the model's own words, not something the
    world said: a model asking for a reply through the shell learns nothing, however it words
    the echo (R11). Before it, every new wording was a new answer."""
    actions = ["build", "pull", "restart", "recreate", "rebuild", "redeploy", "refresh"]
    since, before = Prompt(), Prompt(world_ids=False)
    rounds: dict[str, list[Round]] = {"since": [], "before": []}
    for name, prompt in (("since", since), ("before", before)):
        prompt.batch((call("read_file", path="compose.yaml"), works("services: api, worker")))
        for n in range(2 * STAGNATION_THRESHOLD):
            words = f"May I {actions[n % 7]} the {'api' if n % 2 else 'worker'} service ({n // 7})?"
            rounds[name].append(prompt.batch((sh(f'echo "{words}"'), works(words))))
    assert kinds(rounds["since"], LoopRule.STAGNATION) == [
        (STAGNATION_THRESHOLD, RuleDecisionKind.WARN),
        (STAGNATION_THRESHOLD + 1, RuleDecisionKind.STOP),
    ]
    assert not kinds(rounds["before"], LoopRule.STAGNATION)


def test_a_wait_followed_by_a_look_is_news_every_time() -> None:
    """A ``sleep 30`` then a status call, or a sleep and a look in one command, looks at the
    world after every wait: the same answers again are a job still running, not a loop."""
    apart, together = Prompt(), Prompt()
    rounds = []
    for _ in range(3 * STAGNATION_THRESHOLD):
        rounds.append(apart.batch((sh("sleep 30"), works(""))))
        rounds.append(apart.batch((call("job_status", id="7"), works("state running"))))
        rounds.append(together.batch((sh("sleep 30; tail -n 3 build.log"), works("compiling"))))
    assert not kinds(rounds, LoopRule.STAGNATION)


def test_the_same_answer_to_reworded_questions_is_nothing_new() -> None:
    commits = (
        "a1b2c3d fix(cli): keep the spinner on one line\n9f8e7d6 docs: fix a typo in the README\n"
    )
    patterns = [f"--grep=speed{n}" for n in range(3 * STAGNATION_THRESHOLD)]
    since, before = Prompt(), Prompt(nothing_new=False)
    rounds = {
        name: [prompt.batch((sh(f"git log --oneline {p}"), works(commits))) for p in patterns]
        for name, prompt in (("since", since), ("before", before))
    }
    # The first answer is new; from the second on nothing was learned, however it was asked.
    assert kinds(rounds["since"], LoopRule.STAGNATION) == [
        (STAGNATION_THRESHOLD + 1, RuleDecisionKind.WARN),
        (STAGNATION_THRESHOLD + 2, RuleDecisionKind.STOP),
    ]
    assert not kinds(rounds["before"], LoopRule.STAGNATION)  # each question was new


def test_the_same_ack_for_another_change_and_an_answer_about_what_was_asked_are_new() -> None:
    prompt = Prompt()
    rounds = [
        prompt.batch((call("write_file", path=f"m{n}.py", content=f"x = {n}"), works("written")))
        for n in range(3 * STAGNATION_THRESHOLD)
    ]
    rounds += [
        prompt.batch((call("get_trace", id=f"tr_{n:04x}"), works(f"trace tr_{n:04x}: 7 spans")))
        for n in range(3 * STAGNATION_THRESHOLD)
    ]
    assert not kinds(rounds, LoopRule.STAGNATION)


LISTING = (
    "total 48\ndrwxr-xr-x  6 dev staff  192 src\n-rw-r--r--  1 dev staff 1204 package.json\n"
    "-rw-r--r--  1 dev staff  310 tsconfig.json\n-rw-r--r--  1 dev staff 2231 README.md\n"
    "drwxr-xr-x  9 dev staff  288 node_modules\n-rw-r--r--  1 dev staff   96 .gitignore\n"
)


def footer(n: int) -> str:
    """The agent's own context usage, appended to every answer: a count that only grows."""
    return f"\n[Context window: {38_744 + 917 * n:,} / 200,000 tokens used]"


def test_a_long_answer_whose_count_moved_is_nothing_new() -> None:
    """The same listing again and again, each time with the agent's context usage grown:
    since MOVED_COUNTS_PATCH one answer, read differently only by a count (R11)."""
    flags = ["-la", "-l", "-al", "-la .", "-lA", "-l ."]
    since, before = Prompt(), Prompt(moved_counts=False)
    rounds = {
        name: [
            prompt.batch((sh(f"ls {flags[n % len(flags)]}"), works(LISTING + footer(n))))
            for n in range(3 * STAGNATION_THRESHOLD)
        ]
        for name, prompt in (("since", since), ("before", before))
    }
    assert kinds(rounds["since"], LoopRule.STAGNATION) == [
        (STAGNATION_THRESHOLD + 1, RuleDecisionKind.WARN),
        (STAGNATION_THRESHOLD + 2, RuleDecisionKind.STOP),
    ]
    assert not kinds(rounds["before"], LoopRule.STAGNATION)  # every count was new


def test_a_count_that_is_the_answer_and_pages_of_new_numbers_are_new() -> None:
    """A crawl's status, whose moving count is most of what it says, and a listing whose
    every id and amount is new: each answer is news, however alike its words."""
    prompt = Prompt()
    rounds = [
        prompt.batch(
            (
                call("firecrawl_crawl_status", id="c7b1e0d4"),
                works(f'{{"status": "scraping", "completed": {n}, "total": 90, "credits": {n}}}'),
            )
        )
        for n in range(3, 3 * STAGNATION_THRESHOLD + 3)
    ]
    rounds += [
        prompt.batch(
            (
                call("list_orders", cursor=f"c_{n:04d}"),
                works(
                    f"orders #{250_000 + 100 * n}-#{250_099 + 100 * n} (100); page gross "
                    f"${8_000 + 37 * n:,}.{n % 100:02d}; refunds {n % 7}; has_more: true"
                ),
            )
        )
        for n in range(3 * STAGNATION_THRESHOLD)
    ]
    assert not kinds(rounds, LoopRule.STAGNATION)


PEOPLE = ["Alice", "Bob", "Carol", "Dmitri", "Elif", "Farah", "Gustav", "Hana", "Ivo", "Jana"]


def birthday(name: str) -> ToolCall:
    return call(
        "manage_calendar",
        action="create_event",
        title=f"{name}'s birthday",
        date="2026-03-14",
        all_day=True,
        recurrence="RRULE:FREQ=YEARLY",
        calendar="Family & friends",
    )


def test_one_acknowledgement_for_many_items_is_no_repeat() -> None:
    """Eighteen birthdays, each created with its own title and answered "Event created.":
    a short answer cannot tell the calls apart, so what they name does (R9), and it is no
    evidence that nothing was learned (R11); a tool nobody declared state-changing."""
    since, before = Prompt(), Prompt(nothing_new=False)
    rounds = {
        name: [prompt.batch((birthday(p), works("Event created."))) for p in PEOPLE * 2]
        for name, prompt in (("since", since), ("before", before))
    }
    assert not [d for r in rounds["since"] for d in r.rules]
    assert kinds(rounds["before"], LoopRule.NEAR_REPEAT)  # before: read as one call again


# --- what a call acts on: the ids the world listed (WORLD_IDS_PATCH) ------------------------

NODE_IDS = [f"I_kwDOLx3Tns65d{n:04x}b{n % 7}" for n in range(4000, 4012)]
EPIC = "I_kwDOLx3Tns65d30ce8"
LINKED = (
    '{"data":{"addSubIssue":{"clientMutationId":null}}}\n'
    "[The command completed with exit code 0.]\n[Current working directory: /workspace/app]"
)


def link(node: str) -> ToolCall:
    return call(
        "github_graphql",
        query=f'mutation {{ addSubIssue(input: {{issueId: "{EPIC}", subIssueId: "{node}"}}) '
        "{ clientMutationId } }",
    )


def lookup() -> tuple[ToolCall, Outcome]:
    listing = "\n".join(f'"i{409 + n}": {{"id": "{node}"}}' for n, node in enumerate(NODE_IDS))
    return call("github_graphql", query="query { epic ids }"), works(
        f'{{"epic": {{"id": "{EPIC}"}},\n{listing}}}'
    )


def test_mutations_on_ids_a_query_listed_side_by_side_are_different_work() -> None:
    """Twelve sub-issues linked to their epic, one mutation each by the node id a query
    listed, all answered with one static acknowledgement: masked, the ids are one call
    repeated (R10, then R9, stopped it before the patch); listed side by side by the world,
    they name twelve issues."""
    since, before = Prompt(), Prompt(world_ids=False)
    rounds = {}
    for name, prompt in (("since", since), ("before", before)):
        prompt.batch(lookup())
        rounds[name] = [prompt.batch((link(node), works(LINKED))) for node in NODE_IDS]
    assert not [d for r in rounds["since"] for d in r.rules]
    stopped = [r.stop for r in rounds["before"] if r.stop is not None]
    assert stopped and stopped[0].loop_type.value == LoopRule.REWRITE.value


def test_ids_the_model_made_up_or_renamed_by_the_world_name_nothing() -> None:
    """What stays masked: an id no answer listed (the model's own, fresh each time), and a
    fresh id for the same thing, never listed beside the old one (each snapshot renames the
    button; the model clicks it again and again under its new name)."""
    made_up = Prompt()
    made_up.batch(lookup())
    invented = [f"I_kwDOLx3Tns65d{n:04x}f{n % 5}" for n in range(7000, 7012)]
    rounds = [made_up.batch((link(node), works(LINKED))) for node in invented]
    assert kinds(rounds, LoopRule.REWRITE)[:2] == [
        (REWRITE_THRESHOLD + 1, RuleDecisionKind.WARN),
        (REWRITE_THRESHOLD + 2, RuleDecisionKind.STOP),
    ]

    def button_clicked_again(prompt: Prompt) -> list[Round]:
        rounds = []
        for n in range(3 * NEAR_REPEAT_THRESHOLD):
            button, cart = f"a{n:03x}9f2c7e", f"b{n:03x}4d1e8a"
            page = f"- button 'Submit order' [ref={button}]\n- link 'Cart' [ref={cart}]\n" * 3
            rounds.append(prompt.batch((call("browser_snapshot"), works(page))))
            click = call("browser_click", element="Submit order button", ref=button)
            rounds.append(prompt.batch((click, works("Clicked. The button is disabled."))))
        return rounds

    since = button_clicked_again(Prompt())
    assert [d for r in since for d in r.rules] == [
        d for r in button_clicked_again(Prompt(world_ids=False)) for d in r.rules
    ]
    assert (2 * NEAR_REPEAT_THRESHOLD + 2, RuleDecisionKind.WARN) in kinds(
        since, LoopRule.NEAR_REPEAT
    )


# --- versioning and modes -------------------------------------------------------------------


def test_a_prompt_from_before_the_normalizer_runs_none_of_them() -> None:
    rules = LoopRules(
        Prompt().settings, GuardMode.ENFORCE, route_forced_off=False, normalized=False
    )
    normalized = [spec.rule for spec in RULES if spec.normalized]
    assert normalized == [
        LoopRule.NEAR_REPEAT,
        LoopRule.REWRITE,
        LoopRule.STAGNATION,
        LoopRule.STALE_WAIT,
    ]
    assert all(rules.modes[rule] is GuardMode.OFF for rule in normalized)


def test_shadow_records_would_decisions_and_changes_nothing() -> None:
    prompt = Prompt(mode=GuardMode.SHADOW)
    rounds = [
        prompt.batch((call("ask_user", question=QUESTIONS[i % 3]), works(ANSWERS[i % 4])))
        for i in range(NEAR_REPEAT_THRESHOLD + 3)
    ]
    assert [k for _, k in kinds(rounds, LoopRule.NEAR_REPEAT)] == [
        RuleDecisionKind.WOULD_WARN,
        RuleDecisionKind.WOULD_STOP,
    ]
    assert all(r.stop is None and not r.reminders for r in rounds)


def test_a_wait_with_options_before_its_subcommand_waits_since_the_normalizer() -> None:
    from workflows.contracts import ToolCall
    from workflows.rules.evidence import waits_for_time

    rollout = ToolCall(
        call_id="c",
        name="Bash",
        arguments={"command": "kubectl -n shop rollout status deploy/checkout --timeout=60s"},
    )
    listing = ToolCall(call_id="c", name="Bash", arguments={"command": "kubectl -n shop get pods"})
    assert waits_for_time(rollout, normalized=True)
    assert not waits_for_time(rollout)  # a prompt from before it keeps what it saw
    assert not waits_for_time(listing, normalized=True)


def test_the_same_refusal_again_is_nothing_new_however_the_call_was_worded() -> None:
    """Since REFUSALS_PATCH the runner's refusal to start a call is an answer to R11, as it
    is to R3 and R9: a model calling a tool the session does not have, with three summaries
    in turn and the finished tests re-run between them, learns nothing (no failure rule
    counts a refusal). Before it, a batch holding a refusal neither counted nor reset."""
    missing = fails(
        "Tool 'task_complete' does not exist. Available tools: bash, view, edit, grep.",
        ToolErrorType.TOOL_NOT_REGISTERED,
        ExecutionStatus.NOT_STARTED,
    )
    summaries = ["Added --json to stats; tests pass.", "Task complete: stats --json.", "Done."]
    since, before = Prompt(), Prompt(refusals=False)
    rounds: dict[str, list[Round]] = {"since": [], "before": []}
    for name, prompt in (("since", since), ("before", before)):
        prompt.batch((sh("npm test"), works("Tests: 6 passed, 6 total")))
        for n in range(3 * STAGNATION_THRESHOLD):
            step = (
                (sh("npm test"), works("Tests: 6 passed, 6 total"))
                if n % 4 == 3
                else (call("task_complete", summary=summaries[n % 3]), missing)
            )
            rounds[name].append(prompt.batch(step))
    # The first refusal is an answer never given: news; every later one, whatever the
    # wording, and the tests' unchanged re-run are not.
    assert kinds(rounds["since"], LoopRule.STAGNATION) == [
        (1 + STAGNATION_THRESHOLD, RuleDecisionKind.WARN),
        (1 + STAGNATION_THRESHOLD + 1, RuleDecisionKind.STOP),
    ]
    assert not kinds(rounds["before"], LoopRule.STAGNATION)


def test_a_refusal_never_given_before_is_news() -> None:
    """A refusal that says something new (the next tool the limit refuses) is an answer never
    given: a model working through its calls as the runner refuses each is not stale."""
    prompt = Prompt()
    rounds = [
        prompt.batch(
            (
                call(f"tool_{n}", q="x"),
                fails(
                    f"Tool 'tool_{n}' is not enabled for this session.",
                    ToolErrorType.TOOL_NOT_REGISTERED,
                    ExecutionStatus.NOT_STARTED,
                ),
            )
        )
        for n in range(3 * STAGNATION_THRESHOLD)
    ]
    assert not kinds(rounds, LoopRule.STAGNATION)
