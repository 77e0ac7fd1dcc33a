"""The corpus's synthetic legitimate scenarios: repetition that is the work, one per function.

Each function builds one scenario of ``bench/corpus/`` (``bench/make_corpus.py`` writes
them, in the order :func:`legit` lists them); each ends with the model's answer.
"""

from __future__ import annotations

from bench.corpus_builders import (
    Entry,
    Json,
    answer,
    call,
    cancelled,
    fail,
    missing_path,
    not_found,
    ok,
    tool,
    turn,
)

# --- shared by several scenarios --------------------------------------------------------


TEST_FAILURES = [
    "FAILED tests/test_api.py::test_create - KeyError: 'id'",
    "FAILED tests/test_api.py::test_create - AssertionError: 201 != 200",
    "FAILED tests/test_api.py::test_update - AssertionError: 'name' missing",
    "FAILED tests/test_api.py::test_delete - TypeError: delete() takes 1 argument",
]


def legit_poll_job_until_done() -> Entry:
    return Entry(
        name="legit-poll-job-until-done",
        label="legit",
        shape="polling a job until done",
        description="The model polls a CI job with the same call until it succeeds.",
        tools={
            "job_status": tool(
                *[ok("status: running") for _ in range(7)], ok("status: succeeded (4m12s)")
            )
        },
        turns=[
            *[turn(call("job_status", {"job_id": "build-4711"})) for _ in range(8)],
            answer("The build succeeded."),
        ],
    )


def legit_poll_with_sleep() -> Entry:
    polls: list[Json] = []
    for _ in range(6):
        polls.append(turn(call("run_shell_command", {"command": "sleep 15"})))
        polls.append(turn(call("job_status", {"job_id": "migrate-88"})))
    return Entry(
        name="legit-poll-with-sleep",
        label="legit",
        shape="polling a job until done",
        description="Sleep, poll, sleep, poll: the migration finishes on the sixth poll.",
        tools={
            "run_shell_command": tool(ok("")),
            "job_status": tool(*[ok("status: running") for _ in range(5)], ok("status: done")),
        },
        turns=[*polls, answer("The migration is done.")],
    )


def legit_paging() -> Entry:
    return Entry(
        name="legit-paging",
        label="legit",
        shape="paging through results",
        description="Twelve pages of search results, one request each.",
        tools={
            "search_issues": tool(
                *[ok(f"page {p}: 50 issues") for p in range(1, 12)],
                ok("page 12: 7 issues (last page)"),
            )
        },
        turns=[
            *[turn(call("search_issues", {"query": "label:bug", "page": p})) for p in range(1, 13)],
            answer("There are 557 open bugs."),
        ],
    )


def legit_paging_transient_retry() -> Entry:
    paging: list[Json] = []
    outcomes: list[Json] = []
    for p in range(1, 11):
        paging.append(turn(call("search_issues", {"query": "is:open", "page": p})))
        if p in (4, 7):
            outcomes.append(fail("execution_failed", "HTTP 503 Service Unavailable"))
            paging.append(turn(call("search_issues", {"query": "is:open", "page": p})))
        outcomes.append(ok(f"page {p}: 50 issues"))
    return Entry(
        name="legit-paging-transient-retry",
        label="legit",
        shape="paging through results",
        description="Ten pages; pages 4 and 7 answer 503 once and the model retries them.",
        tools={"search_issues": tool(*outcomes)},
        turns=[*paging, answer("Done: 500 open issues.")],
        note="Seawall refuses the unchanged retry of page 4 (its 503 is remembered), so it "
        "does not run and later calls take the outcomes scripted one call earlier (fixture "
        "outcomes go by call order); the prompt is not halted.",
    )


