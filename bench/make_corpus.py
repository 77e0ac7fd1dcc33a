"""Writes the labeled loop corpus ``bench/corpus/`` (scenario files and ``labels.yaml``).

The YAML files are the corpus; this script is how they were made, kept so a shape can be
changed in one place and the files regenerated (``python bench/make_corpus.py``).
``tests/bench/test_corpus.py`` checks that the files on disk are what it writes.

Every tool is a fixture tool (fixtures replace built-ins of the same name), so the pure
simulator replays each scenario exactly. A stuck model never gives up, so a loop's script
runs on until the per-prompt tool-call cap (100) would cut it, with
``max_model_requests`` raised so the cap, not the request limit, is what ends an
unstopped loop. Legit scenarios end with the model's answer.

Fixture outcomes are used in order per tool, the last one repeating, so outcomes are
scripted in the order the calls run when nothing refuses them.

The scenarios modelled on real public incidents (each with its ``url`` in ``labels.yaml``)
are written by ``bench/make_incidents.py``; this script writes them too.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent

CORPUS = Path(__file__).resolve().parent / "corpus"
CAP = 100
LOOP_MAX_MODEL_REQUESTS = 200

Json = dict[str, Any]


# --- builders -----------------------------------------------------------------------------


def call(name: str, arguments: Json | str | None = None, id: str | None = None) -> Json:
    out: Json = {"name": name, "arguments": {} if arguments is None else arguments}
    if id is not None:
        out["id"] = id
    return out


def turn(*calls: Json, text: str = "") -> Json:
    out: Json = {}
    if text:
        out["text"] = text
    if calls:
        out["tool_calls"] = list(calls)
    return out


def answer(text: str) -> Json:
    return {"text": text}


def ok(content: str) -> Json:
    return {"status": "success", "execution_status": "success", "content": content}


def fail(error_type: str, message: str) -> Json:
    return {
        "status": "error",
        "execution_status": "error",
        "error_type": error_type,
        "message": message,
    }


def cancelled(message: str = "The user cancelled the call.") -> Json:
    return {"status": "cancelled", "execution_status": "cancelled", "message": message}


def tool(*outcomes: Json, tool_type: str = "native", mutating: bool = False) -> Json:
    out: Json = {"outcomes": list(outcomes)}
    if tool_type != "native":
        out["tool_type"] = tool_type
    if mutating:
        out["mutating"] = True
    return out


def until_cap(make_turn: Any, calls_per_turn: int, start: int = 0, spare: int = 1) -> list[Json]:
    """Loop turns ``make_turn(i)`` until one more batch would pass the cap (plus ``spare``)."""
    turns: list[Json] = []
    total = start
    i = 0
    while total <= CAP + calls_per_turn * spare:
        turns.append(make_turn(i))
        total += calls_per_turn
        i += 1
    return turns


@dataclass
class Entry:
    name: str
    label: str  # loop | legit
    shape: str
    description: str
    tools: Json
    turns: list[Json]
    loop_starts_at_batch: int | None = None
    after_reminder: list[Json] | None = None
    events: list[Json] = field(default_factory=list)
    permissions: Json = field(default_factory=dict)
    workspace: Json | None = None
    # Why the recommended profile does not stop a loop, or halts legit work (labels.yaml's
    # out_of_scope and known_gap); the seed profile's own reasons beside them.
    out_of_scope: str | None = None
    known_gap: str | None = None
    seed_out_of_scope: str | None = None
    seed_known_gap: str | None = None
    note: str = ""
    # The public report a real-incident scenario is modelled on (bench/make_incidents.py).
    url: str | None = None
    # Overrides the model request limit (loops default to LOOP_MAX_MODEL_REQUESTS).
    max_model_requests: int | None = None

    @property
    def file_name(self) -> str:
        return f"{self.name}.yaml"


# --- loops --------------------------------------------------------------------------------

MISSING = [
    "src/config.yaml",
    "config/config.yaml",
    "conf/app.yaml",
    "settings.yaml",
    "src/settings/app.yaml",
    "app/config.yml",
    "config.yml",
    "etc/app.yaml",
    ".config/app.yaml",
    "src/app/config.yaml",
    "deploy/config.yaml",
    "configs/default.yaml",
]


def missing_path(i: int) -> str:
    base = MISSING[i % len(MISSING)]
    round_ = i // len(MISSING)
    return base if round_ == 0 else f"v{round_}/{base}"


def not_found(path: str) -> Json:
    return fail("file_not_found", f"File not found: {path}")


def loops() -> list[Entry]:
    entries: list[Entry] = []

    # 1. Parameter thrashing on a missing file, the seed's shape (4 guesses per batch).
    thrash = until_cap(
        lambda i: turn(*[call("read_file", {"path": missing_path(4 * i + k)}) for k in range(4)]),
        4,
        start=1,
    )
    entries.append(
        Entry(
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
    )

    # 2. The same, one guess per batch.
    entries.append(
        Entry(
            name="loop-read-missing-file-single",
            label="loop",
            shape="parameter thrashing on a missing file",
            description="One read_file guess per model request, each a different missing path.",
            tools={"read_file": tool(*[not_found(missing_path(i)) for i in range(CAP + 2)])},
            turns=until_cap(lambda i: turn(call("read_file", {"path": missing_path(i)})), 1),
            loop_starts_at_batch=1,
        )
    )

    # 3. grep on directories that do not exist.
    dirs = ["lib", "source", "pkg", "internal", "app", "core", "modules", "packages"]

    def grep_dir(i: int) -> str:
        return f"{dirs[i % len(dirs)]}/{'v' + str(i // len(dirs)) if i >= len(dirs) else ''}"

    entries.append(
        Entry(
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
    )

    # 4. The same git command exiting 128, unchanged.
    git_128 = fail(
        "shell_execute_error",
        "Command failed.\nOutput:\nfatal: could not read Username for "
        "'https://git.example.com': terminal prompts disabled\nExit code: 128",
    )
    entries.append(
        Entry(
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
    )

    # 5. Git commands varied, all exiting 128.
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
    entries.append(
        Entry(
            name="loop-git-fetch-128-varied",
            label="loop",
            shape="git commands exiting 128, varied",
            description="The remote is unreachable; the model tries one git variant after another, "
            "each exits 128.",
            tools={"run_shell_command": tool(unreachable)},
            turns=until_cap(
                lambda i: turn(call("run_shell_command", {"command": git_variant(i)})), 1
            ),
            loop_starts_at_batch=1,
        )
    )

    # 6. A failing MCP call with varied arguments.
    def url(i: int) -> str:
        return f"https://api.example.com/v2/orders?page={i + 1}&limit=50"

    entries.append(
        Entry(
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
                lambda i: turn(
                    *[call("mcp__srv__fetch", {"url": url(2 * i + k)}) for k in range(2)]
                ),
                2,
            ),
            loop_starts_at_batch=1,
        )
    )

    # 7. A failing MCP call, unchanged.
    entries.append(
        Entry(
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
    )

    # 8. An edit that never matches, with a read between attempts.
    src = "def handler(event):\n    return process(event)\n"

    def old(i: int) -> str:
        return f"def handler(event, context{'_' * (i % 3)}{i}):"

    edit_miss = fail(
        "edit_no_occurrence_found",
        "Failed to edit: could not find the string to replace in src/app.py (0 occurrences found).",
    )
    alternating: list[Json] = []
    for i in range(CAP // 2 + 1):
        alternating.append(turn(call("read_file", {"path": "src/app.py"})))
        alternating.append(
            turn(
                call(
                    "edit_file",
                    {
                        "path": "src/app.py",
                        "old_string": old(i),
                        "new_string": "def handler(event):",
                    },
                )
            )
        )
    entries.append(
        Entry(
            name="loop-edit-never-matches",
            label="loop",
            shape="an edit that never matches",
            description="read_file, then an edit_file whose old_string is never in the file, a "
            "slightly different one each time; reads and edits alternate.",
            tools={"read_file": tool(ok(src)), "edit_file": tool(edit_miss)},
            turns=alternating,
            loop_starts_at_batch=1,
        )
    )

    # 9. The same, read and edit in one batch.
    entries.append(
        Entry(
            name="loop-edit-never-matches-paired",
            label="loop",
            shape="an edit that never matches",
            description="Each batch re-reads the file and sends an edit that does not match.",
            tools={"read_file": tool(ok(src)), "edit_file": tool(edit_miss)},
            turns=until_cap(
                lambda i: turn(
                    call("read_file", {"path": "src/app.py"}),
                    call(
                        "edit_file",
                        {
                            "path": "src/app.py",
                            "old_string": old(i),
                            "new_string": "def handler(event):",
                        },
                    ),
                ),
                2,
            ),
            loop_starts_at_batch=1,
        )
    )

    # 10. The same edit, unchanged.
    entries.append(
        Entry(
            name="loop-edit-same-string",
            label="loop",
            shape="an edit that never matches, unchanged",
            description="Each batch re-reads the file and resends the identical failing edit.",
            tools={"read_file": tool(ok(src)), "edit_file": tool(edit_miss)},
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
    )

    # 11. Alternating between two failing tools, varied arguments.
    def alt_varied(i: int) -> Json:
        if i % 2 == 0:
            return turn(*[call("read_file", {"path": missing_path(i + k)}) for k in range(2)])
        return turn(
            *[
                call("grep_search", {"pattern": "DATABASE_URL", "path": grep_dir(i + k)})
                for k in range(2)
            ]
        )

    entries.append(
        Entry(
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
    )

    # 12. Alternating between two failing tools, each call unchanged.
    def alt_same(i: int) -> Json:
        if i % 2 == 0:
            return turn(call("read_file", {"path": "config/settings.yaml"}))
        return turn(call("run_shell_command", {"command": "cat config/settings.yaml"}))

    entries.append(
        Entry(
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
    )

    # 13. A model that ignores the reminder.
    ignore_tools = {"read_file": tool(*[not_found(missing_path(i)) for i in range(CAP + 6)])}
    entries.append(
        Entry(
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
    )

    # 14. Ignores the reminder by switching to another failing tool.
    entries.append(
        Entry(
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
    )

    # 15. The same test command failing, nothing changed between runs.
    entries.append(
        Entry(
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
                lambda i: turn(
                    call("run_shell_command", {"command": "pytest tests/test_api.py -q"})
                ),
                1,
            ),
            loop_starts_at_batch=1,
        )
    )

    # 16. A flaky HTTP API, varied parameters.
    entries.append(
        Entry(
            name="loop-http-500-varied",
            label="loop",
            shape="a failing API with varied arguments",
            description="An internal API answers 500 to every request; the model varies the "
            "query three at a time.",
            tools={
                "http_request": tool(fail("execution_failed", "HTTP 500 Internal Server Error"))
            },
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
    )

    # 17. Writes into a read-only directory.
    entries.append(
        Entry(
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
    )

    # 18. Install commands that time out.
    mirrors = [
        "",
        " --registry=https://registry.npmmirror.com",
        " --prefer-offline",
        " --legacy-peer-deps",
        " --no-audit",
        " --network-timeout=600000",
    ]
    entries.append(
        Entry(
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
    )

    # 19. Successes of the same tool interleaved in every batch.
    def interleaved(i: int) -> Json:
        return turn(
            call("read_file", {"path": "README.md"}),
            call("read_file", {"path": missing_path(2 * i)}),
            call("read_file", {"path": missing_path(2 * i + 1)}),
        )

    readme = ok("# App\nConfiguration lives in the deployment repository.")
    entries.append(
        Entry(
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
    )

    # 20. The classified reason flips every batch.
    def flip(i: int) -> list[Json]:
        paths = [missing_path(2 * i), missing_path(2 * i + 1)]
        if i % 2 == 0:
            return [not_found(p) for p in paths]
        return [fail("permission_denied", f"EACCES: permission denied, open '{p}'") for p in paths]

    entries.append(
        Entry(
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
    )

    # 21. Two tools failing in every batch.
    entries.append(
        Entry(
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
    )

    # 22. A short loop the model abandons before any threshold.
    entries.append(
        Entry(
            name="loop-gives-up-below-threshold",
            label="loop",
            shape="parameter thrashing, short",
            description="Six failed guesses over three batches, then the model gives up on "
            "its own.",
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
    )

    # 23. Broken arguments, again and again.
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
    entries.append(
        Entry(
            name="loop-invalid-params",
            label="loop",
            shape="broken tool arguments",
            description="The model keeps sending write_file malformed JSON arguments.",
            tools={"write_file": tool(invalid)},
            turns=until_cap(lambda i: turn(call("write_file", broken[i % len(broken)])), 1),
            loop_starts_at_batch=1,
        )
    )

    # 24. An unknown tool, again and again.
    entries.append(
        Entry(
            name="loop-unknown-tool",
            label="loop",
            shape="calling a tool that does not exist",
            description="The model calls apply_patch, which is not registered, with a different "
            "patch each time.",
            tools={"read_file": tool(ok(src))},
            turns=until_cap(
                lambda i: turn(
                    call(
                        "apply_patch",
                        {
                            "patch": "--- a/src/app.py\n+++ b/src/app.py\n"
                            f"@@ -1 +1 @@\n-{i}\n+{i + 1}\n"
                        },
                    )
                ),
                1,
            ),
            loop_starts_at_batch=1,
        )
    )

    # 25. The provider resends the same call id.
    entries.append(
        Entry(
            name="loop-duplicate-call-id",
            label="loop",
            shape="the provider resends a handled call",
            description="A provider bug replays the same tool call, id included, in every reply.",
            tools={"list_directory": tool(ok("src/\ntests/\nREADME.md"))},
            turns=until_cap(
                lambda i: turn(call("list_directory", {"path": "."}, id="call_ls_1")), 1
            ),
            loop_starts_at_batch=2,
        )
    )

    # 26. An MCP server that never reports an execution status.
    entries.append(
        Entry(
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
    )

    # 27. Output truncation that keeps failing after the command ran.
    entries.append(
        Entry(
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
    )

    # 28. A job polled for ever.
    entries.append(
        Entry(
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
    )
    return entries


# --- legit --------------------------------------------------------------------------------


def legit() -> list[Entry]:
    entries: list[Entry] = []

    entries.append(
        Entry(
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
    )

    polls: list[Json] = []
    for _ in range(6):
        polls.append(turn(call("run_shell_command", {"command": "sleep 15"})))
        polls.append(turn(call("job_status", {"job_id": "migrate-88"})))
    entries.append(
        Entry(
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
    )

    entries.append(
        Entry(
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
                *[
                    turn(call("search_issues", {"query": "label:bug", "page": p}))
                    for p in range(1, 13)
                ],
                answer("There are 557 open bugs."),
            ],
        )
    )

    paging: list[Json] = []
    outcomes: list[Json] = []
    for p in range(1, 11):
        paging.append(turn(call("search_issues", {"query": "is:open", "page": p})))
        if p in (4, 7):
            outcomes.append(fail("execution_failed", "HTTP 503 Service Unavailable"))
            paging.append(turn(call("search_issues", {"query": "is:open", "page": p})))
        outcomes.append(ok(f"page {p}: 50 issues"))
    entries.append(
        Entry(
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
    )

    failures = [
        "FAILED tests/test_api.py::test_create - KeyError: 'id'",
        "FAILED tests/test_api.py::test_create - AssertionError: 201 != 200",
        "FAILED tests/test_api.py::test_update - AssertionError: 'name' missing",
        "FAILED tests/test_api.py::test_delete - TypeError: delete() takes 1 argument",
    ]
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
    entries.append(
        Entry(
            name="legit-fix-then-recheck-same-command",
            label="legit",
            shape="fix-then-recheck that succeeds on the 5th try",
            description="Test, fix, test again with the same command: it passes on the fifth run.",
            tools={
                "run_shell_command": tool(
                    *[
                        fail("shell_execute_error", f"Command failed.\nOutput:\n{f}\nExit code: 1")
                        for f in failures
                    ],
                    ok("42 passed in 3.1s"),
                ),
                "edit_file": tool(ok("Edited src/api.py (1 replacement).")),
            },
            turns=[*recheck, answer("All tests pass.")],
        )
    )

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
    entries.append(
        Entry(
            name="legit-fix-then-recheck-varied",
            label="legit",
            shape="fix-then-recheck that succeeds on the 5th try",
            description="Test, fix, test again, narrowing the test selection each time; the "
            "fifth run passes.",
            tools={
                "run_shell_command": tool(
                    *[
                        fail("shell_execute_error", f"Command failed.\nOutput:\n{f}\nExit code: 1")
                        for f in failures
                    ],
                    ok("42 passed in 3.1s"),
                ),
                "edit_file": tool(ok("Edited src/api.py (1 replacement).")),
            },
            turns=[*varied, answer("All tests pass.")],
        )
    )

    entries.append(
        Entry(
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
    )

    entries.append(
        Entry(
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
    )

    entries.append(
        Entry(
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
    )

    entries.append(
        Entry(
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
    )

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
    entries.append(
        Entry(
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
    )

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
    entries.append(
        Entry(
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
    )

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
    entries.append(
        Entry(
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
    )

    recovery = [
        turn(call("list_directory", {"path": "deploy"})),
        turn(call("read_file", {"path": "deploy/app.yaml"})),
        answer("The database URL is in deploy/app.yaml."),
    ]
    entries.append(
        Entry(
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
    )

    mcp_recovery = [
        turn(call("mcp__srv__search", {"query": "api.example.com status"})),
        answer("The upstream API is degraded; I'll retry later."),
    ]
    entries.append(
        Entry(
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
    )

    indexes = [
        "https://pypi.org/simple",
        "https://mirror.example.com/simple",
        "https://pypi.tuna.example.edu/simple",
        "https://proxy.example.net/pypi/simple",
    ]
    entries.append(
        Entry(
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
    )

    explore: list[Json] = []
    explore_outcomes: list[Json] = []
    for b in range(6):
        paths = [f"src/pkg{b}/mod{k}.py" for k in range(5)]
        explore.append(turn(*[call("read_file", {"path": path}) for path in paths]))
        for k, path in enumerate(paths):
            explore_outcomes.append(
                not_found(path) if (b, k) in {(1, 2), (3, 0), (4, 4)} else ok(f"# {path}\n")
            )
    entries.append(
        Entry(
            name="legit-explore-files",
            label="legit",
            shape="exploring many files",
            description="Thirty reads in six batches; three of the guessed modules do not exist.",
            tools={"read_file": tool(*explore_outcomes)},
            turns=[*explore, answer("Here is how the packages fit together.")],
        )
    )

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
    entries.append(
        Entry(
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
    )

    ports = [3000, 3001, 5000, 8000, 8080]
    entries.append(
        Entry(
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
                        call(
                            "http_request", {"method": "GET", "url": f"http://127.0.0.1:{p}/health"}
                        )
                        for p in ports[:3]
                    ]
                ),
                turn(
                    *[
                        call(
                            "http_request", {"method": "GET", "url": f"http://127.0.0.1:{p}/health"}
                        )
                        for p in ports[3:]
                    ]
                ),
                answer("The service listens on port 8080."),
            ],
        )
    )

    entries.append(
        Entry(
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
    )

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
    entries.append(
        Entry(
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
    )

    wait: list[Json] = [turn(call("run_shell_command", {"command": "docker compose up -d api"}))]
    wait_outcomes: list[Json] = [ok("Container app-api-1  Started")]
    for i in range(5):
        wait.append(
            turn(call("http_request", {"method": "GET", "url": "http://127.0.0.1:8080/health"}))
        )
        if i < 4:
            wait.append(turn(call("run_shell_command", {"command": "sleep 3"})))
            wait_outcomes.append(ok(""))
    entries.append(
        Entry(
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
    )
    return entries


# --- writing ------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as double-quoted scalars, so each item stays on one line."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _flow(value: Any) -> str:
    text = yaml.dump(value, Dumper=_Dumper, default_flow_style=True, width=10_000, sort_keys=False)
    text = text.strip()
    # A lone scalar is dumped as a document with an explicit end marker.
    return text.removesuffix("...").strip()


def _block(key: str, items: Iterable[Any], indent: str = "  ") -> list[str]:
    lines = [f"{indent}{key}:"]
    lines.extend(f"{indent}  - {_flow(item)}" for item in items)
    return lines


def render(entry: Entry) -> str:
    lines = [f"# {line}" for line in _wrap(entry.description)]
    lines.append(f"name: {entry.name}")
    lines.append("mode: enforce")
    if entry.max_model_requests is not None:
        lines.append(f"max_model_requests: {entry.max_model_requests}")
    elif entry.label == "loop":
        lines.append(f"max_model_requests: {LOOP_MAX_MODEL_REQUESTS}")
    if entry.workspace:
        lines.append(f"workspace: {_flow(entry.workspace)}")
    if entry.permissions:
        lines.append(f"permissions: {_flow(entry.permissions)}")
    lines.append("tools:")
    for name, spec in entry.tools.items():
        lines.append(f"  {name}:")
        for key in ("tool_type", "mutating"):
            if key in spec:
                lines.append(f"    {key}: {_flow(spec[key])}")
        lines.extend(_block("outcomes", spec["outcomes"], indent="    "))
    lines.append("model:")
    lines.extend(_block("turns", entry.turns))
    if entry.after_reminder is not None:
        lines.extend(_block("after_reminder", entry.after_reminder))
    if entry.events:
        lines.extend(_block("events", entry.events, indent=""))
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int = 88) -> list[str]:
    out: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        out.append(line)
    return out


def labels(entries: list[Entry]) -> str:
    header = (
        "# Labels for the benchmark corpus: file name -> label (loop | legit), where a loop\n"
        "# starts (the first batch that is part of it), the shape, and why Seawall's\n"
        "# recommended loop profile is not expected to stop it (out_of_scope) or why it halts a\n"
        "# legit one (known_gap), the same for the seed profile (seed_out_of_scope,\n"
        "# seed_known_gap), and for scenarios modelled on a real public incident, its url.\n"
        "# Written by bench/make_corpus.py.\n"
    )
    data: dict[str, Json] = {}
    for entry in entries:
        item: Json = {"label": entry.label}
        if entry.loop_starts_at_batch is not None:
            item["loop_starts_at_batch"] = entry.loop_starts_at_batch
        item["shape"] = entry.shape
        if entry.out_of_scope:
            item["out_of_scope"] = entry.out_of_scope
        if entry.known_gap:
            item["known_gap"] = entry.known_gap
        if entry.seed_out_of_scope:
            item["seed_out_of_scope"] = entry.seed_out_of_scope
        if entry.seed_known_gap:
            item["seed_known_gap"] = entry.seed_known_gap
        item["note"] = entry.note or entry.description
        if entry.url:
            item["url"] = entry.url
        data[entry.file_name] = item
    return header + yaml.safe_dump(data, sort_keys=True, width=100, allow_unicode=True)


def corpus_files() -> dict[str, str]:
    """Every file of the corpus, by name, as this script writes it."""
    from bench.make_incidents import incidents

    entries = [*loops(), *legit(), *incidents()]
    files = {entry.file_name: render(entry) for entry in entries}
    files["labels.yaml"] = labels(entries)
    return files


def main() -> int:
    CORPUS.mkdir(parents=True, exist_ok=True)
    files = corpus_files()
    for stale in CORPUS.glob("*.yaml"):
        if stale.name not in files:
            stale.unlink()
    for name, text in files.items():
        (CORPUS / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files) - 1} scenarios and labels.yaml to {CORPUS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
