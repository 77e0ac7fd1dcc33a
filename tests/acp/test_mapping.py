"""The pure parts of the editor bridge: events to updates, the turn's answer, the replay of a
conversation, prompt content, modes and the check of incoming lines."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import RequestError
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from seawall.acp.mapping import (
    CANCELLED_REASON,
    FAILED_REASON,
    MESSAGE_DELTA,
    REJECTED_REASON,
    STOP_MESSAGE_PREFIX,
    STOP_MESSAGES,
    TRUNCATED_NOTE,
    TurnMapper,
    edit_diff,
    explanation,
    is_stop_message,
    tool_kind,
    tool_locations,
    tool_title,
    turn_response,
)
from seawall.acp.modes import approval_mode, mode_state
from seawall.acp.prompt_text import prompt_text
from seawall.acp.replay import TranscriptReplay
from seawall.acp.stdio import InputFilter, RequestTracker, check_message
from seawall.acp.turn import approves
from workflows.contracts import ToolCall
from workflows.contracts.conversation import Message, Role, mid_turn_message, system_message
from workflows.contracts.prompt import (
    AWAITING_APPROVAL_STATUS,
    TOOL_RESULT_CHARS,
    AgentEvent,
    EventKind,
    StopReason,
    ToolResult,
)
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.synthetic_outcomes import CANCELLED_CONTENT, PERMISSION_DENIED_CONTENT
from workflows.rules import RULES
from workflows.seed.guard import REPEATED_TOOL_FAILURE_REMINDER, REPEATED_TOOL_FAILURE_STOP_MESSAGE
from workflows.seed.protections import TOOL_CALL_CAP_STOP_MESSAGE

WS = Path("/work/space")


def event(kind: EventKind | str, seq: int = 1, **fields: object) -> AgentEvent:
    return AgentEvent.model_validate({"seq": seq, "kind": kind, **fields})


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(call_id="c1", name=name, arguments=dict(arguments))


# --- tools ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "kind"),
    [
        ("read_file", "read"),
        ("write_file", "edit"),
        ("edit_file", "edit"),
        ("list_directory", "search"),
        ("glob", "search"),
        ("grep_search", "search"),
        ("run_shell_command", "execute"),
        ("mcp__docs__lookup", "other"),
        ("something_else", "other"),
    ],
)
def test_every_builtin_tool_has_its_acp_kind(tool: str, kind: str) -> None:
    assert tool_kind(tool) == kind


def test_titles_name_the_file_pattern_or_command() -> None:
    assert tool_title("read_file", call("read_file", path="a.txt")) == "Read a.txt"
    assert tool_title("run_shell_command", call("x", command="ls -l\nrm x")) == "Run ls -l"
    assert tool_title("grep_search", call("x", pattern="TODO")) == "Search for TODO"
    assert tool_title("list_directory", call("list_directory")) == "List ."
    assert tool_title("mcp__docs__lookup", None) == "lookup (MCP: docs)"
    assert tool_title("read_file", None) == "read_file"  # the arguments are unknown
    long = tool_title("run_shell_command", call("x", command="y" * 500))
    assert len(long) < 140 and long.endswith("…")


def test_locations_are_absolute_against_the_workspace() -> None:
    [location] = tool_locations(call("read_file", path="src/a.py"), WS) or []
    assert location.path == "/work/space/src/a.py"
    [here] = tool_locations(call("list_directory"), WS) or []
    assert here.path == "/work/space"
    assert tool_locations(call("run_shell_command", command="ls"), WS) is None


def test_edits_carry_their_diff() -> None:
    [edit] = edit_diff(call("edit_file", path="a.py", old_string="x", new_string="y"), WS) or []
    assert (edit.path, edit.old_text, edit.new_text) == ("/work/space/a.py", "x", "y")
    [write] = edit_diff(call("write_file", path="b.txt", content="new"), WS) or []
    assert (write.old_text, write.new_text) == (None, "new")
    assert edit_diff(call("read_file", path="a.py"), WS) is None


# --- events -----------------------------------------------------------------------------------


def test_a_call_starts_in_progress_and_settles_completed_or_failed_with_its_reason() -> None:
    mapper = TurnMapper("s-prompt-1", WS)
    mapper.details["c1"] = call("read_file", path="a.txt")
    started = mapper.on_event(
        event(EventKind.TOOL_CALL_STARTED, call_id="c1", tool_name="read_file")
    )
    assert isinstance(started[0], ToolCallStart)
    assert started[0].tool_call_id == "s-prompt-1/c1"
    assert (started[0].status, started[0].kind, started[0].title) == (
        "in_progress",
        "read",
        "Read a.txt",
    )
    assert started[0].raw_input == {"path": "a.txt"}
    [done] = mapper.on_event(
        event(EventKind.TOOL_CALL_SETTLED, 2, call_id="c1", tool_name="read_file", status="success")
    )
    assert isinstance(done, ToolCallProgress)
    assert (done.status, done.content) == ("completed", None)

    for status, reason in [("error", FAILED_REASON), ("cancelled", CANCELLED_REASON)]:
        mapper.on_event(event(EventKind.TOOL_CALL_STARTED, call_id=status, tool_name="x"))
        [settled] = mapper.on_event(
            event(EventKind.TOOL_CALL_SETTLED, call_id=status, tool_name="x", status=status)
        )
        assert settled.status == "failed"  # ACP has no cancelled status
        assert settled.content is not None and settled.content[0].content.text == reason


def test_a_rejected_call_says_so_and_a_call_settled_without_start_is_announced() -> None:
    mapper = TurnMapper("p", WS)
    [pending] = mapper.on_event(
        event(
            EventKind.TOOL_CALL_STARTED,
            call_id="c1",
            tool_name="write_file",
            status=AWAITING_APPROVAL_STATUS,
        )
    )
    assert isinstance(pending, ToolCallStart) and pending.status == "pending"
    assert (
        mapper.on_event(
            event(
                EventKind.PERMISSION_REQUEST, call_id="c1", tool_name="write_file", request_id="r"
            )
        )
        == []
    )
    mapper.rejected.add("c1")
    [settled] = mapper.on_event(
        event(EventKind.TOOL_CALL_SETTLED, call_id="c1", tool_name="write_file", status="cancelled")
    )
    assert settled.content is not None and settled.content[0].content.text == REJECTED_REASON

    # A refused repeat never started: the editor first hears of it as a failed call.
    [refused] = mapper.on_event(
        event(EventKind.TOOL_CALL_SETTLED, call_id="c9", tool_name="read_file", status="error")
    )
    assert isinstance(refused, ToolCallStart) and refused.status == "failed"


def statuses(updates: list[object]) -> list[str | None]:
    return [getattr(u, "status", None) for u in updates]


def test_a_call_that_asks_first_moves_only_forward() -> None:
    mapper = TurnMapper("p", WS)
    started = event(
        EventKind.TOOL_CALL_STARTED,
        call_id="c1",
        tool_name="write_file",
        status=AWAITING_APPROVAL_STATUS,
    )
    asked = event(EventKind.PERMISSION_REQUEST, call_id="c1", tool_name="write_file")
    settled = event(EventKind.TOOL_CALL_SETTLED, call_id="c1", tool_name="x", status="success")
    updates = [*mapper.on_event(started), *mapper.on_event(asked)]
    approved = mapper.approved("c1")
    assert approved is not None
    updates += [approved, *mapper.on_event(settled)]
    assert statuses(updates) == ["pending", "in_progress", "completed"]
    # Nothing moves it back: a late approval, a second settlement.
    assert mapper.approved("c1") is None
    assert mapper.on_event(settled) == []

    # A worker that announced the call in_progress (no approval status): the permission
    # request leaves it so, and the approval adds nothing.
    old = TurnMapper("p", WS)
    first = old.on_event(event(EventKind.TOOL_CALL_STARTED, call_id="c1", tool_name="x"))
    assert statuses(first) == ["in_progress"]
    assert old.on_event(asked) == [] and old.approved("c1") is None


def test_a_settled_call_shows_its_output_and_an_edit_keeps_its_diff() -> None:
    mapper = TurnMapper("p", WS)
    mapper.details["c1"] = call("write_file", path="a.txt", content="new")
    mapper.on_event(event(EventKind.TOOL_CALL_STARTED, call_id="c1", tool_name="write_file"))
    mapper.results["c1"] = ToolResult(call_id="c1", status="success", content="wrote 3 bytes")
    [done] = mapper.on_event(
        event(EventKind.TOOL_CALL_SETTLED, call_id="c1", tool_name="write_file", status="success")
    )
    assert done.content is not None
    diff, output = done.content
    assert diff.type == "diff" and diff.new_text == "new"
    assert output.content.text == "wrote 3 bytes"

    mapper.on_event(event(EventKind.TOOL_CALL_STARTED, call_id="c2", tool_name="read_file"))
    long = "x" * TOOL_RESULT_CHARS
    mapper.results["c2"] = ToolResult(call_id="c2", status="error", content=long, truncated=True)
    [failed] = mapper.on_event(
        event(EventKind.TOOL_CALL_SETTLED, call_id="c2", tool_name="read_file", status="error")
    )
    assert failed.content is not None
    reason, shown = failed.content
    assert reason.content.text == FAILED_REASON
    assert shown.content.text == long + TRUNCATED_NOTE

    # A call that was not approved (declined, or the dialog timed out) says so, by its result.
    mapper.on_event(event(EventKind.TOOL_CALL_STARTED, call_id="c3", tool_name="write_file"))
    mapper.results["c3"] = ToolResult(
        call_id="c3", status="cancelled", content=PERMISSION_DENIED_CONTENT
    )
    [rejected] = mapper.on_event(
        event(EventKind.TOOL_CALL_SETTLED, call_id="c3", tool_name="x", status="cancelled")
    )
    assert rejected.content is not None
    assert [c.content.text for c in rejected.content] == [REJECTED_REASON]


def test_each_message_and_thought_has_its_own_stable_id() -> None:
    mapper = TurnMapper("p", WS)
    chunks = [
        *mapper.on_event(delta(0, "Look")),
        *mapper.on_event(delta(0, "ing.")),
        *mapper.on_event(event(EventKind.AGENT_MESSAGE, batch=0, text="Looking. Now.")),
        *mapper.on_event(event(EventKind.REMINDER, batch=1, text=REPEATED_TOOL_FAILURE_REMINDER)),
        *mapper.on_event(delta(1, "Again")),
        *mapper.on_event(
            event(EventKind.AGENT_MESSAGE, batch=2, text=REPEATED_TOOL_FAILURE_STOP_MESSAGE)
        ),
    ]
    assert [c.message_id for c in chunks] == [
        "p/message-0",
        "p/message-0",
        "p/message-0",
        "p/thought-1",
        "p/message-1",
        "p/stop-2",
    ]


def test_the_reminder_is_a_thought_shown_once() -> None:
    mapper = TurnMapper("p", WS)
    reminder = event(EventKind.REMINDER, text=REPEATED_TOOL_FAILURE_REMINDER)
    [thought] = mapper.on_event(reminder)
    assert isinstance(thought, AgentThoughtChunk)
    assert thought.content.text == REPEATED_TOOL_FAILURE_REMINDER
    assert thought.field_meta == {"seawall": {"kind": "reminder"}}
    assert mapper.on_event(reminder) == []


def test_a_stop_is_agent_text_and_its_loop_type_is_kept_for_the_answer() -> None:
    mapper = TurnMapper("p", WS)
    [stop] = mapper.on_event(
        event(EventKind.AGENT_MESSAGE, text=REPEATED_TOOL_FAILURE_STOP_MESSAGE)
    )
    assert isinstance(stop, AgentMessageChunk)
    assert stop.field_meta == {"seawall": {"kind": "stop"}}
    assert mapper.on_event(event(EventKind.STOP, status="repeated_tool_execution_failure")) == []
    assert mapper.on_event(event(EventKind.PROMPT_FINISHED, status="loop_detected")) == []
    assert (mapper.stop_reason, mapper.loop_type) == (
        StopReason.LOOP_DETECTED,
        "repeated_tool_execution_failure",
    )


def delta(batch: int, text: str, status: str | None = None) -> AgentEvent:
    """A streamed text delta, whether or not this build's ``EventKind`` has the kind yet."""
    return AgentEvent.model_construct(
        seq=1,
        kind=MESSAGE_DELTA,
        batch=batch,
        text=text,
        status=status,
        call_id=None,
        tool_name=None,
    )