def legit_fix_then_recheck_same_command() -> Entry:
    recheck: list[Json] = []
    for i in range(5):
        recheck.append(turn(call("run_shell_command", {"command": "pytest tests/test_api.py -q"})))
        if i < 4:
            recheck.append(
                turn(
                    call(
                        "edit_file",
                        {
                            "path": "src/api.py",
                            "old_string": f"fix-{i}",
                            "new_string": f"fix-{i + 1}",
                        },
                    )
                )
            )
    return Entry(
        name="legit-fix-then-recheck-same-command",
        label="legit",
        shape="fix-then-recheck that succeeds on the 5th try",
        description="Test, fix, test again with the same command: it passes on the fifth run.",
        tools={
            "run_shell_command": tool(
                *[
                    fail("shell_execute_error", f"Command failed.\nOutput:\n{f}\nExit code: 1")
                    for f in TEST_FAILURES
                ],
                ok("42 passed in 3.1s"),
            ),
            "edit_file": tool(ok("Edited src/api.py (1 replacement).")),
        },
        turns=[*recheck, answer("All tests pass.")],
    )


def legit_fix_then_recheck_varied() -> Entry:
    commands = [
        "pytest tests/test_api.py -q",
        "pytest tests/test_api.py -q -x",
        "pytest tests/test_api.py -q -k create",
        "pytest tests/test_api.py -q -k update",
        "pytest tests/ -q",
    ]
    varied: list[Json] = []
    for i, command in enumerate(commands):
        varied.append(turn(call("run_shell_command", {"command": command})))
        if i < 4:
            varied.append(
                turn(
                    call(
                        "edit_file",
                        {
                            "path": "src/api.py",
                            "old_string": f"fix-{i}",
                            "new_string": f"fix-{i + 1}",
                        },
                    )
                )
            )
    return Entry(
        name="legit-fix-then-recheck-varied",
        label="legit",
        shape="fix-then-recheck that succeeds on the 5th try",
        description="Test, fix, test again, narrowing the test selection each time; the "
        "fifth run passes.",
        tools={
            "run_shell_command": tool(
                *[
                    fail("shell_execute_error", f"Command failed.\nOutput:\n{f}\nExit code: 1")
                    for f in TEST_FAILURES
                ],
                ok("42 passed in 3.1s"),
            ),
            "edit_file": tool(ok("Edited src/api.py (1 replacement).")),
        },
        turns=[*varied, answer("All tests pass.")],
    )


def legit_permission_rejections() -> Entry:
    return Entry(
        name="legit-permission-rejections",
        label="legit",
        shape="permission rejections",
        description="The user rejects every write; nine writes over three batches.",
        tools={"write_file": tool(ok("written"), mutating=True)},
        permissions={"write_file": "reject"},
        turns=[
            turn(
                *[
                    call("write_file", {"path": f"{c}.txt", "content": str(i)})
                    for i, c in enumerate("abcd")
                ]
            ),
            turn(
                *[
                    call("write_file", {"path": f"{c}.txt", "content": str(i)})
                    for i, c in enumerate("efgh")
                ]
            ),
            turn(call("write_file", {"path": "i.txt", "content": "9"})),
            answer("You rejected the writes; nothing was changed."),
        ],
    )


def legit_permission_rejections_shell() -> Entry:
    return Entry(
        name="legit-permission-rejections-shell",
        label="legit",
        shape="permission rejections",
        description="The user rejects three shell commands; the model falls back to reading.",
        tools={
            "run_shell_command": tool(ok("done"), mutating=True),
            "read_file": tool(ok("[tool.pytest.ini_options]\ntestpaths = ['tests']")),
        },
        permissions={"run_shell_command": "reject"},
        turns=[
            turn(call("run_shell_command", {"command": "pip install -e ."})),
            turn(call("run_shell_command", {"command": "pip install --user -e ."})),
            turn(call("run_shell_command", {"command": "python -m pip install -e ."})),
            turn(call("read_file", {"path": "pyproject.toml"})),
            answer("I can't install without your approval; here is what the config says."),
        ],
    )


