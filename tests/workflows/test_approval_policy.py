"""The approval policy (workflows/prompt/approval_policy.py): presets, priorities, deny wins,
commands read per segment, session rules only tighten, remembered calls."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from workflows.contracts.approval import ApprovalDecision, ApprovalRule
from workflows.contracts.outcome import ToolCall
from workflows.contracts.prompt_options import ApprovalMode
from workflows.prompt.approval_policy import ApprovalPolicy, decide, remembered_rule

ALLOW, ASK, DENY = ApprovalDecision.ALLOW, ApprovalDecision.ASK, ApprovalDecision.DENY


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(call_id="c1", name=name, arguments=arguments)


def shell(command: str) -> ToolCall:
    return call("run_shell_command", command=command)


def rule(name: str, decision: ApprovalDecision, **fields: Any) -> ApprovalRule:
    return ApprovalRule(name=name, decision=decision, **fields)


@pytest.mark.parametrize("mode", list(ApprovalMode))
@pytest.mark.parametrize(
    "tool",
    ["read_file", "write_file", "edit_file", "run_shell_command", "mcp__git__git_commit", "x"],
)
@pytest.mark.parametrize("mutating", [True, False])
def test_each_mode_is_a_preset_deciding_what_the_mode_did(
    mode: ApprovalMode, tool: str, mutating: bool
) -> None:
    approval = ApprovalPolicy().decide(mode, call(tool), mutating=mutating)
    asks = mode.asks_before(tool, mutating=mutating)
    assert (approval.decision is ASK) == asks
    assert approval.decision is not DENY
    assert approval.rule.startswith(mode.value)


def test_the_highest_priority_decides_and_deny_wins_among_equals() -> None:
    rules = [
        rule("tests run", ALLOW, tool="run_shell_command", command="npm run test*"),
        rule("npm asks", ASK, tool="run_shell_command", command="npm *"),
        rule("nothing runs", DENY, priority=-1),
    ]
    # Equal priority: ask beats allow for `npm run test`; the lower deny never decides.
    chosen = decide(rules, shell("npm run test -- -k x"), mutating=True)
    assert chosen is not None and chosen.name == "npm asks"
    rules.append(rule("tests trusted", ALLOW, command="npm run test*", priority=5))
    chosen = decide(rules, shell("npm run test"), mutating=True)
    assert chosen is not None and chosen.name == "tests trusted"


def test_a_command_is_read_per_segment() -> None:
    policy = ApprovalPolicy(
        operator=(
            rule("status is fine", ALLOW, tool="run_shell_command", command="git status*"),
            rule("never push", DENY, tool="run_shell_command", command="git push*"),
        )
    )
    mode = ApprovalMode.DEFAULT
    assert policy.decide(mode, shell("git  status   --short"), mutating=True).decision is ALLOW
    # An allow must match every command of the line; a deny any one of them.
    assert policy.decide(mode, shell("git status && rm -rf x"), mutating=True).decision is ASK
    denied = policy.decide(mode, shell("git add . && git push --force"), mutating=True)
    assert (denied.decision, denied.rule) == (DENY, "never push")
    assert policy.decide(mode, shell("echo hi | git push"), mutating=True).decision is DENY


def test_paths_match_workspace_relative_globs() -> None:
    policy = ApprovalPolicy(
        operator=(
            rule("docs are free", ALLOW, tool="write_file", path="docs/*.md"),
            rule("no secrets", DENY, path=".env*", priority=10),
        )
    )
    mode = ApprovalMode.DEFAULT
    write = "write_file"
    assert policy.decide(mode, call(write, path="docs/a/b.md"), mutating=True).decision is ALLOW
    assert policy.decide(mode, call(write, path="./docs/x.md"), mutating=True).decision is ALLOW
    assert policy.decide(mode, call(write, path="src/x.md"), mutating=True).decision is ASK
    assert policy.decide(mode, call("read_file", path=".env"), mutating=False).decision is DENY


def test_session_rules_only_tighten() -> None:
    loose = rule("session says run everything", ALLOW, priority=100)
    strict = rule("session: no curl", DENY, tool="run_shell_command", command="curl *")
    policy = ApprovalPolicy(session=(loose, strict))
    mode = ApprovalMode.DEFAULT
    assert policy.decide(mode, shell("make"), mutating=True).decision is ASK
    assert policy.decide(mode, shell("curl x.test"), mutating=True).decision is DENY
    yolo = ApprovalMode.YOLO
    assert policy.decide(yolo, shell("curl x.test"), mutating=True).decision is DENY


def test_a_remembered_call_runs_again_but_never_lifts_a_deny() -> None:
    asked = shell("make  test && make lint")
    remembered = remembered_rule(asked, "run_shell_command command=…")
    policy = ApprovalPolicy(
        operator=(rule("no lint", DENY, command="make lint*", tool="run_shell_command"),),
        remembered=(remembered,),
    )
    mode = ApprovalMode.DEFAULT
    assert policy.decide(mode, asked, mutating=True).decision is DENY
    other = ApprovalPolicy(remembered=(remembered,))
    again = other.decide(mode, shell("make test && make lint"), mutating=True)
    assert (again.decision, again.rule) == (ALLOW, remembered.name)
    assert other.decide(mode, shell("make test"), mutating=True).decision is ASK
    # Glob characters in a remembered path are literal.
    star = remembered_rule(call("write_file", path="a*.txt"), "write_file path=a*.txt")
    by_star = ApprovalPolicy(remembered=(star,))
    assert by_star.decide(mode, call("write_file", path="ab.txt"), mutating=True).decision is ASK
    assert by_star.decide(mode, call("write_file", path="a*.txt"), mutating=True).decision is ALLOW


@pytest.mark.parametrize("written", ["5", "5.0", "-52.0"])
def test_a_priority_is_any_json_integer(written: str) -> None:
    # JSON has one number type: a client (or a schema-driven fuzzer) may write 5.0.
    rule = ApprovalRule.model_validate_json(
        f'{{"name": "r", "decision": "deny", "priority": {written}}}'
    )
    assert rule.priority == int(float(written))


@pytest.mark.parametrize("written", ['"5"', "true", "1.5"])
def test_a_priority_that_is_no_integer_is_refused(written: str) -> None:
    with pytest.raises(ValidationError, match="priority"):
        ApprovalRule.model_validate_json(
            f'{{"name": "r", "decision": "deny", "priority": {written}}}'
        )