def test_whole_messages_show_only_what_their_streamed_deltas_did_not() -> None:
    mapper = TurnMapper("p", WS)
    streamed = mapper.on_event(delta(1, "Hel")) + mapper.on_event(delta(1, "lo"))
    assert [u.content.text for u in streamed] == ["Hel", "lo"]
    assert mapper.on_event(event(EventKind.AGENT_MESSAGE, batch=1, text="Hello")) == []
    # Joined late: the deltas seen were a prefix; the rest of the message is shown.
    mapper.on_event(delta(2, "Goo"))
    [rest] = mapper.on_event(event(EventKind.AGENT_MESSAGE, batch=2, text="Good bye"))
    assert rest.content.text == "d bye"
    # A batch with no deltas (streaming off) shows its whole message, and so does a stop
    # message that shares a batch number with streamed text.
    [whole] = mapper.on_event(event(EventKind.AGENT_MESSAGE, batch=3, text="Bye"))
    assert whole.content.text == "Bye"
    mapper.on_event(delta(4, "Trying again."))
    [stop] = mapper.on_event(
        event(EventKind.AGENT_MESSAGE, batch=4, text=REPEATED_TOOL_FAILURE_STOP_MESSAGE)
    )
    assert stop.content.text == REPEATED_TOOL_FAILURE_STOP_MESSAGE


