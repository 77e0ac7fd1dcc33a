"""The corpus's synthetic loop scenarios: one shape of a stuck model per function.

Each function builds one scenario of ``bench/corpus/`` (``bench/make_corpus.py`` writes
them, in the order :func:`loops` lists them). A stuck model never gives up, so each script
runs on until the per-prompt tool-call cap would cut it (``until_cap``).
"""

from __future__ import annotations

from bench.corpus_builders import (
    CAP,
    Entry,
    Json,
    answer,
    call,
    fail,
    missing_path,
    not_found,
    ok,
    tool,
    turn,
    until_cap,
)

# --- shared by several scenarios ---------------------------------------------------------

GUESSED_DIRS = ["lib", "source", "pkg", "internal", "app", "core", "modules", "packages"]


def grep_dir(i: int) -> str:
    """The ``i``-th guessed directory: each of ``GUESSED_DIRS``, then again with ``v<round>``."""
    round_ = i // len(GUESSED_DIRS)
    return f"{GUESSED_DIRS[i % len(GUESSED_DIRS)]}/{'v' + str(round_) if round_ else ''}"


APP_SOURCE = "def handler(event):\n    return process(event)\n"


def unmatched_old_string(i: int) -> str:
    """An ``old_string`` that is never in ``APP_SOURCE``, a slightly different one each time."""
    return f"def handler(event, context{'_' * (i % 3)}{i}):"


EDIT_MISS = fail(
    "edit_no_occurrence_found",
    "Failed to edit: could not find the string to replace in src/app.py (0 occurrences found).",
)


# --- the scenarios ------------------------------------------------------------------------


def loop_read_missing_file_thrash() -> Entry:
    """Parameter thrashing on a missing file, the seed's shape (4 guesses per batch)."""
    thrash = until_cap(
        lambda i: turn(*[call("read_file", {"path": missing_path(4 * i + k)}) for k in range(4)]),
        4,
        start=1,
    )
    return Entry(
        name="loop-read-missing-file-thrash",
        label="loop",
        shape="parameter thrashing on a missing file",
        description="The model lists the project once, then guesses config file paths four "
        "at a time; every guess is file_not_found.",
        tools={
            "list_directory": tool(ok("src/\ntests/\nREADME.md")),
            "read_file": tool(*[not_found(missing_path(i)) for i in range(CAP + 8)]),
        },
        turns=[turn(call("list_directory", {"path": "."})), *thrash],
        loop_starts_at_batch=2,
    )


def loop_read_missing_file_single() -> Entry:
    """The same, one guess per batch."""
    return Entry(
        name="loop-read-missing-file-single",
        label="loop",
        shape="parameter thrashing on a missing file",
        description="One read_file guess per model request, each a different missing path.",
        tools={"read_file": tool(*[not_found(missing_path(i)) for i in range(CAP + 2)])},
        turns=until_cap(lambda i: turn(call("read_file", {"path": missing_path(i)})), 1),
        loop_starts_at_batch=1,
    )


def loop_grep_missing_dir() -> Entry:
    """grep on directories that do not exist."""
    return Entry(
        name="loop-grep-missing-dir",
        label="loop",
        shape="parameter thrashing on a missing directory",
        description="grep_search for a symbol in one guessed directory after another; every "
        "search path is missing.",
        tools={
            "grep_search": tool(
                *[
                    fail(
                        "search_path_not_found",
                        f"Search path not found: {grep_dir(i).rstrip('/')}",
                    )
                    for i in range(CAP + 4)
                ]
            )
        },
        turns=until_cap(
            lambda i: turn(
                *[
                    call(
                        "grep_search",
                        {"pattern": "def load_config", "path": grep_dir(2 * i + k)},
                    )
                    for k in range(2)
                ]
            ),
            2,
        ),
        loop_starts_at_batch=1,
    )


