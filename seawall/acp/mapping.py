"""What an editor is shown of a prompt: agent events to ACP session updates, and the
prompt's end to the turn's answer. Pure, so every rule here is unit-tested without Temporal.

docs/acp.md has the table. In short: a call that starts is a ``tool_call`` (its ACP kind,
a title naming its file or command, its location, the diff of an edit); a call that settles
is a ``tool_call_update`` ``completed`` or ``failed`` with the reason (ACP has no cancelled
status); model text is ``agent_message_chunk`` (the streamed deltas, then whatever of the
whole message they did not show, which is all of it when nothing streamed); a reminder is
shown once as ``agent_thought_chunk``; a loop stop ends the turn ``end_turn`` with the stop
message as agent text and ``_meta.seawall``.

ACP tool call ids are the prompt's id and the call's id together: a model's call ids are
unique within one prompt only (the demo model numbers them per prompt). A call's status only
moves forward (``pending`` while it waits for approval, ``in_progress``, then ``completed``
or ``failed``), and its settled update carries the start of its output. Each agent message
and thought has a ``messageId`` made of the prompt's id, its kind and its batch, so its
chunks join and separate messages do not; ``session/load`` replays the same ids
(seawall/acp/replay.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    PromptResponse,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
)
from acp.schema import (
    StopReason as AcpStopReason,
)

from workflows.contracts import TerminalStatus, ToolCall
from workflows.contracts.prompt import (
    AWAITING_APPROVAL_STATUS,
    TOOL_RESULT_CHARS,
    AgentEvent,
    EventKind,
    StopReason,
    ToolResult,
)
from workflows.contracts.synthetic_outcomes import PERMISSION_DENIED_CONTENT
from workflows.rules import RULES
from workflows.rules.judge import JUDGE_STOP_MESSAGE
from workflows.seed.guard import REPEATED_TOOL_FAILURE_STOP_MESSAGE
from workflows.seed.protections import (
    DUPLICATE_STOP_MESSAGE,
    INVALID_PARAMS_STOP_MESSAGE,
    TOOL_CALL_CAP_STOP_MESSAGE,
)

# The streamed text delta of a model reply (``EventKind.MESSAGE_DELTA`` where streaming has
# landed); with status ``retry`` its text restarts the reply (a retried model request said
# something else).
MESSAGE_DELTA = "message_delta"
DELTA_RETRY_STATUS = "retry"
RETRIED_NOTE = "\n\n[model request retried]\n\n"

SessionUpdate = AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress

STOP_MESSAGES = frozenset(
    {
        REPEATED_TOOL_FAILURE_STOP_MESSAGE,
        DUPLICATE_STOP_MESSAGE,
        INVALID_PARAMS_STOP_MESSAGE,
        TOOL_CALL_CAP_STOP_MESSAGE,  # a template: "{cap}" is filled in
        *(spec.stop_message for spec in RULES),
        JUDGE_STOP_MESSAGE,
    }
)
# Every protection's stop message opens this way (tests/acp pins it against STOP_MESSAGES);
# a reminder never does. The tool-call cap's message has its cap filled in, so a stop is
# told by its opening rather than by an exact match.
STOP_MESSAGE_PREFIX = "System: Automatic continuation stopped because "


def is_stop_message(text: str) -> bool:
    return text.startswith(STOP_MESSAGE_PREFIX)


TOOL_KINDS: Mapping[str, ToolKind] = {
    "read_file": "read",
    "list_directory": "search",
    "glob": "search",
    "grep_search": "search",
    "write_file": "edit",
    "edit_file": "edit",
    "run_shell_command": "execute",
}

# Why a call that settled as failed ended so, by its settled status (and, for a call that
# never got its approval, its result): one rule for live updates and for the replay.
FAILED_REASON = "Failed: the tool reported an error"
CANCELLED_REASON = "Cancelled"
REJECTED_REASON = "Rejected: not approved (declined, or no answer in time)"
TITLE_CHARS = 120
TRUNCATED_NOTE = "\n… (output truncated)"
# The forward order of ACP tool call statuses: an update never moves a call back.
STATUS_ORDER: Mapping[ToolCallStatus, int] = {
    "pending": 0,
    "in_progress": 1,
    "completed": 2,
    "failed": 2,
}


def tool_kind(tool_name: str) -> ToolKind:
    return TOOL_KINDS.get(tool_name, "other")


def acp_tool_call_id(prompt_id: str, call_id: str) -> str:
    return f"{prompt_id}/{call_id}"


def message_id(prompt_id: str, kind: str, batch: int) -> str:
    """An agent message's or thought's ACP ``messageId``: the model's reply that opened
    batch ``batch + 1`` is ``message``, a stop or a reminder after batch ``batch`` is
    ``stop``/``thought``, a turn's closing explanation is ``note``."""
    return f"{prompt_id}/{kind}-{batch}"


