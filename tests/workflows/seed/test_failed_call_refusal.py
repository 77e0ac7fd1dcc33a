"""Tests for the failed-call repeat refusal (seed 004, workflows/seed/failed_call_refusal.py).

Each seed Scenario that needs no running workflow has one test named after it; the rest
cover the documented details of ``workflows/seed/failed_call_refusal.py``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workflows.contracts import (
    ExecutionStatus,
    TerminalStatus,
    ToolCall,
    ToolErrorType,
    ToolOutcome,
)
from workflows.contracts.synthetic_outcomes import refused_outcome
from workflows.seed.failed_call_refusal import (
    MAX_REASON_CHARS,
    MAX_REPEATS,
    PATH_HIDDEN_TEXT,
    REMEMBERED_FAILURES,
    FailedCallLog,
    RefusalMode,
    RepeatCheck,
    argument_digest,
    masked_reason,
    parse_refusal_mode,
    refusal_text,
    repeat_limit_stop_message,
)

WS = "/ws"


# --- helpers -------------------------------------------------------------------------------


def outcome(
    status: str,
    execution_status: str | None,
    *,
    name: str = "read_file",
    message: str | None = "boom",
    error_type: str | None = None,
    refused_repeat: bool = False,
) -> ToolOutcome:
    return ToolOutcome(
        call_id="c1",
        tool_name=name,
        policy_tool_name=name,
        tool_type="native",
        status=status,
        execution_status=execution_status,
        error_type=error_type,
        content=message or "",
        error_message=message,
        refused_repeat=refused_repeat,
    )


def failure(message: str = "boom", name: str = "read_file") -> ToolOutcome:
    return outcome(
        TerminalStatus.ERROR,
        ExecutionStatus.ERROR,
        name=name,
        message=message,
        error_type=ToolErrorType.EXECUTION_FAILED,
    )


def success(name: str = "read_file") -> ToolOutcome:
    return outcome(TerminalStatus.SUCCESS, ExecutionStatus.SUCCESS, name=name, message=None)


def digest(i: int, name: str = "read_file") -> str:
    return argument_digest(name, {"path": f"src/file_{i}.py"})


def failed_log(*reasons: str, **kwargs: Any) -> tuple[FailedCallLog, list[str]]:
    """A log that recorded one failure per reason, with digests ``digest(0..)``."""
    log = FailedCallLog(**kwargs)
    digests = []
    for i, reason in enumerate(reasons):
        d = digest(i)
        assert log.record(d, failure(reason), WS) is True
        digests.append(d)
    return log, digests


def refusal_for(log: FailedCallLog, d: str, name: str = "read_file") -> ToolOutcome:
    assert log.check(d) is RepeatCheck.REFUSE
    reason = log.earlier_reason(d)
    assert reason is not None
    call = ToolCall(call_id="c2", name=name)
    return refused_outcome(call, policy_tool_name=name, tool_type="native", reason=reason)


# --- seed 004 scenarios --------------------------------------------------------------------


def test_a_retried_call_is_remembered() -> None:
    log = FailedCallLog()
    args = {"path": "src/a.py", "limit": 10}
    d = argument_digest("read_file", args)
    assert log.record(d, failure("no such line"), WS) is True
    assert log.failed == {argument_digest("read_file", args): "no such line"}


def test_an_unchanged_repeat_gets_the_earlier_reason() -> None:
    log = FailedCallLog()
    d = argument_digest("grep", {"pattern": "foo", "path": "src"})
    assert log.check(d) is RepeatCheck.RUN  # first call runs
    log.record(d, failure("grep: regex parse error near 'foo'", name="grep"), WS)

    refused = refusal_for(log, argument_digest("grep", {"path": "src", "pattern": "foo"}), "grep")
    assert "grep: regex parse error near 'foo'" in refused.content
    assert refused.error_message == refused.content
    assert refused.refused_repeat is True
    assert refused.status == TerminalStatus.ERROR
    assert refused.execution_status == ExecutionStatus.NOT_STARTED
    assert refused.call_id == "c2"
    assert refused.tool_name == "grep"


def test_a_changed_argument_runs() -> None:
    log = FailedCallLog()
    log.record(argument_digest("grep", {"pattern": "foo", "path": "src"}), failure(), WS)
    assert log.check(argument_digest("grep", {"pattern": "foo", "path": "lib"})) is (
        RepeatCheck.RUN
    )
    assert log.check(argument_digest("grep", {"pattern": "fo+", "path": "src"})) is (
        RepeatCheck.RUN
    )
    assert log.repeats == 0


def test_a_repeated_successful_call_runs() -> None:
    log = FailedCallLog()
    d = digest(0)
    for _ in range(3):
        assert log.check(d) is RepeatCheck.RUN
        assert log.record(d, success(), WS) is False
    assert log.failed == {}
    assert log.repeats == 0


def test_a_path_outside_the_checkout_stays_hidden() -> None:
    log, (d,) = failed_log("cannot open /etc/shadow: permission denied")
    refused = refusal_for(log, d)
    assert PATH_HIDDEN_TEXT in refused.content
    assert "/etc/shadow" not in refused.content
    assert "permission denied" in refused.content


def test_the_log_line_names_the_repeat() -> None:
    # The log line itself is written by the workflow; here: the repeat counter is one.
    log, (d,) = failed_log("boom")
    assert log.check(d) is RepeatCheck.REFUSE
    assert log.repeats == 1
    assert log.would_refuse == 0


def test_the_model_repeats_until_the_run_ends() -> None:
    log, (d,) = failed_log("boom")
    for _ in range(MAX_REPEATS):
        assert log.check(d) is RepeatCheck.REFUSE
    assert log.repeats == MAX_REPEATS
    assert log.limit_exceeded is False
    assert log.check(d) is RepeatCheck.REFUSE
    assert log.repeats == MAX_REPEATS + 1
    assert log.limit_exceeded is True
    message = repeat_limit_stop_message(MAX_REPEATS)
    assert "MAX_REPEATS" in message
    assert str(MAX_REPEATS) in message


@pytest.mark.parametrize("limit", [REMEMBERED_FAILURES, 1, 3])
def test_the_oldest_digest_is_dropped(limit: int) -> None:
    kwargs: dict[str, Any] = {} if limit == REMEMBERED_FAILURES else {"remembered_limit": limit}
    log, digests = failed_log(*(f"reason {i}" for i in range(limit + 1)), **kwargs)
    assert log.remembered_limit == limit
    assert list(log.failed) == digests[1:]
    assert log.check(digests[0]) is RepeatCheck.RUN
    assert log.check(digests[-1]) is RepeatCheck.REFUSE
    assert log.check(digests[1]) is RepeatCheck.REFUSE


# --- what is recorded ----------------------------------------------------------------------


def test_failure_records_exactly_the_call_digest() -> None:
    log = FailedCallLog()
    args = {"command": "make test", "env": {"A": "1"}}
    assert log.record(argument_digest("shell", args), failure("exit 2", "shell"), WS) is True
    assert list(log.failed) == [argument_digest("shell", args)]
    assert log.earlier_reason(argument_digest("shell", args)) == "exit 2"


@pytest.mark.parametrize(
    ("label", "not_recorded"),
    [
        ("success", success()),
        (
            "invalid parameters",
            outcome(
                TerminalStatus.ERROR,
                ExecutionStatus.NOT_STARTED,
                error_type=ToolErrorType.INVALID_TOOL_PARAMS,
            ),
        ),
        (
            "permission denial",
            outcome(
                TerminalStatus.CANCELLED,
                ExecutionStatus.NOT_STARTED,
                error_type=ToolErrorType.EXECUTION_DENIED,
            ),
        ),
        ("cancellation", outcome(TerminalStatus.CANCELLED, ExecutionStatus.CANCELLED)),
        (
            "post-execution failure",
            outcome(TerminalStatus.ERROR, ExecutionStatus.SUCCESS, error_type="output_truncated"),
        ),
        (
            "refused outcome",
            refused_outcome(
                ToolCall(call_id="c1", name="read_file"),
                policy_tool_name="read_file",
                tool_type="native",
                reason="boom",
            ),
        ),
        (
            "refused flag on a ran-and-failed outcome",
            outcome(TerminalStatus.ERROR, ExecutionStatus.ERROR, refused_repeat=True),
        ),
    ],
    ids=[
        "success",
        "invalid-parameters",
        "permission-denial",
        "cancellation",
        "post-execution-failure",
        "refused-outcome",
        "refused-flag-on-ran-and-failed",
    ],
)
def test_outcomes_that_did_not_run_and_fail_are_not_recorded(
    label: str, not_recorded: ToolOutcome
) -> None:
    log = FailedCallLog()
    d = digest(0)
    assert log.record(d, not_recorded, WS) is False, label
    assert log.failed == {}
    assert log.check(d) is RepeatCheck.RUN


def test_rerecording_moves_a_digest_to_the_newest_end() -> None:
    log, digests = failed_log("r0", "r1", "r2", remembered_limit=3)
    log.record(digests[0], failure("r0 again"), WS)
    assert list(log.failed) == [digests[1], digests[2], digests[0]]
    assert log.failed[digests[0]] == "r0 again"
    log.record(digest(9), failure("r9"), WS)
    assert list(log.failed) == [digests[2], digests[0], digest(9)]


def test_reason_falls_back_to_content_and_then_to_a_placeholder() -> None:
    log = FailedCallLog()
    only_content = ToolOutcome(
        call_id="c", tool_name="t", status="error", execution_status="error", content="from content"
    )
    log.record(digest(0), only_content, WS)
    assert log.earlier_reason(digest(0)) == "from content"
    log.record(digest(1), failure(message=None), WS)
    assert log.earlier_reason(digest(1)) == "(no reason was reported)"
    assert log.earlier_reason(digest(2)) is None


# --- argument_digest -----------------------------------------------------------------------


def test_digest_ignores_key_order_including_nested() -> None:
    a = {"path": "a.py", "opts": {"x": 1, "y": [1, {"p": 1, "q": 2}]}, "n": None}
    b = {"n": None, "opts": {"y": [1, {"q": 2, "p": 1}], "x": 1}, "path": "a.py"}
    assert argument_digest("t", a) == argument_digest("t", b)


def test_digest_changes_with_an_argument_or_the_tool_name() -> None:
    base = argument_digest("t", {"path": "a.py", "opts": {"x": 1}})
    assert argument_digest("t", {"path": "b.py", "opts": {"x": 1}}) != base
    assert argument_digest("t", {"path": "a.py", "opts": {"x": 2}}) != base
    assert argument_digest("t", {"path": "a.py", "opts": {"x": 1}, "z": 0}) != base
    assert argument_digest("u", {"path": "a.py", "opts": {"x": 1}}) != base
    # list order is significant: it is not a key order
    assert argument_digest("t", {"l": [1, 2]}) != argument_digest("t", {"l": [2, 1]})


def test_digest_is_a_hex_sha256() -> None:
    d = argument_digest("t", {"a": 1})
    assert re.fullmatch(r"[0-9a-f]{64}", d)
    assert argument_digest("t", {"a": 1}) == d  # deterministic
    assert re.fullmatch(r"[0-9a-f]{64}", argument_digest("t", None))


def test_digest_ignores_json_whitespace() -> None:
    tight = '{"path":"a b.py","opts":{"x":[1,2]}}'
    loose = '{\n  "opts" : { "x" : [ 1 , 2 ] },\n\t"path": "a b.py"\n}'
    assert argument_digest("t", json.loads(tight)) == argument_digest("t", json.loads(loose))
    # whitespace inside a string value is an argument, not formatting
    assert argument_digest("t", json.loads(tight)) != argument_digest(
        "t", json.loads('{"path":"a  b.py","opts":{"x":[1,2]}}')
    )


# --- refusal text -----------------------------------------------------------------------------


def test_refusal_text_names_tool_says_change_and_carries_reason() -> None:
    text = refusal_text("edit_file", "no occurrence of 'x' found")
    assert "edit_file" in text
    assert "Change the call" in text
    assert "no occurrence of 'x' found" in text


# --- masking -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("cannot read /etc/passwd now", "/etc/passwd"),
        ("cannot read /ws/../etc/passwd now", "etc/passwd"),
        ("cannot read /ws/src/../../etc/passwd", "etc/passwd"),
        ("cannot read /wsx/a.py", "/wsx"),
        ("cannot read ~/.ssh/id_rsa", ".ssh"),
        ("cannot read C:\\Users\\x\\secret.txt", "Users"),
        ("--file=/home/alice/key", "alice"),
        ('open("/home/alice/key")', "alice"),
        ("read file:///etc/hosts", "/etc/hosts"),
    ],
)
def test_paths_outside_the_workspace_are_masked(text: str, secret: str) -> None:
    reason = masked_reason(text, WS)
    assert PATH_HIDDEN_TEXT in reason
    assert secret not in reason


def test_path_inside_the_workspace_is_kept() -> None:
    assert masked_reason("cannot read /ws/src/a.py", WS) == "cannot read /ws/src/a.py"
    assert masked_reason("cannot read /ws", "/ws/") == "cannot read /ws"
    # a grep location keeps its line number; only the outside path goes
    assert masked_reason("/ws/a.py:12: bad", WS) == "/ws/a.py:12: bad"
    assert masked_reason("/etc/x.conf:12: bad", WS) == f"{PATH_HIDDEN_TEXT}:12: bad"


def test_ordinary_slashes_are_not_mangled() -> None:
    text = "use and/or, 1/2 of the input/output, TCP/IP"
    assert masked_reason(text, WS) == text


def test_url_host_is_not_mangled() -> None:
    # Current behaviour: "//example.com/a/b" follows ":" and is taken for an absolute
    # path, so the whole URL becomes "https:[a path outside the workspace]" and the model
    # loses the host it needs to diagnose the failure. This test states the expectation.
    reason = masked_reason("GET https://example.com/a/b failed: 404", WS)
    assert "https://example.com" in reason


def test_control_characters_are_escaped_newline_and_tab_kept() -> None:
    reason = masked_reason("a\x1b[31mb\x00c\x7fd\re\nf\tg", WS)
    assert reason == "a\\x1b[31mb\\x00c\\x7fd\\x0de\nf\tg"


def test_c1_control_characters_are_escaped() -> None:
    # U+0080..U+009F are control characters too (category Cc); U+009B is the 8-bit CSI,
    # a terminal escape introducer just like ESC [.
    c1 = "".join(chr(c) for c in range(0x80, 0xA0))
    reason = masked_reason(f"x{c1}y", WS)
    assert not [ch for ch in reason if unicodedata.category(ch) == "Cc" and ch not in "\n\t"]


def test_overlong_reason_is_cut() -> None:
    reason = masked_reason("a" * (MAX_REASON_CHARS * 4), WS)
    assert len(reason) <= MAX_REASON_CHARS + 20
    assert reason.startswith("a" * (MAX_REASON_CHARS - 10))
    assert reason.endswith("[cut]")
    short = "b" * MAX_REASON_CHARS
    assert masked_reason(short, WS) == short


def test_path_across_the_cut_is_masked_before_cutting() -> None:
    text = "a" * (MAX_REASON_CHARS - 5) + " /home/alice/private/key.pem"
    reason = masked_reason(text, WS)
    assert "/home" not in reason
    assert "alice" not in reason


def test_empty_reason_gets_a_placeholder() -> None:
    assert masked_reason("  \n ", WS) == "(no reason was reported)"


# --- modes ---------------------------------------------------------------------------------


def test_enforce_is_the_default_mode() -> None:
    log = FailedCallLog()
    assert log.mode is RefusalMode.ENFORCE
    assert log.remembered_limit == REMEMBERED_FAILURES == 64
    assert log.max_repeats == MAX_REPEATS == 3


def test_off_mode_records_and_refuses_nothing() -> None:
    log = FailedCallLog(mode=RefusalMode.OFF)
    assert log.record(digest(0), failure(), WS) is False
    assert log.failed == {}
    log.failed[digest(0)] = "planted"  # even a remembered digest is admitted
    assert log.check(digest(0)) is RepeatCheck.RUN
    assert (log.repeats, log.would_refuse) == (0, 0)


def test_shadow_mode_records_and_counts_would_refuse() -> None:
    log = FailedCallLog(mode="shadow")
    assert log.mode is RefusalMode.SHADOW
    assert log.record(digest(0), failure(), WS) is True
    assert log.check(digest(0)) is RepeatCheck.WOULD_REFUSE
    assert log.check(digest(0)) is RepeatCheck.WOULD_REFUSE
    assert log.check(digest(1)) is RepeatCheck.RUN
    assert (log.repeats, log.would_refuse) == (0, 2)
    assert log.limit_exceeded is False


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("off", RefusalMode.OFF),
        ("shadow", RefusalMode.SHADOW),
        ("enforce", RefusalMode.ENFORCE),
        ("  ENFORCE\n", RefusalMode.ENFORCE),
        ("Shadow", RefusalMode.SHADOW),
        (None, None),
        ("", None),
        ("warn", None),
        ("on", None),
    ],
)
def test_parse_refusal_mode(value: str | None, expected: RefusalMode | None) -> None:
    assert parse_refusal_mode(value) is expected


# --- workflow state ------------------------------------------------------------------------


def test_log_round_trips_through_json_with_order() -> None:
    log, digests = failed_log("z first", "a second", "m /etc/passwd third", mode="shadow")
    log.check(digests[0])
    log2 = FailedCallLog(max_repeats=5, remembered_limit=7)
    log2.record(digest(3), failure(), WS)
    log2.check(digest(3))
    for original in (log, log2):
        restored = FailedCallLog.model_validate_json(original.model_dump_json())
        assert restored == original
        assert list(restored.failed.items()) == list(original.failed.items())
        assert restored.mode is original.mode
    restored = FailedCallLog.model_validate_json(log.model_dump_json())
    assert list(restored.failed) == digests
    assert restored.check(digests[1]) is RepeatCheck.WOULD_REFUSE
    assert restored.would_refuse == 2


# --- property ------------------------------------------------------------------------------

_POOL = [argument_digest("t", {"i": i}) for i in range(6)]
_OPS = st.lists(
    st.tuples(st.sampled_from(["fail", "succeed", "check"]), st.integers(0, len(_POOL) - 1)),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(ops=_OPS, limit=st.integers(1, 5))
def test_log_matches_a_reference_model(ops: list[tuple[str, int]], limit: int) -> None:
    log = FailedCallLog(remembered_limit=limit)
    ref: OrderedDict[str, None] = OrderedDict()
    refusals = 0
    for op, i in ops:
        d = _POOL[i]
        if op == "fail":
            assert log.record(d, failure(f"reason {i}"), WS) is True
            ref.pop(d, None)
            ref[d] = None
            while len(ref) > limit:
                ref.popitem(last=False)
        elif op == "succeed":
            assert log.record(d, success(), WS) is False
        else:
            expected = RepeatCheck.REFUSE if d in ref else RepeatCheck.RUN
            refusals += expected is RepeatCheck.REFUSE
            assert log.check(d) is expected
        assert len(log.failed) <= limit
        assert list(log.failed) == list(ref)
    assert log.repeats == refusals


def test_forgetting_failures_lets_a_recheck_run_and_keeps_the_counters() -> None:
    log = FailedCallLog()
    recheck = argument_digest("run_shell_command", {"command": "pytest -q"})
    log.record(recheck, failure(name="run_shell_command"), "/ws")
    assert log.check(recheck) is RepeatCheck.REFUSE

    assert log.forget_failures() == 1

    assert log.check(recheck) is RepeatCheck.RUN
    assert log.repeats == 1