def test_a_retried_model_request_restarts_the_streamed_text() -> None:
    mapper = TurnMapper("p", WS)
    mapper.on_event(delta(1, "I will del"))
    [restart] = mapper.on_event(delta(1, "Let me", status="retry"))
    assert restart.content.text == "\n\n[model request retried]\n\nLet me"
    assert restart.field_meta == {"seawall": {"kind": "retry"}}
    [more] = mapper.on_event(delta(1, " look."))
    assert more.content.text == " look."
    assert mapper.on_event(event(EventKind.AGENT_MESSAGE, batch=1, text="Let me look.")) == []


def test_every_stop_message_is_told_from_every_reminder() -> None:
    assert all(message.startswith(STOP_MESSAGE_PREFIX) for message in STOP_MESSAGES)
    assert is_stop_message(TOOL_CALL_CAP_STOP_MESSAGE.format(cap=100))
    for reminder in [REPEATED_TOOL_FAILURE_REMINDER, *(spec.reminder for spec in RULES)]:
        assert not is_stop_message(reminder)


def test_a_message_without_deltas_is_shown_whole() -> None:
    mapper = TurnMapper("p", WS)
    [message] = mapper.on_event(event(EventKind.AGENT_MESSAGE, text="Looking…"))
    assert message.content.text == "Looking…" and message.field_meta is None
    assert mapper.on_event(event(EventKind.AGENT_MESSAGE, text="")) == []


