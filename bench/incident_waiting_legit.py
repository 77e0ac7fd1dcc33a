"""Real-incident scenarios where the repetition was the work: waiting, paging, polling, backoff.

Issue 25 asks the corpus for at least 30 legitimate repetitive sessions that wait, page,
poll, retry with backoff or refactor many files, because the mirror image of a loop made of
successful calls is a monitor whose status call waits and answers the same until the job
is done (docs/benchmarks.md). Each function here re-enacts one public report, most of them
a loop detector halting such work and its users or maintainers calling that a false
positive; :func:`waiting_legit` lists them and ``bench/make_incidents.py`` gathers them
with the other incident scenarios (its docstring gives the method).

Every scenario carries time (docs/scenarios.md, "Time"): a call that waits, a long poll,
``sleep 30`` or a build takes its real ``duration_seconds``, a quick call a fraction of a
second, and every model turn a ``latency_seconds`` of a few seconds, so a rule can tell a
poll that waited from one that spins. Where a report leaves a figure open (how many polls,
how long a build ran), the choice is written in the scenario's note.
"""

from __future__ import annotations

from bench.corpus_builders import (
    MCP,
    Entry,
    TimedScript,
    call,
    fail,
    ok,
    sh,
    sh_fail,
    took,
)

# Model turn latencies (seconds), cycled by turn number when a batch names none: a coding
# model answering a tool result takes a few seconds, sometimes more.
LATENCIES = (4.2, 6.1, 3.4, 5.3, 8.7, 2.9, 4.8, 11.6, 3.8, 6.9)


# --- polling a status that waits and answers the same ---------------------------------------


def legit_openmono_check_status_30_polls() -> Entry:
    s = TimedScript(LATENCIES)
    s.batch(
        (
            call("start_job", {"name": "reindex-search", "args": {"index": "products-v7"}}),
            took(ok("Started job reindex-2291 (reindex-search)."), 1.2),
        )
    )
    status = call("check_status", {"job_id": "reindex-2291"})
    running = took(ok("job reindex-2291: running"), 30)
    for _ in range(29):
        s.batch((status, running))
    s.batch(
        (
            status,
            took(ok("job reindex-2291: completed (exit 0, 14m52s, 4,812,330 documents)"), 30),
        )
    )
    s.answer("The reindex finished: 4.8M documents in products-v7, in just under 15 minutes.")
    return Entry(
        name="real-legit-openmono-check-status-30-polls",
        label="legit",
        shape="a status call that waits and answers the same until the job is done",
        description="The user asks the agent to monitor a long background job; it calls "
        "CheckStatus again and again with the same arguments, each call waiting 30 s and "
        "answering 'running', until the thirtieth reports the job completed; a doom-loop "
        "detector keyed on the call signature aborted the turn.",
        tools=s.tools(),
        turns=s.turns,
        note="The report names the shape (CheckStatus, identical arguments, until done); the "
        "30 polls, each a 30 s long poll, and the identical 'running' answer are this "
        "scenario's choice, after the issue's '30 polls of a succeeding status tool'.",
        url="https://github.com/StartupHakk/OpenMonoAgent.ai/issues/47",
    )


def legit_openhands_ci_sleep_and_check() -> Entry:
    s = TimedScript(LATENCIES)
    s.batch(
        (
            sh("git push origin fix/flaky-upload"),
            took(
                ok(
                    "To github.com:acme/api.git\n   3f2a9c1..8be04d7  fix/flaky-upload ->"
                    " fix/flaky-upload"
                ),
                2.4,
            ),
        )
    )
    check = sh("gh run list --branch fix/flaky-upload --limit 1 --json status,conclusion")
    in_progress = took(ok('[{"conclusion":"","status":"in_progress"}]'), 1.1)
    for _ in range(14):
        s.batch((sh("sleep 30"), took(ok(""), 30)))
        s.batch((check, in_progress))
    s.batch((sh("sleep 30"), took(ok(""), 30)))
    s.batch((check, took(ok('[{"conclusion":"success","status":"completed"}]'), 1.1)))
    s.answer("CI passed on fix/flaky-upload after about eight minutes.")
    return Entry(
        name="real-legit-openhands-ci-sleep-and-check",
        label="legit",
        shape="polling with sleep, the same answer until the job is done",
        description="The agent waits for a CI pipeline that takes 5 to 10 minutes: it sleeps "
        "30 s and checks whether the build is done, over and over, the check answering "
        "'in_progress' every time until it completes; the stuck detector killed such "
        "agents with 'agent got stuck in a loop'.",
        tools=s.tools(),
        turns=s.turns,
        note="A commenter describes the 30 s sleep and check during a 5-10 minute CI run; "
        "fifteen rounds (about eight minutes) is this scenario's choice.",
        url="https://github.com/OpenHands/OpenHands/issues/5355",
    )


def legit_weave_codex_write_stdin_polls() -> Entry:
    s = TimedScript(LATENCIES)
    s.batch(
        (
            sh("cargo test --workspace", yield_time_ms=10000),
            took(
                ok(
                    "Process running with session ID 3\nOutput:\n   Compiling serde v1.0.210\n"
                    "   Compiling tokio v1.40.0"
                ),
                10,
            ),
        )
    )
    poll = call("write_stdin", {"session_id": 3, "chars": "", "yield_time_ms": 30000})
    outputs = [
        "   Compiling router-core v0.9.0 (/work/router/crates/core)",
        "(no new output)",
        "   Compiling router-proxy v0.9.0 (/work/router/internal/proxy)",
        "(no new output)",
        "(no new output)",
        "    Finished `test` profile [unoptimized + debuginfo] target(s) in 2m 41s\n"
        "     Running unittests src/lib.rs (target/debug/deps/router_core-5c1e)",
        "test result: ok. 412 passed; 0 failed; 0 ignored; finished in 38.22s\n"
        "     Running tests/proxy.rs (target/debug/deps/proxy-a1b9)",
    ]
    for text in outputs:
        s.batch((poll, took(ok(f"Process running with session ID 3\nOutput:\n{text}"), 30)))
    s.batch(
        (
            poll,
            took(
                ok(
                    "Process exited with code 0\nOutput:\ntest result: ok. 96 passed; 0 failed; "
                    "0 ignored; finished in 21.07s"
                ),
                17,
            ),
        )
    )
    s.answer("The whole workspace test suite passes (508 tests).")
    return Entry(
        name="real-legit-weave-codex-write-stdin-polls",
        label="legit",
        shape="polling a long command with an identical empty write_stdin",
        description="Codex starts a long test run and polls it with empty write_stdin calls, "
        "identical arguments every time while the process state changes; a router's "
        "tool-loop breaker saw five identical polls and stopped the healthy turn twice.",
        tools=s.tools(),
        turns=s.turns,
        note="Codex's exec_command is the shell here; its write_stdin poll keeps its name. "
        "Each poll waits its 30 s yield time, and some return no new output, as a long "
        "compile step does.",
        url="https://github.com/weave-os/router/pull/1123",
    )


