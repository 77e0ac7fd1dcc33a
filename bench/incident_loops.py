"""The corpus's scenarios modelled on real public incidents where the agent was stuck.

One function per report (its ``url`` goes into ``labels.yaml``), listed by :func:`real_loops`;
``bench/make_incidents.py`` describes how a report becomes a scenario and gathers these with
:mod:`bench.incident_legit`.
"""

from __future__ import annotations

from bench.corpus_builders import (
    MCP,
    MCP_MUTATING,
    MUTATING,
    Entry,
    Json,
    Script,
    Step,
    call,
    fail,
    ok,
    sh,
    sh_fail,
    timed_out,
)


def loop_pi_repeated_ls() -> Entry:
    s = Script()
    s.batch((sh("mkdir -p /home/dev/.jupyter/custom"), ok("")))
    listing = ok("custom.css")
    long_listing = ok(
        "total 12\n"
        "drwxr-xr-x 2 dev dev 4096 Jun 29 10:02 .\n"
        "drwxr-xr-x 5 dev dev 4096 Jun 29 10:01 ..\n"
        "-rw-r--r-- 1 dev dev  118 Jun 29 10:02 custom.css"
    )

    def step(i: int) -> list[Step]:
        if i % 11 < 6:
            return [(sh("ls /home/dev/.jupyter/custom/"), listing)]
        return [(sh("ls -la /home/dev/.jupyter/custom/"), long_listing)]

    s.until_cap(step)
    return Entry(
        name="real-loop-pi-repeated-ls",
        label="loop",
        shape="identical call, identical output, many times",
        description="On a multi-step file fix the agent lists the same directory six times, "
        "then `ls -la` of it five times, each with identical output, and never moves on to "
        "the write.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        url="https://github.com/earendil-works/pi/issues/6158",
    )


def loop_prime_agent_diagnostic() -> Entry:
    s = Script()
    s.batch(
        (
            sh("python scripts/validate.py config/pipeline.yaml"),
            sh_fail(
                "ValidationError: 'stages' is a required property\n\n"
                "Failed validating 'required' in schema:\n"
                "    {'required': ['name', 'stages'], 'type': 'object'}",
                1,
            ),
        )
    )
    grep = ok("12:stages:\n13:  - name: build\n17:  - name: test")
    dump = ok('[{"name": "build", "run": "make"}, {"name": "test", "run": "make test"}]')
    required = ok('[\n  "name",\n  "stages"\n]')

    def step(i: int) -> list[Step]:
        if i < 22:
            return [(sh('grep -n "stages" config/pipeline.yaml'), grep)]
        if i < 42:
            return [
                (
                    sh(
                        'python -c "import yaml, json; print(json.dumps(yaml.safe_load('
                        "open('config/pipeline.yaml'))['stages']))\""
                    ),
                    dump,
                )
            ]
        return [(sh("jq '.required' schemas/pipeline.schema.json"), required)]

    s.until_cap(step)
    return Entry(
        name="real-loop-prime-agent-repeated-diagnostic",
        label="loop",
        shape="identical call, identical output, many times",
        description="Debugging a schema validation error, the agent runs the same diagnostic "
        "command 22 times in a row ('let me try a different approach', then the identical "
        "command), then a second one 20 times, then a third; every result is the same.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        url="https://github.com/PrimeIntellect-ai/prime-agent/issues/1326",
    )