# --- the answer ---------------------------------------------------------------------------------


def test_the_turns_answer() -> None:
    plain = turn_response(
        StopReason.END_TURN, prompt_id="p", loop_type=None, cancel_requested=False
    )
    assert plain.stop_reason == "end_turn"
    assert plain.field_meta == {"seawall": {"promptId": "p", "stopReason": "end_turn"}}
    loop = turn_response(
        StopReason.LOOP_DETECTED,
        prompt_id="p",
        loop_type="repeated_tool_execution_failure",
        cancel_requested=False,
    )
    assert loop.stop_reason == "end_turn"
    assert loop.field_meta is not None
    assert loop.field_meta["seawall"]["stopReason"] == "loop_detected"
    assert loop.field_meta["seawall"]["loopType"] == "repeated_tool_execution_failure"
    for reason, answer in [
        (StopReason.CANCELLED, "cancelled"),
        (StopReason.MAX_TURN_REQUESTS, "max_turn_requests"),
        (StopReason.ERROR, "end_turn"),
    ]:
        assert (
            turn_response(reason, prompt_id="p", loop_type=None, cancel_requested=False).stop_reason
            == answer
        )
    # A cancel the editor asked for wins a race with any other ending.
    raced = turn_response(
        StopReason.LOOP_DETECTED, prompt_id="p", loop_type="x", cancel_requested=True
    )
    assert raced.stop_reason == "cancelled"
    assert (
        raced.field_meta is not None
        and raced.field_meta["seawall"]["stopReason"] == "loop_detected"
    )