def legit_stella_read_output_sleep() -> Entry:
    s = TimedScript(LATENCIES)
    s.batch(
        (
            call("start_process", {"command": "cargo build --release"}),
            took(ok("Started process p-7 (cargo build --release); poll it with read_output."), 0.4),
        )
    )
    read = call("read_output", {"handle": "p-7"})
    crates = [
        "proc-macro2",
        "unicode-ident",
        "quote",
        "syn",
        "serde_derive",
        "serde",
        "libc",
        "cfg-if",
        "memchr",
        "regex-syntax",
        "aho-corasick",
        "regex",
        "bytes",
        "mio",
        "tokio",
        "hyper",
        "rustls",
        "ring",
        "sqlx-core",
        "sqlx",
        "tantivy",
        "stella-index",
        "stella-core",
        "stella-cli",
    ]
    for k, crate in enumerate(crates):
        s.batch((sh("sleep 5"), took(ok(""), 5)), latency=3.1)
        s.batch((read, took(ok(f"   Compiling {crate} v{1 + k % 3}.{k}.0"), 0.2)), latency=3.6)
    s.batch((sh("sleep 5"), took(ok(""), 5)), latency=3.1)
    s.batch(
        (
            read,
            took(
                ok(
                    "    Finished `release` profile [optimized] target(s) in 4m 02s\nexited"
                    " (code 0)"
                ),
                0.2,
            ),
        )
    )
    s.answer("The release build is done: target/release/stella.")
    return Entry(
        name="real-legit-stella-read-output-sleep",
        label="legit",
        shape="polling a background build with sleep, new output each time",
        description="With no wait tool, the agent polls a running build with read_output "
        "(the same handle every time) and sleeps 5 s between polls; every poll returns new "
        "bytes until 'exited (code 0)', yet the detector aborted the turn 30 s in.",
        tools=s.tools(),
        turns=s.turns,
        max_model_requests=70,
        note="The report's build runs ten minutes; this one is a four-minute release build "
        "so that the read_output/sleep 5 alternation it describes finishes inside the "
        "per-prompt tool-call cap.",
        url="https://github.com/macanderson/stella/issues/359",
    )


def legit_pi_go_bash_output_polls() -> Entry:
    s = TimedScript(LATENCIES)
    s.batch(
        (
            sh("make test-coverage", background=True),
            took(ok("Started background command bg-2 (make test-coverage)."), 0.3),
        )
    )
    poll = call("bash_output", {"id": "bg-2"})
    lines = [
        "go test -coverprofile=cover.out ./...",
        "ok  \tgithub.com/dimetron/pi-go/internal/agent\t4.112s\tcoverage: 78.3% of statements",
        "ok  \tgithub.com/dimetron/pi-go/internal/config\t0.913s\tcoverage: 91.0% of statements",
        "ok  \tgithub.com/dimetron/pi-go/internal/llm\t6.402s\tcoverage: 72.6% of statements",
        "ok  \tgithub.com/dimetron/pi-go/internal/session\t2.277s\tcoverage: 84.1% of statements",
        "ok  \tgithub.com/dimetron/pi-go/internal/tools\t9.830s\tcoverage: 69.9% of statements",
        "ok  \tgithub.com/dimetron/pi-go/internal/tui\t11.045s\tcoverage: 63.2% of statements",
        "ok  \tgithub.com/dimetron/pi-go/internal/lsp\t3.518s\tcoverage: 70.4% of statements",
        "ok  \tgithub.com/dimetron/pi-go/internal/mcp\t5.006s\tcoverage: 75.8% of statements",
        "ok  \tgithub.com/dimetron/pi-go/internal/sandbox\t7.761s\tcoverage: 66.0% of statements",
        "ok  \tgithub.com/dimetron/pi-go/internal/skills\t1.394s\tcoverage: 88.5% of statements",
        "go tool cover -func=cover.out | tail -1",
    ]
    for text in lines:
        s.batch((poll, took(ok(f"status: running\n{text}"), 2)))
    s.batch((poll, took(ok("status: exited (0)\ntotal:\t(statements)\t74.8%"), 2)))
    s.answer("make test-coverage passes; total coverage is 74.8%.")
    return Entry(
        name="real-legit-pi-go-bash-output-polls",
        label="legit",
        shape="polling a background command with an identical call, new output each time",
        description="Polling a background `make test-coverage` (over a minute) with the same "
        "bash_output handle every time; the stuck detector fingerprinted name and arguments "
        "only and aborted after 10 polls while the command was still streaming output.",
        tools=s.tools(),
        turns=s.turns,
        url="https://github.com/dimetron/pi-go/pull/102",
    )