def legit_user_cancels_prompt() -> Entry:
    return Entry(
        name="legit-user-cancels-prompt",
        label="legit",
        shape="user cancellations",
        description="A long build is running when the user cancels the prompt.",
        tools={
            "read_file": tool(ok("build: make all")),
            "run_shell_command": tool({"hang": True}),
        },
        turns=[
            turn(call("read_file", {"path": "Makefile"})),
            turn(
                call("run_shell_command", {"command": "make all"}),
                call("read_file", {"path": "README.md"}),
            ),
            answer("never reached"),
        ],
        events=[{"batch": 2, "cancel": True}],
    )


def legit_user_cancels_tool_calls() -> Entry:
    return Entry(
        name="legit-user-cancels-tool-calls",
        label="legit",
        shape="user cancellations",
        description="The user cancels each long-running command as it starts; the model "
        "then asks how to proceed.",
        tools={"run_shell_command": tool(cancelled())},
        turns=[
            turn(
                call("run_shell_command", {"command": "npm run build"}),
                call("run_shell_command", {"command": "npm test"}),
            ),
            turn(
                call("run_shell_command", {"command": "npm run build -- --mode=dev"}),
                call("run_shell_command", {"command": "npm test -- --runInBand"}),
            ),
            turn(call("run_shell_command", {"command": "npm run lint"})),
            answer("You cancelled each command; what would you like me to run?"),
        ],
    )


def legit_concurrent_siblings_one_fails() -> Entry:
    failing_siblings = [
        (
            "grep_search",
            {"pattern": "TODO", "path": "vendor"},
            fail("search_path_not_found", "Search path not found: vendor"),
        ),
        (
            "glob",
            {"pattern": "**/*.proto"},
            fail("glob_execution_error", "Glob failed: permission denied on .cache"),
        ),
        (
            "run_shell_command",
            {"command": "go vet ./..."},
            fail("shell_execute_error", "Command failed.\nOutput:\nvet: no Go files\nExit code: 1"),
        ),
        (
            "http_request",
            {"method": "GET", "url": "/api/schema"},
            fail("execution_failed", "HTTP 404 Not Found"),
        ),
        (
            "list_directory",
            {"path": "docs/api"},
            fail("file_not_found", "Directory not found: docs/api"),
        ),
    ]
    sibling_turns: list[Json] = []
    for i, (name, args, _) in enumerate(failing_siblings):
        sibling_turns.append(
            turn(
                *[call("read_file", {"path": f"src/module_{3 * i + k}.py"}) for k in range(3)],
                call(name, args),
            )
        )
    return Entry(
        name="legit-concurrent-siblings-one-fails",
        label="legit",
        shape="concurrent siblings where one fails",
        description="Each batch reads three source files and runs one other probe, which "
        "fails; a different probe each time.",
        tools={
            "read_file": tool(ok("def main():\n    pass\n")),
            **{name: tool(outcome) for name, _, outcome in failing_siblings},
        },
        turns=[*sibling_turns, answer("Here is the overview of the codebase.")],
    )


def legit_concurrent_siblings_lint() -> Entry:
    lint = [f"src/module_{i}.py:{10 + i}:1: E501 line too long" for i in range(6)]
    sibling_same: list[Json] = []
    for i in range(7):
        sibling_same.append(
            turn(
                call("read_file", {"path": f"src/module_{i}.py"}),
                call(
                    "edit_file",
                    {"path": f"src/module_{i}.py", "old_string": "x" * (i + 1), "new_string": "y"},
                ),
                call("run_shell_command", {"command": f"ruff check src/module_{i}.py"}),
            )
        )
    return Entry(
        name="legit-concurrent-siblings-lint",
        label="legit",
        shape="concurrent siblings where one fails",
        description="Read, fix and lint one module per batch; lint fails for the first six "
        "modules (a different finding each) and passes on the seventh.",
        tools={
            "read_file": tool(ok("x = 1\n")),
            "edit_file": tool(ok("Edited (1 replacement).")),
            "run_shell_command": tool(
                *[
                    fail("shell_execute_error", f"Command failed.\nOutput:\n{m}\nExit code: 1")
                    for m in lint
                ],
                ok("All checks passed!"),
            ),
        },
        turns=[*sibling_same, answer("The modules are lint-clean where I could fix them.")],
    )