def test_endings_without_a_message_of_their_own_are_explained() -> None:
    error = explanation(StopReason.ERROR, error="model request failed: 401", max_model_requests=50)
    assert error is not None and "model request failed: 401" in error
    capped = explanation(StopReason.MAX_TURN_REQUESTS, error=None, max_model_requests=7)
    assert capped is not None and "7 model requests" in capped
    assert explanation(StopReason.END_TURN, error=None, max_model_requests=50) is None
    assert explanation(StopReason.LOOP_DETECTED, error=None, max_model_requests=50) is None


def test_only_the_allow_option_approves() -> None:
    from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

    def answer(outcome: AllowedOutcome | DeniedOutcome) -> bool:
        return approves(RequestPermissionResponse(outcome=outcome))

    assert answer(AllowedOutcome(outcome="selected", option_id="allow"))
    assert not answer(AllowedOutcome(outcome="selected", option_id="reject"))
    assert not answer(AllowedOutcome(outcome="selected", option_id="allow_always"))
    assert not answer(DeniedOutcome(outcome="cancelled"))


# --- replay ---------------------------------------------------------------------------------


def test_a_conversation_replays_as_the_editor_saw_it() -> None:
    read = ToolCall(call_id="c1", name="read_file", arguments={"path": "a.txt"})
    messages = [
        Message(role=Role.USER, content="read a"),
        Message(role=Role.ASSISTANT, content="Reading.", tool_calls=[read]),
        Message(role=Role.TOOL, tool_call_id="c1", content="no such file"),
        system_message(REPEATED_TOOL_FAILURE_REMINDER),
        mid_turn_message("try b"),
        system_message(REPEATED_TOOL_FAILURE_STOP_MESSAGE),
        Message(role=Role.USER, content="again"),
        Message(role=Role.ASSISTANT, tool_calls=[read]),
        Message(role=Role.TOOL, tool_call_id="c1", content="ok"),
    ]
    statuses = [None, None, "error", None, None, None, None, None, None]
    updates = TranscriptReplay("s", WS).updates(messages, statuses)
    kinds = [type(u).__name__ for u in updates]
    assert kinds == [
        "UserMessageChunk",
        "AgentMessageChunk",
        "ToolCallStart",
        "ToolCallProgress",
        "AgentThoughtChunk",
        "UserMessageChunk",
        "AgentMessageChunk",
        "UserMessageChunk",
        "ToolCallStart",
        "ToolCallProgress",
    ]
    first, second = updates[2], updates[8]
    assert isinstance(first, ToolCallStart) and isinstance(second, ToolCallStart)
    assert first.title == "Read a.txt" and first.locations is not None
    assert first.tool_call_id != second.tool_call_id  # ids are per prompt
    assert [u.status for u in updates if isinstance(u, ToolCallProgress)] == [
        "failed",
        "completed",  # unknown status: shown as it ran
    ]
    assert isinstance(updates[0], UserMessageChunk) and updates[0].content.text == "read a"
    users = [u.message_id for u in updates if isinstance(u, UserMessageChunk)]
    assert len(set(users)) == 3  # the prompt, its mid-turn input, the next prompt