def legit_claude_code_task_output_timeouts() -> Entry:
    s = TimedScript(LATENCIES)
    s.batch(
        (
            sh("poetry run pytest tests/ -q"),
            took(
                ok(
                    "Command running in background with ID: bt2kelt7i. Output is being written "
                    "to: /tmp/claude-1000/tasks/bt2kelt7i.output"
                ),
                2.0,
            ),
        )
    )
    waiting = (
        "<retrieval_status>timeout</retrieval_status>\n<task_id>bt2kelt7i</task_id>\n"
        "<status>running</status>"
    )
    for timeout in (30000, 60000, 120000):
        s.batch(
            (
                call("TaskOutput", {"task_id": "bt2kelt7i", "block": True, "timeout": timeout}),
                took(ok(waiting), timeout / 1000),
            )
        )
    s.batch(
        (
            call("read_file", {"path": "/tmp/claude-1000/tasks/bt2kelt7i.output"}),
            took(ok("........................................ [100%]\n148 passed in 4.11s"), 0.1),
        )
    )
    s.answer("All 148 tests pass.")
    return Entry(
        name="real-legit-claude-code-task-output-timeouts",
        label="legit",
        shape="blocking status calls that wait and time out, then the result",
        description="A test run is silently moved to the background; the agent waits for it "
        "with TaskOutput calls of 30 s, 60 s and 120 s that all time out with the same "
        "'running' answer, then reads the output file: 148 passed.",
        tools=s.tools(),
        turns=s.turns,
        note="The report blames the tool for the latency, not the agent; waiting on the "
        "task is what the agent should do, so the session is legitimate.",
        url="https://github.com/anthropics/claude-code/issues/31518",
    )


def legit_claude_code_monitor_gh_run() -> Entry:
    s = TimedScript(LATENCIES)
    loop = (
        "while true; do result=$(gh run view 12345678 --json status,conclusion 2>/dev/null); "
        'status=$(echo "$result" | jq -r .status); echo "status=$status"; '
        '[ "$status" = "completed" ] && break; sleep 30; done'
    )
    s.batch(
        (
            sh(loop, run_in_background=True),
            took(ok("Command running in background with ID: b7f2."), 0.5),
        )
    )
    s.batch(
        (
            call("BashOutput", {"bash_id": "b7f2"}),
            took(
                fail(
                    "shell_execute_error",
                    'Background command "while true; do ..." failed with exit code 1',
                ),
                0.1,
            ),
        )
    )
    s.batch(
        (
            sh(f"bash -c '{loop}'", run_in_background=True),
            took(ok("Command running in background with ID: c9a4."), 0.5),
        )
    )
    seen: list[str] = []
    for status in [
        "queued",
        "in_progress",
        "in_progress",
        "in_progress",
        "in_progress",
        "in_progress",
        "in_progress",
    ]:
        seen.append(f"status={status}")
        s.batch((sh("sleep 30"), took(ok(""), 30)))
        s.batch(
            (
                call("BashOutput", {"bash_id": "c9a4"}),
                took(
                    ok("<status>running</status>\n<stdout>\n" + "\n".join(seen) + "\n</stdout>"),
                    0.1,
                ),
            )
        )
    s.batch((sh("sleep 30"), took(ok(""), 30)))
    s.batch(
        (
            call("BashOutput", {"bash_id": "c9a4"}),
            took(
                ok(
                    "<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>\n"
                    "status=completed\n</stdout>"
                ),
                0.1,
            ),
        )
    )
    s.batch((sh("gh run view 12345678 --json conclusion -q .conclusion"), took(ok("success"), 1.3)))
    s.answer("Run 12345678 completed successfully.")
    return Entry(
        name="real-legit-claude-code-monitor-gh-run",
        label="legit",
        shape="monitoring a CI run in the background, checking it every 30 s",
        description="Asked to monitor a GitHub Actions run, the agent starts a background "
        "poll loop over `gh run view`; it exits 1 spuriously, the agent re-runs it wrapped "
        "in `bash -c` (the reported workaround) and checks its output every 30 s until the "
        "run completes.",
        tools=s.tools(),
        turns=s.turns,
        note="The report is about the spurious exit 1; how the agent then watches the "
        "working loop (sleep 30, read the output) and the run's four minutes are this "
        "scenario's choice.",
        url="https://github.com/anthropics/claude-code/issues/54983",
    )


def legit_vscode_copilot_benchmark_terminal() -> Entry:
    s = TimedScript(LATENCIES)
    s.batch(
        (
            sh("dotnet run -c Release --project bench/Parsers.Bench", isBackground=True),
            took(ok("Command is running in terminal 3."), 1.5),
        )
    )
    poll = call("get_terminal_output", {"id": "3"})
    progress = [
        "// ***** BenchmarkRunner: Start   *****\n// ***** Found 4 benchmark(s) in total *****",
        "// ***** BenchmarkRunner: Start   *****\n// ***** Found 4 benchmark(s) in total *****",
        "// Benchmark: JsonParse.SystemTextJson: DefaultJob\nOverheadJitting  1: 1 op, 212300.00"
        " ns",
        "WorkloadWarmup   6: 16384 op, 18233100.00 ns, 1.1128 us/op",
        "WorkloadWarmup   6: 16384 op, 18233100.00 ns, 1.1128 us/op",
        "// Benchmark: JsonParse.Newtonsoft: DefaultJob\nWorkloadActual  15: 8192 op,"
        " 20911200.00 ns",
        "// Benchmark: CsvParse.Sylvan: DefaultJob\nWorkloadActual  15: 65536 op, 19120400.00 ns",
        "// Benchmark: CsvParse.Sylvan: DefaultJob\nWorkloadActual  15: 65536 op, 19120400.00 ns",
        "// Benchmark: CsvParse.CsvHelper: DefaultJob\nWorkloadActual   9: 8192 op, 24412000.00 ns",
    ]
    for text in progress:
        s.batch((poll, took(ok(text), 0.2)), latency=9.5)
    s.batch(
        (
            poll,
            took(
                ok(
                    "| Method         | Mean     |\n|--------------- |---------:|\n"
                    "| SystemTextJson | 1.108 us |\n| Newtonsoft     | 2.553 us |\n"
                    "| Sylvan         | 0.291 us |\n| CsvHelper      | 2.980 us |\n"
                    "// ***** BenchmarkRunner: End *****"
                ),
                0.2,
            ),
        ),
        latency=9.5,
    )
    s.answer(
        "Benchmark done: System.Text.Json is 2.3x faster than Newtonsoft; Sylvan 10x CsvHelper."
    )
    return Entry(
        name="real-legit-vscode-copilot-benchmark-terminal",
        label="legit",
        shape="polling a background terminal, sometimes the same output twice",
        description="Asked to run a BenchmarkDotNet suite, the agent can only check the "
        "background terminal periodically (get_terminal_output does not block); it polls "
        "the same terminal until the summary table appears, some polls landing in a long "
        "warmup and returning the same text as the one before.",
        tools=s.tools(),
        turns=s.turns,
        note="The agent itself says it can only check the status periodically; ten checks "
        "about ten seconds apart (the model's own turns) over a two-minute run are this "
        "scenario's choice.",
        url="https://github.com/microsoft/vscode/issues/273968",
    )


