"""The corpus's scenarios modelled on real public incidents where the repetition was the work.

One function per report (its ``url`` goes into ``labels.yaml``), listed by :func:`real_legit`;
``bench/make_incidents.py`` describes how a report becomes a scenario and gathers these with
:mod:`bench.incident_loops`.
"""

from __future__ import annotations

from bench.corpus_builders import (
    MCP,
    MUTATING,
    Entry,
    Json,
    Script,
    call,
    denied,
    fail,
    ok,
    sh,
    sh_fail,
    timed_out,
)


def legit_gemini_move_files() -> Entry:
    s = Script()
    for name in ["Button", "Card", "Modal", "Navbar", "Footer", "Sidebar"]:
        refs = (
            f"src/pages/index.tsx:3:import {name} from '../components/{name}'\n"
            f"src/pages/about.tsx:5:import {name} from '../components/{name}'"
        )
        s.batch((call("grep_search", {"pattern": f"components/{name}'", "path": "src"}), ok(refs)))
        s.batch((sh(f"git mv src/components/{name}.tsx src/components/ui/{name}.tsx"), ok("")))
        s.batch(
            *[
                (
                    call(
                        "edit_file",
                        {
                            "path": f"src/pages/{page}.tsx",
                            "old_string": f"'../components/{name}'",
                            "new_string": f"'../components/ui/{name}'",
                        },
                    ),
                    ok(f"Edited src/pages/{page}.tsx (1 replacement)."),
                )
                for page in ("index", "about")
            ]
        )
    s.batch((sh("npx tsc --noEmit"), ok("")))
    s.answer("Moved the six components to src/components/ui and updated every import.")
    return Entry(
        name="real-legit-gemini-move-files",
        label="legit",
        shape="a long task with repeated steps",
        description="Moving component files one by one: search for references, git mv, update "
        "the imports; repetitive by nature but finite, and halted as a potential loop.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/google-gemini/gemini-cli/issues/5873",
    )


TS_ERRORS = [
    "src/api/client.ts(42,7): error TS2322: Type 'string | undefined' is not assignable to "
    "type 'string'.",
    "src/api/client.ts(88,19): error TS2339: Property 'data' does not exist on type 'Response'.",
    "src/store/cart.ts(15,3): error TS2741: Property 'total' is missing in type '{ items: "
    "never[]; }'.",
    "src/store/cart.ts(61,10): error TS7006: Parameter 'item' implicitly has an 'any' type.",
    "src/pages/Checkout.tsx(23,21): error TS2345: Argument of type 'number' is not assignable "
    "to parameter of type 'string'.",
    "src/pages/Checkout.tsx(77,5): error TS2554: Expected 2 arguments, but got 1.",
    "src/hooks/useAuth.ts(9,14): error TS2305: Module '\"../api/client\"' has no exported "
    "member 'refresh'.",
    "src/hooks/useAuth.ts(31,9): error TS18048: 'session' is possibly 'undefined'.",
    "src/components/Price.tsx(12,30): error TS2362: The left-hand side of an arithmetic "
    "operation must be of type 'any', 'number', 'bigint' or an enum type.",
    "src/components/Price.tsx(40,1): error TS1128: Declaration or statement expected.",
    "src/utils/format.ts(5,17): error TS2769: No overload matches this call.",
    "src/utils/format.ts(19,3): error TS2322: Type 'null' is not assignable to type 'string'.",
    "src/main.tsx(8,1): error TS2307: Cannot find module './styles/app.css' or its "
    "corresponding type declarations.",
    "src/router.tsx(27,13): error TS2786: 'Checkout' cannot be used as a JSX component.",
]


def ts_build_failure(remaining: int) -> Json:
    errors = TS_ERRORS[len(TS_ERRORS) - remaining :]
    files = len({e.split("(")[0] for e in errors})
    return sh_fail(
        "> app@1.0.0 build\n> tsc -b && vite build\n\n"
        + "\n".join(errors)
        + f"\n\nFound {remaining} error{'s' if remaining > 1 else ''} in {files} "
        + f"file{'s' if files > 1 else ''}.",
        2,
    )


def legit_gemini_fix_and_rebuild() -> Entry:
    s = Script()
    remaining = [14, 11, 9, 7, 5, 4, 3, 2, 1]
    built = ok(
        "> app@1.0.0 build\n> tsc -b && vite build\n\nvite v5.2.0 building for production...\n"
        "✓ 214 modules transformed.\ndist/index.html  0.46 kB\n✓ built in 3.41s"
    )
    for r, left in enumerate(remaining):
        s.batch((sh("npm run build"), ts_build_failure(left)))
        fixed = left - (remaining[r + 1] if r + 1 < len(remaining) else 0)
        s.batch(
            *[
                (
                    call(
                        "edit_file",
                        {
                            "path": TS_ERRORS[len(TS_ERRORS) - left + k].split("(")[0],
                            "old_string": f"/* fix {r}.{k} */",
                            "new_string": f"/* fixed {r}.{k} */",
                        },
                    ),
                    ok("Edited (1 replacement)."),
                )
                for k in range(fixed)
            ]
        )
    s.batch((sh("npm run build"), built))
    s.answer("The build is green: fixed all 14 type errors.")
    return Entry(
        name="real-legit-gemini-fix-and-rebuild",
        label="legit",
        shape="fix-and-rebuild with a shrinking error list",
        description="Fix some type errors, run `npm run build` again: the same command fails "
        "nine times, each time with fewer errors (14, 11, 9, ... 1), and the tenth build "
        "passes; 'the commands are the same but the results are different, indicating "
        "progress'.",
        tools=s.tools(),
        turns=s.turns,
        note="The report gives the pattern (edit, then npm run build, repeatedly); the count "
        "of rounds is this scenario's choice for a mid-size type-error cleanup.",
        url="https://github.com/google-gemini/gemini-cli/issues/11002",
    )