def legit_git_diff_quiet() -> Entry:
    diff_turns: list[Json] = []
    for i in range(4):
        diff_turns.append(turn(call("run_shell_command", {"command": "git diff --quiet"})))
        if i < 3:
            diff_turns.append(
                turn(
                    call(
                        "edit_file",
                        {
                            "path": "CHANGELOG.md",
                            "old_string": f"## {i}",
                            "new_string": f"## {i + 1}",
                        },
                    )
                )
            )
    exit_1 = fail("shell_execute_error", "Command failed.\nOutput:\n\nExit code: 1")
    return Entry(
        name="legit-git-diff-quiet",
        label="legit",
        shape="`git diff --quiet` exiting 1 a few times",
        description="`git diff --quiet` exits 1 (there are changes) three times while the "
        "model "
        "edits; the fourth check is clean.",
        tools={
            "run_shell_command": tool(exit_1, exit_1, exit_1, ok("")),
            "edit_file": tool(ok("Edited CHANGELOG.md (1 replacement).")),
        },
        turns=[*diff_turns, answer("The working tree is clean.")],
        note="Seawall refuses the three unchanged reruns of `git diff --quiet` (three "
        "refusals, not more than MAX_REPEATS), so the prompt goes on.",
    )


def legit_heeds_reminder() -> Entry:
    recovery = [
        turn(call("list_directory", {"path": "deploy"})),
        turn(call("read_file", {"path": "deploy/app.yaml"})),
        answer("The database URL is in deploy/app.yaml."),
    ]
    return Entry(
        name="legit-heeds-reminder",
        label="legit",
        shape="a model that heeds the reminder",
        description="Eight missing-file guesses draw the reminder; the model lists the "
        "directory and reads the right file.",
        tools={
            "read_file": tool(
                *[not_found(missing_path(i)) for i in range(8)],
                ok("database: postgres://db:5432/app"),
            ),
            "list_directory": tool(ok("deploy/\nsrc/\nREADME.md")),
        },
        turns=[
            *[
                turn(*[call("read_file", {"path": missing_path(4 * i + k)}) for k in range(4)])
                for i in range(2)
            ],
            *recovery,
        ],
        after_reminder=recovery,
        note="Without a reminder (the baselines) the model recovers the same way after the "
        "same failures.",
    )


def legit_heeds_reminder_mcp() -> Entry:
    mcp_recovery = [
        turn(call("mcp__srv__search", {"query": "api.example.com status"})),
        answer("The upstream API is degraded; I'll retry later."),
    ]
    return Entry(
        name="legit-heeds-reminder-mcp",
        label="legit",
        shape="a model that heeds the reminder",
        description="Nine failing MCP fetches over three batches draw the reminder; the model "
        "switches to the search tool and answers.",
        tools={
            "mcp__srv__fetch": tool(
                fail("mcp_tool_error", "MCP error -32603: upstream 502"), tool_type="mcp"
            ),
            "mcp__srv__search": tool(
                ok("3 results: status page says the API is degraded"), tool_type="mcp"
            ),
        },
        turns=[
            *[
                turn(
                    *[
                        call(
                            "mcp__srv__fetch",
                            {"url": f"https://api.example.com/v1/{3 * i + k}"},
                        )
                        for k in range(3)
                    ]
                )
                for i in range(3)
            ],
            *mcp_recovery,
        ],
        after_reminder=mcp_recovery,
        note="Without a reminder (the baselines) the model recovers the same way after the "
        "same failures.",
    )