def loop_git_push_128() -> Entry:
    """The same git command exiting 128, unchanged."""
    git_128 = fail(
        "shell_execute_error",
        "Command failed.\nOutput:\nfatal: could not read Username for "
        "'https://git.example.com': terminal prompts disabled\nExit code: 128",
    )
    return Entry(
        name="loop-git-push-128",
        label="loop",
        shape="the same git command exiting 128",
        description="git status works, then the model sends `git push origin main` again and "
        "again; it exits 128 every time (no credentials).",
        tools={"run_shell_command": tool(ok("On branch main\nnothing to commit"), git_128)},
        turns=[
            turn(call("run_shell_command", {"command": "git status"})),
            *until_cap(
                lambda i: turn(call("run_shell_command", {"command": "git push origin main"})),
                1,
                start=1,
            ),
        ],
        loop_starts_at_batch=2,
    )


def loop_git_fetch_128_varied() -> Entry:
    """Git commands varied, all exiting 128."""
    git_variants = [
        "git fetch origin",
        "git fetch --all",
        "git pull",
        "git pull --rebase origin main",
        "git remote update",
        "git fetch origin main",
        "git pull origin main --ff-only",
        "git fetch --prune",
        "git ls-remote origin",
        "git fetch origin --tags",
        "git pull --no-rebase origin main",
        "git fetch -v origin",
    ]

    def git_variant(i: int) -> str:
        base = git_variants[i % len(git_variants)]
        return base if i < len(git_variants) else f"{base} --depth={i}"

    unreachable = fail(
        "shell_execute_error",
        "Command failed.\nOutput:\nfatal: unable to access "
        "'https://git.example.com/team/app.git/': "
        "Could not resolve host: git.example.com\nExit code: 128",
    )
    return Entry(
        name="loop-git-fetch-128-varied",
        label="loop",
        shape="git commands exiting 128, varied",
        description="The remote is unreachable; the model tries one git variant after another, "
        "each exits 128.",
        tools={"run_shell_command": tool(unreachable)},
        turns=until_cap(lambda i: turn(call("run_shell_command", {"command": git_variant(i)})), 1),
        loop_starts_at_batch=1,
    )


def loop_mcp_fetch_varied() -> Entry:
    """A failing MCP call with varied arguments."""

    def url(i: int) -> str:
        return f"https://api.example.com/v2/orders?page={i + 1}&limit=50"

    return Entry(
        name="loop-mcp-fetch-varied",
        label="loop",
        shape="a failing MCP call with varied arguments",
        description="An MCP fetch tool keeps failing upstream; the model varies the URL two "
        "calls at a time.",
        tools={
            "mcp__srv__fetch": tool(
                fail("mcp_tool_error", "MCP error -32603: upstream returned 502 Bad Gateway"),
                tool_type="mcp",
            )
        },
        turns=until_cap(
            lambda i: turn(*[call("mcp__srv__fetch", {"url": url(2 * i + k)}) for k in range(2)]),
            2,
        ),
        loop_starts_at_batch=1,
    )


def loop_mcp_fetch_same() -> Entry:
    """A failing MCP call, unchanged."""
    return Entry(
        name="loop-mcp-fetch-same",
        label="loop",
        shape="a failing MCP call, unchanged",
        description="The same MCP fetch, with the same URL, every request.",
        tools={
            "mcp__srv__fetch": tool(
                fail("mcp_tool_error", "MCP error -32001: request timed out after 30 s"),
                tool_type="mcp",
            )
        },
        turns=until_cap(
            lambda i: turn(
                call("mcp__srv__fetch", {"url": "https://status.example.com/api/health"})
            ),
            1,
        ),
        loop_starts_at_batch=1,
    )