def loop_superplane_empty_results() -> Entry:
    s = Script()
    kinds = ["repository", "branch", "workflow"]

    def step(i: int) -> list[Step]:
        k = i % 4
        if k == 0:
            args = {"integration": "github", "type": kinds[(i // 4) % 3]}
            return [(call("mcp__superplane__list_integration_resources", args), ok("[]"))]
        if k == 1:
            return [(call("mcp__superplane__describe_trigger", {"trigger": "on-push"}), ok("{}"))]
        if k == 2:
            return [(call("mcp__superplane__list_components", {"canvas": "deploy"}), ok("[]"))]
        args = {"integration": "github"}
        return [(call("mcp__superplane__list_integration_resources", args), ok("[]"))]

    s.until_cap(step)
    return Entry(
        name="real-loop-superplane-empty-results",
        label="loop",
        shape="successful calls with empty results, identical or slightly varied",
        description="The agent cycles through list_integration_resources, describe_trigger and "
        "list_components, identically or with a filter changed; every response is empty "
        "([] or {}) and nothing stops it.",
        tools=s.tools(
            {
                "mcp__superplane__list_integration_resources": MCP,
                "mcp__superplane__describe_trigger": MCP,
                "mcp__superplane__list_components": MCP,
            }
        ),
        turns=s.turns,
        loop_starts_at_batch=1,
        url="https://github.com/superplanehq/superplane/issues/4123",
    )


def loop_pi_echo_noop() -> Entry:
    s = Script()
    s.batch((call("read_file", {"path": "fabric/tasks.md"}), ok("- [x] sync\n- [ ] report")))
    s.batch((sh("fabric status"), ok("sync: done\nreport: idle")))
    s.until_cap(lambda i: [(sh("echo noop"), ok("noop"))])
    return Entry(
        name="real-loop-pi-echo-noop",
        label="loop",
        shape="identical call, identical output, many times",
        description="A session slips into a degenerate groove: 220+ consecutive `echo noop` "
        "calls with byte-identical arguments and output, every one re-reading the whole "
        "context.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=3,
        url="https://github.com/earendil-works/pi/issues/9637",
    )


def loop_jiuwen_grep_no_match() -> Entry:
    s = Script()
    s.until_cap(
        lambda i: [(sh('grep -rn "def resolve_tenant" src/'), sh_fail("", 1))],
    )
    return Entry(
        name="real-loop-jiuwen-grep-no-match",
        label="loop",
        shape="the same failing command, unchanged",
        description="The agent greps for a symbol that is not there; grep exits 1 with empty "
        "output, and the agent repeats the identical grep although the failed result is in "
        "its context.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=1,
        url="https://github.com/openJiuwen-ai/agent-core/issues/766",
    )


def loop_gemini_same_replace() -> Entry:
    s = Script()
    old = (
        "    // Set log level for all components to debug\n"
        '    let all_tags = std::ffi::CString::new("*").unwrap();\n'
        "    unsafe {\n"
        "        esp_idf_sys::esp_log_level_set(\n"
        "            all_tags.as_ptr(),\n"
        "            esp_idf_sys::esp_log_level_t_ESP_LOG_DEBUG,\n"
        "        );\n"
        "    }\n"
    )
    miss = fail(
        "edit_no_occurrence_found",
        "Failed to edit, 0 occurrences found for old_string in src/main.rs. No edits made. "
        "The exact text in old_string was not found. Ensure you're not escaping content "
        "incorrectly and check whitespace, indentation, and context. Use read_file tool to "
        "verify.",
    )
    source = ok("fn main() {\n    esp_idf_svc::log::EspLogger::initialize_default();\n}\n")
    edit = call("edit_file", {"path": "src/main.rs", "old_string": old, "new_string": ""})
    read = call("read_file", {"path": "src/main.rs"})
    s.batch((read, source))

    def step(i: int) -> list[Step]:
        return [(read, source)] if i % 4 == 3 else [(edit, miss)]

    s.until_cap(step)
    return Entry(
        name="real-loop-gemini-same-replace",
        label="loop",
        shape="an edit that never matches, unchanged",
        description="The agent sends the same replace over and over; the old_string is never "
        "in the file. The user asks it to find another approach; it re-reads the file and "
        "sends the identical replace again.",
        tools=s.tools(),
        turns=s.turns,
        events=[{"batch": 6, "input": "Stop repeating that replace. Find another approach."}],
        loop_starts_at_batch=2,
        url="https://github.com/google-gemini/gemini-cli/issues/10995",
    )


def loop_gke_generate_cleanup_cycle() -> Entry:
    s = Script()
    generated = "pkg/clients/generated/apis/secretmanager/v1beta1/zz_generated.deepcopy.go"
    failure = sh_fail(
        f"{generated}:412:1: (*SecretManagerSecretVersion).DeepCopyInto redeclared in "
        "this block\n"
        "\tpkg/clients/generated/apis/secretmanager/v1beta1/secretversion_types.go:88:1: "
        "other declaration of DeepCopyInto\n"
        "make: *** [Makefile:63: generate-go-client] Error 1",
        2,
    )

    def step(i: int) -> list[Step]:
        if i % 2 == 0:
            return [(sh("./dev/tasks/generate.sh"), failure)]
        return [(sh(f"rm {generated}"), ok(""))]

    s.until_cap(step)
    return Entry(
        name="real-loop-gke-generate-cleanup-cycle",
        label="loop",
        shape="fail, identical successful cleanup, same failure",
        description="A generator script fails; the agent deletes the generated file and runs "
        "the script again, which fails the same way; delete, regenerate, fail, again and "
        "again (the agent itself calls it a cognitive loop).",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=1,
        url="https://github.com/gke-labs/gemini-for-kubernetes-development/issues/680",
    )


def loop_openhands_dev_server_ctrl_c() -> Entry:
    s = Script()
    hung = timed_out(
        "Command timed out after 120 seconds; the process is still running.\n"
        "> theme@0.1.0 dev\n> next dev -p 48525\n\n"
        "  ▲ Next.js 14.2.3\n  - Local:        http://localhost:48525\n\n ✓ Ready in 2.4s"
    )

    def step(i: int) -> list[Step]:
        if i % 2 == 0:
            return [(sh("cd /workspace/theme && npm run dev -- -p 48525"), hung)]
        return [(sh("C-c", is_input=True), ok("^C"))]

    s.until_cap(step)
    return Entry(
        name="real-loop-openhands-dev-server-ctrl-c",
        label="loop",
        shape="fail, identical successful cleanup, same failure",
        description="Asked to deploy a template, the agent starts the dev server in the "
        "foreground, it never returns, the agent sends Ctrl-C and starts it again: C-c, npm "
        "run dev, C-c, npm run dev, until the stuck detector ends the session.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=1,
        url="https://github.com/OpenHands/OpenHands/issues/11314",
    )


def loop_aws_blocks_dev_server_restarts() -> Entry:
    s = Script()
    s.batch(
        (
            call(
                "edit_file",
                {"path": "app/gallery.tsx", "old_string": "<Grid/>", "new_string": "<Grid3/>"},
            ),
            ok("Edited app/gallery.tsx (1 replacement)."),
        )
    )
    in_use = [
        sh_fail(
            "> dev\n> blocks dev\n\nError: listen EADDRINUSE: address already in use :::3100\n"
            "    at Server.setupListenHandle [as _listen2] (node:net:1898:16)",
            1,
        ),
        sh_fail(
            "> dev\n> blocks dev\n\nError: Port 3000 is already in use (--strictPort)\n"
            "    code: 'EADDRINUSE', port: 3000",
            1,
        ),
    ]
    kills = [
        "lsof -ti:3100 | xargs kill -9",
        "pkill -f vite",
        "lsof -ti:3000 | xargs kill -9",
        "pkill -f 'blocks dev'",
    ]

    def step(i: int) -> list[Step]:
        if i % 2 == 0:
            return [(sh("npm run dev"), in_use[(i // 2) % 2])]
        return [(sh(kills[(i // 2) % len(kills)]), ok(""))]

    s.until_cap(step)
    return Entry(
        name="real-loop-aws-blocks-dev-server-restarts",
        label="loop",
        shape="fail, successful cleanup, same failure (varied)",
        description="After an edit the agent restarts the dev server to verify: EADDRINUSE on "
        ":3100 or :3000, kill the orphan, start again, EADDRINUSE again; in the bench two "
        "agents burned 34 and 44 of their 120 turns this way.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        url="https://github.com/aws-devtools-labs/aws-blocks/issues/135",
    )


def loop_cline_diff_edit_failed() -> Entry:
    s = Script()
    cdns = [
        "https://cdn.jsdelivr.net/npm/@supabase/supabase-js@2",
        "https://unpkg.com/@supabase/supabase-js@2.39.0/dist/umd/supabase.js",
        "https://cdn.jsdelivr.net/npm/@supabase/supabase-js@2/dist/umd/supabase.min.js",
        "https://cdnjs.cloudflare.com/ajax/libs/supabase-js/2.39.0/supabase.min.js",
    ]
    path = "src/components/SocialLoginButtonComponent.js"

    def miss(i: int) -> Json:
        return fail(
            "edit_no_occurrence_found",
            f"The SEARCH block:\nimport {{ createClient }} from '{cdns[i % len(cdns)]}';\n"
            f"...does not match anything in the file {path}.\n\nThis is likely because the "
            "SEARCH block content doesn't match exactly with what's in the file. (Diff Edit "
            "Failed, retrying.)",
        )

    def step(i: int) -> list[Step]:
        if i % 3 == 2:
            return [(call("read_file", {"path": path}), ok("import React from 'react';\n"))]
        edit = {
            "path": path,
            "old_string": f"import {{ createClient }} from '{cdns[i % len(cdns)]}';"
            + "\n" * (i % 2),
            "new_string": "import { createClient } from '@supabase/supabase-js';",
        }
        return [(call("edit_file", edit), miss(i))]

    s.until_cap(step)
    return Entry(
        name="real-loop-cline-diff-edit-failed",
        label="loop",
        shape="an edit that never matches",
        description="'Diff Edit Failed' again and again: the agent apologises, re-reads, and "
        "sends another SEARCH block for the CDN imports that matches nothing; 19.6M tokens in.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=1,
        url="https://github.com/cline/cline/issues/1511",
    )


def loop_gemini_replace_error_flips() -> Entry:
    s = Script()
    path = "tests/test_coordinator.py"
    found_two = fail(
        "edit_expected_occurrence_mismatch",
        "Error: Failed to edit, expected 1 occurrence but found 2.",
    )
    not_found = fail(
        "edit_no_occurrence_found",
        "Error: Failed to edit, could not find the string to replace.",
    )
    anchors = [
        "    def tearDown(self):\n        pass\n",
        "if __name__ == '__main__':\n    unittest.main()\n",
        "class TestPlannerAgent(unittest.TestCase):\n",
        "    def tearDown(self):\n        self.agent = None\n",
        "import unittest\n",
    ]

    def step(i: int) -> list[Step]:
        if i % 6 == 5:
            return [(call("read_file", {"path": path}), ok("import unittest\n..."))]
        edit = {
            "path": path,
            "old_string": anchors[i % len(anchors)] + " " * (i // 6),
            "new_string": anchors[i % len(anchors)] + "\n\nclass TestCoordinatorAgent(...)",
        }
        return [(call("edit_file", edit), found_two if i % 2 == 0 else not_found)]

    s.until_cap(step)
    return Entry(
        name="real-loop-gemini-replace-error-flips",
        label="loop",
        shape="an edit that never matches, two failure reasons",
        description="Adding a test class, the replace fails with 'expected 1 occurrence but "
        "found 2', then 'could not find the string to replace'; the agent keeps trying other "
        "anchors, re-reading now and then, for 600 s and counting.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=1,
        note="The report names both errors and a dozen attempts without saying in which order "
        "they came; they alternate here.",
        url="https://github.com/google-gemini/gemini-cli/issues/3048",
    )


def loop_claude_code_install_timeout() -> Entry:
    s = Script()
    s.batch(
        (
            call(
                "write_file",
                {"path": "vitest.config.ts", "content": "export default { test: {} }\n"},
            ),
            ok("Wrote vitest.config.ts"),
        )
    )
    install = sh("npm install -D @vitest/coverage-v8", timeout=180000)
    s.until_cap(
        lambda i: [
            (install, timed_out("Command timed out after 180000ms (request timed out).")),
        ]
    )
    return Entry(
        name="real-loop-claude-code-install-timeout",
        label="loop",
        shape="the same failing command, unchanged",
        description="A background sub-agent retries the identical `npm install -D "
        "@vitest/coverage-v8` 300+ times; every attempt times out (27M tokens).",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        url="https://github.com/anthropics/claude-code/issues/15909",
    )


def loop_goose_asks_again_after_no() -> Entry:
    s = Script()
    command = sh('sudo -u postgres psql -c "CREATE DATABASE rpg_manager;"')
    s.until_cap(lambda i: [(command, None)])
    return Entry(
        name="real-loop-goose-asks-again-after-no",
        label="loop",
        shape="asking again for a call the user already denied",
        description="The user answers No to a shell command; the agent asks for the very same "
        "command again, and again, each time denied.",
        tools=s.tools({"run_shell_command": MUTATING}),
        turns=s.turns,
        permissions={"run_shell_command": "reject"},
        loop_starts_at_batch=1,
        url="https://github.com/aaif-goose/goose/issues/1971",
    )


def loop_claude_code_denied_next_command() -> Entry:
    s = Script()
    commands = [
        "git status",
        "git diff --stat",
        "npm run build",
        "npm test -- --run",
        "git add -A",
        "git commit -m 'fix: report export'",
        "npm run lint -- --fix",
        "git push origin HEAD",
    ]
    s.until_cap(lambda i: [(sh(commands[i % len(commands)] + (" " * (i // len(commands)))), None)])
    return Entry(
        name="real-loop-claude-code-denied-next-command",
        label="loop",
        shape="denied calls, one after another",
        description="The user answers No to every command; each denial is followed at once by "
        "a request for the next command, in a loop the user can only leave with Ctrl-D.",
        tools=s.tools({"run_shell_command": MUTATING}),
        turns=s.turns,
        permissions={"run_shell_command": "reject"},
        loop_starts_at_batch=1,
        url="https://github.com/anthropics/claude-code/issues/40302",
    )


def loop_hermes_browser_navigate() -> Entry:
    s = Script()
    urls = [
        "https://www.example-shop.com/",
        "https://www.example-shop.com/search?q=usb-c+hub",
        "https://www.example-shop.com/c/accessories",
        "https://www.example-shop.com/p/usb-c-hub-7in1",
        "https://www.example-shop.com/search?q=usb+c+hub&sort=price",
    ]
    context_lost = fail(
        "mcp_tool_error",
        "Error: page._snapshotForAI: Execution context was destroyed, most likely because "
        "of a navigation",
    )

    def step(i: int) -> list[Step]:
        k = i % 6
        if k < 5:
            url = urls[(k + i // 6) % len(urls)]
            page = ok(f"Navigated to {url}\nPage title: Example Shop")
            return [(call("mcp__browser__browser_navigate", {"url": url}), page)]
        return [(call("mcp__browser__browser_read", {}), context_lost)]

    s.until_cap(step)
    return Entry(
        name="real-loop-hermes-browser-navigate",
        label="loop",
        shape="a mutating tool succeeding between failures",
        description="On a web task the agent navigates five times in a row between reads that "
        "fail, cycling through the same URLs without extracting anything (up to 21 "
        "consecutive navigations, 12 of 243 sessions).",
        tools=s.tools(
            {
                "mcp__browser__browser_navigate": MCP_MUTATING,
                "mcp__browser__browser_read": MCP,
            }
        ),
        turns=s.turns,
        loop_starts_at_batch=1,
        note="The report gives the navigation chains; the failing read between them uses "
        "Playwright MCP's error text.",
        url="https://github.com/Lexus2016/hermes-agent-evolution/issues/680",
    )


def loop_hermes_gh_api_empty() -> Entry:
    s = Script()
    command = sh("cd ~/repo && gh api repos/o/r/pulls/412/reviews 2>&1", timeout=15)
    s.until_cap(lambda i: [(command, ok("[]"))])
    return Entry(
        name="real-loop-hermes-gh-api-empty",
        label="loop",
        shape="identical call, identical output, many times",
        description="One read-only terminal call repeated 517 times in a turn (~46 minutes), "
        "each returning a byte-identical `[]` with exit code 0.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=1,
        url="https://github.com/NousResearch/hermes-agent/pull/79839",
    )


def loop_openclaw_drifting_error() -> Entry:
    s = Script()

    def outcome(i: int) -> Json:
        return sh_fail(
            f"[2026-08-03T10:{15 + i // 60:02d}:{(7 * i) % 60:02d}Z] sync attempt {i + 1} "
            f"(pid {31200 + 17 * i})\n"
            "Error: connect ECONNREFUSED 127.0.0.1:5432\n"
            "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16)\n"
            f"elapsed {1.2 + 0.1 * (i % 7):.1f}s",
            1,
        )

    s.until_cap(lambda i: [(sh("node scripts/sync-orders.js"), outcome(i))])
    return Entry(
        name="real-loop-openclaw-drifting-error",
        label="loop",
        shape="the same failing command, error text drifting",
        description="The same exec fails for the same reason every time, but the diagnostic "
        "text carries a timestamp, an attempt counter, a pid and an elapsed time, so no two "
        "results are byte-identical.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=1,
        url="https://github.com/openclaw/openclaw/pull/118402",
    )


def loop_stella_growing_command() -> Entry:
    s = Script()
    # The report's block greps twelve files; one file keeps this file small, the shape
    # (one more copy of the block each step, output growing with it) is the same.
    block = "grep -n plot p.c"
    hits = "41:plot("
    s.batch((call("read_file", {"path": "README"}), ok("POV-Ray 3.7 build notes")))
    s.batch((sh("./configure && make -j4 2>&1 | tail -5"), sh_fail("undefined: display_plot", 2)))
    s.until_cap(lambda i: [(sh(" ; ".join([block] * (3 + i))), ok("\n".join([hits] * (3 + i))))])
    return Entry(
        name="real-loop-stella-growing-command",
        label="loop",
        shape="a command that grows by one copy of itself each step",
        description="For 107 steps the agent sends the previous command plus one more copy of "
        "the same grep block (twelve files in the report, one here); the command and its "
        "output grow, nothing is learned.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=3,
        url="https://github.com/macanderson/stella/issues/5863",
    )


def loop_command_code_echo_markers() -> Entry:
    s = Script()
    s.batch(
        (
            sh("gradlew.bat assembleDebug", run_in_background=True),
            ok("Started background job 1 (gradlew.bat assembleDebug)."),
        )
    )
    s.until_cap(lambda i: [(sh(f"cmd /c echo marker{i + 1}"), ok(f"marker{i + 1}"))])
    return Entry(
        name="real-loop-command-code-echo-markers",
        label="loop",
        shape="varied successful no-op calls",
        description="Meaning to read the background build's result, the agent emits `cmd /c "
        "echo marker1`, `echo marker2`, ... for dozens of turns; every call succeeds and "
        "nothing changes.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        url="https://github.com/CommandCodeAI/command-code/issues/784",
    )


def loop_lobehub_identical_polls() -> Entry:
    s = Script()
    s.batch(
        (
            sh("bun run check 2>&1 | tail -40", timeout=60),
            ok("Command is still running in the background (id cmd_7); no output yet."),
        )
    )
    poll = (
        call("get_command_output", {"id": "cmd_7"}),
        ok(
            "Output retrieved.\n\nDuration: 137s\n\n"
            "Full stdout saved to: .lobe/cmd_7/stdout.log (0 bytes)"
        ),
    )
    forensics = [
        (sh("ps aux | grep vitest"), ok("dev 4121 98.0 2.1 node node_modules/.bin/vitest run")),
        (sh("pgrep -fl vitest"), ok("4121 node")),
        (sh("stat -c %s .lobe/cmd_7/stdout.log"), ok("0")),
    ]

    def step(i: int) -> list[Step]:
        k = i % 22
        if k < 19:
            return [poll]
        return [forensics[k - 19]]

    s.until_cap(step)
    return Entry(
        name="real-loop-lobehub-identical-polls",
        label="loop",
        shape="identical call, identical output, many times",
        description="A check piped through `tail` prints nothing until it ends; the agent "
        "polls its output 19 times in a row (byte-identical '0 bytes' each time) between "
        "rounds of ps/pgrep/stat forensics: 250 steps, 13.6M tokens, 9 real edits.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        note="The command was still running, so the polls were waiting of a kind; the "
        "maintainers count the 250 steps as a failure (the output did not say it was still "
        "running), and so does this label.",
        url="https://github.com/lobehub/lobehub/pull/19703",
    )


def loop_odysseus_continue_reruns_tools() -> Entry:
    s = Script()
    vimrc = ok('set number\nset tabstop=4\nsyntax on\n" plugins\ncall plug#begin()')

    def step(i: int) -> list[Step]:
        return [
            (call("read_file", {"path": "~/.vimrc"}), vimrc),
            (
                call(
                    "create_document",
                    {"title": "vimrc improvements", "content": "1. set expandtab ..."},
                ),
                ok("Created document 'vimrc improvements'."),
            ),
        ]

    s.until_cap(step)
    events = [{"batch": b, "input": "Continue"} for b in range(1, len(s.turns) + 1)]
    return Entry(
        name="real-loop-odysseus-continue-reruns-tools",
        label="loop",
        shape="user input, then the same successful calls again",
        description="Every time the user clicks Continue on an interrupted answer, the agent "
        "re-runs the tools it already ran (read the file, create the document again) instead "
        "of resuming its text; the document is created once per click.",
        tools=s.tools({"read_file": {}, "create_document": MUTATING}),
        turns=s.turns,
        events=events,
        loop_starts_at_batch=2,
        note="Each Continue is delivered as user input after a batch, the closest this format "
        "has to resuming an interrupted answer.",
        url="https://github.com/odysseus-dev/odysseus/issues/3570",
    )


def loop_lifeos_denial_workarounds() -> Entry:
    s = Script()
    target = "config/telegram.json"
    attempts = [
        call(
            "edit_file",
            {"path": target, "old_string": '"allow": []', "new_string": '"allow": ["Bash"]'},
        ),
        sh(f'sed -i \'s/"allow": \\[\\]/"allow": ["Bash"]/\' {target}'),
        call("write_file", {"path": target, "content": '{"allow": ["Bash"]}\n'}),
        sh(f"python3 -c \"import json;p='{target}';d=json.load(open(p));d['allow']=['Bash']\""),
        sh(f"cp {target} /tmp/t.json && jq '.allow=[\"Bash\"]' /tmp/t.json > {target}"),
    ]

    s.until_cap(lambda i: [(attempts[i % len(attempts)], None)])
    return Entry(
        name="real-loop-lifeos-denial-workarounds",
        label="loop",
        shape="denied calls routed around with other tools",
        description="A tool call is denied without explanation; for 15 minutes the agent "
        "probes workarounds against the working permission boundary: the edit tool, sed, a "
        "full write, python, jq, all denied.",
        tools=s.tools(
            {"edit_file": MUTATING, "run_shell_command": MUTATING, "write_file": MUTATING}
        ),
        turns=s.turns,
        permissions={
            "edit_file": "reject",
            "run_shell_command": "reject",
            "write_file": "reject",
        },
        loop_starts_at_batch=1,
        url="https://github.com/danielmiessler/LifeOS/pull/1479",
    )


def loop_roo_identical_edit_after_reread() -> Entry:
    s = Script()
    path = "src/cache.ts"
    read = (
        call("read_file", {"path": path}),
        ok("export function fetchUser(id: string) {\n  return api.get(`/users/${id}`);\n}\n"),
    )
    edit = (
        call(
            "edit_file",
            {
                "path": path,
                "old_string": "const CACHE_TTL_MS = 60_000;\nexport const memoizedFetchUser",
                "new_string": "export const memoizedFetchUser",
            },
        ),
        fail(
            "edit_no_occurrence_found",
            f"No match found for the search content in {path}. The file was re-read; the "
            "content to replace does not exist in it.",
        ),
    )
    s.until_cap(lambda i: [read] if i % 2 == 0 else [edit])
    return Entry(
        name="real-loop-roo-identical-edit-after-reread",
        label="loop",
        shape="an edit that never matches, unchanged, with a re-read between",
        description="Told to drop a cache timeout from a function it only proposed and never "
        "wrote, the agent re-reads the file and sends the same edit for the missing function, "
        "then re-reads and sends it again, for ever.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=1,
        url="https://github.com/RooCodeInc/Roo-Code/issues/3198",
    )


def loop_omo_reread_sections() -> Entry:
    s = Script()
    offsets = [20, 80, 170, 258, 148, 124, 104, 92, 33, 20, 36, 40, 31]

    def step(i: int) -> list[Step]:
        offset = offsets[i % len(offsets)]
        args = {"path": "AGENTS.md", "offset": offset, "limit": 40 + (i // len(offsets))}
        return [(call("read_file", args), ok(f"{offset}: ## Rules (lines {offset}-{offset + 40})"))]

    s.until_cap(step)
    return Entry(
        name="real-loop-omo-reread-sections",
        label="loop",
        shape="successful reads of the same file, varied ranges",
        description="Asked for a small AGENTS.md rule change, the agent keeps re-reading the "
        "same file at offsets 20, 80, 170, 258, 148, 124, 104, 92, 33, 20, 36, 40, 31 ... "
        "instead of patching it.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        url="https://github.com/code-yeongyu/oh-my-openagent/issues/3789",
    )


def loop_gemini_missing_absolute_path() -> Entry:
    s = Script()
    invalid = {
        "status": "error",
        "execution_status": "not_started",
        "error_type": "invalid_tool_params",
        "message": "params must have required property 'absolute_path'",
    }
    s.until_cap(lambda i: [(call("read_file", {"path": "packages/core/src/index.ts"}), invalid)])
    return Entry(
        name="real-loop-gemini-missing-absolute-path",
        label="loop",
        shape="broken tool arguments",
        description="'I apologize for the repeated errors. I will now use the correct parameter "
        "absolute_path': the next ReadFile call sends the wrong parameter again, in an "
        "infinite loop.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=1,
        url="https://github.com/google-gemini/gemini-cli/issues/4936",
    )


def loop_goose_analyze_depth_creep() -> Entry:
    s = Script()

    def step(i: int) -> list[Step]:
        args = {
            "path": "/Users/dor/radioquebrada",
            "focus": "",
            "follow_depth": 2,
            "force": False,
            "max_depth": 2 + i,
        }
        return [(call("analyze", args), ok(f"Analyzed 214 files to depth {2 + i}: 38 dirs"))]

    s.until_cap(step)
    return Entry(
        name="real-loop-goose-analyze-depth-creep",
        label="loop",
        shape="a successful call with one argument creeping",
        description="Asked to inspect the project, the agent calls analyze with max_depth 2, "
        "then 3, then 4, for ever; every call succeeds.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        url="https://github.com/aaif-goose/goose/issues/5155",
    )


def loop_stella_interleaved_test() -> Entry:
    s = Script()
    failure = sh_fail(
        "test parser::tests::handles_nested ... FAILED\n\nfailures:\n\n"
        "---- parser::tests::handles_nested stdout ----\n"
        "thread 'parser::tests::handles_nested' panicked at src/parser.rs:212:9:\n"
        "assertion `left == right` failed\n  left: 3\n right: 4\n\n"
        "test result: FAILED. 41 passed; 1 failed; 0 ignored",
        101,
    )
    files = ["src/parser.rs", "src/lexer.rs", "src/ast.rs", "tests/fixtures/nested.txt"]

    def step(i: int) -> list[Step]:
        if i % 2 == 0:
            return [(sh("cargo test -p parser"), failure)]
        path = files[(i // 2) % len(files)]
        args = {"path": path, "offset": 200 * (i // (2 * len(files)))}
        return [(call("read_file", args), ok(f"// {path}\n..."))]

    s.until_cap(step)
    return Entry(
        name="real-loop-stella-interleaved-test",
        label="loop",
        shape="the same failing command with a varying read between",
        description="Re-run the failing test (identical output every round), peek at a "
        "different file, repeat: one interleaved call blinds detectors that look for a "
        "contiguous run.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=1,
        url="https://github.com/macanderson/stella/pull/1902",
    )


def loop_seclab_search_churn() -> Entry:
    s = Script()
    s.batch(
        (
            call("mcp__github__get_file_contents", {"repo": "acme/api", "path": ""}),
            ok("src/\ntests/\nSECURITY.md"),
        )
    )
    terms = [
        "eval(",
        "exec(",
        "subprocess",
        "pickle.loads",
        "yaml.load",
        "os.system",
        "shell=True",
        "render_template_string",
    ]

    def step(i: int) -> list[Step]:
        term = terms[i % len(terms)]
        query = f"{term} repo:acme/api" + (f" path:src/{i // len(terms)}" if i >= 8 else "")
        hits = ok(f"total_count: {(i * 7) % 3}\nitems: []" if i % 3 else "total_count: 0")
        return [(call("mcp__github__search_code", {"q": query}), hits)]

    s.until_cap(step)
    return Entry(
        name="real-loop-seclab-search-churn",
        label="loop",
        shape="varied successful searches without progress",
        description="During a security audit the agent makes 60+ consecutive search_code calls "
        "with no progress until max_turns runs out.",
        tools=s.tools({"mcp__github__get_file_contents": MCP, "mcp__github__search_code": MCP}),
        turns=s.turns,
        loop_starts_at_batch=2,
        url="https://github.com/GitHubSecurityLab/seclab-taskflow-agent/pull/219",
    )


def loop_openclaw_edit_success_unchanged() -> Entry:
    s = Script()
    read = (
        call("read_file", {"path": "README.md"}),
        ok("# Notes\n...\n_Last updated: 2026-04-20 (v1.4)_\n"),
    )
    edit = (
        call(
            "edit_file",
            {
                "path": "README.md",
                "old_string": "_Last updated: 2026-04-20 (v1.4)_",
                "new_string": "_Last updated: 2026-04-27 (v1.5)_",
            },
        ),
        ok("Successfully replaced text in README.md."),
    )
    s.until_cap(lambda i: [read] if i % 2 == 0 else [edit])
    return Entry(
        name="real-loop-openclaw-edit-success-unchanged",
        label="loop",
        shape="a successful mutating call that changes nothing, repeated",
        description="The edit tool reports success but the file keeps its old footer; the "
        "agent reads it, sees the old text, edits again (success), reads again, forever.",
        tools=s.tools({"read_file": {}, "edit_file": MUTATING}),
        turns=s.turns,
        loop_starts_at_batch=2,
        url="https://github.com/openclaw/openclaw/issues/72847",
    )


def loop_assemblyzero_green_phase() -> Entry:
    s = Script()
    failure = sh_fail(
        "FAILED tests/test_users.py::test_create_user - AssertionError: expected 201, got 400\n"
        "FAILED tests/test_users.py::test_validate_email - ValueError: invalid email 'a@b.co'\n"
        "FAILED tests/test_users.py::test_duplicate_user - AssertionError: expected 409\n"
        "3 failed, 14 passed in 1.92s",
        1,
    )

    def step(i: int) -> list[Step]:
        if i % 2 == 1:
            return [(sh("pytest tests/test_users.py -q"), failure)]
        edit = {
            "path": "src/users/service.py",
            "old_string": f"# implementation v{i // 2}",
            "new_string": f"# implementation v{i // 2 + 1}",
        }
        return [(call("edit_file", edit), ok("Edited src/users/service.py (1 replacement)."))]

    s.until_cap(step)
    return Entry(
        name="real-loop-assemblyzero-green-phase",
        label="loop",
        shape="fail, successful rewrite, same failure",
        description="The green phase rewrites the implementation and runs the suite: the same "
        "three tests fail with the same assertion errors, iteration after iteration, until a "
        "hard cap.",
        tools=s.tools(),
        turns=s.turns,
        loop_starts_at_batch=2,
        url="https://github.com/martymcenroe/AssemblyZero/issues/501",
    )


def real_loops() -> list[Entry]:
    return [
        loop_pi_repeated_ls(),
        loop_prime_agent_diagnostic(),
        loop_superplane_empty_results(),
        loop_pi_echo_noop(),
        loop_jiuwen_grep_no_match(),
        loop_gemini_same_replace(),
        loop_gke_generate_cleanup_cycle(),
        loop_openhands_dev_server_ctrl_c(),
        loop_aws_blocks_dev_server_restarts(),
        loop_cline_diff_edit_failed(),
        loop_gemini_replace_error_flips(),
        loop_claude_code_install_timeout(),
        loop_goose_asks_again_after_no(),
        loop_claude_code_denied_next_command(),
        loop_hermes_browser_navigate(),
        loop_hermes_gh_api_empty(),
        loop_openclaw_drifting_error(),
        loop_stella_growing_command(),
        loop_command_code_echo_markers(),
        loop_lobehub_identical_polls(),
        loop_odysseus_continue_reruns_tools(),
        loop_lifeos_denial_workarounds(),
        loop_roo_identical_edit_after_reread(),
        loop_omo_reread_sections(),
        loop_gemini_missing_absolute_path(),
        loop_goose_analyze_depth_creep(),
        loop_stella_interleaved_test(),
        loop_seclab_search_churn(),
        loop_openclaw_edit_success_unchanged(),
        loop_assemblyzero_green_phase(),
    ]