def failure_reason(status: str | None, content: str | None) -> str | None:
    """Why a call did not complete (None when it did), from its settled status and result."""
    if status == TerminalStatus.SUCCESS.value:
        return None
    if status == TerminalStatus.CANCELLED.value:
        return REJECTED_REASON if content == PERMISSION_DENIED_CONTENT else CANCELLED_REASON
    return FAILED_REASON


def settled_content(
    status: str | None,
    output: str | None,
    *,
    truncated: bool = False,
    diff: list[FileEditToolCallContent] | None = None,
) -> list[ContentToolCallContent | FileEditToolCallContent] | None:
    """A settled call's content: why it failed, an edit's diff (an update replaces the
    card's content, so it is kept), and the start of the tool's output, which only the
    editor is sent (never logs or telemetry). A cancelled call's output is the reason."""
    content: list[ContentToolCallContent | FileEditToolCallContent] = []
    reason = failure_reason(status, output)
    if reason:
        content.extend(_note(reason))
    content.extend(diff or [])
    text = (output or "")[:TOOL_RESULT_CHARS]
    truncated = truncated or len(output or "") > TOOL_RESULT_CHARS
    if text and status != TerminalStatus.CANCELLED.value:
        content.extend(_note(text + (TRUNCATED_NOTE if truncated else "")))
    return content or None