def legit_install_mirror_switch() -> Entry:
    indexes = [
        "https://pypi.org/simple",
        "https://mirror.example.com/simple",
        "https://pypi.tuna.example.edu/simple",
        "https://proxy.example.net/pypi/simple",
    ]
    return Entry(
        name="legit-install-mirror-switch",
        label="legit",
        shape="retrying with a changed approach",
        description="pip install times out against three indexes; the fourth works.",
        tools={
            "run_shell_command": tool(
                *[
                    fail("execution_timeout", f"Command timed out after 120 seconds ({u}).")
                    for u in indexes[:3]
                ],
                ok("Successfully installed requests-2.32.3"),
            )
        },
        turns=[
            *[
                turn(
                    call(
                        "run_shell_command",
                        {"command": f"pip install requests --index-url {u}"},
                    )
                )
                for u in indexes
            ],
            answer("Installed through the proxy index."),
        ],
    )


def legit_explore_files() -> Entry:
    explore: list[Json] = []
    explore_outcomes: list[Json] = []
    for b in range(6):
        paths = [f"src/pkg{b}/mod{k}.py" for k in range(5)]
        explore.append(turn(*[call("read_file", {"path": path}) for path in paths]))
        for k, path in enumerate(paths):
            explore_outcomes.append(
                not_found(path) if (b, k) in {(1, 2), (3, 0), (4, 4)} else ok(f"# {path}\n")
            )
    return Entry(
        name="legit-explore-files",
        label="legit",
        shape="exploring many files",
        description="Thirty reads in six batches; three of the guessed modules do not exist.",
        tools={"read_file": tool(*explore_outcomes)},
        turns=[*explore, answer("Here is how the packages fit together.")],
    )


def legit_long_refactor() -> Entry:
    refactor: list[Json] = []
    for i in range(7):
        refactor.append(turn(call("read_file", {"path": f"src/handlers/h{i}.py"})))
        refactor.append(
            turn(
                call(
                    "edit_file",
                    {
                        "path": f"src/handlers/h{i}.py",
                        "old_string": "old_api(",
                        "new_string": "api(",
                    },
                )
            )
        )
        refactor.append(turn(call("run_shell_command", {"command": "pytest -q"})))
    return Entry(
        name="legit-long-refactor",
        label="legit",
        shape="a long task with repeated checks",
        description="Twenty-one batches: read, edit, run the whole suite, for seven handlers.",
        tools={
            "read_file": tool(ok("def h():\n    return old_api()\n")),
            "edit_file": tool(ok("Edited (1 replacement).")),
            "run_shell_command": tool(ok("120 passed in 8.2s")),
        },
        turns=[*refactor, answer("All seven handlers use the new API; the suite passes.")],
    )


def legit_probe_ports() -> Entry:
    ports = [3000, 3001, 5000, 8000, 8080]
    return Entry(
        name="legit-probe-ports",
        label="legit",
        shape="probing for a service",
        description="Health checks on four ports are refused, the fifth answers.",
        tools={
            "http_request": tool(
                *[
                    fail("execution_failed", f"connect ECONNREFUSED 127.0.0.1:{p}")
                    for p in ports[:4]
                ],
                ok('200 OK {"status": "up"}'),
            )
        },
        turns=[
            turn(
                *[
                    call("http_request", {"method": "GET", "url": f"http://127.0.0.1:{p}/health"})
                    for p in ports[:3]
                ]
            ),
            turn(
                *[
                    call("http_request", {"method": "GET", "url": f"http://127.0.0.1:{p}/health"})
                    for p in ports[3:]
                ]
            ),
            answer("The service listens on port 8080."),
        ],
    )


def legit_create_existing_file() -> Entry:
    return Entry(
        name="legit-create-existing-file",
        label="legit",
        shape="retrying with a changed approach",
        description="write_file refuses to overwrite two existing files; the model edits them "
        "instead.",
        tools={
            "write_file": tool(
                fail("attempt_to_create_existing_file", "File already exists: src/a.py"),
                fail("attempt_to_create_existing_file", "File already exists: src/b.py"),
            ),
            "edit_file": tool(ok("Edited (1 replacement).")),
        },
        turns=[
            turn(
                call("write_file", {"path": "src/a.py", "content": "A = 1\n"}),
                call("write_file", {"path": "src/b.py", "content": "B = 2\n"}),
            ),
            turn(
                call(
                    "edit_file",
                    {"path": "src/a.py", "old_string": "A = 0", "new_string": "A = 1"},
                ),
                call(
                    "edit_file",
                    {"path": "src/b.py", "old_string": "B = 0", "new_string": "B = 2"},
                ),
            ),
            answer("Both constants are updated."),
        ],
    )


