"""The corpus's scenarios modelled on real public incidents where every call succeeded and
the session still made no progress.

A guard that counts failures never sees these loops: each call returns a success, and the
waste is that nothing moves (docs/benchmarks.md, and issue 25's "loops made of successful
calls"). The reports found fall into a few classes, and each scenario's ``shape`` names its
class: a cycle of a few calls with the same results after healthy exploration; a green test
suite re-run "to confirm" on an unchanged tree; a search reformulated again and again and
never used; a subagent re-dispatched although it already answered; the same file rewritten,
or an edit undone by a formatter and made again (the fixture outcomes' ``writes`` show the
workspace: the same content again is an earlier state again); inspection calls on an
unchanged tree while the model says it waits for the user; and the harness's own notice
("file unchanged since your last read") ignored. Every call succeeds in every scenario here.

One function per report (its ``url`` goes into ``labels.yaml``), listed by
:func:`success_loops`; ``bench/make_incidents.py`` explains how a report becomes a scenario
and gathers these with the other incident modules. Durations and model latencies are the
reports' where they give them, otherwise ordinary values for the command (a ``git status``
0.1 s, a full test suite minutes), written in the note when they matter.
"""

from __future__ import annotations

from bench.corpus_builders import (
    MCP,
    MUTATING,
    Entry,
    Json,
    Step,
    TimedScript,
    call,
    ok,
    sh,
    took,
)

# --- time ---------------------------------------------------------------------------------


def wrote(outcome: Json, path: str, content: str, seconds: float = 0.05) -> Json:
    """A successful file-tool outcome that leaves ``path`` holding ``content``."""
    return {**outcome, "duration_seconds": seconds, "writes": {path: content}}


def think(i: int, base: float = 3.0, spread: int = 5) -> float:
    """A model latency that varies from turn to turn, deterministically: ``base`` plus 0 to
    ``spread - 1`` seconds."""
    return base + (i * 7) % spread


# --- a cycle of the same calls with the same results --------------------------------------


def loop_opencode_same_grep() -> Entry:
    s = TimedScript()
    bundle = "node_modules/@cortexkit/opencode-magic-context/dist/index.js"
    s.batch(
        (
            sh("cat ~/.config/opencode/opencode.json"),
            took(
                ok(
                    '{\n  "plugin": ["@cortexkit/opencode-magic-context@latest",'
                    ' "oh-my-opencode-slim"]\n}'
                ),
                0.05,
            ),
        ),
        latency=4.0,
    )
    s.batch(
        (
            sh(f"ls -la {bundle.rsplit('/', 1)[0]}"),
            took(
                ok(
                    "-rw-r--r-- 1 dev dev 812344 Aug 19 21:04 index.js\n"
                    "-rw-r--r-- 1 dev dev   1204 Aug 19 21:04 index.d.ts"
                ),
                0.05,
            ),
        ),
        latency=5.0,
    )
    s.batch(
        (
            sh(f'grep -n "update failed" {bundle}'),
            took(
                ok("18231:      toast.error(`Magic Context update failed: ${err.message}`);"), 0.3
            ),
        ),
        latency=6.0,
    )
    s.batch(
        (
            sh(f"sed -n '18190,18240p' {bundle}"),
            took(
                ok(
                    "18190:async function checkForUpdate(ctx) {\n"
                    "18191:  const current = ctx.version;\n"
                    "...\n18231:      toast.error(`Magic Context update failed: ${err.message}`);"
                ),
                0.05,
            ),
        ),
        latency=5.0,
    )
    grep = (
        sh(f'grep -n "checkForUpdate\\|npm view" {bundle}'),
        took(
            ok(
                "18190:async function checkForUpdate(ctx) {\n"
                "18204:    const latest = await exec(`npm view ${PKG} version`);\n"
                "24410:  setTimeout(() => checkForUpdate(ctx), 5000);"
            ),
            0.3,
        ),
    )
    s.until_cap(lambda i: [grep], latency=think)
    return Entry(
        name="real-loop-opencode-same-grep",
        label="loop",
        shape="a cycle of the same calls with the same results, after exploration (period 1)",
        description="Investigating a plugin's 'update failed' toast, the agent reads the "
        "config, lists the bundle, greps it and reads the matching lines, all useful; then it "
        "issues the same grep on the same bundled file dozens of times, identical output each "
        "time, until the user aborts.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=5,
        note="Four exploration calls before the loop, as the report's 'begins reading the "
        "bundled dist/index.js' suggests; the grep takes 0.3 s on an 800 kB file.",
        url="https://github.com/anomalyco/opencode/issues/43673",
    )