def legit_hermes_process_poll() -> Entry:
    s = TimedScript(LATENCIES)
    s.batch(
        (
            sh("docker build -t api:dev .", background=True),
            took(ok("Started background process proc_41 (docker build -t api:dev .)."), 0.6),
        )
    )
    poll = call("process", {"action": "poll", "session_id": "proc_41"})
    no_news = took(ok("status: running\n(no new output)"), 10)
    outputs = [
        took(
            ok(
                "status: running\n#5 [builder 2/6] RUN apt-get update && apt-get install -y"
                " build-essential"
            ),
            10,
        ),
        no_news,
        no_news,
        no_news,
        took(
            ok("status: running\n#8 [builder 4/6] RUN pip wheel -r requirements.txt -w /wheels"), 10
        ),
        no_news,
        no_news,
        took(ok("status: running\n#11 [runtime 3/3] COPY --from=builder /wheels /wheels"), 10),
        took(ok("status: exited (0)\n#12 naming to docker.io/library/api:dev done"), 3),
    ]
    for outcome in outputs:
        s.batch((poll, outcome))
    s.batch((sh("docker image ls api:dev --format '{{.Size}}'"), took(ok("412MB"), 0.4)))
    s.answer("api:dev is built (412 MB).")
    return Entry(
        name="real-legit-hermes-process-poll",
        label="legit",
        shape="polling a background process, the same answer several times in a row",
        description="A background docker build is polled with the process tool; three polls "
        "in a row can return the identical 'no new output' while a layer builds, and the "
        "maintainers exempt such legitimately repeatable pollers from the identical-call "
        "loop breaker.",
        tools=s.tools(),
        turns=s.turns,
        note="Each poll waits up to 10 s for output; the build's layers and the stretches "
        "with no output are this scenario's choice.",
        url="https://github.com/NousResearch/hermes-agent/pull/90338",
    )


def legit_browser_use_export_waits() -> Entry:
    s = TimedScript(LATENCIES)
    s.batch(
        (
            call("click", {"index": 14, "text": "Export all invoices (CSV)"}),
            took(ok("Clicked 'Export all invoices (CSV)'."), 0.8),
        )
    )
    progress = [
        "Preparing export… 5%",
        "Preparing export… 18%",
        "Preparing export… 18%",
        "Preparing export… 41%",
        "Preparing export… 63%",
        "Preparing export… 87%",
    ]
    for text in progress:
        s.batch((call("wait", {"seconds": 5}), took(ok("Waited 5 seconds."), 5)))
        s.batch((call("extract_content", {"goal": "export status"}), took(ok(text), 1.4)))
    s.batch((call("wait", {"seconds": 5}), took(ok("Waited 5 seconds."), 5)))
    s.batch(
        (
            call("extract_content", {"goal": "export status"}),
            took(ok("Export ready: invoices-2026-11.csv (3,412 rows) [Download]"), 1.4),
        )
    )
    s.batch(
        (
            call("click", {"index": 22, "text": "Download"}),
            took(ok("Downloaded invoices-2026-11.csv"), 2.2),
        )
    )
    s.answer("Exported and downloaded all 3,412 November invoices as CSV.")
    return Entry(
        name="real-legit-browser-use-export-waits",
        label="legit",
        shape="waiting on a web page with identical waits",
        description="A browser agent starts an export in a web app and waits for it: the "
        "same 5 s wait and the same status read, again and again, until the download is "
        "ready; waits counted toward loop detection and gave false loop warnings until "
        "they were excluded.",
        tools=s.tools(),
        turns=s.turns,
        note="The PR names waits and repeated scrolls as the false positives; the export "
        "page is this scenario's instance of them.",
        url="https://github.com/browser-use/browser-use/pull/4033",
    )


def legit_fak_scroll_feed() -> Entry:
    s = TimedScript(LATENCIES)
    s.batch(
        (
            call(
                "mcp__playwright__browser_navigate", {"url": "https://status.example.com/history"}
            ),
            took(ok("Navigated; page title: Incident history"), 2.6),
        )
    )
    scroll = call("mcp__playwright__browser_press_key", {"key": "PageDown"})
    snap = call("mcp__playwright__browser_snapshot", {})
    months = [
        "November 2026",
        "October 2026",
        "September 2026",
        "August 2026",
        "July 2026",
        "June 2026",
        "May 2026",
        "April 2026",
        "March 2026",
        "February 2026",
        "January 2026",
    ]
    for k, month in enumerate(months):
        s.batch(
            (scroll, took(ok("Pressed PageDown"), 0.3)),
            (snap, took(ok(f'- heading "{month}"\n- list: {2 + k % 4} incidents'), 0.9)),
        )
    s.batch(
        (scroll, took(ok("Pressed PageDown"), 0.3)),
        (snap, took(ok('- heading "December 2025"\n- text "End of history"'), 0.9)),
    )
    s.answer("There were 37 incidents in the last twelve months; the list by month is below.")
    return Entry(
        name="real-legit-fak-scroll-feed",
        label="legit",
        shape="paging through a long page with an identical scroll",
        description="Scrolling a long page down one screen at a time: the same PageDown and "
        "the same snapshot call twelve times, each showing the next month, a run of "
        "same-shaped calls that is correct behaviour and that a repetition detector "
        "unaware of scroll verbs scores as a loop.",
        tools=s.tools(
            {
                "mcp__playwright__browser_navigate": MCP,
                "mcp__playwright__browser_press_key": MCP,
                "mcp__playwright__browser_snapshot": MCP,
            }
        ),
        turns=s.turns,
        note="The report lists filling a form, paging through a long file and scrolling a "
        "buffer; the status history page is this scenario's instance of scrolling.",
        url="https://github.com/anthony-chaudhary/fak/issues/5907",
    )