def legit_tdd_red_green() -> Entry:
    tdd: list[Json] = []
    tdd_outcomes: list[Json] = []
    for i in range(12):
        tdd.append(
            turn(
                call(
                    "edit_file",
                    {
                        "path": "tests/test_parser.py",
                        "old_string": f"# case {i}",
                        "new_string": f"def test_case_{i}(): ...",
                    },
                )
            )
        )
        tdd.append(turn(call("run_shell_command", {"command": f"pytest -q -k test_case_{i}"})))
        tdd_outcomes.append(
            fail(
                "shell_execute_error",
                f"Command failed.\nOutput:\nFAILED tests/test_parser.py::"
                f"test_case_{i} - NotImplementedError\nExit code: 1",
            )
        )
        tdd.append(
            turn(
                call(
                    "edit_file",
                    {
                        "path": "src/parser.py",
                        "old_string": f"# impl {i}",
                        "new_string": f"handle_case_{i}()",
                    },
                )
            )
        )
        tdd.append(turn(call("run_shell_command", {"command": "pytest -q"})))
        tdd_outcomes.append(ok(f"{i + 30} passed in 2.0s"))
    return Entry(
        name="legit-tdd-red-green",
        label="legit",
        shape="a long task with many expected failures",
        description="Twelve red-green cycles: write a failing test, see it fail, implement, "
        "see the suite pass.",
        tools={
            "edit_file": tool(ok("Edited (1 replacement).")),
            "run_shell_command": tool(*tdd_outcomes),
        },
        turns=[*tdd, answer("The parser handles all twelve cases, each with a test.")],
    )


def legit_wait_for_service() -> Entry:
    wait: list[Json] = [turn(call("run_shell_command", {"command": "docker compose up -d api"}))]
    wait_outcomes: list[Json] = [ok("Container app-api-1  Started")]
    for i in range(5):
        wait.append(
            turn(call("http_request", {"method": "GET", "url": "http://127.0.0.1:8080/health"}))
        )
        if i < 4:
            wait.append(turn(call("run_shell_command", {"command": "sleep 3"})))
            wait_outcomes.append(ok(""))
    return Entry(
        name="legit-wait-for-service",
        label="legit",
        shape="polling a service until it is up",
        description="Start the API container, then check its health endpoint every few "
        "seconds; it answers on the fifth check.",
        tools={
            "run_shell_command": tool(*wait_outcomes),
            "http_request": tool(
                *[
                    fail("execution_failed", "connect ECONNREFUSED 127.0.0.1:8080")
                    for _ in range(4)
                ],
                ok('200 OK {"status": "up"}'),
            ),
        },
        turns=[*wait, answer("The API is up.")],
    )


def legit() -> list[Entry]:
    """Every legit scenario, in corpus order."""
    return [
        legit_poll_job_until_done(),
        legit_poll_with_sleep(),
        legit_paging(),
        legit_paging_transient_retry(),
        legit_fix_then_recheck_same_command(),
        legit_fix_then_recheck_varied(),
        legit_permission_rejections(),
        legit_permission_rejections_shell(),
        legit_user_cancels_prompt(),
        legit_user_cancels_tool_calls(),
        legit_concurrent_siblings_one_fails(),
        legit_concurrent_siblings_lint(),
        legit_git_diff_quiet(),
        legit_heeds_reminder(),
        legit_heeds_reminder_mcp(),
        legit_install_mirror_switch(),
        legit_explore_files(),
        legit_long_refactor(),
        legit_probe_ports(),
        legit_create_existing_file(),
        legit_tdd_red_green(),
        legit_wait_for_service(),
    ]