def loop_codex_plan_status_cycle() -> Entry:
    s = TimedScript()
    s.batch(
        (
            sh("npx shadcn@latest add button card dialog"),
            took(
                ok(
                    "✔ Checking registry.\n✔ Created 3 files:\n  - src/components/ui/button.tsx\n"
                    "  - src/components/ui/card.tsx\n  - src/components/ui/dialog.tsx"
                ),
                14.0,
            ),
        ),
        latency=6.0,
    )
    s.batch(
        (
            sh("npm run build"),
            took(ok("> vite build\n✓ 412 modules transformed.\n✓ built in 9.84s"), 11.0),
        ),
        latency=5.0,
    )
    s.batch(
        (
            sh('git add -A && git commit -m "feat: migrate dialogs to shadcn"'),
            took(
                ok(
                    "[feat/shadcn-migration 3f9c2e1] feat: migrate dialogs to shadcn\n"
                    " 7 files changed"
                ),
                0.2,
            ),
        ),
        latency=4.0,
    )
    s.batch(
        (
            sh("git push origin feat/shadcn-migration"),
            took(
                ok(
                    "To github.com:florianm/app.git\n   9a1b7d0..3f9c2e1  feat/shadcn-migration -> "
                    "feat/shadcn-migration"
                ),
                2.5,
            ),
        ),
        latency=3.0,
    )
    plan = (
        call(
            "update_plan",
            {
                "plan": [
                    {"step": "Migrate dialogs to shadcn", "status": "completed"},
                    {"step": "Push branch and check CI", "status": "in_progress"},
                ]
            },
        ),
        took(ok("Plan updated"), 0.01),
    )
    status = (
        sh("git status -sb"),
        took(ok("## feat/shadcn-migration...origin/feat/shadcn-migration"), 0.1),
    )
    push = (sh("git push origin feat/shadcn-migration"), took(ok("Everything up-to-date"), 1.2))
    s.until_cap(lambda i: [[plan], [status], [push], [status]][i % 4], latency=think)
    return Entry(
        name="real-loop-codex-plan-status-cycle",
        label="loop",
        shape="a cycle of the same calls with the same results, after exploration (period 4)",
        description="After a real migration, build, commit and push, the agent cycles: update "
        "the plan (unchanged), git status -sb (up to date), push (Everything up-to-date), "
        "git status -sb again; the same four calls and answers over and over.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=5,
        note="The report shows the plan-update loop and the status/push/status run; the "
        "scenario interleaves them as one cycle of four. The migration commands before it are "
        "the plain reading of 'feat/shadcn-migration'.",
        url="https://github.com/openai/codex/issues/7049",
    )


def loop_qwen_read_first_lines() -> Entry:
    s = TimedScript()
    head = "\n".join(f"{n}: line {n} of experiment.log" for n in (1, 2, 3)) + "\n...\n150: ..."
    s.batch(
        (sh("wc -l logs/experiment.log"), took(ok("2841 logs/experiment.log"), 0.02)), latency=4.0
    )
    reads = [
        (
            call("read_file", {"path": "logs/experiment.log", "offset": 1200, "limit": 150}),
            took(ok(head), 0.05),
        ),
        (
            call("read_file", {"path": "logs/experiment.log", "offset": 1350, "limit": 150}),
            took(ok(head), 0.05),
        ),
    ]
    s.until_cap(lambda i: [reads[i % 2]], latency=lambda i: think(i, 8.0))
    return Entry(
        name="real-loop-qwen-read-first-lines",
        label="loop",
        shape="a cycle of the same calls with the same results, after exploration (period 2)",
        description="The agent wants the middle of a long log; the read tool returns the "
        "first 150 lines whatever the offset, and the agent alternates the same two offsets "
        "over and over, getting the same opening lines each time.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="Two alternating offsets stand for 'reading the first 100, 150 lines over and "
        "over'; a local qwen3-coder-next model, so 8-12 s a turn.",
        url="https://github.com/QwenLM/qwen-code/issues/2201",
    )