def legit_qwen_task_list_polls() -> Entry:
    s = Script()
    s.batch(
        (
            call("send_message", {"to": "peer-1", "text": "What is the state of task #3?"}),
            fail("execution_failed", "Teammate peer-1 is no longer active."),
        )
    )
    board = [
        "#4 Write migration (in_progress, owner peer-2, started 2m ago)",
        "#4 Write migration (in_progress, owner peer-2, started 3m ago)",
        "#4 Write migration (in_progress, owner peer-2, started 5m ago)\n"
        "#5 Backfill orders (in_progress, owner peer-2, started 0m ago)",
        "#5 Backfill orders (in_progress, owner peer-2, started 1m ago)",
        "#5 Backfill orders (in_progress, owner peer-2, started 3m ago)",
        "(no tasks match)",
    ]
    args = {"status": "in_progress", "owner": "peer-2", "blockedBy": ""}
    for text in board:
        s.batch((call("task_list", args), ok(text)))
    s.answer("peer-2 finished #4 and #5; I'll take #6 next.")
    return Entry(
        name="real-legit-qwen-task-list-polls",
        label="legit",
        shape="polling shared state with an identical call",
        description="A teammate in an agent team reads the shared task board with the same "
        "task_list call while other teammates change it; identical arguments, different "
        "results, stopped as a duplicate tool-call loop.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/QwenLM/qwen-code/issues/9450",
    )


def legit_qwen_long_verification_run() -> Entry:
    s = Script()
    stages = [
        "blender_layout",
        "blender_render",
        "nuke_comp",
        "comfyui_upscale",
        "nuke_grade",
        "export_delivery",
    ]
    first_run_errors = {
        1: "Error: Cycles: CUDA device not found, falling back is disabled (--require-gpu)",
        2: "ERROR: Read1: out/stage2/frame.%04d.exr: No such file or directory (frame 1001)",
        4: "nuke.Error: Grade1: knob 'whitepoint' expects a float, got 'None'",
    }
    s.batch((call("read_file", {"path": "HANDOFF.md"}), ok("# Handoff: 6-stage DCC pipeline")))
    for k, stage in enumerate(stages, start=1):
        s.batch(
            (
                call("read_file", {"path": "HANDOFF.md", "offset": 60 * k, "limit": 60}),
                ok(f"## Stage {k}: {stage}\nInputs ... Outputs ... Checks ..."),
            )
        )
        script = f"pipeline/stage{k}_{stage}.py"
        s.batch((call("write_file", {"path": script, "content": f"# {stage}\n"}), ok("Wrote")))
        run = sh(f"python pipeline/run_stage.py {k}")
        if k in first_run_errors:
            s.batch((run, sh_fail(first_run_errors[k], 1)))
            s.batch((call("read_file", {"path": f"logs/stage{k}.log"}), ok("... traceback ...")))
            s.batch(
                (
                    call(
                        "edit_file",
                        {"path": script, "old_string": "# TODO", "new_string": f"# fix {k}"},
                    ),
                    ok(f"Edited {script} (1 replacement)."),
                )
            )
        s.batch((run, ok(f"stage {k} done: 10 frames written to out/stage{k}")))
        for frames in (range(1001, 1005), range(1005, 1009), range(1009, 1011)):
            s.batch(
                *[
                    (
                        sh(f"python pipeline/verify.py {k} --frame {f}"),
                        ok(f"frame {f}: OK 1920x1080"),
                    )
                    for f in frames
                ]
            )
        s.batch((sh(f"ls out/stage{k} | wc -l"), ok("10")))
        s.batch(
            (
                call("write_file", {"path": f"out/stage{k}/REPORT.md", "content": "verified"}),
                ok("Wrote"),
            )
        )
    s.batch((sh("python pipeline/verify.py all"), ok("6/6 stages verified")))
    s.answer("All six stages ran and were verified on disk; reports are in out/stage*/.")
    return Entry(
        name="real-legit-qwen-long-verification-run",
        label="legit",
        shape="a long unattended run with many distinct calls",
        description="An overnight six-stage render pipeline run from a handoff document: write "
        "each stage's script, run it (three stages fail once and are fixed), verify every "
        "frame on disk; more than 100 distinct, state-advancing tool calls in one turn.",
        tools=s.tools(),
        turns=s.turns,
        max_model_requests=200,
        note="The maintainers traced the kills to the fixed per-turn cap of 100 calls (since "
        "made adaptive); the stage names and frame counts are this scenario's.",
        url="https://github.com/QwenLM/qwen-code/issues/9733",
    )


