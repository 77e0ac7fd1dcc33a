"""Progress evidence (``workflows/rules/evidence.py``): output fingerprints, waiting calls,
transient failures, path arguments and what a settled call says."""

from __future__ import annotations

import pytest

from workflows.contracts import ToolCall, ToolOutcome
from workflows.rules.evidence import (
    LONG_CALL_SECONDS,
    ResultKind,
    call_evidence,
    normalized_output,
    output_fingerprint,
    path_values,
    transient_failure,
    waited,
    waits_for_time,
)


def same(
    a: str,
    b: str,
    arguments_a: dict[str, object] | None = None,
    arguments_b: dict[str, object] | None = None,
) -> bool:
    return output_fingerprint(a, arguments_a) == output_fingerprint(b, arguments_b)


def test_drifting_timestamps_pids_and_durations_say_the_same_thing() -> None:
    first = (
        "[2026-08-03T10:15:07Z] sync attempt 1 (pid 31200)\n"
        "Error: connect ECONNREFUSED 127.0.0.1:5432\nelapsed 1.2s"
    )
    later = (
        "[2026-08-03T10:16:49Z] sync attempt 7 (pid 31302)\n"
        "Error: connect ECONNREFUSED 127.0.0.1:5432\nelapsed 1.8s"
    )
    assert same(first, later)


def test_a_changed_failure_is_a_different_fingerprint() -> None:
    assert not same(
        "FAILED tests/test_api.py::test_create - KeyError: 'id'\n1 failed, 41 passed in 0.53s",
        "FAILED tests/test_api.py::test_update - AssertionError\n1 failed, 41 passed in 0.61s",
    )
    # A shrinking error list is progress too.
    assert not same("3 errors\nE1\nE2\nE3", "2 errors\nE2\nE3")


def test_the_calls_own_arguments_are_masked() -> None:
    assert same(
        "File not found: notes/a.txt",
        "File not found: notes/b.txt",
        {"path": "notes/a.txt"},
        {"path": "notes/b.txt"},
    )
    # Without the arguments the two outputs differ.
    assert not same("File not found: a.txt", "File not found: b.txt")


def test_absolute_and_relative_paths_are_masked() -> None:
    assert normalized_output("cannot open /tmp/x/1.log or ./out/2.log") == (
        "cannot open <path> or <path>"
    )


def test_whitespace_differences_do_not_matter() -> None:
    assert same("error:   a\n\n b", "error: a b")


def test_short_argument_values_are_not_masked() -> None:
    # "1" occurs everywhere; masking it would erase real differences.
    assert normalized_output("exit 1, 1 failed", {"n": "1"}) == "exit 1, 1 failed"


@pytest.mark.parametrize(
    "command",
    [
        "sleep 30",
        "sleep 5 && gh pr checks 42",
        "kubectl rollout status deploy/api --timeout=20s",
        "kubectl wait --for=condition=ready pod/x",
        "gh run watch 123",
        "until curl -sf localhost:8080; do sleep 1; done",
        "npm test -- --watch",
    ],
)
def test_waiting_commands(command: str) -> None:
    assert waits_for_time(
        ToolCall(call_id="c", name="run_shell_command", arguments={"command": command})
    )


@pytest.mark.parametrize(
    "command", ["pytest -q", "gh pr checks 42", "grep -rn sleep src/", "cat waiter.py"]
)
def test_commands_that_do_not_wait(command: str) -> None:
    assert not waits_for_time(
        ToolCall(call_id="c", name="run_shell_command", arguments={"command": command})
    )


def test_wait_tools_by_name() -> None:
    assert waits_for_time(ToolCall(call_id="c", name="mcp__shell__sleep", arguments={"s": 5}))
    assert not waits_for_time(ToolCall(call_id="c", name="read_file", arguments={"path": "sleep"}))


# --- transient failures, path arguments and a call's evidence ------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "HTTP 429 Too Many Requests",
        "rate limit exceeded",
        "Rate-limited by upstream",
        "upstream returned status 503",
        "502 Bad Gateway",
        "Service Unavailable",
        "504 Gateway Timeout",
        "read ECONNRESET",
        "connection reset by peer",
        "Resource temporarily unavailable",
    ],
)
def test_transient_failures_by_text(text: str) -> None:
    assert transient_failure("mcp_tool_error", text)