# --- paging -----------------------------------------------------------------------------------


def legit_ggcode_read_large_file_chunks() -> Entry:
    s = TimedScript(LATENCIES)
    path = "internal/agent/agent.go"
    s.batch(
        (
            call("read_file", {"path": path}),
            took(ok("package agent\n... (lines 1-2000 of 4733 shown; file truncated)"), 0.2),
        )
    )
    for start in range(2001, 4734, 400):
        end = min(start + 399, 4733)
        s.batch(
            (
                call("read_file", {"path": path, "offset": start, "limit": 400}),
                took(
                    ok(
                        f"{start}\tfunc (a *Agent) step{start // 400}(ctx context.Context) error"
                        f" {{\n... (lines {start}-{end} of 4733)"
                    ),
                    0.1,
                ),
            ),
            latency=3.2,
        )
    s.batch(
        (
            call(
                "edit_file",
                {
                    "path": path,
                    "old_string": "if len(calls) > maxCalls {",
                    "new_string": "if len(calls) >= maxCalls {",
                },
            ),
            took(ok("Edited internal/agent/agent.go (1 replacement)."), 0.1),
        )
    )
    s.batch(
        (sh("go test ./internal/agent/..."), took(ok("ok  \tggcode/internal/agent\t7.418s"), 9.5))
    )
    s.answer("Fixed the off-by-one in the call cap at line 3130; the agent tests pass.")
    return Entry(
        name="real-legit-ggcode-read-large-file-chunks",
        label="legit",
        shape="paging through one large file",
        description="A 4733-line file is truncated at 2000 lines, so the agent reads the rest "
        "window by window (offset/limit), each read a different part of the same file; a "
        "redundant-read guard keyed on the path only claimed it was already in context.",
        tools=s.tools(),
        turns=s.turns,
        note="The report's repro reads 100-line windows; 400-line windows are this "
        "scenario's choice.",
        url="https://github.com/topcheer/ggcode/issues/463",
    )


def legit_everruns_page_saved_output() -> Entry:
    s = TimedScript(LATENCIES)
    s.batch(
        (
            sh("kubectl logs deploy/ingest -n data --since=6h"),
            took(
                ok(
                    "Output too large (2.4 MB); saved to .tool-output/ingest-logs.txt "
                    "(31,840 lines). Read it with read_file."
                ),
                3.8,
            ),
        )
    )
    for k in range(12):
        s.batch(
            (
                call(
                    "read_file",
                    {"path": ".tool-output/ingest-logs.txt", "offset": 2000 * k, "limit": 2000},
                ),
                took(
                    ok(
                        f"{2000 * k + 1}\t2026-12-02T0{k // 2}:{(k % 2) * 30:02d}:00Z INFO batch"
                        f" {4100 + k} committed ..."
                    ),
                    0.1,
                ),
            ),
            latency=4.5,
        )
    s.batch(
        (
            call("grep_search", {"pattern": "ERROR|WARN", "path": ".tool-output/ingest-logs.txt"}),
            took(
                ok("18211: 2026-12-02T04:33:10Z ERROR batch 4109 retry 3/3: deadline exceeded"), 0.2
            ),
        )
    )
    s.answer("One batch (4109) failed after three retries at 04:33; everything else committed.")
    return Entry(
        name="real-legit-everruns-page-saved-output",
        label="legit",
        shape="paging through a saved tool output",
        description="A log too large for the context is saved to a file, and the agent pages "
        "through it with read_file at advancing offsets; the maintainers keep monotonic "
        "sequential paging allowed while catching ranges read again.",
        tools=s.tools(),
        turns=s.turns,
        note="The PR is about catching repeated ranges; the legitimate pattern it keeps "
        "allowed (monotonic paging of a persisted output) is what this scenario re-enacts.",
        url="https://github.com/everruns/everruns/pull/2295",
    )


# --- retry with backoff -------------------------------------------------------------------------


def legit_langfuse_mcp_rate_limit_wait() -> Entry:
    s = TimedScript(LATENCIES)
    get_trace = "mcp__langfuse__get_trace"
    ids = [f"tr_{0x3A10 + k:x}" for k in range(34)]
    for k, trace in enumerate(ids[:29]):
        s.batch(
            (
                call(get_trace, {"traceId": trace}),
                took(
                    ok(
                        f"trace {trace}: 7 observations, latency {1.2 + k % 5 / 10:.1f}s, cost"
                        f" $0.00{k % 9 + 1}"
                    ),
                    0.6,
                ),
            ),
            latency=2.8,
        )
    limited = fail("mcp_tool_error", '{"error":"rate_limited","retryAfterSeconds":60}')
    s.batch((call(get_trace, {"traceId": ids[29]}), took(limited, 0.3)))
    s.batch((sh("sleep 60"), took(ok(""), 60)))
    s.batch(
        (
            call(get_trace, {"traceId": ids[29]}),
            took(ok(f"trace {ids[29]}: 9 observations, latency 2.4s, cost $0.004"), 0.6),
        )
    )
    for trace in ids[30:]:
        s.batch(
            (
                call(get_trace, {"traceId": trace}),
                took(ok(f"trace {trace}: 6 observations, latency 1.1s, cost $0.002"), 0.6),
            ),
            latency=2.8,
        )
    s.answer("Of the 34 traces, the slow ones all call the reranker twice; details below.")
    return Entry(
        name="real-legit-langfuse-mcp-rate-limit-wait",
        label="legit",
        shape="waiting out a rate limit, then the identical call",
        description="An agent reading traces through the MCP server gets 29 answers and then "
        "`rate_limited` with retryAfterSeconds 60 at call 30; it waits the 60 s out and "
        "retries the same call, which works, and goes on.",
        tools=s.tools({get_trace: MCP}),
        turns=s.turns,
        note="The PR moves the wait into the runtime; before it the agent had to wait and "
        "retry itself, which is what this scenario shows, with the PR's own figures "
        "(429 at call 30, 60 s).",
        url="https://github.com/langfuse/langfuse/pull/16058",
    )