def legit_vtcode_reread() -> Entry:
    s = Script()
    s.batch(
        (
            call("read_file", {"path": "AGENTS.md", "limit": 40}),
            ok("# AGENTS.md (summarised)\nRust workspace; see docs/."),
        )
    )
    s.batch((call("list_directory", {"path": "."}), ok("Cargo.toml\nREADME.md\ncrates/\ndocs/")))
    s.batch(
        (call("read_file", {"path": "Cargo.toml"}), ok("[workspace]\nmembers = ['crates/*']")),
        (call("read_file", {"path": "README.md"}), ok("# vtcode\nA terminal coding agent.")),
    )
    s.batch(
        (
            call("read_file", {"path": "AGENTS.md", "limit": 400}),
            ok("# AGENTS.md\n## Build\ncargo build\n## Layout\ncrates/core ..."),
        )
    )
    s.answer("This repo is a Rust workspace for a terminal coding agent; here is the layout.")
    return Entry(
        name="real-legit-vtcode-reread",
        label="legit",
        shape="re-reading a file with a wider range",
        description="Answering 'What's in this repo?', the agent re-reads AGENTS.md with a "
        "larger limit after a summarised first read; flagged as a repeated-read loop and "
        "answered with a stub instead of the file.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/vinhnx/VTCode/issues/680",
    )


def legit_qwen_continue_retry() -> Entry:
    s = Script()
    s.batch((call("read_file", {"path": "package.json"}), ok('{"name": "site", "scripts": {}}')))
    s.batch(
        (
            sh("npm install"),
            sh_fail(
                "npm ERR! code ETIMEDOUT\nnpm ERR! errno ETIMEDOUT\nnpm ERR! network request "
                "to https://registry.npmjs.org/vite failed, reason: connect ETIMEDOUT "
                "104.16.3.35:443",
                1,
            ),
        )
    )
    s.batch((sh("npm install"), ok("added 312 packages, and audited 313 packages in 21s")))
    s.batch((sh("npm run build"), ok("✓ built in 2.90s")))
    s.answer("Dependencies installed and the site builds.")
    return Entry(
        name="real-legit-qwen-continue-retry",
        label="legit",
        shape="the user says continue, then an identical retry",
        description="The session stops on a repeated call; the user types 'Continue' and the "
        "agent repeats the call, which now works, and completes the task.",
        tools=s.tools(),
        turns=s.turns,
        events=[{"batch": 2, "input": "Continue"}],
        note="The report shows only that typing 'Continue' let the task finish; the failing "
        "call (a registry timeout) is this scenario's assumption.",
        url="https://github.com/QwenLM/qwen-code/issues/2038",
    )


def legit_gemini_remove_debug_logs() -> Entry:
    s = Script()
    path = "src/agent/runner.py"
    source = ok('def run(task):\n    logger.debug("task=%s", task)\n    ...\n')
    s.batch((call("read_file", {"path": path}), source))
    guesses = [
        'logger.debug("task=%s", task)\n',
        '    logger.debug("task = %s", task)\n',
        '    logger.debug(f"task={task}")\n',
        '    logger.debug("task=%s", task)\n    \n',
        '\tlogger.debug("task=%s", task)\n',
        '    logger.debug("task=%s",task)\n',
    ]
    miss = fail("edit_no_occurrence_found", "Failed to edit, could not find the string to replace.")
    for old in guesses:
        s.batch((call("edit_file", {"path": path, "old_string": old, "new_string": ""}), miss))
        s.batch((call("read_file", {"path": path}), source))
    for old in [
        '    logger.debug("task=%s", task)\n',
        '    logger.debug("step %d", i)\n',
        '    logger.debug("result=%r", result)\n',
    ]:
        s.batch(
            (
                call("edit_file", {"path": path, "old_string": old, "new_string": ""}),
                ok(f"Edited {path} (1 replacement)."),
            )
        )
    s.answer("Removed the debug log lines from runner.py.")
    return Entry(
        name="real-legit-gemini-remove-debug-logs",
        label="legit",
        shape="refresh, then retry an edit until it matches",
        description="Removing debug logging: 'the old_string did not match ... I will re-read "
        "the file and retry'; this repeats more than five times before the replace finally "
        "succeeds and the work goes on.",
        tools=s.tools(),
        turns=s.turns,
        note="The user asked for fewer retries, but the work succeeded; a halt would have lost it.",
        url="https://github.com/google-gemini/gemini-cli/issues/2475",
    )


def legit_basic_memory_rate_limit() -> Entry:
    s = Script()
    limited = fail(
        "mcp_tool_error", "Too many requests. Retry after the current rate-limit window resets."
    )
    read = call("mcp__basic_memory__read_note", {"identifier": "projects/roadmap"})
    s.batch((read, limited))
    s.batch(
        (call("mcp__basic_memory__build_context", {"url": "memory://projects/roadmap"}), limited)
    )
    s.batch(
        (
            sh("git -C ~/basic-memory log --oneline -5 -- projects/roadmap.md"),
            ok("a41c2e9 roadmap: move search to Q3\n7d0b113 roadmap: add sync"),
        )
    )
    s.batch((read, ok("# Roadmap\n- Q3: search\n- see [[projects/search]]")))
    s.answer("The roadmap links to projects/search, which exists; no dangling reference.")
    return Entry(
        name="real-legit-basic-memory-rate-limit",
        label="legit",
        shape="a transient error, a workaround, then an identical retry",
        description="Two consecutive MCP calls answer 429; the agent falls back to git to "
        "inspect the note's history and then retries the first call unchanged, which works "
        "(about 35 s later in the report).",
        tools=s.tools(
            {"mcp__basic_memory__read_note": MCP, "mcp__basic_memory__build_context": MCP}
        ),
        turns=s.turns,
        url="https://github.com/basicmachines-co/basic-memory/issues/1378",
    )


