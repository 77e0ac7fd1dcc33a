"""Scenarios modelled on real public incidents with coding agents and agent frameworks.

Each scenario here re-enacts one report from a public issue tracker (its ``url`` goes into
``labels.yaml``): the tool calls the agent made, in the shape the report shows, with tool
names mapped onto Seawall's (a shell is ``run_shell_command``, an edit ``edit_file``, an MCP
tool ``mcp__<server>__<tool>``) and error text taken from or modelled on the report. Where
the report's output varied from call to call (a shrinking error list, a changing timestamp,
a job's progress), the fixture outcomes vary the same way, so a guard that looks at results
could tell progress from repetition. Where a report leaves a detail open (how many rounds,
what ran in between), the choice is the plain reading of the report, written in the
scenario's note; nothing is tuned to make any policy look good.

Labels follow the report, never Seawall: ``loop`` when the report (or its maintainers) calls
the session stuck, ``legit`` when the repetition was the work. ``known_gap`` and
``out_of_scope`` record what the recommended loop profile misses or halts, and why;
``seed_known_gap`` and ``seed_out_of_scope`` the same for the seed profile (the seeds' rules
verbatim), each text starting with "seed:" (docs/architecture.md, "Loop profiles").

``bench/make_corpus.py`` calls :func:`incidents` and writes these files with the rest of the
corpus; ``tests/bench/test_corpus.py`` checks the files equal what this module writes.
"""

from __future__ import annotations

from collections.abc import Callable

from bench.make_corpus import (
    CAP,
    Entry,
    Json,
    answer,
    call,
    fail,
    ok,
    tool,
    turn,
)

Step = tuple[Json, Json | None]  # a call and the outcome its fixture answers (None: never runs)


class Script:
    """The model's turns and each fixture tool's outcomes, built together in call order."""

    def __init__(self) -> None:
        self.turns: list[Json] = []
        self.outcomes: dict[str, list[Json]] = {}
        self.calls = 0

    def batch(self, *steps: Step, text: str = "") -> None:
        for made, outcome in steps:
            if outcome is not None:
                self.outcomes.setdefault(made["name"], []).append(outcome)
        self.turns.append(turn(*[made for made, _ in steps], text=text))
        self.calls += len(steps)

    def answer(self, text: str) -> None:
        self.turns.append(answer(text))

    def until_cap(self, make_batch: Callable[[int], list[Step]]) -> None:
        """A model that never gives up: batches ``make_batch(i)`` until one would pass the
        per-prompt tool-call cap, plus one spare."""
        i = 0
        while self.calls <= CAP:
            self.batch(*make_batch(i))
            i += 1
        self.batch(*make_batch(i))

    def tools(self, meta: dict[str, Json] | None = None) -> Json:
        """Fixture tools, in ``meta``'s order; a trailing run of equal outcomes is kept once
        (the last outcome repeats). A tool whose calls never run answers ``ok("done")``."""
        meta = meta or {}
        names = [*meta, *[n for n in self.outcomes if n not in meta]]
        out: Json = {}
        for name in names:
            outcomes = list(self.outcomes.get(name) or [ok("done")])
            while len(outcomes) > 1 and outcomes[-1] == outcomes[-2]:
                outcomes.pop()
            out[name] = tool(*outcomes, **meta.get(name, {}))
        return out


def sh(command: str, **extra: object) -> Json:
    return call("run_shell_command", {"command": command, **extra})


def sh_fail(output: str, code: int) -> Json:
    return fail("shell_execute_error", f"Command failed.\nOutput:\n{output}\nExit code: {code}")


def timed_out(text: str) -> Json:
    return fail("execution_timeout", text)


def denied(text: str = "The user doesn't want to proceed with this tool use.") -> Json:
    """A per-command refusal in the agent's own permission layer, as the tool reports it."""
    return {
        "status": "cancelled",
        "execution_status": "not_started",
        "error_type": "execution_denied",
        "message": text,
    }


MCP: Json = {"tool_type": "mcp"}
MUTATING: Json = {"mutating": True}
MCP_MUTATING: Json = {"tool_type": "mcp", "mutating": True}


# --- loops --------------------------------------------------------------------------------


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


# --- legitimate repetitive work -----------------------------------------------------------


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


# --- what the seed profile does with them -------------------------------------------------
# Filled in from the simulator's verdicts, each with the mechanism behind it. A loop the
# seeds' rules do not stop carries seed_out_of_scope; a legit scenario they halt,
# seed_known_gap.

SUCCESSES_ONLY = (
    "seed: no call fails (every one succeeds), and Seawall stops failure loops only; the cap "
    "ends it"
)
PROGRESS_COUNTED_AS_STREAK = (
    "seed: the guard keys on (tool, classified error type) only, so failures whose output "
    "changes from run to run count as one run_shell_command streak; the edits between are "
    "another tool and neither reset nor advance it, and the ninth failure is a stop"
)