def legit_awslabs_knowledge_backoff() -> Entry:
    s = TimedScript(LATENCIES)
    search = "mcp__aws-iac__search_documentation"
    query = {"search_phrase": "CloudFormation DeletionPolicy Snapshot RDS", "limit": 5}
    throttled = took(
        fail("mcp_tool_error", "HTTP 429 Too Many Requests: rate limit exceeded for this IP"), 0.4
    )
    s.batch((call(search, query), throttled))
    s.batch((sh("sleep 16"), took(ok(""), 16)))
    s.batch((call(search, query), throttled))
    s.batch((sh("sleep 32"), took(ok(""), 32)))
    s.batch(
        (
            call(search, query),
            took(ok("5 results: DeletionPolicy attribute - AWS CloudFormation ..."), 1.8),
        )
    )
    s.batch(
        (
            call(
                "edit_file",
                {
                    "path": "templates/db.yaml",
                    "old_string": "DeletionPolicy: Delete",
                    "new_string": "DeletionPolicy: Snapshot\n    UpdateReplacePolicy: Snapshot",
                },
            ),
            took(ok("Edited templates/db.yaml (1 replacement)."), 0.1),
        )
    )
    s.batch((sh("cfn-lint templates/db.yaml"), took(ok(""), 3.2)))
    s.answer("The database now snapshots on delete and on replacement; cfn-lint is clean.")
    return Entry(
        name="real-legit-awslabs-knowledge-backoff",
        label="legit",
        shape="exponential backoff against a rate limit",
        description="The documentation search answers 429; the agent backs off 16 s, retries "
        "the same search (429 again), backs off 32 s and retries, which works, then uses "
        "the answer.",
        tools=s.tools({search: MCP}),
        turns=s.turns,
        note="The PR adds this backoff (16 s, then 32 s, capped at 60 s) inside the server; "
        "this scenario shows the agent doing it before the fix, with the PR's delays.",
        url="https://github.com/awslabs/mcp/pull/3011",
    )


def legit_octrafic_wait_tool_retry_after() -> Entry:
    s = TimedScript(LATENCIES)
    endpoints = [
        "/v1/users",
        "/v1/users/42",
        "/v1/orders",
        "/v1/orders?status=open",
        "/v1/invoices",
        "/v1/invoices/9/pdf",
        "/v1/products",
        "/v1/products/search?q=mug",
    ]
    limited = {3: 20, 6: 40}
    for k, path in enumerate(endpoints):
        test = call("execute_test", {"method": "GET", "path": path, "expect_status": 200})
        if k in limited:
            wait_s = limited[k]
            s.batch(
                (
                    test,
                    took(
                        ok(
                            f"GET {path} -> 429 Too Many Requests\nRetry-After: {wait_s}\n"
                            f"X-RateLimit-Remaining: 0"
                        ),
                        0.3,
                    ),
                )
            )
            s.batch(
                (
                    call(
                        "wait", {"seconds": wait_s, "reason": "API returned 429 with Retry-After"}
                    ),
                    took(ok(f"Waited {wait_s}s."), wait_s),
                )
            )
        s.batch(
            (
                test,
                took(
                    ok(
                        f"GET {path} -> 200 OK ({120 + 37 * k} ms)\nX-RateLimit-Remaining:"
                        f" {9 - k % 5}"
                    ),
                    0.4 + 0.1 * k,
                ),
            )
        )
    s.answer("All 8 GET endpoints return 200; the API rate-limits at 10 requests per window.")
    return Entry(
        name="real-legit-octrafic-wait-tool-retry-after",
        label="legit",
        shape="honouring Retry-After with a wait tool, then the identical call",
        description="An API-testing agent hits 429 twice; each time it reads Retry-After, "
        "calls wait for that long (20 s, then 40 s) and re-runs the same test, which then "
        "passes.",
        tools=s.tools(),
        turns=s.turns,
        note="The PR adds the wait tool and passes response headers to the agent; which "
        "endpoints are rate-limited and the two Retry-After values are this scenario's "
        "choice.",
        url="https://github.com/Octrafic/octrafic-cli/pull/73",
    )


def legit_openswarm_infra_error_backoff() -> Entry:
    s = TimedScript(LATENCIES)
    create = sh(
        "gh pr create --base main --head feat/INT-2521 --title 'Harness audit P5' --body-file pr.md"
    )
    bad_gateway = took(sh_fail("HTTP 502: Bad Gateway (https://api.github.com/graphql)", 1), 9.8)
    s.batch(
        (
            sh("git push -u origin feat/INT-2521"),
            took(ok("branch 'feat/INT-2521' set up to track 'origin/feat/INT-2521'."), 2.6),
        )
    )
    for backoff in (15, 30, 60):
        s.batch((create, bad_gateway))
        s.batch((sh(f"sleep {backoff}"), took(ok(""), backoff)))
    s.batch((create, took(ok("https://github.com/Intrect-io/OpenSwarm/pull/262"), 3.1)))
    s.answer("Opened PR #262 after GitHub's API recovered from a few minutes of 502s.")
    return Entry(
        name="real-legit-openswarm-infra-error-backoff",
        label="legit",
        shape="exponential backoff through an outage, the identical call failing the same way",
        description="GitHub's API answers 502 three times in a row; the agent backs off 15 s, "
        "30 s, 60 s between identical attempts and the fourth works; the maintainers call a "
        "repeating infra error a retryable outage, not a stuck loop.",
        tools=s.tools(),
        turns=s.turns,
        note="The PR names rate limits, 5xx and connection drops; a 502 from `gh pr create` "
        "and the three backoff delays are this scenario's choice.",
        url="https://github.com/Intrect-io/OpenSwarm/pull/262",
    )