def legit_mcp_transient_identical_retry() -> Entry:
    s = Script()
    weather = call("mcp__weather__get_weather", {"city": "San Francisco"})
    s.batch((weather, fail("mcp_tool_error", "MCP error -32603: fetch failed (ECONNRESET)")))
    s.batch((weather, ok("San Francisco: 62°F, fog, wind W 12 mph")))
    s.answer("It is 62°F and foggy in San Francisco.")
    return Entry(
        name="real-legit-mcp-transient-identical-retry",
        label="legit",
        shape="a transient error, then an identical retry",
        description="An MCP tool call fails once for a transient reason; the model spends a "
        "step to retry the exact same call, which succeeds.",
        tools=s.tools({"mcp__weather__get_weather": MCP}),
        turns=s.turns,
        url="https://github.com/vercel/ai/pull/16494",
    )


LINT_FINDINGS = [
    f"src/{path}\n  {line}:{col}  error  {message}"
    for path, line, col, message in [
        ("api/orders.ts", 12, 7, "'total' is assigned a value but never used  no-unused-vars"),
        ("api/orders.ts", 48, 3, "Unexpected console statement  no-console"),
        ("store/cart.ts", 9, 1, "Import order is wrong  import/order"),
        ("store/cart.ts", 33, 15, "Expected '===' and instead saw '=='  eqeqeq"),
        ("ui/Button.tsx", 4, 10, "'React' is defined but never used  no-unused-vars"),
        (
            "ui/Button.tsx",
            27,
            5,
            "React Hook useEffect has a missing dependency  react-hooks/exhaustive-deps",
        ),
        (
            "ui/Modal.tsx",
            18,
            22,
            "Unexpected any. Specify a different type  @typescript-eslint/no-explicit-any",
        ),
        ("utils/date.ts", 3, 1, "Prefer default export  import/prefer-default-export"),
        ("utils/date.ts", 40, 9, "'d' is never reassigned. Use 'const'  prefer-const"),
        (
            "main.tsx",
            6,
            1,
            "Missing return type on function  @typescript-eslint/explicit-function-return-type",
        ),
    ]
]


def legit_lint_one_finding_per_rerun() -> Entry:
    s = Script()
    lint = sh("npx eslint src --max-warnings 0")
    for left in range(len(LINT_FINDINGS), 0, -1):
        found = LINT_FINDINGS[len(LINT_FINDINGS) - left :]
        s.batch((lint, sh_fail("\n\n".join(found) + f"\n\n✖ {left} problems ({left} errors)", 1)))
        path = "src/" + found[0].split("\n")[0].removeprefix("src/")
        s.batch(
            (
                call(
                    "edit_file",
                    {"path": path, "old_string": f"/* lint {left} */", "new_string": ""},
                ),
                ok(f"Edited {path} (1 replacement)."),
            )
        )
    s.batch((lint, ok("")))
    s.answer("eslint is clean: fixed all ten findings.")
    return Entry(
        name="real-legit-lint-one-finding-per-rerun",
        label="legit",
        shape="lint one finding at a time",
        description="Fix one lint finding, re-run the same lint command to verify, fix the "
        "next: the verification command fails ten times with one finding fewer each time, "
        "then passes; a detector that ignored the edits in between called it a stuck agent.",
        tools=s.tools(),
        turns=s.turns,
        note="The report describes re-running tests or lint after each fix; ten findings is "
        "this scenario's choice.",
        url="https://github.com/traceroost/core/pull/215",
    )


def legit_roo_mcp_read_output_chunks() -> Entry:
    s = Script()
    s.batch(
        (
            call("mcp__ptymanager__start_session", {"command": "cdb.exe -pn app.exe"}),
            ok("session cdb-1 started"),
        )
    )
    s.batch(
        (
            call("mcp__ptymanager__send_input", {"session": "cdb-1", "input": "lm\n"}),
            ok("sent"),
        )
    )
    read = call("mcp__ptymanager__read_output", {"session": "cdb-1", "max_bytes": 8192})
    for i in range(50):
        chunk = (
            f"ModLoad: 00007ff8`{0x12340000 + 0x10000 * i:08x} 00007ff8`"
            f"{0x12350000 + 0x10000 * i:08x}   C:\\Windows\\System32\\mod{i:03d}.dll\n"
            f"... (8192 bytes, total {8192 * (i + 1)})"
        )
        s.batch((read, ok(chunk)))
    s.batch((read, ok("(end of output; total 409600 bytes)")))
    s.answer("app.exe loads 50 modules; here are the ones exporting the methods you asked for.")
    return Entry(
        name="real-legit-roo-mcp-read-output-chunks",
        label="legit",
        shape="paging with an identical call",
        description="Reading a debugger's output through an MCP PTY server takes 50+ "
        "consecutive read_output calls, each returning the next 8192 bytes; flagged as a "
        "loop although every call returns different data.",
        tools=s.tools(
            {
                "mcp__ptymanager__start_session": MCP,
                "mcp__ptymanager__send_input": MCP,
                "mcp__ptymanager__read_output": MCP,
            }
        ),
        turns=s.turns,
        max_model_requests=80,
        url="https://github.com/RooCodeInc/Roo-Code/issues/9502",
    )


STILL_RUNNING = (
    "[The command has no new output after 30 seconds. You may wait longer to see additional "
    "output by sending empty command '', send other commands to interact with the current "
    "process, or send keys to interrupt/kill the command.]"
)