SEED: dict[str, dict[str, str]] = {
    # loops the seeds' rules do not stop
    **{
        name: {"seed_out_of_scope": SUCCESSES_ONLY}
        for name in (
            "real-loop-pi-repeated-ls",
            "real-loop-prime-agent-repeated-diagnostic",
            "real-loop-superplane-empty-results",
            "real-loop-pi-echo-noop",
            "real-loop-hermes-gh-api-empty",
            "real-loop-stella-growing-command",
            "real-loop-command-code-echo-markers",
            "real-loop-lobehub-identical-polls",
            "real-loop-omo-reread-sections",
            "real-loop-goose-analyze-depth-creep",
            "real-loop-seclab-search-churn",
        )
    },
    "real-loop-openclaw-edit-success-unchanged": {
        "seed_out_of_scope": "seed: every call succeeds (the edit reports success and changes "
        "nothing), and Seawall stops failure loops only; the cap ends it"
    },
    "real-loop-odysseus-continue-reruns-tools": {
        "seed_out_of_scope": "seed: every call succeeds, and the user's input after each batch "
        "resets the guard anyway; the cap ends it"
    },
    "real-loop-gke-generate-cleanup-cycle": {
        "seed_out_of_scope": "seed: the identical successful `rm` between failures is a "
        "run_shell_command success, which resets the guard's streak (same tool) and makes the "
        "failed-call log forget, so the identical generate.sh failure is never refused and "
        "never counted past one"
    },
    "real-loop-openhands-dev-server-ctrl-c": {
        "seed_out_of_scope": "seed: the successful Ctrl-C between attempts is a run_shell_command "
        "success, which resets the guard's streak and makes the failed-call log forget, so the "
        "identical timed-out dev server start is never refused and never counted past one"
    },
    "real-loop-aws-blocks-dev-server-restarts": {
        "seed_out_of_scope": "seed: each successful kill between attempts is a run_shell_command "
        "success, which resets the guard's streak and makes the failed-call log forget, so "
        "the failing `npm run dev` is never refused and never counted past one"
    },
    "real-loop-gemini-replace-error-flips": {
        "seed_out_of_scope": "seed: the classified reason alternates (edit_expected_occurrence_"
        "mismatch, edit_no_occurrence_found), so every batch starts a new guard streak, and "
        "the old_string differs every time, so the refusal never sees an unchanged repeat"
    },
    "real-loop-goose-asks-again-after-no": {
        "seed_out_of_scope": "seed: denials never count or get remembered: a cancelled call resets "
        "the guard and the failed-call log records only calls that ran and failed, so the "
        "identical denied request runs to the cap"
    },
    "real-loop-claude-code-denied-next-command": {
        "seed_out_of_scope": "seed: denials never count or get remembered (a cancelled call resets "
        "the guard; the failed-call log records only calls that ran and failed), and every "
        "command differs; the cap ends it"
    },
    "real-loop-lifeos-denial-workarounds": {
        "seed_out_of_scope": "seed: denials never count or get remembered (a cancelled call resets "
        "the guard; the failed-call log records only calls that ran and failed); the cap ends it"
    },
    # legitimate work the seeds' rules halt
    **{
        name: {"seed_known_gap": PROGRESS_COUNTED_AS_STREAK}
        for name in (
            "real-legit-gemini-fix-and-rebuild",
            "real-legit-lint-one-finding-per-rerun",
            "real-legit-fusion-e2e-debug-cycles",
        )
    },
    "real-legit-gh-pr-checks-pending": {
        "seed_known_gap": "seed: exit code 8 means pending, but every unchanged re-poll of a call "
        "that failed is refused (nothing state-changing ran between), and the fifth refusal "
        "exceeds MAX_REPEATS and halts the prompt"
    },
    "real-legit-openhands-nine-empty-commands": {
        "seed_known_gap": "seed: the empty command that keeps waiting is identical each time and "
        "its timeout is remembered as a failure, so every re-send is refused and the fifth "
        "refusal exceeds MAX_REPEATS and halts the prompt"
    },
    "real-legit-qwen-long-verification-run": {
        "seed_known_gap": "seed: the fixed per-prompt cap of 100 tool calls ends a run that needs "
        "more, although every call is distinct and the work advances"
    },
}


# --- what the recommended profile does with them ------------------------------------------

VARIED_SUCCESSES = (
    "every call succeeds and each differs from the one before, with a different output: no "
    "failure comes back, no call returns its last result again and nothing is denied, so "
    "none of the rules counts it; telling useless variety from real work would take the "
    "meaning of the calls. The adaptive cap lets distinct calls run on, up to its backstop "
    "of 1,000 calls; the script ends first"
)

RECOMMENDED: dict[str, dict[str, str]] = {
    # loops the recommended profile does not stop
    **{
        name: {"out_of_scope": VARIED_SUCCESSES}
        for name in (
            "real-loop-command-code-echo-markers",
            "real-loop-goose-analyze-depth-creep",
            "real-loop-omo-reread-sections",
            "real-loop-seclab-search-churn",
            "real-loop-stella-growing-command",
        )
    },
    "real-loop-odysseus-continue-reruns-tools": {
        "out_of_scope": "every call succeeds, and the user's input after every batch resets "
        "every rule by design: the user is in the loop and can stop it. The adaptive cap "
        "ends it: past 100 calls, it asks for the same calls a sixth time"
    },
}


def incidents() -> list[Entry]:
    """Every real-incident scenario, with both profiles' verdict notes applied."""
    entries = [*real_loops(), *real_legit()]
    for entry in entries:
        seed = SEED.get(entry.name, {})
        recommended = RECOMMENDED.get(entry.name, {})
        entry.seed_out_of_scope = seed.get("seed_out_of_scope")
        entry.seed_known_gap = seed.get("seed_known_gap")
        entry.out_of_scope = recommended.get("out_of_scope")
        entry.known_gap = recommended.get("known_gap")
    return entries