@pytest.mark.parametrize(
    "text",
    ["500 Internal Server Error", "syntax error on line 429", "File not found", "exit 1", ""],
)
def test_other_failures_are_not_transient(text: str) -> None:
    assert not transient_failure("execution_failed", text)


def test_a_timeout_is_transient_whatever_it_says() -> None:
    assert transient_failure("execution_timeout", "")


def test_path_arguments_are_normalized_top_level_values() -> None:
    call = ToolCall(
        call_id="c",
        name="edit_file",
        arguments={"path": "./src/app.py", "old_string": "x", "nested": {"path": "deep"}},
    )
    assert path_values(call) == frozenset({"src/app.py"})
    assert path_values(ToolCall(call_id="c", name="fetch", arguments={"URL": "https://x/"})) == (
        frozenset({"https://x"})
    )


def test_a_calls_evidence_says_what_kind_of_result_it_was() -> None:
    call = ToolCall(call_id="c", name="read_file", arguments={"path": "a.txt"})

    def outcome(**fields: object) -> ToolOutcome:
        return ToolOutcome.model_validate(
            {"call_id": "c", "tool_name": "read_file", "policy_tool_name": "read_file", **fields}
        )

    ran = call_evidence(call, "d", outcome(status="success", execution_status="success"))
    assert ran.kind is ResultKind.SUCCESS and ran.tool == "read_file"
    failed = outcome(status="error", execution_status="error", error_message="no a.txt")
    assert call_evidence(call, "d", failed).kind is ResultKind.FAILURE
    truncated = outcome(status="error", execution_status="success", error_message="too long")
    assert call_evidence(call, "d", truncated).kind is ResultKind.FAILURE
    refused = outcome(status="error", execution_status="not_started", refused_repeat=True)
    assert call_evidence(call, "d", refused).kind is ResultKind.OTHER
    denied = outcome(status="cancelled", execution_status="not_started", denied=True)
    assert call_evidence(call, "d", denied).kind is ResultKind.DENIED
    # The argument value is masked: two reads of two missing files fail the same way.
    other = ToolCall(call_id="c", name="read_file", arguments={"path": "b.txt"})
    b = outcome(status="error", execution_status="error", error_message="no b.txt")
    assert call_evidence(other, "e", b).fingerprint == call_evidence(call, "d", failed).fingerprint


# --- time as evidence ---------------------------------------------------------------------


def _status(status: str, **fields: object) -> ToolOutcome:
    return ToolOutcome.model_validate(
        {
            "call_id": "c",
            "tool_name": "job_status",
            "policy_tool_name": "job_status",
            "status": status,
            "execution_status": status,
            "content": "running",
            **fields,
        }
    )


def test_a_success_that_took_long_waited_and_an_instant_one_did_not() -> None:
    poll = ToolCall(call_id="c", name="job_status", arguments={"id": "7"})
    assert waited(poll, ResultKind.SUCCESS, LONG_CALL_SECONDS)
    assert waited(poll, ResultKind.SUCCESS, 30.0)
    assert not waited(poll, ResultKind.SUCCESS, LONG_CALL_SECONDS - 0.1)
    assert not waited(poll, ResultKind.SUCCESS, 0.0)
    evidence = call_evidence(poll, "d", _status("success"), duration=30.0)
    assert evidence.waits and evidence.duration == 30.0
    assert not call_evidence(poll, "d", _status("success")).waits


def test_a_failure_waits_only_by_what_it_is_however_long_it_took() -> None:
    build = ToolCall(call_id="c", name="run_shell_command", arguments={"command": "make"})
    assert not waited(build, ResultKind.FAILURE, 600.0)
    failed = _status("error", error_message="build failed")
    assert not call_evidence(build, "d", failed, duration=600.0).waits
    rollout = ToolCall(
        call_id="c", name="run_shell_command", arguments={"command": "kubectl rollout status x"}
    )
    assert waited(rollout, ResultKind.FAILURE, 0.0)


def test_a_waiting_command_waits_even_when_instant() -> None:
    sleep = ToolCall(call_id="c", name="run_shell_command", arguments={"command": "sleep 30"})
    assert call_evidence(sleep, "d", _status("success"), duration=0.0).waits