def legit_openhands_continue_long_command() -> Entry:
    s = Script()
    progress = [
        "Collecting torch==2.3.0\n  Downloading torch-2.3.0-cp311-cp311-manylinux1_x86_64.whl "
        "(779.1 MB)",
        "     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 312.4/779.1 MB 41.2 MB/s eta 0:00:12",
        "     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 701.9/779.1 MB 40.8 MB/s eta 0:00:02",
    ]
    s.batch((sh("pip install -r requirements.txt"), timed_out(f"{progress[0]}\n{STILL_RUNNING}")))
    for text in progress[1:]:
        s.batch((sh(""), timed_out(f"{text}\n{STILL_RUNNING}")))
    s.batch((sh(""), ok("Successfully installed numpy-1.26.4 torch-2.3.0")))
    s.batch((sh("python -c 'import torch; print(torch.__version__)'"), ok("2.3.0")))
    s.answer("The requirements are installed (torch 2.3.0).")
    return Entry(
        name="real-legit-openhands-continue-long-command",
        label="legit",
        shape="waiting on a long command with an identical call",
        description="A long install keeps running past the tool's no-output window; the agent "
        "sends the empty command to keep waiting, three times in a row, and the stuck "
        "detector stops the whole conversation.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/OpenHands/OpenHands/issues/10350",
    )


def legit_openhands_nine_empty_commands() -> Entry:
    s = Script()
    tasks = [
        "> Task :app:preBuild UP-TO-DATE\n> Task :app:mergeReleaseResources",
        "> Task :app:kaptReleaseKotlin",
        "> Task :app:compileReleaseKotlin",
        "> Task :app:compileReleaseJavaWithJavac",
        "> Task :app:minifyReleaseWithR8",
        "> Task :app:mergeReleaseNativeLibs",
        "> Task :app:packageRelease",
        "> Task :app:lintVitalRelease",
        "> Task :app:assembleRelease",
    ]
    s.batch((sh("./gradlew assembleRelease"), timed_out(f"{tasks[0]}\n{STILL_RUNNING}")))
    for text in tasks[1:]:
        s.batch((sh(""), timed_out(f"{text}\n{STILL_RUNNING}")))
    s.batch((sh(""), ok("BUILD SUCCESSFUL in 6m 12s\n48 actionable tasks: 48 executed")))
    s.answer("The release APK is built: app/build/outputs/apk/release/app-release.apk.")
    return Entry(
        name="real-legit-openhands-nine-empty-commands",
        label="legit",
        shape="waiting on a long command with an identical call",
        description="Agents legitimately send several empty commands in a row to wait for a "
        "long build's output; the maintainers raise the stuck threshold so nine in a row is "
        "not a loop.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/OpenHands/OpenHands/pull/10750",
    )


def legit_gemini_data_in_blocks() -> Entry:
    s = Script()
    for k in range(8):
        s.batch(
            (
                call(
                    "read_file",
                    {"path": "data/sales_2024.csv", "offset": 5000 * k, "limit": 5000},
                ),
                ok(f"rows {5000 * k + 1}-{5000 * (k + 1)}: date,region,sku,qty,amount ..."),
            ),
            (
                sh(f"python analyze.py --block {k}"),
                ok(f"block {k}: revenue {1_204_311 + 8_117 * k}, top region EU"),
            ),
        )
    s.batch((sh("python analyze.py --merge"), ok("2024 revenue 9,859,640; EU 41%")))
    s.answer("2024 revenue was 9.86M, 41% from the EU; details per quarter below.")
    return Entry(
        name="real-legit-gemini-data-in-blocks",
        label="legit",
        shape="paging through data",
        description="Analysing a large data set block by block: load a block, analyse it, "
        "next block; repetitive by design and halted as a potential loop.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/google-gemini/gemini-cli/issues/7950",
    )


def legit_octo_poll_background() -> Entry:
    s = Script()
    s.batch(
        (
            sh("npm run build", run_in_background=True),
            ok("Started background process bg-1 (npm run build)."),
        )
    )
    outputs = [
        "(no output yet)",
        "(no output yet)",
        "> web@2.1.0 build\n> tsc -b && vite build",
        "vite v5.2.0 building for production...",
        "✓ 1412 modules transformed.",
        "dist/assets/index-4f1c.js  512.40 kB │ gzip: 160.11 kB",
        "✓ built in 48.21s\n[process exited with code 0]",
    ]
    for text in outputs:
        s.batch((call("terminal_output", {"id": "bg-1"}), ok(text)))
    s.answer("The production build finished in 48 s.")
    return Entry(
        name="real-legit-octo-poll-background",
        label="legit",
        shape="polling a background process with an identical call",
        description="The model polls a long-running background build with the same "
        "terminal_output call; normal waiting, stopped after five identical batches until "
        "observation tools were exempted.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/open-octo/octo-agent/pull/795",
    )


def legit_octo_poll_rollout_status() -> Entry:
    s = Script()
    s.batch((sh("kubectl apply -f k8s/api.yaml"), ok("deployment.apps/api configured")))
    status = sh("kubectl rollout status deploy/api -n prod --timeout=20s")
    for available in (1, 2, 2):
        s.batch(
            (
                status,
                sh_fail(
                    f'Waiting for deployment "api" rollout to finish: {available} of 3 updated '
                    "replicas are available...\nerror: timed out waiting for the condition",
                    1,
                ),
            )
        )
    s.batch((status, ok('deployment "api" successfully rolled out')))
    s.answer("The new api version is rolled out on all three replicas.")
    return Entry(
        name="real-legit-octo-poll-rollout-status",
        label="legit",
        shape="polling a command that exits non-zero while waiting",
        description="The agent polls a status command until the rollout finishes; the same "
        "call fails while it waits, and a detector stopped it after three identical batches.",
        tools=s.tools(),
        turns=s.turns,
        note="The report names polling a status command and retrying a flaky tool; the "
        "rollout is this scenario's instance of it.",
        url="https://github.com/open-octo/octo-agent/pull/737",
    )