# --- long waits in one call ---------------------------------------------------------------------


def legit_mantaui_gh_run_watch() -> Entry:
    s = TimedScript(LATENCIES)
    s.batch(
        (
            sh("git push -u origin bet-472-empty-state"),
            took(
                ok("branch 'bet-472-empty-state' set up to track 'origin/bet-472-empty-state'."),
                2.2,
            ),
        )
    )
    s.batch(
        (sh("gh pr create --fill"), took(ok("https://github.com/antoinedc/MantaUI/pull/401"), 3.4))
    )
    s.batch(
        (
            sh(
                "gh run list --branch bet-472-empty-state --limit 1 --json databaseId -q"
                " '.[0].databaseId'"
            ),
            took(ok("9211873302"), 1.2),
        )
    )
    s.batch(
        (
            sh("gh run watch 9211873302 --exit-status"),
            took(
                ok(
                    "✓ bet-472-empty-state CI · 9211873302\nTriggered via push about 17 minutes"
                    " ago\n\nJOBS\n✓ test in 4m12s"
                ),
                1020,
            ),
        ),
        text="CI is now running; let me block on it via --watch.",
    )
    s.answer("PR #401 is green; it waited about 13 minutes in the runner queue and passed in 4.")
    return Entry(
        name="real-legit-mantaui-gh-run-watch",
        label="legit",
        shape="one long blocking wait on CI",
        description="After pushing and opening the PR, the agent blocks on `gh run watch`, "
        "which prints nothing until CI finishes; with one self-hosted runner the queue "
        "wait alone outlasts a 10-minute idle watchdog, which killed the productive wait.",
        tools=s.tools(),
        turns=s.turns,
        note="The report gives about 4 minutes of CI once a job starts and a longer queue "
        "wait; 17 minutes in all is this scenario's choice.",
        url="https://github.com/antoinedc/MantaUI/pull/411",
    )


def legit_zylos_long_tool_in_flight() -> Entry:
    s = TimedScript(LATENCIES)
    e2e = sh("npm run test:e2e -- --reporter=line")
    s.batch(
        (
            e2e,
            took(
                sh_fail(
                    "Running 212 tests using 2 workers\n  ✘ checkout/pay.spec.ts:31:5 › pays"
                    " with a saved card (12.1s)\n\n  1 failed\n  211 passed (6.9m)",
                    1,
                ),
                414,
            ),
        )
    )
    s.batch(
        (
            call("read_file", {"path": "e2e/checkout/pay.spec.ts", "offset": 20, "limit": 30}),
            took(ok("31\ttest('pays with a saved card', async ({ page }) => {"), 0.1),
        )
    )
    s.batch(
        (
            call(
                "edit_file",
                {
                    "path": "src/checkout/SavedCards.tsx",
                    "old_string": "onClick={select}",
                    "new_string": "onClick={() => select(card.id)}",
                },
            ),
            took(ok("Edited src/checkout/SavedCards.tsx (1 replacement)."), 0.1),
        )
    )
    s.batch((e2e, took(ok("Running 212 tests using 2 workers\n\n  212 passed (6.8m)"), 408)))
    s.answer("Fixed the saved-card selection; the full e2e suite passes (212 tests).")
    return Entry(
        name="real-legit-zylos-long-tool-in-flight",
        label="legit",
        shape="long-running commands, minutes each",
        description="The agent runs a seven-minute e2e suite, fixes the one failure and runs "
        "it again; an activity monitor that only looked at the last hook event saw five "
        "quiet minutes and killed the session while the tool was in flight.",
        tools=s.tools(),
        turns=s.turns,
        note="The report names long bash commands; the e2e suite and its seven minutes are "
        "this scenario's choice.",
        url="https://github.com/zylos-ai/zylos-core/issues/259",
    )


# --- refactoring many files -----------------------------------------------------------------------


LICENSE_HEADER = "// Copyright 2026 Acme Corp.\n// SPDX-License-Identifier: Apache-2.0\n"


def legit_gemini_add_headers_many_files() -> Entry:
    s = TimedScript(LATENCIES)
    files = [
        f"packages/core/src/{d}/{f}.ts"
        for d, names in [
            ("tools", ["shell", "edit", "read-file", "write-file", "grep", "glob", "web-fetch"]),
            ("services", ["loopDetectionService", "fileDiscovery", "gitService", "shellExecution"]),
            ("utils", ["paths", "errors", "retry", "schemaValidator", "fetch", "summarizer"]),
            ("config", ["config", "models", "storage"]),
        ]
        for f in names
    ]
    s.batch(
        (
            call("glob", {"pattern": "packages/core/src/**/*.ts", "exclude": "**/*.test.ts"}),
            took(ok("\n".join(files)), 0.3),
        )
    )
    for path in files:
        s.batch(
            (
                call(
                    "edit_file",
                    {"path": path, "old_string": "", "new_string": LICENSE_HEADER, "insert_at": 1},
                ),
                took(ok(f"Inserted 2 lines at the top of {path}."), 0.1),
            ),
            latency=3.6,
        )
    s.batch(
        (
            sh("npm run lint -- --rule header/header"),
            took(ok("> lint\n> eslint . --rule header/header\n\n✔ No problems"), 21.4),
        )
    )
    s.answer(f"Added the Apache-2.0 header to all {len(files)} source files; lint is clean.")
    return Entry(
        name="real-legit-gemini-add-headers-many-files",
        label="legit",
        shape="the same edit across many files",
        description="Adding a license header to every source file: the same insertion, one "
        "file after another, twenty files; the LLM-based loop check flagged such batch "
        "operations (cross-file refactors, headers on many files) as unproductive loops.",
        tools=s.tools(),
        turns=s.turns,
        note="The PR names adding headers to multiple files; twenty files is this "
        "scenario's choice.",
        url="https://github.com/google-gemini/gemini-cli/pull/20701",
    )


