"""Seawall's converter writes payloads without what a reader knows already, and reads them
back equal (seawall/runtime/converter.py, workflows/contracts/wire.py): defaults left out, a
tool call's arguments left to its raw text, an outcome's field equal to its twin left out.
What a model built in code or dumped outside the converter looks like does not change."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from temporalio.contrib.pydantic import pydantic_data_converter

from seawall.runtime.converter import seawall_data_converter
from workflows.contracts.activity import CallModelInput, ModelReply, ModelSpec, RunToolInput
from workflows.contracts.conversation import Message, Role
from workflows.contracts.conversation_ref import (
    ConversationRef,
    KeptMessages,
    KeptReply,
    KeptResult,
)
from workflows.contracts.outcome import ToolCall, ToolOutcome

WIRE = seawall_data_converter.payload_converter
OLD = pydantic_data_converter.payload_converter


def written(value: Any) -> dict[str, Any]:
    [payload] = WIRE.to_payloads([value])
    parsed: dict[str, Any] = json.loads(payload.data)
    return parsed


def read(value: Any, as_type: type) -> Any:
    [back] = WIRE.from_payloads(WIRE.to_payloads([value]), [as_type])
    return back


def test_defaults_are_left_out_and_read_back() -> None:
    request = RunToolInput(
        call=ToolCall(
            call_id="c1",
            name="read_file",
            raw_arguments='{"path": "a.txt"}',
            arguments={"path": "a.txt"},
        ),
        workspace_root="/w",
        batch=2,
    )
    assert written(request) == {
        "call": {"call_id": "c1", "name": "read_file", "raw_arguments": '{"path": "a.txt"}'},
        "workspace_root": "/w",
        "batch": 2,
    }
    assert read(request, RunToolInput) == request


def test_a_payload_written_before_the_converter_reads_as_it_always_did() -> None:
    outcome = ToolOutcome(
        call_id="c1",
        tool_name="read_file",
        status="error",
        execution_status=None,
        error_type="execution_failed",
        content="boom",
        error_message="boom",
    )
    [old] = OLD.to_payloads([outcome])
    assert '"execution_status":null' in old.data.decode()
    [back] = WIRE.from_payloads([old], [ToolOutcome])
    assert back == outcome and back.execution_status is None


@given(
    raw=st.sampled_from(
        [
            None,
            "{}",
            '{"path": "a"}',
            '{"path":"a"}',
            "not json",
            "[1, 2]",
            '{"n": NaN}',
            '{"a": 1, "a": 2}',
        ]
    ),
    arguments=st.sampled_from([None, {}, {"path": "a"}, {"a": 2}, {"n": 1}]),
)
def test_a_tool_call_reads_back_equal_whatever_its_raw_text(
    raw: str | None, arguments: dict[str, Any] | None
) -> None:
    call = ToolCall(call_id="c", name="t", arguments=arguments, raw_arguments=raw)
    back = read(call, ToolCall)
    assert back.model_dump() == call.model_dump()
    on_the_wire = written(call)
    # Left out only when the raw text parses to exactly the arguments (None: not an object).
    if "arguments" not in on_the_wire and raw is not None:
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        assert (parsed if isinstance(parsed, dict) else None) == arguments


statuses = st.sampled_from([None, "success", "error", "not_started", "cancelled"])
names = st.sampled_from([None, "read_file", "mcp__git__status"])


@given(
    tool_name=st.sampled_from(["read_file", "mcp__git__status"]),
    policy_tool_name=names,
    status=statuses.filter(lambda s: s is not None),
    execution_status=statuses,
    error_type=st.sampled_from([None, "execution_failed", "output_truncated"]),
    execution_error_type=st.sampled_from([None, "execution_failed"]),
    content=st.sampled_from(["", "boom", "execution_failed"]),
    error_message=st.sampled_from([None, "", "boom"]),
)
def test_an_outcome_reads_back_equal_with_or_without_its_twins(**fields: Any) -> None:
    outcome = ToolOutcome(call_id="c", **fields)
    assert read(outcome, ToolOutcome) == outcome
    on_the_wire = written(outcome)
    for twin, primary in (
        ("policy_tool_name", "tool_name"),
        ("execution_status", "status"),
        ("execution_error_type", "error_type"),
    ):
        if twin not in on_the_wire and primary in on_the_wire:
            assert fields[twin] == fields[primary]


def test_the_usual_outcome_writes_each_name_status_and_error_type_once() -> None:
    outcome = ToolOutcome(
        call_id="c1",
        tool_name="read_file",
        policy_tool_name="read_file",
        status="error",
        execution_status="error",
        error_type="execution_failed",
        execution_error_type="execution_failed",
        content="not found",
    )
    assert written(outcome) == {
        "call_id": "c1",
        "tool_name": "read_file",
        "status": "error",
        "error_type": "execution_failed",
        "content": "not found",
    }


def test_only_the_converter_fills_in_what_the_wire_left_out() -> None:
    # Built in code, an outcome without execution_status means "unknown", never its twin's.
    outcome = ToolOutcome(call_id="c", tool_name="t", status="error")
    assert outcome.execution_status is None and outcome.policy_tool_name is None
    assert (
        ToolOutcome.model_validate({"call_id": "c", "tool_name": "t", "status": "error"}) == outcome
    )
    call = ToolCall(call_id="c", name="t", raw_arguments='{"a": 1}')
    assert call.arguments == {}
    # A plain dump (digests, the HTTP API) keeps every field.
    assert set(call.model_dump()) == {"call_id", "name", "arguments", "raw_arguments"}
    assert (
        json.loads(ToolOutcome(call_id="c", tool_name="t", status="s").model_dump_json())[
            "execution_status"
        ]
        is None
    )


def test_each_part_of_a_request_reads_back_as_itself() -> None:
    """``KeptReply`` is ``{}`` on the wire: the only part without a required field."""
    ref = ConversationRef(
        previous="p",
        parts=[
            KeptMessages(start=0, stop=3),
            KeptReply(),
            KeptResult(result_of="c1"),
            Message(role=Role.TOOL, tool_call_id="c2", content="out"),
        ],
        tools_kept=True,
        digest="d",
    )
    assert written(ref)["parts"] == [
        {"start": 0, "stop": 3},
        {},
        {"result_of": "c1"},
        {"role": "tool", "content": "out", "tool_call_id": "c2"},
    ]
    assert read(ref, ConversationRef) == ref


def test_a_model_request_and_reply_read_back_equal() -> None:
    reply = ModelReply(
        text="",
        tool_calls=[
            ToolCall(
                call_id="c",
                name="t",
                arguments={"x": [1, {"y": None}]},
                raw_arguments='{"x": [1, {"y": null}]}',
            )
        ],
    )
    assert read(reply, ModelReply) == reply
    request = CallModelInput(
        model=ModelSpec(), messages=[], request_number=3, retry_window_seconds=600.0
    )
    assert read(request, CallModelInput) == request