def test_the_replay_shows_the_ids_reasons_and_output_the_live_turn_showed() -> None:
    prompt = "s-prompt-2"
    read = ToolCall(call_id="c1", name="read_file", arguments={"path": "a.txt"})
    write = ToolCall(call_id="c2", name="write_file", arguments={"path": "b", "content": "x"})
    cut = ToolCall(call_id="c3", name="run_shell_command", arguments={"command": "sleep 9"})
    messages = [
        Message(role=Role.USER, content="read a"),
        Message(role=Role.ASSISTANT, content="Reading.", tool_calls=[read, write, cut]),
        Message(role=Role.TOOL, tool_call_id="c1", content="no such file"),
        Message(role=Role.TOOL, tool_call_id="c2", content=PERMISSION_DENIED_CONTENT),
        Message(role=Role.TOOL, tool_call_id="c3", content=CANCELLED_CONTENT),
        system_message(REPEATED_TOOL_FAILURE_REMINDER),
        Message(role=Role.ASSISTANT, content="done"),
    ]
    settled = {"c1": "error", "c2": "cancelled", "c3": "cancelled"}
    statuses = [None, None, "error", "cancelled", "cancelled", None, None]

    live = TurnMapper(prompt, WS)
    live.details = {c.call_id: c for c in (read, write, cut)}
    shown = [*live.on_event(delta(0, "Read")), *live.on_event(delta(0, "ing."))]
    shown += live.on_event(event(EventKind.AGENT_MESSAGE, batch=0, text="Reading."))
    for c in (read, write, cut):
        shown += live.on_event(
            event(EventKind.TOOL_CALL_STARTED, call_id=c.call_id, tool_name=c.name)
        )
    for message in messages[2:5]:
        call_id = message.tool_call_id or ""
        live.results[call_id] = ToolResult(
            call_id=call_id, status=settled[call_id], content=message.content
        )
        shown += live.on_event(
            event(EventKind.TOOL_CALL_SETTLED, call_id=call_id, status=settled[call_id])
        )
    shown += live.on_event(event(EventKind.REMINDER, batch=1, text=REPEATED_TOOL_FAILURE_REMINDER))
    shown += live.on_event(event(EventKind.AGENT_MESSAGE, batch=1, text="done"))

    replayed = TranscriptReplay("s", WS).updates(messages, statuses, [prompt] * len(messages))

    def settlements(updates: list[object]) -> dict[str, object]:
        return {
            u.tool_call_id: (u.status, u.content)
            for u in updates
            if isinstance(u, ToolCallProgress)
        }

    def message_ids(updates: list[object]) -> list[object]:
        found = [
            u.message_id for u in updates if isinstance(u, AgentMessageChunk | AgentThoughtChunk)
        ]
        return list(dict.fromkeys(found))

    assert settlements(replayed) == settlements(shown)
    assert set(settlements(shown)) == {f"{prompt}/c1", f"{prompt}/c2", f"{prompt}/c3"}
    assert (
        message_ids(replayed)
        == message_ids(shown)
        == [
            f"{prompt}/message-0",
            f"{prompt}/thought-1",
            f"{prompt}/message-1",
        ]
    )
    reasons = {k: v[1][0].content.text for k, v in settlements(shown).items()}  # type: ignore[index]
    assert reasons == {
        f"{prompt}/c1": FAILED_REASON,
        f"{prompt}/c2": REJECTED_REASON,
        f"{prompt}/c3": CANCELLED_REASON,
    }


# --- prompt content, modes, incoming lines ----------------------------------------------------


def test_prompt_content_becomes_one_text() -> None:
    blocks = [
        TextContentBlock(type="text", text="look at"),
        ResourceContentBlock(type="resource_link", uri="file:///w/a.py", name="a.py"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri="file:///w/b.py", text="print(1)"),
        ),
    ]
    assert prompt_text(blocks, 1000) == (
        "look at\n\n@file:///w/a.py\n\nfile:///w/b.py:\n```\nprint(1)\n```"
    )