def legit_fusion_e2e_debug_cycles() -> Entry:
    s = Script()
    errors = [
        "Error: locator.click: Timeout 5000ms exceeded.\n  waiting for getByRole('button', "
        "{ name: 'Pay now' })",
        "Error: expect(page).toHaveURL(expected)\n  Expected pattern: /\\/order\\/confirmed/\n"
        '  Received string:  "http://localhost:3000/checkout"',
        "Error: page.goto: net::ERR_CONNECTION_REFUSED at http://localhost:3000/checkout",
        "Error: expect(locator).toBeVisible() failed\n  Locator: getByText('Order confirmed')",
        "TypeError: Cannot read properties of undefined (reading 'total')\n    at "
        "CheckoutSummary (src/checkout/Summary.tsx:31:22)",
        "Error: locator.fill: Target page, context or browser has been closed",
        'Error: expect(received).toBe(expected)\n  Expected: "$42.00"\n  Received: "$40.00"',
        "Error: expect(locator).toHaveCount(expected)\n  Expected: 3\n  Received: 2",
        "Error: apiRequestContext.post: 422 Unprocessable Entity (coupon expired)",
        'Error: expect(received).toBe(expected)\n  Expected: "Paid"\n  Received: "Pending"',
    ]
    run = sh("npx playwright test e2e/checkout.spec.ts")
    header = "Running 1 test using 1 worker\n\n  ✘  1 [chromium] › e2e/checkout.spec.ts:14:5 › pays"
    files = ["src/checkout/Pay.tsx", "src/checkout/Summary.tsx", "src/api/orders.ts"]
    for i, error in enumerate(errors):
        s.batch((run, sh_fail(f"{header}\n\n{error}\n\n  1 failed", 1)))
        s.batch(
            (
                call("read_file", {"path": f"test-results/checkout-pays/error-context-{i}.md"}),
                ok(f"# Page snapshot at failure {i}"),
            ),
            (
                call(
                    "edit_file",
                    {
                        "path": files[i % len(files)],
                        "old_string": f"/* e2e {i} */",
                        "new_string": f"/* e2e fix {i} */",
                    },
                ),
                ok("Edited (1 replacement)."),
            ),
        )
    s.batch((run, ok("  ✓  1 [chromium] › e2e/checkout.spec.ts:14:5 › pays (3.2s)\n\n  1 passed")))
    s.answer("The checkout e2e test passes; ten fixes across the pay flow.")
    return Entry(
        name="real-legit-fusion-e2e-debug-cycles",
        label="legit",
        shape="fix-and-retest with a different failure each time",
        description="Long single-step E2E debugging: run the test, read the failure context, "
        "fix, run again; ten runs fail, each with a different error, and the eleventh passes; "
        "killed and requeued as a stuck loop.",
        tools=s.tools(),
        turns=s.turns,
        note="The report speaks of iterative fix/test cycles lasting 10+ minutes; ten failing "
        "runs is this scenario's choice.",
        url="https://github.com/Runfusion/Fusion/pull/2404",
    )


def legit_opencode_reject_webfetch() -> Entry:
    s = Script()
    s.batch(
        (
            call(
                "webfetch",
                {
                    "url": "https://gitlab.example.com/platform/docs/-/raw/main/deploy/runbook.md",
                    "format": "markdown",
                },
            ),
            None,
        )
    )
    for doc in ("runbook", "rollback"):
        s.batch(
            (
                sh(
                    f"glab api 'projects/platform%2Fdocs/repository/files/deploy%2F{doc}.md/raw"
                    "?ref=main'"
                ),
                ok(f"# Deploy {doc}\n1. ..."),
            )
        )
    s.batch(
        (
            call(
                "edit_file",
                {"path": "deploy.sh", "old_string": "kubectl apply", "new_string": "helm upgrade"},
            ),
            ok("Edited deploy.sh (1 replacement)."),
        )
    )
    s.answer("Updated deploy.sh following the runbook (read through glab).")
    return Entry(
        name="real-legit-opencode-reject-webfetch",
        label="legit",
        shape="a permission denial, then a workaround",
        description="The documentation lives in GitLab behind auth; the user rejects the "
        "web-fetch request and tells the agent to use the configured glab CLI, which works.",
        tools=s.tools({"webfetch": MUTATING}),
        turns=s.turns,
        permissions={"webfetch": "reject"},
        events=[
            {
                "batch": 1,
                "input": "Don't fetch GitLab over the web, it needs auth. Use the glab CLI.",
            }
        ],
        url="https://github.com/anomalyco/opencode/issues/7817",
    )


def legit_claude_code_denied_then_guidance() -> Entry:
    s = Script()
    script = ".claude/skills/report/render.py"
    s.batch((sh(f"python3 {script} --week 32"), denied()))
    s.batch((sh(f'bash -c "mkdir -p out && {script} --week 32"'), denied()))
    s.batch((sh("mkdir -p out"), ok("")))
    s.batch((sh(f"{script} --week 32"), ok("Wrote out/week-32.html")))
    s.answer("The week 32 report is in out/week-32.html.")
    return Entry(
        name="real-legit-claude-code-denied-then-guidance",
        label="legit",
        shape="permission denials, then a workaround",
        description="The agent drifts from the allowed invocation (python3 script.py, then a "
        "chained bash -c); the human denies both and says how, and the agent runs the script "
        "directly in two separate calls.",
        tools=s.tools(),
        turns=s.turns,
        events=[{"batch": 2, "input": "Run the script directly and split the commands."}],
        note="The denials come from per-command allow rules, so they are scripted as the "
        "tool's own denied outcomes rather than a per-tool permission.",
        url="https://github.com/anthropics/claude-code/issues/37769",
    )