def _short(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def _argument(call: ToolCall | None, name: str) -> str | None:
    value = (call.arguments or {}).get(name) if call is not None else None
    return value if isinstance(value, str) else None


def tool_title(tool_name: str, call: ToolCall | None) -> str:
    """What the editor names the call: the tool and its file, pattern or command."""
    path = _argument(call, "path")
    titles = {
        "read_file": ("Read", path),
        "write_file": ("Write", path),
        "edit_file": ("Edit", path),
        "list_directory": ("List", path or "."),
        "glob": ("Find", _argument(call, "pattern")),
        "grep_search": ("Search for", _argument(call, "pattern")),
        "run_shell_command": ("Run", _argument(call, "command")),
    }
    if tool_name in titles:
        verb, subject = titles[tool_name]
        return f"{verb} {_short(subject)}" if subject else tool_name
    if tool_name.startswith("mcp__"):
        server, _, tool = tool_name[len("mcp__") :].partition("__")
        return f"{tool or server} (MCP: {server})"
    return tool_name


def _absolute(workspace: Path, relative: str) -> str:
    return str((workspace / relative).absolute())


def tool_locations(call: ToolCall | None, workspace: Path) -> list[ToolCallLocation] | None:
    """The file or directory the call works on, absolute (ACP paths must be)."""
    path = _argument(call, "path")
    if call is None or (path is None and call.name not in ("list_directory", "glob")):
        return None
    return [ToolCallLocation(path=_absolute(workspace, path or "."))]


def edit_diff(call: ToolCall | None, workspace: Path) -> list[FileEditToolCallContent] | None:
    """The diff of a file edit, from the call's own arguments: ``edit_file``'s replaced and
    replacing text, ``write_file``'s new content (its old content is not known)."""
    path = _argument(call, "path")
    if call is None or path is None:
        return None
    target = _absolute(workspace, path)
    if call.name == "edit_file":
        new = _argument(call, "new_string")
        if new is None:
            return None
        old = _argument(call, "old_string")
        return [
            FileEditToolCallContent(type="diff", path=target, old_text=old or None, new_text=new)
        ]
    if call.name == "write_file":
        content = _argument(call, "content")
        if content is None:
            return None
        return [FileEditToolCallContent(type="diff", path=target, old_text=None, new_text=content)]
    return None


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def _note(text: str) -> list[ContentToolCallContent]:
    return [ContentToolCallContent(type="content", content=_text(text))]


def note(text: str | None) -> list[ContentToolCallContent] | None:
    """``text`` as a tool call's content, or ``None`` when there is none."""
    return _note(text) if text else None


def agent_text(
    text: str, *, kind: str | None = None, message: str | None = None
) -> AgentMessageChunk:
    meta = {"seawall": {"kind": kind}} if kind else None
    return AgentMessageChunk(
        session_update="agent_message_chunk",
        content=_text(text),
        message_id=message,
        field_meta=meta,
    )


def agent_thought(
    text: str, *, kind: str | None = None, message: str | None = None
) -> AgentThoughtChunk:
    meta = {"seawall": {"kind": kind}} if kind else None
    return AgentThoughtChunk(
        session_update="agent_thought_chunk",
        content=_text(text),
        message_id=message,
        field_meta=meta,
    )


def settled_status(status: str | None) -> ToolCallStatus:
    return "completed" if status == TerminalStatus.SUCCESS.value else "failed"


class TurnMapper:
    """Maps one prompt's events, in ``seq`` order, to the updates an editor is sent.

    ``details`` holds the calls (their arguments) the bridge looked up for started calls,
    ``results`` the settled calls' results it looked up; ``rejected`` the call ids whose
    permission request the editor's user declined (the reason when no result is known).
    """

    def __init__(self, prompt_id: str, workspace: Path) -> None:
        self.prompt_id = prompt_id
        self.workspace = workspace
        self.details: dict[str, ToolCall] = {}
        self.results: dict[str, ToolResult] = {}
        self.rejected: set[str] = set()
        self.stop_reason: StopReason | None = None
        self.loop_type: str | None = None
        # Each announced call's status as the editor was last told it.
        self._status: dict[str, ToolCallStatus] = {}
        self._streamed = ""
        self._reminders: set[str] = set()

    def tool_call_id(self, call_id: str) -> str:
        return acp_tool_call_id(self.prompt_id, call_id)

    def message_id(self, kind: str, batch: int) -> str:
        return message_id(self.prompt_id, kind, batch)

    def status(self, call_id: str) -> ToolCallStatus | None:
        return self._status.get(call_id)

    def _advance(self, call_id: str, status: ToolCallStatus) -> bool:
        """Record ``status`` if it moves the call forward; False when it would not."""
        known = self._status.get(call_id)
        if known is not None and STATUS_ORDER[status] <= STATUS_ORDER[known]:
            return False
        self._status[call_id] = status
        return True

    def start(self, event: AgentEvent, status: ToolCallStatus | None = None) -> ToolCallStart:
        call_id = event.call_id or ""
        tool_name = event.tool_name or ""
        call = self.details.get(call_id)
        if status is None:
            status = "pending" if event.status == AWAITING_APPROVAL_STATUS else "in_progress"
        self._status[call_id] = status
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=self.tool_call_id(call_id),
            title=tool_title(tool_name, call),
            kind=tool_kind(tool_name),
            status=status,
            locations=tool_locations(call, self.workspace),
            content=edit_diff(call, self.workspace),
            raw_input=call.arguments if call is not None else None,
        )

    def approved(self, call_id: str) -> ToolCallProgress | None:
        """The call runs now that the user approved it (None if it is past waiting)."""
        if not self._advance(call_id, "in_progress"):
            return None
        return ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=self.tool_call_id(call_id),
            status="in_progress",
        )

    def on_event(self, event: AgentEvent) -> list[SessionUpdate]:
        """The updates for one event (none for the events that only end the turn)."""
        kind = event.kind
        if kind is EventKind.TOOL_CALL_STARTED:
            return [self.start(event)]
        if kind is EventKind.PERMISSION_REQUEST:
            # Announced ``pending`` already (a worker before that status: left as it is,
            # since a status never moves back); the dialog is the request itself.
            return []
        if kind is EventKind.TOOL_CALL_SETTLED:
            return self._settled(event)
        if kind == MESSAGE_DELTA:
            return self._delta(event)
        if kind is EventKind.AGENT_MESSAGE:
            return self._message(event)
        if kind is EventKind.REMINDER:
            text = event.text or ""
            if not text or text in self._reminders:
                return []
            self._reminders.add(text)
            return [
                agent_thought(
                    text, kind="reminder", message=self.message_id("thought", event.batch)
                )
            ]
        if kind is EventKind.STOP:
            self.loop_type = event.status
        elif kind is EventKind.PROMPT_FINISHED and event.status is not None:
            self.stop_reason = StopReason(event.status)
        return []

    def settled_content(
        self, event: AgentEvent
    ) -> list[ContentToolCallContent | FileEditToolCallContent] | None:
        call_id = event.call_id or ""
        diff = edit_diff(self.details.get(call_id), self.workspace)
        result = self.results.get(call_id)
        if result is not None:
            return settled_content(
                result.status, result.content, truncated=result.truncated, diff=diff
            )
        # No result known (a worker without the query): the reason from what this bridge saw.
        rejected = event.status == TerminalStatus.CANCELLED.value and call_id in self.rejected
        return settled_content(
            event.status, PERMISSION_DENIED_CONTENT if rejected else None, diff=diff
        )

    def _settled(self, event: AgentEvent) -> list[SessionUpdate]:
        call_id = event.call_id or ""
        status = settled_status(event.status)
        content = self.settled_content(event)
        if call_id not in self._status:
            # Answered by a protection without running (a refused repeat, a duplicate id).
            start = self.start(event, status)
            return [start.model_copy(update={"content": content})]
        if not self._advance(call_id, status):
            return []  # settled once already
        return [
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=self.tool_call_id(call_id),
                status=status,
                content=content,
            )
        ]

    def _delta(self, event: AgentEvent) -> list[SessionUpdate]:
        text = event.text or ""
        if not text:
            return []
        message = self.message_id("message", event.batch)
        if event.status == DELTA_RETRY_STATUS:
            # What was shown cannot be taken back: say the reply starts over, then show it.
            self._streamed = text
            return [agent_text(RETRIED_NOTE + text, kind="retry", message=message)]
        self._streamed += text
        return [agent_text(text, message=message)]

    def _message(self, event: AgentEvent) -> list[SessionUpdate]:
        """A whole message: only what the deltas streamed before it have not shown. A
        reply's deltas always come right before its whole message, so the match is by
        order and text, whatever numbering the events carry."""
        text = event.text or ""
        streamed, self._streamed = self._streamed, ""
        if streamed and text.startswith(streamed):
            text = text[len(streamed) :]
        if not text:
            return []
        if is_stop_message(text):
            return [agent_text(text, kind="stop", message=self.message_id("stop", event.batch))]
        return [agent_text(text, message=self.message_id("message", event.batch))]