@pytest.mark.parametrize(
    "blocks",
    [
        [ImageContentBlock(type="image", data="", mime_type="image/png")],
        [AudioContentBlock(type="audio", data="", mime_type="audio/wav")],
        [TextContentBlock(type="text", text="  ")],
        [TextContentBlock(type="text", text="x" * 11)],
    ],
    ids=["image", "audio", "empty", "too long"],
)
def test_prompts_the_agent_cannot_take_are_invalid_params(blocks: list[object]) -> None:
    with pytest.raises(RequestError) as refused:
        prompt_text(blocks, 10)
    assert refused.value.code == -32602


def test_modes_are_the_approval_modes_the_operator_allows() -> None:
    state = mode_state(ApprovalMode.AUTO_EDIT, ApprovalMode.YOLO)
    assert state.current_mode_id == "auto_edit"
    assert [m.id for m in state.available_modes] == [m.value for m in ApprovalMode]
    assert approval_mode("yolo", ApprovalMode.YOLO) is ApprovalMode.YOLO
    with pytest.raises(RequestError) as unknown:
        approval_mode("enforce", ApprovalMode.YOLO)  # the guard's mode is never a session mode
    assert unknown.value.code == -32602

    # The operator's loosest mode bounds what is offered and what a switch may choose.
    bounded = mode_state(ApprovalMode.DEFAULT, ApprovalMode.AUTO_EDIT)
    assert [m.id for m in bounded.available_modes] == ["default", "auto_edit"]
    assert approval_mode("default", ApprovalMode.AUTO_EDIT) is ApprovalMode.DEFAULT
    with pytest.raises(RequestError) as looser:
        approval_mode("yolo", ApprovalMode.AUTO_EDIT)
    assert looser.value.code == -32602
    # The editor's user is told what to choose instead and what to set to allow it.
    assert str(looser.value) == (
        "approval mode 'yolo' asks before fewer calls than the operator allows (the loosest "
        "is 'auto_edit'; choose default or auto_edit); to allow it, the operator sets "
        "SEAWALL_LOOSEST_APPROVAL_MODE=yolo (or loosest_approval_mode: yolo in the config "
        "file) for seawall acp: an editor passes it in its agent server's env (docs/acp.md)"
    )


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        (b"nope\n", -32700, None),
        (b"[1]\n", -32600, None),
        (b'"text"\n', -32600, None),
        (b'{"jsonrpc": "2.0", "id": 3, "method": 1}\n', -32600, 3),
        (b'{"jsonrpc": "1.0", "id": 4, "method": "initialize"}\n', -32600, 4),
        (b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "initialize"}\n', -32600, None),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "m", "params": 3}\n', -32600, 5),
        (b'{"jsonrpc": "2.0"}\n', -32600, None),
    ],
)
def test_malformed_lines_are_answered(line: bytes, code: int, request_id: object) -> None:
    frame = check_message(line)
    assert frame is not None and frame.endswith(b"\n")
    answer = json.loads(frame)
    assert answer["error"]["code"] == code and answer["id"] == request_id


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}',
        b'{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}',
        b'{"jsonrpc": "2.0", "id": 0, "result": {}}',
    ],
)
def test_well_formed_messages_pass_to_the_sdk(line: bytes) -> None:
    assert check_message(line) is None


async def test_a_cancel_request_is_taken_from_the_stream_and_names_its_request() -> None:
    source = asyncio.StreamReader()
    lines = [
        {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}},
    ]
    for line in lines:
        source.feed_data(json.dumps(line).encode() + b"\n")
    source.feed_eof()
    tracker, named = RequestTracker(), []
    incoming = InputFilter(
        source,
        None,  # type: ignore[arg-type]  # nothing malformed: no answer is written
        tracker=tracker,
        on_cancel_request=lambda request_id: named.append(tracker.outstanding.get(request_id)),
    )
    await incoming.run()
    passed = [json.loads(line) for line in (await incoming.reader.read()).splitlines()]
    assert [m.get("method") for m in passed] == ["session/prompt"]  # the SDK never sees it
    assert named == [("session/prompt", "s")]
    # Once answered, the request is no longer outstanding.
    tracker(StreamEvent(StreamDirection.OUTGOING, {"jsonrpc": "2.0", "id": 7, "result": {}}))
    assert tracker.outstanding == {} and tracker.idle.is_set()