def loop_hermes_skill_reread_windows() -> Entry:
    s = TimedScript()
    path = "~/.hermes/skills/feishu-doc/SKILL.md"
    s.batch(
        (
            call("mcp__feishu__get_document", {"doc_id": "doxcnQ7v2"}),
            took(ok('{"title": "Flow design", "blocks": 42}'), 1.4),
        ),
        latency=5.0,
    )
    body = "# Feishu doc skill\n## Drawing a mermaid block\nUse the text-drawing component..."
    windows = [(1, 80), (40, 80), (1, 120)]
    steps = [
        (call("read_file", {"path": path, "offset": off, "limit": lim}), took(ok(body), 0.05))
        for off, lim in windows
    ]
    s.until_cap(lambda i: [steps[i % 3]], latency=think)
    return Entry(
        name="real-loop-hermes-skill-reread-windows",
        label="loop",
        shape="a cycle of the same calls with the same results, after exploration (period 3)",
        description="Drawing a mermaid chart in a Feishu doc, the agent re-reads one skill "
        "file with three overlapping offset/limit windows in turn, about 47 times before "
        "anything stopped it; no window shows a line the others did not.",
        tools=s.tools({"mcp__feishu__get_document": MCP}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The three windows are a choice: the report (and its fix, hermes-agent PR 33066) "
        "says the reads differ in offset/limit and surface no new lines.",
        url="https://github.com/NousResearch/hermes-agent/issues/14991",
    )


# --- a green test suite re-run "to confirm" -----------------------------------------------


def loop_trusty_final_confirm_runs() -> Entry:
    s = TimedScript()
    src = "src/bakeoff/l1.rs"
    s.batch(
        (
            call("read_file", {"path": src}),
            took(ok("pub fn score(input: &str) -> u32 {\n    todo!()\n}\n"), 0.05),
        ),
        latency=6.0,
    )
    s.batch(
        (
            call("write_file", {"path": src, "content": "pub fn score(...) { ... }\n"}),
            wrote(ok(f"Wrote {src}"), src, "pub fn score(input: &str) -> u32 { 42 }\n"),
        ),
        latency=9.0,
    )
    green = took(
        ok(
            "running 48 tests\n........................................\n"
            "test result: ok. 48 passed; 0 failed; 0 ignored; finished in 3.21s"
        ),
        38.0,
    )
    s.batch((sh("cargo test --workspace"), green), latency=4.0)
    texts = [
        "All green. One final run to confirm.",
        "Let me run the full suite once more to be sure nothing regressed.",
        "Final verification run.",
    ]
    s.until_cap(
        lambda i: [(sh("cargo test --workspace"), green)],
        text=lambda i: texts[i % 3],
        latency=think,
    )
    return Entry(
        name="real-loop-trusty-final-confirm-runs",
        label="loop",
        shape="a green test suite re-run to confirm, nothing changed",
        description="The delegated engineer writes its change, runs the suite (48 passed), "
        "then re-runs the same full suite as 'one final run to confirm' again and again with "
        "no edit in between, every run green.",
        tools=s.tools({"read_file": {}, "write_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=4,
        note="The report counts 7-14 confirming runs per bake-off run; the scenario lets the "
        "model go on to the cap. 38 s per cargo test run.",
        url="https://github.com/bobmatnyc/trusty-tools/pull/2804",
    )


def loop_prflow_zero_change_reruns() -> Entry:
    s = TimedScript()
    s.batch(
        (
            call(
                "edit_file",
                {"path": "lib/gate.sh", "old_string": "exit 0", "new_string": 'exit "$status"'},
            ),
            wrote(ok("Edited lib/gate.sh"), "lib/gate.sh", '#!/bin/sh\n...\nexit "$status"\n'),
        ),
        latency=7.0,
    )
    suite = took(
        ok(
            "monolith: 1,204 assertions\n#1911 gate-exit-status ... ok\n"
            "PASS: 1204 passed, 0 failed (361.8 s)"
        ),
        362.0,
    )
    s.batch((sh("./run.sh monolith | tail -3"), suite), latency=5.0)
    reruns = [
        (
            "Let me get explicit PASS evidence for the #1911 assertions.",
            "./run.sh monolith | grep '#1911'",
        ),
        (
            "Let me re-run monolith capturing the full recap to a file.",
            "./run.sh monolith > /tmp/recap.txt 2>&1; tail -20 /tmp/recap.txt",
        ),
        (
            "Let me confirm the suite once more before opening the PR.",
            "./run.sh monolith | tail -3",
        ),
    ]
    for i, (text, command) in enumerate(reruns):
        s.batch((sh(command), suite), text=text, latency=think(i, 5.0))
    s.answer("The change is implemented and the suite passes (1204/1204).", latency=6.0)
    return Entry(
        name="real-loop-prflow-zero-change-reruns",
        label="loop",
        shape="a green test suite re-run to confirm, nothing changed",
        description="A cloud implement run fixes a gate and runs the six-minute suite; then "
        "it re-runs the same suite three more times on a tree with zero changes, only to see "
        "output the first run had already produced, before it reports.",
        tools=s.tools({"edit_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=3,
        note="The report quotes three zero-change re-runs of about 6 minutes each (18.3 min); "
        "one of them was for FAIL lines, modelled here on a green suite so that every call "
        "succeeds. The agent then reports, as the runs in the report went on.",
        url="https://github.com/The01Geek/prflow/issues/1923",
    )


def loop_copilot_tests_without_stopping() -> Entry:
    s = TimedScript()
    s.batch(
        (
            call(
                "edit_file",
                {
                    "path": "src/cart.test.ts",
                    "old_string": "it.todo('applies coupon')",
                    "new_string": "it('applies coupon', () => { ... })",
                },
            ),
            wrote(
                ok("Edited src/cart.test.ts"),
                "src/cart.test.ts",
                "describe('cart', () => {\n  it('applies coupon', () => { ... })\n})\n",
            ),
        ),
        latency=5.0,
    )
    run = took(
        ok(
            " ✓ src/cart.test.ts (12 tests) 84ms\n ✓ src/price.test.ts (9 tests) 41ms\n\n"
            " Test Files  2 passed (2)\n      Tests  21 passed (21)\n   Duration  1.92s"
        ),
        4.5,
    )
    s.until_cap(
        lambda i: [(sh("npx vitest run src/cart.test.ts src/price.test.ts"), run)],
        latency=lambda i: think(i, 2.0),
    )
    return Entry(
        name="real-loop-copilot-tests-without-stopping",
        label="loop",
        shape="a green test suite re-run to confirm, nothing changed",
        description="After adding a test, the agent asks to run the tests and then runs them "
        "again and again without stopping; the runs pass and nothing changes between them.",
        tools=s.tools({"edit_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The report does not say whether the tests passed; they pass here, the reading "
        "in which nothing is left to fix. Copilot's test tool is mapped to a shell vitest "
        "run, 4.5 s a run.",
        url="https://github.com/microsoft/vscode-copilot-release/issues/12051",
    )


# --- a search reformulated and never used --------------------------------------------------


def loop_hermes_web_search_spiral() -> Entry:
    s = TimedScript()
    queries = [
        "best lightweight vector database 2026",
        "lightweight vector database comparison",
        "embedded vector database benchmark",
        "vector database for small projects",
        "sqlite vector search extension comparison",
        "lancedb vs chroma vs qdrant",
        "lancedb vs chroma performance 2026",
        "embedded vector store python",
        "vector database small footprint",
        "best vector database self hosted small",
        "chroma alternatives embedded",
        "qdrant embedded mode",
        "vector search sqlite-vec benchmark",
        "lightweight vector db recommendation reddit",
        "vector database comparison table",
        "embedded vector database 2026 review",
        "which vector database for a laptop",
        "small vector database for RAG",
        "lightweight vector database",
    ]
    for i, query in enumerate(queries):
        hits = (
            f"1. Top vector databases compared ({2025 + i % 2}) - example.dev/vdb-{i % 5}\n"
            f"2. LanceDB vs Chroma - blog.example.org/{i % 4}\n"
            f"3. sqlite-vec: vector search in SQLite - github.com/asg017/sqlite-vec"
        )
        s.batch((call("web_search", {"query": query}), took(ok(hits), 1.8)), latency=think(i, 3.0))
    s.answer("I searched for: " + "; ".join(queries[:6]) + "; ...", latency=5.0)
    return Entry(
        name="real-loop-hermes-web-search-spiral",
        label="loop",
        shape="a search reformulated again and again, its results never used",
        description="A research request: the agent runs 19 web searches in a row, each a "
        "slight rephrasing of the last, never opens a result or synthesizes, and hands the "
        "user a list of queries instead of an answer.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="19 searches is the report's maximum in one session; the results overlap from "
        "query to query, as rephrasings of one question do. The final text follows the "
        "earlier report of the same spiral (issue 700): a list of queries.",
        url="https://github.com/Lexus2016/hermes-agent-evolution/issues/1206",
    )


def loop_gaia_same_search_twelve() -> Entry:
    s = TimedScript()
    s.batch(
        (
            call("list_directory", {"path": "docs"}),
            took(ok("api.md\nchangelog.md\ndeploy.md\nfaq.md"), 0.02),
        ),
        latency=4.0,
    )
    search = (
        call("grep_search", {"pattern": "GAIA_MAX_STEPS", "path": "docs"}),
        took(ok("No matches found."), 0.2),
    )
    for i in range(12):
        s.batch(search, latency=think(i, 2.0))
    s.answer("Task completed with grep_search. No further action needed.", latency=1.0)
    return Entry(
        name="real-loop-gaia-same-search-twelve",
        label="loop",
        shape="a search reformulated again and again, its results never used",
        description="On a lookup task the agent searches for the same string twelve times; "
        "every call returns success with no match, no file is written, and the turn ends "
        "claiming the task completed.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The search is identical each time (the report's 'the same string twelve "
        "times'); the final text is the loop-break summary the report quotes.",
        url="https://github.com/amd/gaia/issues/3943",
    )


# --- a subagent re-dispatched although it already answered --------------------------------


def loop_shaft_subagent_reinvoked() -> Entry:
    s = TimedScript()
    s.batch(
        (
            sh("gh pr view 4049 --json state,mergedAt"),
            took(ok('{"state": "MERGED", "mergedAt": "2026-07-26T06:53:00Z"}'), 1.1),
        ),
        latency=6.0,
    )
    asks = [
        "Triage and fix the flaky WebDriver session cleanup (issue 4031); open a PR.",
        "Manage the open-bug backlog: start with the WebDriver session cleanup.",
        "Take the WebDriver cleanup bug end to end and report back.",
        "Delegate and manage the full open-bug backlog under a 4-agent cap.",
    ]
    done = took(
        ok(
            "The WebDriver session cleanup is done: PR #4049 merged at 06:53Z. My charter was "
            "that one fix; nothing is left for me to do. (25 tool uses)"
        ),
        310.0,
    )
    s.until_cap(
        lambda i: [(call("task", {"subagent_type": "bug-fixer", "prompt": asks[i % 4]}), done)],
        latency=lambda i: think(i, 6.0),
    )
    return Entry(
        name="real-loop-shaft-subagent-reinvoked",
        label="loop",
        shape="a subagent re-dispatched although it already answered",
        description="The subagent's work (a PR) has merged and it says so; the orchestrator "
        "dispatches it again with the same instruction, then rephrased, cycle after cycle, "
        "each cycle about 85k subagent tokens and 25 tool uses for the same answer.",
        tools=s.tools({"task": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="Four phrasings in turn, as the report's 'the instruction is being rephrased, "
        "not replayed'; each dispatch takes about 5 minutes (25 tool uses).",
        url="https://github.com/ShaftHQ/SHAFT_ENGINE/issues/4083",
    )


def loop_opencode_orchestrator_restarts() -> Entry:
    s = TimedScript()
    s.batch(
        (
            call("read_file", {"path": "AGENTS.md"}),
            took(
                ok(
                    "# Orchestrator\nPlan the work, hand each atomic task to the specialist, then "
                    "summarize."
                ),
                0.02,
            ),
        ),
        latency=5.0,
    )
    handover = (
        call(
            "task",
            {
                "subagent_type": "specialist",
                "prompt": "Create the onboarding checklist in docs/onboarding.md",
            },
        ),
        took(
            ok(
                "Done: docs/onboarding.md created with 12 checklist items. Handing back to the "
                "orchestrator."
            ),
            45.0,
        ),
    )
    plan = (
        call(
            "todo_write",
            {
                "todos": [
                    {"content": "Create onboarding checklist", "status": "in_progress"},
                    {"content": "Summarize for the user", "status": "pending"},
                ]
            },
        ),
        took(ok("Todos updated"), 0.01),
    )
    s.until_cap(lambda i: [[plan], [handover]][i % 2], latency=think)
    return Entry(
        name="real-loop-opencode-orchestrator-restarts",
        label="loop",
        shape="a subagent re-dispatched although it already answered",
        description="An orchestrator agent hands an atomic task to a specialist subagent, "
        "which does it and hands back; the orchestrator then starts over, writes the same "
        "plan and dispatches the same task again, in an endless loop.",
        tools=s.tools({"task": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The subagent's user question in the report is left out (its answer arrives "
        "as the result); the plan step between dispatches is opencode's todo tool.",
        url="https://github.com/anomalyco/opencode/issues/2686",
    )


def loop_ailice_researcher_redispatched() -> Entry:
    s = TimedScript()
    ask = (
        call(
            "call_agent",
            {
                "agentType": "researcher",
                "agentName": "file_researcher",
                "msg": "List the files in the current directory.",
            },
        ),
        took(
            ok("The current directory contains: README.md, ailice/, setup.py, requirements.txt"),
            12.0,
        ),
    )
    s.until_cap(
        lambda i: [ask],
        latency=lambda i: think(i, 4.0),
        text=lambda i: "The task objective is to list the files in the current directory.",
    )
    return Entry(
        name="real-loop-ailice-researcher-redispatched",
        label="loop",
        shape="a subagent re-dispatched although it already answered",
        description="Asked to list the files in the current directory, the main agent "
        "delegates it to a researcher agent, gets the list, and delegates the identical "
        "request again, over and over, stating the same objective each time.",
        tools=s.tools({"call_agent": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=1,
        note="AIlice's CALL to an agent is mapped to a call_agent tool; the report wonders "
        "whether the model sees the output, so the researcher answers every time here.",
        url="https://github.com/myshell-ai/AIlice/issues/56",
    )


# --- the same file rewritten; an edit undone by a formatter and made again ----------------


def loop_cline_write_replace_cycle() -> Entry:
    s = TimedScript()
    path = "src/routes/auth.ts"
    full = (
        "export function login(req, res) {\n  const token = sign(req.user);\n"
        "  res.json({ token });\n}\n"
    )
    patched = full.replace("res.json({ token })", "res.status(200).json({ token })")
    s.batch((call("read_file", {"path": path}), took(ok(full), 0.02)), latency=5.0)
    write = (
        call("write_file", {"path": path, "content": full}),
        wrote(ok(f"The content was successfully saved to {path}."), path, full),
    )
    replace = (
        call(
            "edit_file",
            {
                "path": path,
                "old_string": "  res.json({ token });",
                "new_string": "  res.status(200).json({ token });",
            },
        ),
        wrote(ok(f"The content was successfully saved to {path}."), path, patched),
    )
    s.until_cap(lambda i: [[replace], [write]][i % 2], latency=lambda i: think(i, 6.0))
    return Entry(
        name="real-loop-cline-write-replace-cycle",
        label="loop",
        shape="the same file rewritten, back to an earlier state",
        description="Late in a long task the agent loops between replace_in_file and "
        "write_to_file on the same file: the patch, then the whole file as it was, then the "
        "patch again; every save succeeds and the file alternates between two states.",
        tools=s.tools({"edit_file": MUTATING, "write_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The two contents are a choice; the report says only that Cline loops between "
        "write_to_file and replace_in_file 'without an actual fix', near 80% of the context.",
        url="https://github.com/cline/cline/issues/3039",
    )


def loop_copilot_reformat_same_file() -> Entry:
    s = TimedScript()
    path = "src/components/GatewayShop.vue"
    versions = [
        '<template>\n  <div class="shop">\n    <button class="buy">Buy</button>\n'
        "  </div>\n</template>\n",
        '<template>\n  <div class="shop">\n    <button class="buy" @click="buy">\n'
        "      Buy\n    </button>\n  </div>\n</template>\n",
        '<template>\n  <section class="shop">\n'
        '    <button class="buy" @click="buy">Buy</button>\n  </section>\n</template>\n',
    ]
    texts = [
        "Let me fix the formatting issues in the GatewayShop component and clean up the code:",
        "Let me fix the remaining formatting issues with the button elements:",
        "There seem to be some persistent formatting issues. Let's try a complete rewrite of "
        "the file with careful attention to formatting:",
    ]
    s.batch((call("read_file", {"path": path}), took(ok(versions[0]), 0.02)), latency=5.0)
    order = [1, 2, 2, 0, 1, 2, 0]

    def step(i: int) -> list[Step]:
        v = order[i % len(order)]
        return [
            (
                call("write_file", {"path": path, "content": versions[v]}),
                wrote(ok(f"Wrote {path}"), path, versions[v]),
            )
        ]

    s.until_cap(step, latency=lambda i: think(i, 9.0), text=lambda i: texts[i % 3])
    return Entry(
        name="real-loop-copilot-reformat-same-file",
        label="loop",
        shape="the same file rewritten, back to an earlier state",
        description="Asked to improve a component's formatting, the agent rewrites the same "
        "Vue file again and again, 'fixing formatting issues' each time; the rewrites cycle "
        "through a few versions (one diff repeats verbatim) and never converge.",
        tools=s.tools({"write_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="Three versions stand for the report's rewrites (+3-18, +4-11, +4-11, +15-22, "
        "...); the repeated +4-11 is the repeated version. The edits until the cap stand "
        "for 'running for a while now'.",
        url="https://github.com/microsoft/vscode-copilot-release/issues/9387",
    )


def loop_orchestkit_formatter_reverts() -> Entry:
    s = TimedScript()
    path = "src/hooks/src/posttool/auto-lint.ts"
    formatted = "export function lint(file: string) {\n  return run(['ruff', 'format', file]);\n}\n"
    s.batch((call("read_file", {"path": path}), took(ok(formatted), 0.02)), latency=5.0)
    edit = (
        call(
            "edit_file",
            {
                "path": path,
                "old_string": "return run(['ruff', 'format', file]);",
                "new_string": "return run([ 'ruff', 'format', file ])  // keep spacing",
            },
        ),
        wrote(
            ok(f"Edited {path}. PostToolUse hook auto-lint: formatted {path}."),
            path,
            formatted,
            seconds=1.4,
        ),
    )
    read = (call("read_file", {"path": path}), took(ok(formatted), 0.02))
    texts = ["The file does not contain my change; re-applying it.", ""]
    s.until_cap(lambda i: [[edit], [read]][i % 2], text=lambda i: texts[i % 2], latency=think)
    return Entry(
        name="real-loop-orchestkit-formatter-reverts",
        label="loop",
        shape="an edit undone by a formatter and made again",
        description="Each edit succeeds and the post-tool formatter hook reformats the file "
        "back; the agent reads it, sees different content from what it wrote, re-applies its "
        "edit, and the hook reverts it again: edit, format, read, re-edit, forever.",
        tools=s.tools({"read_file": {}, "edit_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The edit's `writes` is the file after the hook ran (the formatted content), so "
        "every edit leaves the workspace where it was. 1.4 s per edit with the formatter.",
        url="https://github.com/yonatangross/orchestkit/issues/1279",
    )


def loop_claudette_identical_edit() -> Entry:
    s = TimedScript()
    path = "src/parse.py"
    content = 'import re\n\nHEADER = re.compile(r"^\\\\s*#\\\\s*(\\\\w+)")\n'
    s.batch((call("read_file", {"path": path}), took(ok(content), 0.02)), latency=6.0)
    edit = (
        call(
            "edit_file",
            {
                "path": path,
                "old_string": 'HEADER = re.compile(r"^\\\\s*#\\\\s*(\\\\w+)")',
                "new_string": 'HEADER = re.compile(r"^\\\\s*#\\\\s*(\\\\w+)")',
            },
        ),
        wrote(ok('{"ok": true}'), path, content),
    )
    s.until_cap(lambda i: [edit], latency=lambda i: think(i, 10.0, 8))
    return Entry(
        name="real-loop-claudette-identical-edit",
        label="loop",
        shape="the same file rewritten, back to an earlier state",
        description="The agent re-sends a byte-identical edit to a doubled-backslash regex; "
        "each one reports ok:true and writes nothing new, because the display hides the "
        "over-escaping, and the spiral bloats the context until prompt processing stalls.",
        tools=s.tools({"read_file": {}, "edit_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The failing test run that started the spiral is left out so that every call "
        "succeeds; the report counts about six identical edits before the stall, the "
        "scenario goes to the cap. A local model: 10-17 s a turn.",
        url="https://github.com/mrdushidush/claudette/pull/77",
    )


def loop_localharness_identical_csv() -> Entry:
    s = TimedScript()
    path = "out/summary.csv"
    csv = "region,revenue\nnorth,1204\nsouth,988\neast,1530\nwest,877\n"
    s.batch(
        (
            sh("python scripts/aggregate.py data/sales.parquet"),
            took(ok("north 1204\nsouth 988\neast 1530\nwest 877"), 2.3),
        ),
        latency=7.0,
    )
    write = (
        call("write_file", {"path": path, "content": csv}),
        wrote(ok(f"Written {len(csv)} bytes to {path}"), path, csv),
    )
    s.until_cap(lambda i: [write], latency=lambda i: think(i, 12.0, 6))
    return Entry(
        name="real-loop-localharness-identical-csv",
        label="loop",
        shape="the same file rewritten, back to an earlier state",
        description="The model writes a CSV, then rewrites md5-identical content again and "
        "again; the write tool returns the same success line each time, so each no-op "
        "rewrite reads as progress and feeds a stuck loop.",
        tools=s.tools({"write_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The report saw three identical writes in one turn and three in a later one "
        "before its own guard aborted the turn; without that guard the scenario goes to the "
        "cap. A 27B local model: 12-17 s a turn.",
        url="https://github.com/ahwurm/localharness/issues/80",
    )


def loop_openclaw_refinement_rewrites() -> Entry:
    s = TimedScript()
    path = "docs/proposal.md"
    s.batch(
        (
            call("read_file", {"path": "notes/brief.md"}),
            took(ok("Write a one-page proposal for the Q3 data platform."), 0.02),
        ),
        latency=6.0,
    )

    def step(i: int) -> list[Step]:
        body = (
            f"# Q3 data platform proposal (draft {i + 1})\n\n"
            f"## Goals\n- Goal wording variant {i % 7}\n\n## Plan\n- Phase {1 + i % 3} first\n"
        )
        return [
            (
                call("write_file", {"path": path, "content": body}),
                wrote(ok(f'{{"changed": true, "bytes": {len(body)}}}'), path, body),
            )
        ]

    s.until_cap(step, latency=lambda i: think(i, 14.0, 9))
    return Entry(
        name="real-loop-openclaw-refinement-rewrites",
        label="loop",
        shape="the same file rewritten with new content each time, never finished",
        description="Drafting a document, the model enters a refinement loop: it replaces "
        "the same file with a newly generated body again and again, every write succeeds with "
        "changed: true and a different hash, and the run never produces a final answer.",
        tools=s.tools({"write_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="Every body differs (draft number), as in the report; this is the hard case "
        "where each write is a new workspace state. 14-22 s a turn for a full document.",
        url="https://github.com/openclaw/openclaw/issues/122577",
    )


def loop_reasonix_bash_write_repeat() -> Entry:
    s = TimedScript()
    s.batch((sh("ls config"), took(ok("app.toml\nlogging.toml"), 0.02)), latency=5.0)
    command = (
        "cat > config/feature_flags.toml <<'EOF'\n[flags]\nnew_checkout = true\n"
        "beta_search = false\nEOF"
    )
    s.until_cap(lambda i: [(sh(command), took(ok(""), 0.03))], latency=think)
    return Entry(
        name="real-loop-reasonix-bash-write-repeat",
        label="loop",
        shape="the same file rewritten, back to an earlier state",
        description="The agent writes a file through a bash heredoc and then repeats the same "
        "successful write over and over; the storm guard only counts failures, so each "
        "success is fed back as progress.",
        tools=s.tools({"run_shell_command": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="A shell write has no `writes` (only built-in file tools report what they "
        "changed); the identical command and empty output are the evidence.",
        url="https://github.com/esengine/DeepSeek-Reasonix/pull/3202",
    )


# --- inspection on an unchanged tree while waiting for the user ---------------------------


def loop_codex_git_status_fifty() -> Entry:
    s = TimedScript()
    s.batch(
        (
            call("read_file", {"path": "playlists.html"}),
            took(
                ok(
                    '<section id="p1">...</section>\n<section id="p2">...</section>\n'
                    "<!-- five example playlists -->"
                ),
                0.02,
            ),
        ),
        latency=4.0,
    )
    status = (sh("git status -sb"), took(ok("## main...origin/main\n?? playlists.html"), 0.1))
    for i in range(50):
        s.batch(status, latency=think(i, 2.0, 3))
    s.answer(
        "Yes: with radio inputs and :checked sibling selectors you can switch playlists "
        "with HTML and CSS only, no JavaScript.",
        latency=7.0,
    )
    return Entry(
        name="real-loop-codex-git-status-fifty",
        label="loop",
        shape="inspection calls on an unchanged tree",
        description="Asked a simple HTML/CSS question, the agent reads the document and then "
        "runs `git status -sb` fifty times, unprompted, on a tree nothing changes, before it "
        "answers.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="Fifty runs is the commenter's count from his published trace; the answer at "
        "the end is the one the question asked for.",
        url="https://github.com/openai/codex/issues/3797",
    )


def loop_conductor_status_while_asking() -> Entry:
    s = TimedScript()
    s.batch(
        (
            call("read_file", {"path": "conductor/tracks.md"}),
            took(ok("- [x] Complete the friend request (aka alliance) feature"), 0.02),
        ),
        latency=5.0,
    )
    s.batch(
        (
            call("read_file", {"path": "product.md"}),
            took(ok("# Product\nAlliances let players team up."), 0.02),
        ),
        latency=6.0,
    )
    status = (
        sh("git status"),
        took(
            ok(
                "On branch conductor\nYour branch is ahead of 'origin/conductor' by 3 commits.\n\n"
                "nothing to commit, working tree clean"
            ),
            0.1,
        ),
    )
    ask = (
        "Track 'Complete the friend request (aka alliance) feature' is finished. Options:\n"
        "A. Archive\nB. Delete\nC. Skip\n\nEnter A, B, or C."
    )
    s.until_cap(
        lambda i: [status],
        text=lambda i: ask if i % 2 else "Working tree clean. Synchronization complete.",
        latency=think,
    )
    return Entry(
        name="real-loop-conductor-status-while-asking",
        label="loop",
        shape="inspection calls on an unchanged tree while waiting for the user",
        description="Finishing a track, the extension wants the user's choice (archive, "
        "delete or skip) but runs `git status` before every message; the clean-tree status "
        "keeps coming back instead of the question being left for the user, until the user "
        "escapes and types 'skip'.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=3,
        note="Each turn's text asks for the choice or reports the clean tree, as the "
        "report's transcript; the user's escape is left out (the scenario runs to the cap).",
        url="https://github.com/gemini-cli-extensions/conductor/issues/43",
    )


def loop_gemini_readfile_again() -> Entry:
    s = TimedScript()
    path = "src/OfficeS.WebUI/office-details.component.html"
    html = '<div class="office">\n  <h2>{{ office.name }}</h2>\n  <app-map [office]="office">'
    read = (call("read_file", {"path": path}), took(ok(html), 0.02))
    s.batch(
        (
            call("glob", {"pattern": "**/office-details.*"}),
            took(ok(f"{path}\nsrc/OfficeS.WebUI/office-details.component.ts"), 0.2),
        ),
        latency=4.0,
    )
    s.batch(read, latency=5.0)
    s.until_cap(
        lambda i: [read],
        latency=lambda i: think(i, 2.0, 3),
        text=lambda i: "I need to check the template before editing it.",
    )
    return Entry(
        name="real-loop-gemini-readfile-again",
        label="loop",
        shape="inspection calls on an unchanged tree",
        description="The agent reads the same Angular template again and again instead of "
        "editing it, each read succeeding with the same content, even after the user says "
        "'do not ReadFile office-details.component.html again and again'.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=3,
        note="gemini-cli's own loop detection ended the session in the report; here the "
        "model goes on to the cap. The user's interjection is the prompt that restarted "
        "the same loop, so it is not a separate event.",
        url="https://github.com/google-gemini/gemini-cli/issues/8259",
    )


def loop_manus_reread_generated_file() -> Entry:
    s = TimedScript()
    path = "/home/ubuntu/upload/analysis.txt"
    text = "Sales analysis\n- Q1 revenue up 12%\n- churn 3.1%\nConclusion: ..."
    s.batch(
        (
            call("write_file", {"path": path, "content": text}),
            wrote(ok(f"Wrote {path}"), path, text),
        ),
        latency=8.0,
    )

    def read() -> Step:
        return (call("read_file", {"path": path}), took(ok(text), 0.04))

    s.until_cap(lambda i: [read(), read()], latency=lambda i: 5.0)
    return Entry(
        name="real-loop-manus-reread-generated-file",
        label="loop",
        shape="inspection calls on an unchanged tree",
        description="After writing its analysis file, the agent gets stuck reading the "
        "same generated file: two reads every five seconds, each one 'File read "
        "successfully', with nothing changing in between.",
        tools=s.tools({"write_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="Two reads per batch and five seconds between batches are the report's log "
        "timestamps.",
        url="https://github.com/Simpleyyt/ai-manus/issues/55",
    )


def loop_gemini_waiting_for_instruction() -> Entry:
    s = TimedScript()
    s.batch((sh("mkdir -p mcp/servers mcp/configs"), took(ok(""), 0.01)), latency=5.0)
    s.batch(
        (sh("mv mcp/*.json mcp/configs/ && mv mcp/*.py mcp/servers/"), took(ok(""), 0.02)),
        latency=6.0,
    )
    listing = took(
        ok("mcp/configs:\nfilesystem.json\ngithub.json\n\nmcp/servers:\nweather.py"), 0.02
    )
    s.batch((sh("ls -R mcp"), listing), latency=4.0)
    ready = "I have organized the 'mcp' files and am now waiting for your next instruction."
    echo = (
        sh(f'echo "{ready}"'),
        took(ok(ready), 0.01),
    )
    s.until_cap(
        lambda i: [[echo], [(sh("ls -R mcp"), listing)]][i % 2],
        latency=lambda i: think(i, 2.0, 3),
        text=lambda i: "The task is complete; I am waiting for your next instruction.",
    )
    return Entry(
        name="real-loop-gemini-waiting-for-instruction",
        label="loop",
        shape="inspection calls on an unchanged tree while waiting for the user",
        description="Its task done (the mcp files organized), the agent says it is waiting "
        "for the user's next instruction, yet on every automatic 'Please continue' it runs a "
        "shell echo of that readiness and lists the unchanged folder again, in a cycle.",
        tools=s.tools({"run_shell_command": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=4,
        note="The report shows the echo of readiness; the `ls -R` between echoes is a "
        "choice standing for the agent re-checking its finished work. The automatic "
        "'System: Please continue' is the harness continuing the turn, not user input, so "
        "it is not an event.",
        url="https://github.com/google-gemini/gemini-cli/issues/13977",
    )


# --- the harness's own notice ignored ------------------------------------------------------


def loop_claude_wasted_call_reread() -> Entry:
    s = TimedScript()
    paths = ["src/planner/schedule.ts", "src/planner/constraints.ts"]
    bodies = [
        "export function schedule(tasks: Task[]) {\n  return tasks.sort(byDeadline);\n}\n",
        "export const MAX_PARALLEL = 4;\nexport function fits(t: Task) { ... }\n",
    ]
    notice = ok(
        "Wasted call — file unchanged since your last Read. Refer to that earlier "
        "tool_result instead."
    )
    for i, (path, body) in enumerate(zip(paths, bodies, strict=True)):
        s.batch((call("read_file", {"path": path}), took(ok(body), 0.02)), latency=4.0 + i)
    s.until_cap(
        lambda i: [(call("read_file", {"path": paths[i % 2]}), took(notice, 0.01))],
        latency=lambda i: think(i, 5.0),
    )
    return Entry(
        name="real-loop-claude-wasted-call-reread",
        label="loop",
        shape="the harness's notice ignored",
        description="The agent reads two files, then requests them again on later turns "
        "with nothing changed; the harness answers 'Wasted call — file unchanged since your "
        "last Read', and the model re-issues the same reads, turn after turn.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=3,
        note="The notice comes back as a successful tool result (it carries no content); "
        "the two files alternate as in the report's main session.",
        url="https://github.com/anthropics/claude-code/issues/64882",
    )


def loop_omh_blocked_notice_ignored() -> Entry:
    s = TimedScript()
    s.batch(
        (
            call("search_files", {"pattern": "def sync", "path": "src"}),
            took(
                ok(
                    "src/sync/cli.py:14: def sync_command(args):\n"
                    "src/sync/writer.py:9: def sync_all(root):"
                ),
                0.3,
            ),
        ),
        latency=5.0,
    )
    pattern = "def render_skill|def render_all|def write_skill|def sync_skills|def generate"
    search = call("search_files", {"pattern": pattern, "path": "src/skills"})
    blocked = ok(
        "BLOCKED: this search has been run 4 times with the same arguments. You already "
        "have this information. STOP re-searching and proceed with your task."
    )
    for i in range(3):
        s.batch((search, took(ok("0 matches"), 0.3)), latency=think(i, 3.0))
    s.until_cap(lambda i: [(search, took(blocked, 0.01))], latency=think)
    return Entry(
        name="real-loop-omh-blocked-notice-ignored",
        label="loop",
        shape="the harness's notice ignored",
        description="An earlier search found the real functions; the model then invents "
        "names, searches for them (0 hits) and re-issues the identical search. From the "
        "fourth time the host answers 'BLOCKED: ... You already have this information. STOP "
        "re-searching', and the model reads that notice and searches again, 185 times.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The host's notice comes back as the tool's result (a success carrying the "
        "refusal text, as the report describes it); the later read_file phase with its own "
        "refusals is left out, the cap comes first.",
        url="https://github.com/rlaope/oh-my-hermes/issues/1707",
    )


def success_loops() -> list[Entry]:
    """Every scenario of this module, in corpus order."""
    return [
        loop_opencode_same_grep(),
        loop_codex_plan_status_cycle(),
        loop_qwen_read_first_lines(),
        loop_hermes_skill_reread_windows(),
        loop_trusty_final_confirm_runs(),
        loop_prflow_zero_change_reruns(),
        loop_copilot_tests_without_stopping(),
        loop_hermes_web_search_spiral(),
        loop_gaia_same_search_twelve(),
        loop_shaft_subagent_reinvoked(),
        loop_opencode_orchestrator_restarts(),
        loop_ailice_researcher_redispatched(),
        loop_cline_write_replace_cycle(),
        loop_copilot_reformat_same_file(),
        loop_orchestkit_formatter_reverts(),
        loop_claudette_identical_edit(),
        loop_localharness_identical_csv(),
        loop_openclaw_refinement_rewrites(),
        loop_reasonix_bash_write_repeat(),
        loop_codex_git_status_fifty(),
        loop_conductor_status_while_asking(),
        loop_gemini_readfile_again(),
        loop_manus_reread_generated_file(),
        loop_gemini_waiting_for_instruction(),
        loop_claude_wasted_call_reread(),
        loop_omh_blocked_notice_ignored(),
    ]