def legit_gemini_rename_with_test_after_each() -> Entry:
    s = TimedScript(LATENCIES)
    modules = [
        "billing",
        "invoices",
        "payments",
        "refunds",
        "ledger",
        "taxes",
        "reports",
        "exports",
        "webhooks",
        "notifications",
    ]
    s.batch(
        (
            call("grep_search", {"pattern": "get_customer_by_id\\(", "path": "app"}),
            took(
                ok(
                    "\n".join(
                        f"app/{m}/service.py:{12 + 7 * k}:    customer = get_customer_by_id(cid)"
                        for k, m in enumerate(modules)
                    )
                ),
                0.4,
            ),
        )
    )
    s.batch(
        (
            call(
                "edit_file",
                {
                    "path": "app/customers/repo.py",
                    "old_string": "def get_customer_by_id(",
                    "new_string": "def fetch_customer(",
                },
            ),
            took(ok("Edited app/customers/repo.py (1 replacement)."), 0.1),
        )
    )
    for k, module in enumerate(modules):
        s.batch(
            (
                call(
                    "edit_file",
                    {
                        "path": f"app/{module}/service.py",
                        "old_string": "get_customer_by_id(cid)",
                        "new_string": "fetch_customer(cid)",
                        "replace_all": True,
                    },
                ),
                took(ok(f"Edited app/{module}/service.py ({1 + k % 3} replacements)."), 0.1),
            )
        )
        s.batch(
            (
                sh(f"pytest tests/{module} -q"),
                took(ok(f"{14 + 3 * k} passed in {6.2 + 1.3 * k:.1f}s"), 6.2 + 1.3 * k),
            )
        )
    s.batch((sh("pytest -q"), took(ok("812 passed in 94.3s"), 94.3)))
    s.answer("Renamed get_customer_by_id to fetch_customer in ten modules; the full suite passes.")
    return Entry(
        name="real-legit-gemini-rename-with-test-after-each",
        label="legit",
        shape="a refactor touching many files, a test run after each",
        description="A rename across ten modules, each edit followed by that module's tests "
        "and the whole suite at the end: the repetitive edit-then-test sequence of a "
        "multi-file change that the loop detector halted as a potential loop.",
        tools=s.tools(),
        turns=s.turns,
        note="The report names file edits and repetitive automation in general; the rename "
        "and the per-module test runs are this scenario's instance of them.",
        url="https://github.com/google-gemini/gemini-cli/issues/8234",
    )


def legit_qwen_similar_files() -> Entry:
    s = TimedScript(LATENCIES)
    services = [
        "auth",
        "billing",
        "catalog",
        "cart",
        "checkout",
        "search",
        "reviews",
        "media",
        "mailer",
        "notifier",
        "scheduler",
        "gateway",
        "ledger",
        "audit",
        "export",
        "import",
    ]
    for svc in services:
        path = f"deploy/k8s/{svc}/deployment.yaml"
        s.batch(
            (
                call("read_file", {"path": path}),
                took(
                    ok(
                        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {svc}\n..."
                        f" image: registry.acme.io/{svc}:1.41.2\n... memory: 256Mi"
                    ),
                    0.05,
                ),
            ),
            latency=2.7,
        )
        s.batch(
            (
                call(
                    "edit_file",
                    {
                        "path": path,
                        "old_string": f"image: registry.acme.io/{svc}:1.41.2",
                        "new_string": f"image: registry.acme.io/{svc}:1.42.0",
                    },
                ),
                took(ok(f"Edited {path} (1 replacement)."), 0.1),
            ),
            latency=3.3,
        )
    s.batch(
        (
            sh("kubectl apply --dry-run=server -R -f deploy/k8s/"),
            took(
                ok(
                    "\n".join(
                        f"deployment.apps/{svc} configured (server dry run)" for svc in services
                    )
                ),
                7.9,
            ),
        )
    )
    s.answer("All 16 deployments now use release 1.42.0; the server-side dry run accepts them.")
    return Entry(
        name="real-legit-qwen-similar-files",
        label="legit",
        shape="the same change across many similar files",
        description="Bumping the image tag in sixteen near-identical Kubernetes manifests, "
        "read then edit, one after another, then a dry run: the valid repetitive operation "
        "'processing multiple similar files' that loop detection flagged, so the project "
        "added a setting to turn it off.",
        tools=s.tools(),
        turns=s.turns,
        note="The PR names processing multiple similar files; the manifests are this "
        "scenario's instance of them.",
        url="https://github.com/QwenLM/qwen-code/pull/610",
    )


def waiting_legit() -> list[Entry]:
    """Every scenario of this module, in corpus order."""
    return [
        legit_openmono_check_status_30_polls(),
        legit_openhands_ci_sleep_and_check(),
        legit_weave_codex_write_stdin_polls(),
        legit_stella_read_output_sleep(),
        legit_pi_go_bash_output_polls(),
        legit_claude_code_task_output_timeouts(),
        legit_claude_code_monitor_gh_run(),
        legit_vscode_copilot_benchmark_terminal(),
        legit_hermes_process_poll(),
        legit_browser_use_export_waits(),
        legit_fak_scroll_feed(),
        legit_ggcode_read_large_file_chunks(),
        legit_everruns_page_saved_output(),
        legit_langfuse_mcp_rate_limit_wait(),
        legit_awslabs_knowledge_backoff(),
        legit_octrafic_wait_tool_retry_after(),
        legit_openswarm_infra_error_backoff(),
        legit_mantaui_gh_run_watch(),
        legit_zylos_long_tool_in_flight(),
        legit_gemini_add_headers_many_files(),
        legit_gemini_rename_with_test_after_each(),
        legit_qwen_similar_files(),
    ]