def explanation(
    stop_reason: StopReason, *, error: str | None, max_model_requests: int
) -> str | None:
    """Agent text for an ending that brings no message of its own."""
    if stop_reason is StopReason.ERROR:
        reason = error or "the prompt failed"
        return f"Seawall stopped this turn: {reason}. The session is still usable."
    if stop_reason is StopReason.MAX_TURN_REQUESTS:
        return (
            f"Seawall stopped this turn after {max_model_requests} model requests, the most one "
            "turn may make. The session is still usable; send a message to continue."
        )
    return None


def turn_response(
    stop_reason: StopReason | None,
    *,
    prompt_id: str,
    loop_type: str | None,
    cancel_requested: bool,
    error: str | None = None,
) -> PromptResponse:
    """The answer to ``session/prompt``: a cancel the editor asked for wins any race; a loop
    stop or an error ends the turn ``end_turn`` with the reason in ``_meta.seawall`` (the
    session stays usable, and ACP v1 has no stop reason for either)."""
    seawall: dict[str, Any] = {"promptId": prompt_id}
    if stop_reason is not None:
        seawall["stopReason"] = stop_reason.value
    if loop_type:
        seawall["loopType"] = loop_type
    if error:
        seawall["error"] = error
    answer: AcpStopReason
    if cancel_requested or stop_reason is StopReason.CANCELLED:
        answer = "cancelled"
    elif stop_reason is StopReason.MAX_TURN_REQUESTS:
        answer = "max_turn_requests"
    else:
        answer = "end_turn"
    return PromptResponse(stop_reason=answer, field_meta={"seawall": seawall})