def gh_pending(elapsed: str) -> Json:
    return fail(
        "shell_execute_error",
        "Command failed.\nOutput:\nSome checks are still pending\n0 cancelled, 0 failing, "
        "4 successful, 0 skipped, and 2 pending checks\n\n"
        f"   NAME          ELAPSED\n*  test (ubuntu)  {elapsed}\n*  e2e            {elapsed}\n"
        "Exit code: 8",
    )


GH_PASSED = ok("All checks were successful\n0 cancelled, 0 failing, 6 successful, 0 skipped")


def legit_gh_pr_checks_pending() -> Entry:
    s = Script()
    for pr in (571, 572, 573):
        for elapsed in ("1m12s", "2m40s", "4m05s"):
            s.batch((sh(f"gh pr checks {pr}"), gh_pending(elapsed)))
        s.batch((sh(f"gh pr checks {pr}"), GH_PASSED))
    s.answer("CI is green on #571, #572 and #573.")
    return Entry(
        name="real-legit-gh-pr-checks-pending",
        label="legit",
        shape="polling a command that exits non-zero while waiting",
        description="`gh pr checks` exits 8 while checks are pending; reading its own PRs the "
        "agent hit that a dozen times in one session (three PRs, pending three times each, "
        "then green).",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/5dive-ai/5dive/pull/571",
    )


def legit_ci_monitor_with_sleep() -> Entry:
    s = Script()
    for elapsed in ("0m31s", "1m02s", "1m33s", "2m04s", "2m35s"):
        s.batch((sh("gh pr checks 42"), gh_pending(elapsed)))
        s.batch((sh("sleep 30"), ok("")))
    s.batch((sh("gh pr checks 42"), GH_PASSED))
    s.answer("CI passed on #42.")
    return Entry(
        name="real-legit-ci-monitor-with-sleep",
        label="legit",
        shape="polling with sleep, a command that exits non-zero while waiting",
        description="A CI monitor polls `gh pr checks` every 30 s; exit code 8 means pending, "
        "not failed, and the poll goes on until the checks pass.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/domengabrovsek/agent-config/pull/26",
    )


def legit_claude_code_stale_edit_retry() -> Entry:
    s = Script()
    edits = [
        ("src/Controller/OrderController.php", "return $this->json($order);"),
        ("public/js/cart.js", "const total = items.reduce(sum, 0);"),
        ("config/services.json", '"timeout": 30'),
    ]
    for path, old in edits:
        edit = call("edit_file", {"path": path, "old_string": old, "new_string": old + " // x"})
        s.batch(
            (
                edit,
                fail(
                    "edit_no_occurrence_found",
                    f"String to replace was not found in file.\nString: {old}",
                ),
            )
        )
        s.batch((call("read_file", {"path": path}), ok(f"...\n{old}\n...")))
        s.batch((edit, ok(f"The file {path} has been updated.")))
    s.answer("All three changes are in.")
    return Entry(
        name="real-legit-claude-code-stale-edit-retry",
        label="legit",
        shape="refresh, then an identical retry",
        description="The first Edit fails with 'String to replace was not found' although the "
        "text is there; a Read confirms the content is unchanged and the identical Edit then "
        "succeeds (30-50% of first attempts, across file types).",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/anthropics/claude-code/issues/60894",
    )


def legit_reasonix_edit_after_reread() -> Entry:
    s = Script()
    path = "internal/app/server.go"
    for old in ("srv.ListenAndServe()", "\tsrv.ListenAndServe()\r\n"):
        s.batch(
            (
                call("edit_file", {"path": path, "old_string": old, "new_string": "srv.Run()"}),
                fail("edit_no_occurrence_found", f"old_string not found in {path}"),
            )
        )
    s.batch(
        (call("read_file", {"path": path}), ok("\tif err := srv.ListenAndServe(); err != nil {"))
    )
    s.batch(
        (
            call(
                "edit_file",
                {
                    "path": path,
                    "old_string": "if err := srv.ListenAndServe(); err != nil {",
                    "new_string": "if err := srv.Run(); err != nil {",
                },
            ),
            ok(f"Edited {path} (1 replacement)."),
        )
    )
    s.answer("server.go now calls srv.Run().")
    return Entry(
        name="real-legit-reasonix-edit-after-reread",
        label="legit",
        shape="refresh, then retry an edit until it matches",
        description="edit_file reports 'old_string not found' twice, the agent reads the file, "
        "and the third edit succeeds: 'sometimes a file needs several edits before one works'.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/esengine/DeepSeek-Reasonix/issues/5503",
    )


def legit_deepagents_attach_files() -> Entry:
    s = Script()
    for name in ("a.txt", "b.txt", "c.txt"):
        s.batch((call("attach_file", {"email_id": "1", "filename": name}), ok("True")))
    s.batch((call("send_email", {"email_id": "1"}), ok("sent")))
    s.answer("Sent the email with the three attachments.")
    return Entry(
        name="real-legit-deepagents-attach-files",
        label="legit",
        shape="the same result for different calls",
        description="Attaching three files to one email returns True three times; a rule on "
        "(tool, result) told the model the operation had no effect.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/vstorm-co/pydantic-deepagents/issues/208",
    )


