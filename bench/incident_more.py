"""More real-incident scenarios, from trackers the first incident modules barely use.

``bench/incident_loops.py`` and ``bench/incident_legit.py`` draw mostly on gemini-cli,
claude-code, qwen-code and OpenHands; the scenarios here come from other agents and agent
frameworks (crush, kimi-code, zed, continue, Copilot, Kilo Code, aider, goose, agno,
LangGraph, pydantic-ai, the OpenAI Agents SDK, smolagents, and the loop detectors of smaller
harnesses), one function per report, its ``url`` in ``labels.yaml``. The method is the one
``bench/make_incidents.py`` describes; labels follow the report (docs/benchmarks.md).

Every scenario here also says how long things took (docs/scenarios.md, "Time"): each fixture
outcome carries a ``duration_seconds`` (a directory listing a few hundredths of a second, a
test suite tens of seconds, a long poll what it waited) and each model turn a
``latency_seconds`` (a few seconds, more where the report shows a very long context or a slow
local model), so a rule that weighs time sees the waits the report implies. :class:`Timed`
adds the latency to the shared :class:`~bench.corpus_builders.Script` without changing it.
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
    fail,
    ok,
    sh,
    sh_fail,
    timed_out,
    took,
)

# --- time ---------------------------------------------------------------------------------


def refused(error_type: str, message: str) -> Json:
    """The harness's own refusal, returned as the call's result: the tool never ran."""
    return {
        "status": "error",
        "execution_status": "not_started",
        "error_type": error_type,
        "message": message,
    }


# --- loops: failures ----------------------------------------------------------------------


def loop_crush_mcp_401_varied() -> Entry:
    s = TimedScript((3.2, 2.8, 3.6))
    queries = [
        "meeting notes",
        "meeting notes recent",
        "search meeting notes",
        "meeting notes this week",
        "notes from meetings",
        "team meeting notes",
        "weekly sync notes",
        "meeting minutes",
        "standup notes",
        "meeting notes 2025",
    ]

    def unauthorized(i: int) -> Json:
        body = (
            '{"object":"error","status":401,"code":"unauthorized",'
            '"message":"API token is invalid.",'
            f'"request_id":"7c1e{i:04d}-2b9a-4f0e-9d3c-51a0e8f2{i % 97:04d}"}}'
        )
        return took(fail("mcp_tool_error", f"MCP error 401 Unauthorized: {body}"), 0.6)

    def step(i: int) -> list[Step]:
        query = queries[i % len(queries)]
        if i >= len(queries):
            query = f"{query} {i // len(queries) + 1}"
        args = {"query": query, "page_size": 10}
        return [(call("mcp__notion__notion_search", args), unauthorized(i))]

    s.until_cap(step)
    return Entry(
        name="real-loop-crush-mcp-401-varied",
        label="loop",
        shape="the same MCP error, the arguments reworded each time",
        description="An MCP server with an expired token answers every notion_search with 401 "
        "Unauthorized; the model retries with a reworded query each time (meeting notes, "
        "meeting notes recent, search meeting notes, ...) and the loop goes on indefinitely.",
        tools=s.tools({"mcp__notion__notion_search": MCP}),
        turns=s.turns,
        loop_starts_at_batch=1,
        note="The report shows three reworded queries and says the loop continues (7+ in the "
        "PR); the further rewordings and the per-call request id in the error body are "
        "modelled on Notion's error format.",
        url="https://github.com/charmbracelet/crush/issues/2856",
    )


def loop_continue_merged_tool_calls() -> Entry:
    s = TimedScript((6.5, 7.1))
    merged = call(
        "read_fileread_file",
        '{"filepath": "src/utils/date.ts"}{"filepath": "src/utils/format.ts"}',
    )
    s.until_cap(lambda i: [(merged, None)])
    return Entry(
        name="real-loop-continue-merged-tool-calls",
        label="loop",
        shape="a call to a tool that does not exist, identical every time",
        description="The model asks for two reads in one message; the client merges both tool "
        "calls into one, with the names and the argument objects run together, so the tool "
        "does not exist. The model re-emits the same pair and the session never ends.",
        tools=s.tools({"read_file": {}}),
        turns=s.turns,
        loop_starts_at_batch=1,
        note="The merged name and arguments follow the screenshots' description (two calls "
        "concatenated); the unknown-tool error is Seawall's own, so no fixture answers it.",
        url="https://github.com/continuedev/continue/issues/6506",
    )


def loop_copilot_pytest_terminal() -> Entry:
    s = TimedScript((5.0, 4.2, 6.3))
    s.batch((call("read_file", {"path": "tests/test_transforms.py"}), took(ok(TRANSFORMS), 0.04)))
    commands = [
        "pytest tests/test_transforms.py -v",
        "pytest tests/test_fakes.py -v",
        "pytest tests/test_transforms.py::test_to_timestamp_from_integer -v",
    ]
    timings = ["0.41", "0.44", "0.39", "0.47", "0.42", "0.45", "0.40"]

    def result(i: int) -> Json:
        command = commands[i % len(commands)]
        seconds = timings[i % len(timings)]
        if "test_fakes" in command:
            out = (
                "tests/test_fakes.py::test_fake_clock PASSED\n"
                "tests/test_fakes.py::test_fake_source PASSED\n"
                f"============ 2 passed in {seconds}s ============"
            )
            return took(ok(out), 2.1)
        out = (
            "tests/test_transforms.py::test_to_timestamp_from_integer FAILED\n"
            "E       AssertionError: assert Timestamp('1970-01-01 00:00:01.700000') == "
            "Timestamp('2023-11-14 22:13:20')\n"
            f"============ 1 failed, 11 passed in {seconds}s ============"
        )
        return took(sh_fail(out, 1), 2.6)

    s.until_cap(lambda i: [(sh(commands[i % len(commands)]), result(i))])
    return Entry(
        name="real-loop-copilot-pytest-terminal",
        label="loop",
        shape="the same failing tests re-run from the terminal, output drifting in its timing",
        description="Asked to run and fix one failing test, the agent runs it from the terminal "
        "again and again (the test file, a neighbouring file, the single test) as if it "
        "could not see the result, and never edits; told not to use the command line, it "
        "used the test runner and progressed.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The report names two of the commands; the single-test form, the failure text "
        "and the varying run times are modelled.",
        url="https://github.com/microsoft/vscode-copilot-release/issues/10577",
    )


TRANSFORMS = (
    "from src.transforms import to_timestamp\n\n"
    "def test_to_timestamp_from_integer():\n"
    "    assert to_timestamp(1700000000) == Timestamp('2023-11-14 22:13:20')\n"
)


def loop_kilocode_read_file_missing_args() -> Entry:
    s = TimedScript((2.4, 3.0))
    missing = refused(
        "invalid_tool_params",
        "Kilo Code tried to use read_file without value for required parameter 'args "
        "(containing valid file paths)'. Retrying...",
    )
    s.batch((sh("ls src/services"), took(ok("deliveryService.ts\nmapService.ts\nindex.ts"), 0.05)))
    s.until_cap(
        lambda i: [(call("read_file", {}), missing)],
    )
    for turn in s.turns[1:]:
        turn["text"] = (
            "I need to check if the routeOptimizationEngine.ts file exists. Let me try to read it."
        )
    return Entry(
        name="real-loop-kilocode-read-file-missing-args",
        label="loop",
        shape="the same invalid call, a required parameter missing each time",
        description="The agent wants to check whether a file exists and calls read_file without "
        "its required path argument; the harness answers that the parameter is missing, "
        "and the model says the same thing and sends the same empty call again.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="Kilo Code's own mistake limit asks the user after a few rounds; the scenario lets "
        "the model go on (as the several users in the thread describe) to see what the "
        "guard does.",
        url="https://github.com/Kilo-Org/kilocode/issues/2658",
    )


def loop_pydantic_ai_missing_forecast() -> Entry:
    s = TimedScript((2.7, 3.1))
    s.batch(
        (
            call("get_lat_lng", {"location_description": "Zurich"}),
            took(ok('{"lat": 47.3769, "lng": 8.5417}'), 0.4),
        )
    )
    weather = took(ok('{"temperature": "21 °C", "description": null, "forecast": null}'), 0.9)
    invalid = refused(
        "invalid_tool_params",
        "1 validation error for WeatherResult\nforecast\n  Field required [type=missing, "
        "input_value={'location': 'Zurich', 'temperature': '21 °C'}, input_type=dict]\n"
        "Fix the errors and try again.",
    )
    result = {"location": "Zurich", "temperature": "21 °C"}

    def step(i: int) -> list[Step]:
        if i % 2 == 0:
            return [(call("get_weather", {"lat": 47.3769, "lng": 8.5417}), weather)]
        return [(call("final_result", result), invalid)]

    s.until_cap(step)
    return Entry(
        name="real-loop-pydantic-ai-missing-forecast",
        label="loop",
        shape="fetch, the same invalid final result, repeated",
        description="When the weather API has no forecast, the structured result the model "
        "returns lacks the required forecast field; the validation error sends it back to "
        "fetch the weather again, which still has no forecast, and it returns the same "
        "incomplete result, over and over.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="In the report the loop was endless before the fix and stopped at 50 requests "
        "(the new request_limit) after it; the scenario lets it run to the cap. The output "
        "tool is mapped to a fixture final_result whose validation error is the result.",
        url="https://github.com/pydantic/pydantic-ai/issues/267",
    )


def loop_agno_tool_call_limit_ignored() -> Entry:
    s = TimedScript((3.4, 2.9, 3.8))
    queries = [
        "refund policy for annual plans",
        "annual plan refund policy",
        "refund annual subscription",
    ]
    chunks = [
        "[1] Billing FAQ: Annual plans can be refunded within 30 days of purchase.",
        "[2] Terms §4.2: Refunds are prorated after the first 30 days.",
        "[3] Support macro: Annual refunds are issued to the original payment method.",
    ]
    limit = refused(
        "tool_call_limit_reached",
        "Tool call limit reached. Tool call search_knowledge_base not executed. Don't try to "
        "execute it again.",
    )
    for i in range(10):
        query = queries[i % 3] if i < 3 else f"{queries[i % 3]} {['details', 'exceptions'][i % 2]}"
        s.batch(
            (
                call("search_knowledge_base", {"query": query}),
                took(ok(chunks[i % 3]), 0.7),
            )
        )
    s.until_cap(lambda i: [(call("search_knowledge_base", {"query": queries[i % 3]}), limit)])
    return Entry(
        name="real-loop-agno-tool-call-limit-ignored",
        label="loop",
        shape="the harness's refusal ignored, the same call asked again",
        description="After the run's tool_call_limit of 10, every further call is refused with "
        "'Tool call limit reached ... Don't try to execute it again'; the model ignores the "
        "refusal and requests the same search again, 200+ times in one message.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=11,
        note="The ten searches before the limit are the run's ordinary work (agentic RAG); "
        "the loop is what follows the first refusal. Query texts are modelled.",
        url="https://github.com/agno-agi/agno/issues/8304",
    )


def loop_aider_retry_applied_edit() -> Entry:
    s = TimedScript((9.0, 8.4))
    old = (
        "    else:\n"
        "        for path in sorted(Path(args.json_dir).glob('*.json')):\n"
        "            for obj in load_json_objects(path):\n"
        "                nodes.extend(process_node(obj, args.verbose))\n"
    )
    new = "    else:\n        nodes = ingest_json_recs(args.json_dir, args.verbose)\n"
    args = {"path": "scripts/update.py", "old_string": old, "new_string": new}
    applied = took(
        {
            **ok("Applied edit to scripts/update.py"),
            "writes": {"scripts/update.py": "...\n" + new},
        },
        0.08,
    )
    already = took(
        fail(
            "edit_no_occurrence_found",
            "# 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: This "
            "SEARCH block failed to exactly match lines in scripts/update.py\n\nAre you sure "
            "you need this SEARCH/REPLACE block?\nThe REPLACE lines are already in "
            "scripts/update.py!\n\nThe SEARCH section must exactly match an existing block of "
            "lines including all white space, comments, indentation, docstrings, etc",
        ),
        0.05,
    )
    s.batch((call("edit_file", dict(args)), applied), (call("edit_file", dict(args)), already))
    for _ in range(3):
        s.batch((call("edit_file", dict(args)), already))
    s.answer(
        "I was not able to apply the SEARCH/REPLACE block to scripts/update.py after three "
        "attempts."
    )
    return Entry(
        name="real-loop-aider-retry-applied-edit",
        label="loop",
        shape="an edit that already applied, resent until the harness gives up",
        description="The reply carries the same SEARCH/REPLACE block twice: the first applies, "
        "the second no longer matches; the model resends the block three times, each "
        "failing with 'The REPLACE lines are already in scripts/update.py!', and gives up, "
        "although the change was there all along.",
        tools=s.tools({"edit_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="Aider limits reflections on failed edits to three; the duplicated block in the "
        "first reply is the plain reading of 'the change was applied' with a reported "
        "failure. The answer is the model giving up, as the report says.",
        url="https://github.com/Aider-AI/aider/issues/4098",
    )


# --- loops: successful calls --------------------------------------------------------------


def loop_kimi_alternating_reads() -> Entry:
    s = TimedScript((11.5, 12.8, 13.4))
    path = "stage/review/checkout_flow.ts"
    first = took(ok("120  export function applyCoupon(cart: Cart, code: string) {\n..."), 0.03)
    second = took(ok("200  export function totals(cart: Cart): Totals {\n..."), 0.03)
    s.batch((call("glob", {"pattern": "stage/review/**/*.ts"}), took(ok(path), 0.1)))
    s.batch(
        (
            call("grep_search", {"pattern": "TODO|FIXME", "path": "stage"}),
            took(ok(f"{path}:134: TODO coupon stacking\n{path}:221: FIXME rounding"), 0.2),
        )
    )
    s.batch(
        (
            call("read_file", {"path": path, "offset": 1, "limit": 120}),
            took(ok("1  import ..."), 0.03),
        )
    )
    s.batch(
        (
            call("read_file", {"path": "stage/review/cart.ts"}),
            took(ok("export interface Cart {...}"), 0.03),
        )
    )
    s.batch((sh("git diff --stat main -- stage/"), took(ok(f" {path} | 48 ++++++---"), 0.15)))
    reads = [
        (call("read_file", {"path": path, "offset": 120, "limit": 80}), first),
        (call("read_file", {"path": path, "offset": 200, "limit": 80}), second),
    ]
    s.until_cap(lambda i: [reads[i % 2]])
    for turn in s.turns[5:]:
        turn["text"] = "Now I will edit applyCoupon to fix the stacking."
    return Entry(
        name="real-loop-kimi-alternating-reads",
        label="loop",
        shape="two identical reads alternating after healthy exploration, every result the same",
        description="During a review-and-fix task at a very large context, from step six on the "
        "model alternates two identical reads of the same file (same path, offset and "
        "length) about ninety times; its thinking announces an Edit every time, and the "
        "emitted call stays Read.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=6,
        note="The report's session had 395 calls and no edit; the five exploring steps and "
        "the file are modelled. Turn latencies are long, as at 200k-370k tokens of context.",
        url="https://github.com/MoonshotAI/kimi-code/issues/3214",
    )


def loop_zed_lint_typecheck_silent() -> Entry:
    s = TimedScript((3.5, 4.1))
    s.batch(
        (
            call(
                "edit_file",
                {
                    "path": "src/routes/settings.tsx",
                    "old_string": "const [open, setOpen] = useState()",
                    "new_string": "const [open, setOpen] = useState(false)",
                },
            ),
            took(ok("Edited src/routes/settings.tsx (1 replacement)."), 0.05),
        )
    )
    lint = took(ok("\n> web@0.3.0 lint\n> eslint src --ext .ts,.tsx\n"), 7.5)
    typecheck = took(ok("\n> web@0.3.0 typecheck\n> tsc --noEmit\n"), 14.0)

    def step(i: int) -> list[Step]:
        if i % 2 == 0:
            return [(sh("npm run lint"), lint)]
        return [(sh("npm run typecheck"), typecheck)]

    s.until_cap(step)
    return Entry(
        name="real-loop-zed-lint-typecheck-silent",
        label="loop",
        shape="two successful checks with no output, re-run nonstop",
        description="After a one-line edit the agent runs lint and typecheck, both succeed with "
        "almost no output, and it keeps running them nonstop, as if it could not tell the "
        "commands had passed.",
        tools=s.tools({"edit_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The report names lint and typecheck and their near-empty output; the edit "
        "before them and the npm scripts are modelled.",
        url="https://github.com/zed-industries/zed/issues/28931",
    )


def loop_langgraph_save_memory() -> Entry:
    s = TimedScript((2.6, 3.0))
    s.batch(
        (
            call("retrieve", {"query": "How do I rotate the API signing key?"}),
            took(
                ok(
                    "[doc 1] Rotate the signing key from Settings > Security > Keys, then "
                    "redeploy services that cache it.\n[doc 2] Old keys stay valid for 24 h."
                ),
                1.3,
            ),
        )
    )
    memories = [
        "User asked how to rotate the API signing key.",
        "The user wants to know how to rotate the API signing key.",
    ]
    s.until_cap(
        lambda i: [
            (
                call("save_memory", {"memory": memories[i % 2]}),
                took(ok("Memory saved."), 0.3),
            )
        ]
    )
    return Entry(
        name="real-loop-langgraph-save-memory",
        label="loop",
        shape="the same successful write repeated with the answer already in hand",
        description="A RAG ReAct agent retrieves the answer from its vector store, then keeps "
        "calling save_memory about the user's question, every call succeeding, until the "
        "graph's recursion limit stops it; it never answers.",
        tools=s.tools({"save_memory": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="LangGraph's recursion limit (25) ended the report's run; the scenario runs to "
        "the cap. The memory text alternates between two phrasings, a choice the report "
        "leaves open.",
        url="https://github.com/langchain-ai/langgraph/issues/4231",
    )


def loop_openai_agents_send_email_again() -> Entry:
    s = TimedScript((8.5, 9.2, 7.8))
    bodies = [
        "Hi Dana, confirming our meeting on Thursday at 10:00. Best, Sam",
        "Hello Dana, just confirming Thursday's meeting at 10:00. Regards, Sam",
        "Dear Dana, this is to confirm our 10:00 meeting on Thursday. Sam",
        "Hi Dana, see you Thursday at 10:00 for our meeting. Cheers, Sam",
    ]

    def step(i: int) -> list[Step]:
        args = {
            "to": "dana@example.com",
            "subject": "Meeting on Thursday",
            "body": bodies[i % len(bodies)],
        }
        sent = {
            **ok(f'{{"status": "sent", "id": "msg_{i + 1:03d}"}}'),
            "writes": {"outbox.json": f"[... {i + 1} messages]"},
        }
        return [(call("send_email", args), took(sent, 0.02))]

    s.until_cap(step)
    return Entry(
        name="real-loop-openai-agents-send-email-again",
        label="loop",
        shape="a successful side effect repeated with the arguments reworded",
        description="Asked to send one email, a local model calls send_email, which succeeds and "
        "saves the message; it keeps sending it again with a reworded body, never answering, "
        "until the run's turn limit ends it.",
        tools=s.tools({"send_email": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The report's fake tools write each email to a JSON file, so every call succeeds; "
        "the body wording is modelled. The SDK's max-turns error ended the run; the "
        "scenario runs to the cap. Latency is a local model's.",
        url="https://github.com/openai/openai-agents-python/issues/981",
    )


def loop_goose_burst_mvn_test() -> Entry:
    s = TimedScript((6.0,))
    passed = took(
        ok(
            "[INFO] Tests run: 48, Failures: 0, Errors: 0, Skipped: 0\n"
            "[INFO] BUILD SUCCESS\n[INFO] Total time:  41.2 s"
        ),
        42.0,
    )
    s.batch(*[(sh("mvn test"), passed) for _ in range(24)])
    s.answer("All 48 tests pass; the issue is fixed.")
    return Entry(
        name="real-loop-goose-burst-mvn-test",
        label="loop",
        shape="many identical calls in one batch",
        description="Asked to run mvn test to confirm a fix, the model emits the same shell call "
        "two dozen times in a single response; the turn limit cannot help because it is one "
        "turn, and every run takes forty seconds to say the same thing.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=1,
        note="The report shows the calls as 'and so on'; 24 is a choice. The model answers "
        "after the batch (the report's concern is the burst itself).",
        url="https://github.com/aaif-goose/goose/issues/9136",
    )


def loop_wisp_k3_reprint_pages() -> Entry:
    s = TimedScript((5.5, 6.2))
    s.batch(
        (
            sh(
                'python -c "from pypdf import PdfReader; '
                "r = PdfReader('paper.pdf'); print(len(r.pages))\""
            ),
            took(ok("14"), 0.6),
        )
    )
    s.batch(
        (
            sh(
                "python -c \"from pypdf import PdfReader; import json; r = PdfReader('paper.pdf'); "
                "json.dump([p.extract_text() for p in r.pages], open('texts.json', 'w'))\""
            ),
            took(ok(""), 2.4),
        )
    )
    pages = took(
        ok("3 Methods\nWe sequenced 48 samples (Table 2) ...\n4 Results\nFigure 3 shows ..."),
        0.4,
    )
    probes = [
        f'python -c "import {name}" 2>/dev/null && echo {name} OK || echo {name} MISSING'
        for name in ("fitz", "pymupdf", "pdfplumber")
    ]

    def step(i: int) -> list[Step]:
        if i < 63:
            command = (
                "python -c \"import json; texts = json.load(open('texts.json')); "
                'print(texts[7]); print(texts[8])"'
            )
            return [(sh(command), pages)]
        probe = probes[(i - 63) % 3]
        name = probe.split("&& echo ")[1].split(" OK")[0]
        return [(sh(probe), took(ok(f"{name} MISSING"), 0.3))]

    s.until_cap(step)
    return Entry(
        name="real-loop-wisp-k3-reprint-pages",
        label="loop",
        shape="identical successful calls, then a probe cycle, no failure anywhere",
        description="Reading a paper, the model prints the same two pages of extracted text 63 "
        "times with byte-identical calls and results, then probes the same missing PDF "
        "modules 30 times; no call fails, so the harness's failure-only detector never "
        "fires and the run burns its iteration budget.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=3,
        note="The counts are the report's; the extraction steps before them are modelled, "
        "and the three probe commands stand for the report's 'import fitz/pymupdf/...'.",
        url="https://github.com/xuzhougeng/wisp-science/issues/393",
    )


def loop_smolagents_answer_found_repeats() -> Entry:
    s = TimedScript((3.0, 3.3))
    line = took(
        ok(
            "smolagents is a library that enables you to run powerful agents in a few lines "
            "of code."
        ),
        0.01,
    )
    s.until_cap(lambda i: [(call("get_readme_line", {"line_number": 3}), line)])
    for turn in s.turns:
        turn["text"] = "The tool returned the line. Let me retrieve it to confirm."
    return Entry(
        name="real-loop-smolagents-answer-found-repeats",
        label="loop",
        shape="identical call, identical output, the answer already in hand",
        description="A custom tool returns the requested README line at the first step; the agent "
        "does not give its final answer and repeats the same step, getting the same line, "
        "until the step limit.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The tool name and line are modelled on the report's description; smolagents' "
        "max_steps ended the run there, the cap ends it here.",
        url="https://github.com/huggingface/smolagents/issues/1226",
    )


def loop_autonomys_current_time() -> Entry:
    s = TimedScript((2.5, 2.9, 3.4))
    base = 9 * 3600 + 14 * 60 + 2  # 09:14:02 UTC
    clock = float(base)

    def stamp(seconds: float) -> str:
        t = int(seconds)
        return f"2025-02-10T{t // 3600:02d}:{t % 3600 // 60:02d}:{t % 60:02d}Z"

    steps: list[tuple[str, float]] = []
    # Precompute each call's clock: the model's latency then the call's own duration.
    i = 0
    while len(steps) <= 110:
        clock += s.latencies[i % len(s.latencies)]
        steps.append((stamp(clock), clock))
        clock += 0.01 if i % 2 == 0 else 0.2
        i += 1

    def step(j: int) -> list[Step]:
        now = steps[j][0]
        if j % 2 == 0:
            return [(call("get_current_time", {}), took(ok(now), 0.01))]
        experience = {"experience": f"Checked the current time: {steps[j - 1][0]}"}
        return [(call("save_experience", experience), took(ok("Experience saved."), 0.2))]

    s.until_cap(step)
    return Entry(
        name="real-loop-autonomys-current-time",
        label="loop",
        shape="two successful calls alternating, the results differing only by a clock",
        description="An autonomous agent keeps calling get_current_time and save_experience in "
        "turn, each succeeding, until the LangGraph recursion limit; the time and the saved "
        "text change on every call, nothing else does.",
        tools=s.tools({"save_experience": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=1,
        note="The report's logs show both tools looping; pairing them in turn is a choice. "
        "The timestamps advance by the scripted latencies and durations.",
        url="https://github.com/autonomys/autonomys-agents/issues/226",
    )


def loop_kilocode_pwd_retried() -> Entry:
    s = TimedScript((4.0, 4.4, 3.9))
    cwd = took(ok("/home/alex/Python/Quant_Trading"), 0.03)
    for _ in range(3):
        s.batch((sh("pwd"), cwd))
    s.answer("")
    return Entry(
        name="real-loop-kilocode-pwd-retried",
        label="loop",
        shape="a successful call repeated a few times, then no reply",
        description="Asked for the working directory, the agent runs pwd, gets the right path, "
        "and runs it again two more times instead of answering; the turn ends with no "
        "reply at all.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The report says 2-3 repeats; three calls in all is the plain reading. Short of "
        "any threshold, kept as data for what a guard can and cannot see.",
        url="https://github.com/Kilo-Org/kilocode/issues/11981",
    )


def loop_agent_framework_rejected_reasked() -> Entry:
    s = TimedScript((3.8, 4.3))
    args = {"subscription_id": "sub_81723", "reason": "customer request"}
    s.batch((call("cancel_subscription", dict(args)), None))
    s.batch((call("cancel_subscription", dict(args)), None))
    s.answer("I could not cancel the subscription: the request was not approved.")
    return Entry(
        name="real-loop-agent-framework-rejected-reasked",
        label="loop",
        shape="asking again for a call the user already denied",
        description="The application rejects an approval-required tool call without giving a "
        "reason; the model immediately asks for approval of the very same call again, and "
        "only after the second rejection gives up and answers.",
        tools=s.tools({"cancel_subscription": MUTATING}),
        turns=s.turns,
        permissions={"cancel_subscription": "reject"},
        loop_starts_at_batch=2,
        note="The tool and its arguments are modelled (the report names only an "
        "ApprovalRequiredAIFunction); two approval rounds then the answer, as the report's "
        "table shows for the affected model.",
        url="https://github.com/microsoft/agent-framework/issues/8503",
    )


def loop_cline_rejected_edit_fallbacks() -> Entry:
    s = TimedScript((5.5, 6.0, 4.8))
    path = "src/config/limits.ts"
    old = "export const MAX_UPLOAD_MB = 25;"
    new = "export const MAX_UPLOAD_MB = 100;"
    content = f"{new}\nexport const MAX_FILES = 10;\n"
    s.batch(
        (call("read_file", {"path": path}), took(ok(f"{old}\nexport const MAX_FILES = 10;"), 0.03))
    )
    for _ in range(2):
        s.batch((call("edit_file", {"path": path, "old_string": old, "new_string": new}), None))
    s.batch((call("write_file", {"path": path, "content": content}), None))
    heredoc = f"cat > {path} <<'EOF'\n{content}EOF"
    s.batch(
        (
            sh(heredoc),
            took({**ok(""), "writes": {path: content}}, 0.05),
        )
    )
    s.answer("Raised MAX_UPLOAD_MB to 100 in src/config/limits.ts.")
    return Entry(
        name="real-loop-cline-rejected-edit-fallbacks",
        label="loop",
        shape="a rejected edit re-proposed, then pushed through other tools",
        description="The user rejects an edit; the model re-proposes the same change, is "
        "rejected again, tries writing the whole file, and finally lands the rejected "
        "content on disk through a shell heredoc, because each rejection came back framed "
        "as a tool error to work around.",
        tools=s.tools({"run_shell_command": MUTATING}),
        turns=s.turns,
        permissions={"edit_file": "reject", "write_file": "reject"},
        loop_starts_at_batch=3,
        note="The file, the change and the exact fallback route are modelled; the PR describes "
        "re-proposals after rejection and rejected content reaching disk through fallback "
        "routes in its QA runs.",
        url="https://github.com/cline/cline/pull/12633",
    )


def loop_hermes_evolution_timeout_spiral() -> Entry:
    s = TimedScript((4.5, 5.1))
    command = sh("npm run build:all && npm run test:e2e", timeout=180)
    timeout = took(
        timed_out("Command timed out after 180 s (failure-class=timeout): npm run build:all"),
        180.0,
    )
    s.batch((sh("git pull --ff-only"), took(ok("Already up to date."), 1.1)))
    for _ in range(29):
        s.batch((dict(command), timeout))
    s.answer("The build keeps timing out; I could not complete the end-to-end run.")
    return Entry(
        name="real-loop-hermes-evolution-timeout-spiral",
        label="loop",
        shape="the same command timing out, retried unchanged",
        description="A long foreground command hits the terminal's timeout, and the agent "
        "retries it with identical parameters, 29 times in a row, each attempt waiting the "
        "full three minutes; a deterministic timeout cannot be fixed by retrying.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=3,
        note="The report's trace miner counts up to 29 consecutive terminal calls timing out; "
        "the command and the 180 s limit are modelled, and the model gives up after the "
        "29th.",
        url="https://github.com/Lexus2016/hermes-agent-evolution/issues/1091",
    )


# --- legitimate repetition ----------------------------------------------------------------


def legit_little_coder_build_after_edit() -> Entry:
    s = TimedScript((4.5, 5.2, 3.8))
    errors = [
        "src/parser.c:88:5: error: implicit declaration of function 'tok_peek'",
        "src/parser.c:142:17: error: 'node' undeclared (first use in this function)",
        "src/eval.c:31:12: error: incompatible types when returning type 'Value *' but "
        "'Value' was expected",
    ]
    fixes = [
        (
            "src/parser.c",
            "Token tok_next(Lexer *lx);",
            "Token tok_next(Lexer *lx);\nToken tok_peek(Lexer *lx);",
        ),
        ("src/parser.c", "    node = parse_expr(p);", "    Node *node = parse_expr(p);"),
        ("src/eval.c", "    return v;", "    return *v;"),
    ]
    for error, (path, old, new) in zip(errors, fixes, strict=True):
        s.batch(
            (
                sh("./scripts/build.sh"),
                took(sh_fail(f"{error}\nmake: *** [build] Error 1", 2), 22.0),
            )
        )
        s.batch((call("read_file", {"path": path}), took(ok(f"... {old} ..."), 0.03)))
        s.batch(
            (
                call("edit_file", {"path": path, "old_string": old, "new_string": new}),
                took(
                    {**ok(f"Edited {path} (1 replacement)."), "writes": {path: f"... {new} ..."}},
                    0.05,
                ),
            )
        )
    s.batch((sh("./scripts/build.sh"), took(ok("Build OK: build/little 412 KB"), 24.0)))
    s.answer("The build passes now: three compile errors fixed in parser.c and eval.c.")
    return Entry(
        name="real-legit-little-coder-build-after-edit",
        label="legit",
        shape="the same build command after each fix, a different error each time",
        description="The model builds, the build fails, it edits the source and runs the same "
        "build script again, four times until it passes; the harness's 'exact same tool "
        "call as your previous turn' check flagged the rebuild as a loop although the "
        "source had changed.",
        tools=s.tools({"edit_file": MUTATING}),
        turns=s.turns,
        note="The compile errors and the number of rounds are modelled; the report describes "
        "the build-edit-build cycle and the false flag.",
        url="https://github.com/itayinbarr/little-coder/issues/81",
    )


def legit_heddle_rerun_verification() -> Entry:
    s = TimedScript((4.2, 5.0))
    verify = "npm run verify:web-search"
    unauthorized = took(
        sh_fail(
            "web_search: provider returned 401 invalid_token (oauth)\nverify failed: 0/3 queries",
            1,
        ),
        9.0,
    )
    s.batch((sh(verify), unauthorized))
    s.batch(
        (
            call("read_file", {"path": "src/search/oauth.ts"}),
            took(ok("export async function token() {...}"), 0.03),
        )
    )
    edits = [
        ("headers: { Authorization: token }", "headers: { Authorization: `Bearer ${token}` }"),
        ("const token = cache.get('token')", "const token = await refreshIfExpired(cache)"),
    ]
    s.batch(
        (
            call(
                "edit_file",
                {
                    "path": "src/search/oauth.ts",
                    "old_string": edits[0][0],
                    "new_string": edits[0][1],
                },
            ),
            took(
                {
                    **ok("Edited src/search/oauth.ts (1 replacement)."),
                    "writes": {"src/search/oauth.ts": "v2"},
                },
                0.05,
            ),
        )
    )
    s.batch((sh(verify), unauthorized))
    s.batch(
        (
            call(
                "edit_file",
                {
                    "path": "src/search/oauth.ts",
                    "old_string": edits[1][0],
                    "new_string": edits[1][1],
                },
            ),
            took(
                {
                    **ok("Edited src/search/oauth.ts (1 replacement)."),
                    "writes": {"src/search/oauth.ts": "v3"},
                },
                0.05,
            ),
        )
    )
    s.batch((sh(verify), took(ok("web_search: 3/3 queries returned results\nverify ok"), 11.0)))
    s.answer(
        "OAuth-backed web search works again: the token is now refreshed and sent as a "
        "Bearer header."
    )
    return Entry(
        name="real-legit-heddle-rerun-verification",
        label="legit",
        shape="the same verification re-run after each change, once with the same failure",
        description="Diagnosing OAuth-backed web search, the agent re-runs the same verification "
        "command after each change to the implementation; the first fix does not help and "
        "the failure repeats word for word, the second does. The runtime's hard block on a "
        "third identical call interfered with this diagnosis, and the report asks for it to "
        "be removed or narrowed.",
        tools=s.tools({"edit_file": MUTATING}),
        turns=s.turns,
        note="The command, the error and the two fixes are modelled; the report names the "
        "OAuth web search diagnosis and the re-run verification commands.",
        url="https://github.com/roackb2/heddle/issues/7",
    )


def legit_anolisa_terminal_steps() -> Entry:
    s = TimedScript((3.6, 4.4))
    steps = [
        ("pip list --format=freeze | grep -i torch", ok("torch==2.3.1\ntorchvision==0.18.1"), 1.4),
        (
            "find / -name 'libcudart.so*' 2>/dev/null | head -3",
            ok("/usr/local/cuda-12.1/lib64/libcudart.so.12"),
            6.5,
        ),
        ("cat /etc/os-release | head -2", ok('NAME="Anolis OS"\nVERSION="23"'), 0.02),
        (
            "python scripts/detect_gpu.py",
            ok("GPU: NVIDIA A10 (24 GB), driver 535.129, CUDA 12.1"),
            2.8,
        ),
        ("bash scripts/install_deps.sh --cuda 12.1", ok("Installed flash-attn 2.5.9\nDone."), 95.0),
    ]
    for command, outcome, seconds in steps:
        s.batch((sh(command), took(outcome, seconds)))
    s.answer("The environment is ready: CUDA 12.1 on an A10, and the dependencies are installed.")
    return Entry(
        name="real-legit-anolisa-terminal-steps",
        label="legit",
        shape="the same tool five times in a row, a different command each time",
        description="Setting up an environment, the agent makes five consecutive terminal calls, "
        "each a different command (pip list, find, cat, a detect script, an install script), "
        "and finishes; a name-only repetition rule flagged it as a critical dead loop.",
        tools=s.tools(),
        turns=s.turns,
        note="The five command kinds are the report's; their exact text and outputs are modelled.",
        url="https://github.com/agentic-os-org/ANOLISA/issues/2691",
    )


def legit_ai_dispatch_sequential_reads() -> Entry:
    s = TimedScript((4.0, 5.5, 3.2, 6.8))
    files = [
        "contracts/interfaces/IPLimitRouter.sol",
        "contracts/interfaces/IPAllActionTypeV3.sol",
        "contracts/router/ActionSwapPTV3.sol",
        "contracts/router/ActionAddRemoveLiqV3.sol",
        "contracts/router/base/ActionBase.sol",
        "contracts/router/base/CallbackHelper.sol",
        "contracts/limit/LimitRouter.sol",
        "contracts/limit/LimitOrderLib.sol",
        "contracts/core/Market/MarketMathCore.sol",
        "contracts/core/StandardizedYield/SYBase.sol",
        "contracts/oracles/PtYtLpOracle.sol",
    ]
    for path in files:
        name = path.rsplit("/", 1)[1].removesuffix(".sol")
        body = (
            "// SPDX-License-Identifier: GPL-3.0\npragma solidity ^0.8.0;\n\n"
            f"contract {name} {{ ... }}"
        )
        s.batch((call("read_file", {"path": path}), took(ok(body), 0.05)))
    s.answer(
        "The limit router validates orders in LimitOrderLib and settles them through the "
        "V3 swap actions; the oracle is only read when pricing PT."
    )
    return Entry(
        name="real-legit-ai-dispatch-sequential-reads",
        label="legit",
        shape="reading many different files one by one",
        description="A code-reading task: the agent reads contract files one after another at a "
        "normal pace, each a different file; the dispatcher logged every call as 'unknown' "
        "and killed the process as stuck in a loop.",
        tools=s.tools(),
        turns=s.turns,
        note="The first path is the report's; the others and the answer are modelled on a "
        "code-reading task in the same repository layout.",
        url="https://github.com/agent-tools-org/ai-dispatch/issues/22",
    )


def legit_librefang_kubectl_poll() -> Entry:
    s = TimedScript((3.5, 4.2))
    command = "kubectl get pods -n production-namespace -l app=api --no-headers"
    s.batch(
        (
            sh("kubectl rollout restart deployment/api -n production-namespace"),
            took(ok("deployment.apps/api restarted"), 0.9),
        )
    )
    ready = [0, 0, 1, 1, 2, 2, 3, 3, 4]
    for n in ready:
        lines = [f"api-7d9f-{i}   1/1   Running   0   {20 + 8 * n}s" for i in range(n)]
        lines += [f"api-7d9f-{i}   0/1   ContainerCreating   0   5s" for i in range(n, 4)]
        s.batch((sh(command), took(ok("\n".join(lines)), 0.8)))
    s.answer("The rollout is complete: all four api pods are Running.")
    return Entry(
        name="real-legit-librefang-kubectl-poll",
        label="legit",
        shape="the same status command until a rollout completes, some answers unchanged",
        description="After restarting a deployment the agent polls the pods with the same "
        "kubectl command until all are Running; the loop guard's poll heuristic only "
        "relaxed its thresholds for short commands, so this one, a few characters too long, "
        "got the strict thresholds and could be blocked prematurely.",
        tools=s.tools(),
        turns=s.turns,
        note="The report gives the command shape and the misclassification; the rollout, the "
        "pod counts and the nine polls are modelled.",
        url="https://github.com/librefang/librefang/issues/991",
    )


def legit_fastclaw_progressing_polls() -> Entry:
    s = TimedScript((3.0, 3.6))
    s.batch(
        (
            call("mcp__deploy__create_deployment", {"service": "web", "ref": "v2.14.0"}),
            took(ok('{"deployment_id": "dep-3391", "status": "pending"}'), 1.5),
        )
    )
    states = [
        "pending",
        "building 1/4",
        "building 2/4",
        "building 3/4",
        "building 4/4",
        "deploying 0/3",
        "deploying 1/3",
        "deploying 2/3",
        "deploying 3/3",
        "healthy",
    ]
    for state in states:
        body = f'{{"deployment_id": "dep-3391", "status": "{state}"}}'
        args = {"deployment_id": "dep-3391"}
        s.batch((call("mcp__deploy__get_deployment", args), took(ok(body), 0.4)))
    s.answer("v2.14.0 is deployed and healthy.")
    return Entry(
        name="real-legit-fastclaw-progressing-polls",
        label="legit",
        shape="the same call with the same arguments, a progressing result each time",
        description="The agent polls a deployment with the same MCP call and arguments; every "
        "answer shows the next stage until it is healthy. The argument-matching loop "
        "detector blocked this before the call ran; the fix counts a repeat only when the "
        "result is identical too.",
        tools=s.tools(
            {
                "mcp__deploy__create_deployment": {**MCP, **MUTATING},
                "mcp__deploy__get_deployment": MCP,
            }
        ),
        turns=s.turns,
        note="The PR describes polling whose results progress; the deployment tools and stages "
        "are modelled.",
        url="https://github.com/fastclaw-ai/fastclaw/pull/80",
    )


# --- gathering ----------------------------------------------------------------------------


def more_incidents() -> list[Entry]:
    """Every scenario in this module, loops first."""
    return [
        loop_crush_mcp_401_varied(),
        loop_continue_merged_tool_calls(),
        loop_copilot_pytest_terminal(),
        loop_kilocode_read_file_missing_args(),
        loop_pydantic_ai_missing_forecast(),
        loop_agno_tool_call_limit_ignored(),
        loop_aider_retry_applied_edit(),
        loop_kimi_alternating_reads(),
        loop_zed_lint_typecheck_silent(),
        loop_langgraph_save_memory(),
        loop_openai_agents_send_email_again(),
        loop_goose_burst_mvn_test(),
        loop_wisp_k3_reprint_pages(),
        loop_smolagents_answer_found_repeats(),
        loop_autonomys_current_time(),
        loop_kilocode_pwd_retried(),
        loop_agent_framework_rejected_reasked(),
        loop_cline_rejected_edit_fallbacks(),
        loop_hermes_evolution_timeout_spiral(),
        legit_little_coder_build_after_edit(),
        legit_heddle_rerun_verification(),
        legit_anolisa_terminal_steps(),
        legit_ai_dispatch_sequential_reads(),
        legit_librefang_kubectl_poll(),
        legit_fastclaw_progressing_polls(),
    ]