def loop_edit_never_matches() -> Entry:
    """An edit that never matches, with a read between attempts."""
    alternating: list[Json] = []
    for i in range(CAP // 2 + 1):
        alternating.append(turn(call("read_file", {"path": "src/app.py"})))
        alternating.append(
            turn(
                call(
                    "edit_file",
                    {
                        "path": "src/app.py",
                        "old_string": unmatched_old_string(i),
                        "new_string": "def handler(event):",
                    },
                )
            )
        )
    return Entry(
        name="loop-edit-never-matches",
        label="loop",
        shape="an edit that never matches",
        description="read_file, then an edit_file whose old_string is never in the file, a "
        "slightly different one each time; reads and edits alternate.",
        tools={"read_file": tool(ok(APP_SOURCE)), "edit_file": tool(EDIT_MISS)},
        turns=alternating,
        loop_starts_at_batch=1,
    )


def loop_edit_never_matches_paired() -> Entry:
    """The same, read and edit in one batch."""
    return Entry(
        name="loop-edit-never-matches-paired",
        label="loop",
        shape="an edit that never matches",
        description="Each batch re-reads the file and sends an edit that does not match.",
        tools={"read_file": tool(ok(APP_SOURCE)), "edit_file": tool(EDIT_MISS)},
        turns=until_cap(
            lambda i: turn(
                call("read_file", {"path": "src/app.py"}),
                call(
                    "edit_file",
                    {
                        "path": "src/app.py",
                        "old_string": unmatched_old_string(i),
                        "new_string": "def handler(event):",
                    },
                ),
            ),
            2,
        ),
        loop_starts_at_batch=1,
    )


def loop_edit_same_string() -> Entry:
    """The same edit, unchanged."""
    return Entry(
        name="loop-edit-same-string",
        label="loop",
        shape="an edit that never matches, unchanged",
        description="Each batch re-reads the file and resends the identical failing edit.",
        tools={"read_file": tool(ok(APP_SOURCE)), "edit_file": tool(EDIT_MISS)},
        turns=until_cap(
            lambda i: turn(
                call("read_file", {"path": "src/app.py"}),
                call(
                    "edit_file",
                    {
                        "path": "src/app.py",
                        "old_string": "def handler(evt):",
                        "new_string": "def handler(event):",
                    },
                ),
            ),
            2,
        ),
        loop_starts_at_batch=1,
    )


def loop_alternate_two_tools_varied() -> Entry:
    """Alternating between two failing tools, varied arguments."""

    def alt_varied(i: int) -> Json:
        if i % 2 == 0:
            return turn(*[call("read_file", {"path": missing_path(i + k)}) for k in range(2)])
        return turn(
            *[
                call("grep_search", {"pattern": "DATABASE_URL", "path": grep_dir(i + k)})
                for k in range(2)
            ]
        )

    return Entry(
        name="loop-alternate-two-tools-varied",
        label="loop",
        shape="alternating between two failing tools",
        description="Odd batches guess files with read_file, even batches guess directories "
        "with grep_search; everything fails, nothing repeats exactly.",
        tools={
            "read_file": tool(not_found("the requested file")),
            "grep_search": tool(fail("search_path_not_found", "Search path not found")),
        },
        turns=until_cap(alt_varied, 2),
        loop_starts_at_batch=1,
        seed_out_of_scope="varied tools: the failing tool changes every batch, and the guard "
        "tracks one (tool, reason) streak at a time; no call repeats unchanged for the "
        "refusal to catch",
    )


def loop_alternate_two_tools_same() -> Entry:
    """Alternating between two failing tools, each call unchanged."""

    def alt_same(i: int) -> Json:
        if i % 2 == 0:
            return turn(call("read_file", {"path": "config/settings.yaml"}))
        return turn(call("run_shell_command", {"command": "cat config/settings.yaml"}))

    return Entry(
        name="loop-alternate-two-tools-same",
        label="loop",
        shape="alternating between two failing tools",
        description="read_file and `cat` of the same missing file, alternating, unchanged.",
        tools={
            "read_file": tool(not_found("config/settings.yaml")),
            "run_shell_command": tool(
                fail(
                    "shell_execute_error",
                    "Command failed.\nOutput:\ncat: config/settings.yaml: No such file or "
                    "directory\nExit code: 1",
                )
            ),
        },
        turns=until_cap(alt_same, 1),
        loop_starts_at_batch=1,
    )


def loop_ignores_reminder() -> Entry:
    """A model that ignores the reminder."""
    ignore_tools = {"read_file": tool(*[not_found(missing_path(i)) for i in range(CAP + 6)])}
    return Entry(
        name="loop-ignores-reminder",
        label="loop",
        shape="a model that ignores the reminder",
        description="Three guesses per batch; after the reminder the model keeps guessing.",
        tools=ignore_tools,
        turns=until_cap(
            lambda i: turn(
                *[call("read_file", {"path": missing_path(3 * i + k)}) for k in range(3)]
            ),
            3,
        ),
        after_reminder=until_cap(
            lambda i: turn(
                *[call("read_file", {"path": missing_path(60 + 3 * i + k)}) for k in range(3)]
            ),
            3,
        ),
        loop_starts_at_batch=1,
    )


def loop_ignores_reminder_switches_tool() -> Entry:
    """Ignores the reminder by switching to another failing tool."""
    return Entry(
        name="loop-ignores-reminder-switches-tool",
        label="loop",
        shape="a model that ignores the reminder",
        description="read_file guesses draw the reminder; the model then guesses with glob "
        "patterns that all fail the same way.",
        tools={
            "read_file": tool(*[not_found(missing_path(i)) for i in range(12)]),
            "glob": tool(
                fail("glob_execution_error", "Glob failed: base directory does not exist")
            ),
        },
        turns=until_cap(
            lambda i: turn(
                *[call("read_file", {"path": missing_path(4 * i + k)}) for k in range(4)]
            ),
            4,
        ),
        after_reminder=until_cap(
            lambda i: turn(
                *[
                    call(
                        "glob",
                        {
                            "pattern": f"**/*.{['yaml', 'yml', 'toml', 'json'][k]}",
                            "path": f"cfg{i}",
                        },
                    )
                    for k in range(4)
                ]
            ),
            4,
            start=8,
        ),
        loop_starts_at_batch=1,
    )


def loop_pytest_same_command() -> Entry:
    """The same test command failing, nothing changed between runs."""
    return Entry(
        name="loop-pytest-same-command",
        label="loop",
        shape="the same failing command, unchanged",
        description="The model reruns the identical test command without touching the code.",
        tools={
            "run_shell_command": tool(
                fail(
                    "shell_execute_error",
                    "Command failed.\nOutput:\n"
                    "FAILED tests/test_api.py::test_create - KeyError: 'id'"
                    "\n1 failed, 41 passed\nExit code: 1",
                )
            )
        },
        turns=until_cap(
            lambda i: turn(call("run_shell_command", {"command": "pytest tests/test_api.py -q"})),
            1,
        ),
        loop_starts_at_batch=1,
    )


def loop_http_500_varied() -> Entry:
    """A flaky HTTP API, varied parameters."""
    return Entry(
        name="loop-http-500-varied",
        label="loop",
        shape="a failing API with varied arguments",
        description="An internal API answers 500 to every request; the model varies the "
        "query three at a time.",
        tools={"http_request": tool(fail("execution_failed", "HTTP 500 Internal Server Error"))},
        turns=until_cap(
            lambda i: turn(
                *[
                    call("http_request", {"method": "GET", "url": f"/api/users?id={3 * i + k}"})
                    for k in range(3)
                ]
            ),
            3,
        ),
        loop_starts_at_batch=1,
    )


def loop_write_permission_denied() -> Entry:
    """Writes into a read-only directory."""
    return Entry(
        name="loop-write-permission-denied",
        label="loop",
        shape="a failing write with varied arguments",
        description="The build output directory is read-only; the model writes one file name "
        "after another into it.",
        tools={
            "write_file": tool(
                *[
                    fail(
                        "permission_denied",
                        f"EACCES: permission denied, open 'dist/bundle-{i}.js'",
                    )
                    for i in range(CAP + 4)
                ]
            )
        },
        turns=until_cap(
            lambda i: turn(
                *[
                    call(
                        "write_file",
                        {"path": f"dist/bundle-{2 * i + k}.js", "content": "/* built */"},
                    )
                    for k in range(2)
                ]
            ),
            2,
        ),
        loop_starts_at_batch=1,
    )


def loop_shell_timeout_varied() -> Entry:
    """Install commands that time out."""
    mirrors = [
        "",
        " --registry=https://registry.npmmirror.com",
        " --prefer-offline",
        " --legacy-peer-deps",
        " --no-audit",
        " --network-timeout=600000",
    ]
    return Entry(
        name="loop-shell-timeout-varied",
        label="loop",
        shape="a command timing out, varied",
        description="npm install hangs behind a proxy; the model varies its flags and each "
        "attempt times out.",
        tools={
            "run_shell_command": tool(
                fail("execution_timeout", "Command timed out after 120 seconds.")
            )
        },
        turns=until_cap(
            lambda i: turn(
                call(
                    "run_shell_command",
                    {
                        "command": f"npm install{mirrors[i % len(mirrors)]} "
                        f"--loglevel=warn --attempt={i}"
                    },
                )
            ),
            1,
        ),
        loop_starts_at_batch=1,
    )


def loop_successes_interleaved() -> Entry:
    """Successes of the same tool interleaved in every batch."""

    def interleaved(i: int) -> Json:
        return turn(
            call("read_file", {"path": "README.md"}),
            call("read_file", {"path": missing_path(2 * i)}),
            call("read_file", {"path": missing_path(2 * i + 1)}),
        )

    readme = ok("# App\nConfiguration lives in the deployment repository.")
    return Entry(
        name="loop-successes-interleaved",
        label="loop",
        shape="parameter thrashing with a success of the same tool in every batch",
        description="Each batch re-reads README.md (which works) beside two missing guesses.",
        tools={
            "read_file": tool(
                *[
                    o
                    for i in range(CAP // 3 + 2)
                    for o in (
                        readme,
                        not_found(missing_path(2 * i)),
                        not_found(missing_path(2 * i + 1)),
                    )
                ]
            )
        },
        turns=until_cap(interleaved, 3),
        loop_starts_at_batch=1,
        seed_out_of_scope="successes interleaved: read_file succeeds in every batch, and the "
        "guard takes a success of the tracked tool as progress (the seed's rule); the "
        "guesses vary, so no call repeats unchanged",
    )


def loop_error_type_flips() -> Entry:
    """The classified reason flips every batch."""

    def flip(i: int) -> list[Json]:
        paths = [missing_path(2 * i), missing_path(2 * i + 1)]
        if i % 2 == 0:
            return [not_found(p) for p in paths]
        return [fail("permission_denied", f"EACCES: permission denied, open '{p}'") for p in paths]

    return Entry(
        name="loop-error-type-flips",
        label="loop",
        shape="parameter thrashing, two failure reasons",
        description="read_file guesses alternate between missing files and unreadable ones.",
        tools={"read_file": tool(*[o for i in range(CAP // 2 + 2) for o in flip(i)])},
        turns=until_cap(
            lambda i: turn(
                *[call("read_file", {"path": missing_path(2 * i + k)}) for k in range(2)]
            ),
            2,
        ),
        loop_starts_at_batch=1,
        seed_out_of_scope="the classified reason changes every batch (file_not_found, then "
        "permission_denied), so every batch starts a new streak; no call repeats unchanged",
    )


def loop_two_tools_fail_each_batch() -> Entry:
    """Two tools failing in every batch."""
    return Entry(
        name="loop-two-tools-fail-each-batch",
        label="loop",
        shape="two failing tools in parallel",
        description="Each batch guesses a file with read_file and a directory with grep_search "
        "side by side; both fail every time.",
        tools={
            "read_file": tool(not_found("the requested file")),
            "grep_search": tool(fail("search_path_not_found", "Search path not found")),
        },
        turns=until_cap(
            lambda i: turn(
                call("read_file", {"path": missing_path(i)}),
                call("grep_search", {"pattern": "DATABASE_URL", "path": grep_dir(i)}),
            ),
            2,
        ),
        loop_starts_at_batch=1,
        seed_out_of_scope="two different failure keys in every batch: a mixed batch resets the "
        "guard (the seed's rule); no call repeats unchanged",
    )


def loop_gives_up_below_threshold() -> Entry:
    """A short loop the model abandons before any threshold."""
    return Entry(
        name="loop-gives-up-below-threshold",
        label="loop",
        shape="parameter thrashing, short",
        description="Six failed guesses over three batches, then the model gives up on its own.",
        tools={"read_file": tool(*[not_found(missing_path(i)) for i in range(6)])},
        turns=[
            *[
                turn(*[call("read_file", {"path": missing_path(2 * i + k)}) for k in range(2)])
                for i in range(3)
            ],
            answer("I could not find the configuration file; where does it live?"),
        ],
        loop_starts_at_batch=1,
        seed_out_of_scope="below the threshold before the scenario ends: 6 failures, and the "
        "reminder needs 8; the model stopped on its own",
        out_of_scope="below every threshold before the scenario ends: 6 failures in 3 "
        "batches, and the guard's reminder needs 8 failures, the failure-cycle rule's 8 "
        "batches; the model stopped on its own",
    )


def loop_invalid_params() -> Entry:
    """Broken arguments, again and again."""
    broken = [
        '{"path": "notes.txt", "content": "a}',
        '{"path": "notes.txt" "content": "a"}',
        '{"path": notes.txt, "content": "a"}',
        "{'path': 'notes.txt', 'content': 'a'}",
        '{"path": "notes.txt", "content": "a"',
    ]
    invalid = {
        "status": "error",
        "execution_status": "not_started",
        "error_type": "invalid_tool_params",
        "message": "Invalid arguments for tool 'write_file': the arguments must be a JSON "
        "object. Send the arguments as a JSON object.",
    }
    return Entry(
        name="loop-invalid-params",
        label="loop",
        shape="broken tool arguments",
        description="The model keeps sending write_file malformed JSON arguments.",
        tools={"write_file": tool(invalid)},
        turns=until_cap(lambda i: turn(call("write_file", broken[i % len(broken)])), 1),
        loop_starts_at_batch=1,
    )


def loop_unknown_tool() -> Entry:
    """An unknown tool, again and again."""
    return Entry(
        name="loop-unknown-tool",
        label="loop",
        shape="calling a tool that does not exist",
        description="The model calls apply_patch, which is not registered, with a different "
        "patch each time.",
        tools={"read_file": tool(ok(APP_SOURCE))},
        turns=until_cap(
            lambda i: turn(
                call(
                    "apply_patch",
                    {"patch": f"--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-{i}\n+{i + 1}\n"},
                )
            ),
            1,
        ),
        loop_starts_at_batch=1,
    )


def loop_duplicate_call_id() -> Entry:
    """The provider resends the same call id."""
    return Entry(
        name="loop-duplicate-call-id",
        label="loop",
        shape="the provider resends a handled call",
        description="A provider bug replays the same tool call, id included, in every reply.",
        tools={"list_directory": tool(ok("src/\ntests/\nREADME.md"))},
        turns=until_cap(lambda i: turn(call("list_directory", {"path": "."}, id="call_ls_1")), 1),
        loop_starts_at_batch=2,
    )


def loop_mcp_no_execution_status() -> Entry:
    """An MCP server that never reports an execution status."""
    return Entry(
        name="loop-mcp-no-execution-status",
        label="loop",
        shape="a failing MCP call with an incomplete outcome",
        description="An MCP query tool fails without saying whether it ran (no execution "
        "status); the model varies the query.",
        tools={
            "mcp__db__query": tool(
                {
                    "status": "error",
                    "error_type": "mcp_tool_error",
                    "message": "MCP error: connection reset by peer",
                },
                tool_type="mcp",
            )
        },
        turns=until_cap(
            lambda i: turn(
                *[
                    call(
                        "mcp__db__query",
                        {"sql": f"SELECT * FROM orders WHERE id = {3 * i + k}"},
                    )
                    for k in range(3)
                ]
            ),
            3,
        ),
        loop_starts_at_batch=1,
        seed_out_of_scope="the outcome contract cannot be trusted (no execution status), so "
        "the guard fails open by design and enforcement is disabled; nothing is remembered for "
        "the refusal either",
        out_of_scope="the outcome contract cannot be trusted (no execution status), so "
        "enforcement is disabled for the prompt, the recommended rules included: the "
        "failure-cycle rule reminds and then only records would_stop; the cap ends it",
    )


def loop_output_truncated() -> Entry:
    """Output truncation that keeps failing after the command ran."""
    return Entry(
        name="loop-output-truncated",
        label="loop",
        shape="post-processing failure, repeated",
        description="Every command runs, but saving its long output fails (disk full), so "
        "the call ends in an error after it ran; the model varies the command.",
        tools={
            "run_shell_command": tool(
                {
                    "status": "error",
                    "execution_status": "success",
                    "error_type": "output_truncated",
                    "message": "The tool ran, but its output exceeded 20000 characters "
                    "and could not "
                    "be saved for later reading (No space left on device).",
                }
            )
        },
        turns=until_cap(
            lambda i: turn(
                call(
                    "run_shell_command",
                    {"command": f"cat logs/app.log | tail -n {1000 * (i + 1)}"},
                )
            ),
            1,
        ),
        loop_starts_at_batch=1,
        seed_out_of_scope="post-processing failures never count (the tool ran and succeeded; "
        "only saving its output failed), by the seed's design",
    )


def loop_poll_never_finishes() -> Entry:
    """A job polled for ever."""
    return Entry(
        name="loop-poll-never-finishes",
        label="loop",
        shape="polling a job that never finishes",
        description="The deploy job is stuck; the model polls its status for ever and every "
        "poll succeeds with 'running'.",
        tools={"job_status": tool(ok("status: running (step 3/5: waiting for rollout)"))},
        turns=until_cap(lambda i: turn(call("job_status", {"job_id": "deploy-2291"})), 1),
        loop_starts_at_batch=1,
        seed_out_of_scope="no failure: every call succeeds, and Seawall stops failure loops "
        "only (the cap ends it)",
    )


def loops() -> list[Entry]:
    """Every loop scenario, in corpus order."""
    return [
        loop_read_missing_file_thrash(),
        loop_read_missing_file_single(),
        loop_grep_missing_dir(),
        loop_git_push_128(),
        loop_git_fetch_128_varied(),
        loop_mcp_fetch_varied(),
        loop_mcp_fetch_same(),
        loop_edit_never_matches(),
        loop_edit_never_matches_paired(),
        loop_edit_same_string(),
        loop_alternate_two_tools_varied(),
        loop_alternate_two_tools_same(),
        loop_ignores_reminder(),
        loop_ignores_reminder_switches_tool(),
        loop_pytest_same_command(),
        loop_http_500_varied(),
        loop_write_permission_denied(),
        loop_shell_timeout_varied(),
        loop_successes_interleaved(),
        loop_error_type_flips(),
        loop_two_tools_fail_each_batch(),
        loop_gives_up_below_threshold(),
        loop_invalid_params(),
        loop_unknown_tool(),
        loop_duplicate_call_id(),
        loop_mcp_no_execution_status(),
        loop_output_truncated(),
        loop_poll_never_finishes(),
    ]