def legit_tdd_red_phase_continues() -> Entry:
    s = Script()
    cases = [
        ("creates a user", "Expected: 201\n    Received: undefined"),
        ("rejects a duplicate email", "Expected: 409\n    Received: 201"),
        ("hashes the password", 'Expected: not "secret"\n    Received: "secret"'),
        ("lists users by page", "Expected length: 2\n    Received length: 5"),
    ]
    test = sh("npm test -- user.service")
    for i, (case, red) in enumerate(cases):
        s.batch(
            (
                call(
                    "edit_file",
                    {
                        "path": "src/user.service.spec.ts",
                        "old_string": f"// case {i}",
                        "new_string": f"it('{case}', ...)",
                    },
                ),
                ok("Edited (1 replacement)."),
            )
        )
        s.batch(
            (
                test,
                sh_fail(
                    f"FAIL src/user.service.spec.ts\n  ● UserService › {case}\n\n"
                    f"    {red}\n\nTests: 1 failed, {3 + i} passed",
                    1,
                ),
            )
        )
        s.batch(
            (
                call(
                    "edit_file",
                    {
                        "path": "src/user.service.ts",
                        "old_string": f"// impl {i}",
                        "new_string": f"// {case}",
                    },
                ),
                ok("Edited (1 replacement)."),
            )
        )
        s.batch((test, ok(f"PASS src/user.service.spec.ts\nTests: {4 + i} passed")))
    s.answer("UserService has four new behaviours, each test-first.")
    return Entry(
        name="real-legit-tdd-red-phase-continues",
        label="legit",
        shape="a long task with many expected failures",
        description="Red-green TDD: write a failing test, run it (exit code 1, intended), "
        "implement, run it green, next case; the agent halted on the intended red failure.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/JeremyDev87/codingbuddy/issues/463",
    )


def legit_guessed_path_then_list() -> Entry:
    s = Script()
    guess = "web/src/components/glitter-badge/glitter-badge.tsx"
    s.batch(
        (
            call("read_file", {"path": guess, "offset": 0, "limit": 400}),
            fail(
                "file_not_found",
                f"Failed to read file {guess}: ENOENT: no such file or directory",
            ),
        )
    )
    s.batch(
        (
            call("list_files", {"path": "web/src/components/glitter-badge"}),
            ok("GlitterBadge.tsx\nGlitterBadge.module.css\nindex.ts"),
        )
    )
    path = "web/src/components/glitter-badge/GlitterBadge.tsx"
    s.batch((call("read_file", {"path": path}), ok("export function GlitterBadge() {...}")))
    s.batch(
        (
            call("edit_file", {"path": path, "old_string": "gold", "new_string": "silver"}),
            ok(f"Edited {path} (1 replacement)."),
        )
    )
    s.answer("The badge is silver now.")
    return Entry(
        name="real-legit-guessed-path-then-list",
        label="legit",
        shape="exploring a missing path",
        description="The agent guesses a file name from a directory name, reads it, gets "
        "ENOENT, lists the directory and reads the real file.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/frontman-ai/frontman/issues/147",
    )


def legit_mcp_burst_one_rate_limited() -> Entry:
    s = Script()
    phrases = [
        "S3 bucket policy deny unencrypted uploads",
        "CloudFront origin access control",
        "Lambda reserved concurrency",
        "DynamoDB on-demand capacity limits",
        "IAM permission boundaries",
    ]
    search = "mcp__aws_knowledge__search_documentation"
    throttled = fail(
        "mcp_tool_error",
        'calling "tools/call": rejected by transport: sending "tools/call": Too Many Requests',
    )
    s.batch(
        *[
            (
                call(search, {"search_phrase": phrase}),
                throttled if i == 2 else ok(f"3 results for {phrase}"),
            )
            for i, phrase in enumerate(phrases)
        ]
    )
    s.batch((call(search, {"search_phrase": phrases[2]}), ok(f"3 results for {phrases[2]}")))
    s.answer("Here is what the AWS docs say on each of the five topics.")
    return Entry(
        name="real-legit-mcp-burst-one-rate-limited",
        label="legit",
        shape="a transient error, then an identical retry",
        description="Five documentation searches go out at once; one is rejected with Too "
        "Many Requests and is retried unchanged, which works.",
        tools=s.tools({search: MCP}),
        turns=s.turns,
        url="https://github.com/mckinsey/agents-at-scale-ark/issues/2633",
    )


def real_legit() -> list[Entry]:
    return [
        legit_gemini_move_files(),
        legit_gemini_fix_and_rebuild(),
        legit_qwen_task_list_polls(),
        legit_qwen_long_verification_run(),
        legit_vtcode_reread(),
        legit_qwen_continue_retry(),
        legit_gemini_remove_debug_logs(),
        legit_basic_memory_rate_limit(),
        legit_mcp_transient_identical_retry(),
        legit_lint_one_finding_per_rerun(),
        legit_roo_mcp_read_output_chunks(),
        legit_openhands_continue_long_command(),
        legit_openhands_nine_empty_commands(),
        legit_gemini_data_in_blocks(),
        legit_octo_poll_background(),
        legit_octo_poll_rollout_status(),
        legit_fusion_e2e_debug_cycles(),
        legit_opencode_reject_webfetch(),
        legit_claude_code_denied_then_guidance(),
        legit_gh_pr_checks_pending(),
        legit_ci_monitor_with_sleep(),
        legit_claude_code_stale_edit_retry(),
        legit_reasonix_edit_after_reread(),
        legit_deepagents_attach_files(),
        legit_tdd_red_phase_continues(),
        legit_guessed_path_then_list(),
        legit_mcp_burst_one_rate_limited(),
    ]
