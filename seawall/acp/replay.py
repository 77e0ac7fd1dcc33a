"""A session's retained conversation as the ACP updates ``session/load`` replays. Pure.

The conversation is what the session keeps (docs/architecture.md, "Sessions and the
gateway"): user prompts, the model's text and tool calls, each call's result and the
protections' system messages. Each becomes what the editor showed live: the user's text, the
agent's text, a tool call with the status it settled with, a stop message as agent text and a
reminder as a thought. Tool results are not shown live, so they are not replayed either.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from acp.schema import TextContentBlock, ToolCallProgress, ToolCallStart, UserMessageChunk

from seawall.acp.mapping import (
    SessionUpdate,
    acp_tool_call_id,
    agent_text,
    agent_thought,
    edit_diff,
    is_stop_message,
    settled_status,
    tool_kind,
    tool_locations,
    tool_title,
)
from workflows.contracts.conversation import MID_TURN_INPUT_PREFIX, Message, Role

ReplayUpdate = SessionUpdate | UserMessageChunk


class TranscriptReplay:
    """Maps the conversation page by page (the session answers it in pages); a tool call's
    id is scoped to the user prompt it belongs to, as live ids are to their prompt."""

    def __init__(self, session_id: str, workspace: Path) -> None:
        self._session_id = session_id
        self._workspace = workspace
        self._prompt = 0
        self._open: dict[str, str] = {}

    def _scope(self) -> str:
        return f"{self._session_id}-replay-{self._prompt}"

    def updates(
        self, messages: Sequence[Message], statuses: Sequence[str | None]
    ) -> list[ReplayUpdate]:
        found: list[ReplayUpdate] = []
        for message, status in zip(messages, statuses, strict=True):
            found.extend(self._message(message, status))
        return found

    def _message(self, message: Message, status: str | None) -> list[ReplayUpdate]:
        if message.role is Role.USER:
            if not message.content.startswith(MID_TURN_INPUT_PREFIX):
                self._prompt += 1
                self._open = {}
            text = TextContentBlock(type="text", text=message.content)
            return [UserMessageChunk(session_update="user_message_chunk", content=text)]
        if message.role is Role.SYSTEM:
            if is_stop_message(message.content):
                return [agent_text(message.content, kind="stop")]
            return [agent_thought(message.content, kind="reminder")]
        if message.role is Role.TOOL:
            tool_call_id = self._open.pop(message.tool_call_id or "", None)
            if tool_call_id is None:
                return []
            return [
                ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=tool_call_id,
                    status=settled_status(status) if status else "completed",
                )
            ]
        found: list[ReplayUpdate] = []
        if message.content:
            found.append(agent_text(message.content))
        for call in message.tool_calls:
            tool_call_id = acp_tool_call_id(self._scope(), call.call_id)
            self._open[call.call_id] = tool_call_id
            found.append(
                ToolCallStart(
                    session_update="tool_call",
                    tool_call_id=tool_call_id,
                    title=tool_title(call.name, call),
                    kind=tool_kind(call.name),
                    status="in_progress",
                    locations=tool_locations(call, self._workspace),
                    content=edit_diff(call, self._workspace),
                    raw_input=call.arguments,
                )
            )
        return found
