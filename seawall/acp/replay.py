"""A session's retained conversation as the ACP updates ``session/load`` replays. Pure.

The conversation is what the session keeps (workflows/session/workflow.py): user prompts, the
model's text and tool calls, each call's result and the protections' system messages. Each becomes
what the editor showed live, with the same ids: the user's text, the agent's text (its ``messageId``
as live), a tool call (its id as live: the prompt's id, which the session keeps per message, and the
call's) settled with the status, reason and output live updates carry, a stop message as agent text
and a reminder as a thought.
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
    message_id,
    settled_content,
    settled_status,
    tool_kind,
    tool_locations,
    tool_title,
)
from workflows.contracts import ToolCall
from workflows.contracts.conversation import MID_TURN_INPUT_PREFIX, Message, Role

ReplayUpdate = SessionUpdate | UserMessageChunk


class TranscriptReplay:
    """Maps the conversation page by page (the session answers it in pages). Ids are scoped
    to the prompt each message belongs to, as live ids are; a message whose prompt the
    session does not know (kept before it recorded them) gets a scope of the replay's own."""

    def __init__(self, session_id: str, workspace: Path) -> None:
        self._session_id = session_id
        self._workspace = workspace
        self._prompts = 0
        self._scope = f"{session_id}-replay-0"
        self._prompt_id: str | None = None
        # Model replies so far in this prompt: the batch number live events carry.
        self._replies = 0
        # User messages so far in this prompt (its text, then any mid-turn input).
        self._users = 0
        self._open: dict[str, tuple[str, ToolCall]] = {}

    def updates(
        self,
        messages: Sequence[Message],
        statuses: Sequence[str | None],
        prompt_ids: Sequence[str | None] | None = None,
    ) -> list[ReplayUpdate]:
        prompts = list(prompt_ids) if prompt_ids else [None] * len(messages)
        if len(prompts) != len(messages):
            prompts = [None] * len(messages)
        found: list[ReplayUpdate] = []
        for message, status, prompt_id in zip(messages, statuses, prompts, strict=True):
            found.extend(self._message(message, status, prompt_id))
        return found

    def _enter(self, message: Message, prompt_id: str | None) -> None:
        """Start a new prompt's scope where the conversation's next prompt begins."""
        if prompt_id is not None:
            if prompt_id == self._prompt_id:
                return
        elif message.role is not Role.USER or message.content.startswith(MID_TURN_INPUT_PREFIX):
            return
        self._prompts += 1
        self._prompt_id = prompt_id
        self._scope = prompt_id or f"{self._session_id}-replay-{self._prompts}"
        self._replies = 0
        self._users = 0
        self._open = {}

    def _message(
        self, message: Message, status: str | None, prompt_id: str | None
    ) -> list[ReplayUpdate]:
        self._enter(message, prompt_id)
        scope = self._scope
        if message.role is Role.USER:
            text = TextContentBlock(type="text", text=message.content)
            self._users += 1
            user = message_id(scope, "user", self._users - 1)
            return [
                UserMessageChunk(session_update="user_message_chunk", content=text, message_id=user)
            ]
        if message.role is Role.SYSTEM:
            if is_stop_message(message.content):
                stop = message_id(scope, "stop", self._replies)
                return [agent_text(message.content, kind="stop", message=stop)]
            thought = message_id(scope, "thought", self._replies)
            return [agent_thought(message.content, kind="reminder", message=thought)]
        if message.role is Role.TOOL:
            opened = self._open.pop(message.tool_call_id or "", None)
            if opened is None:
                return []
            tool_call_id, call = opened
            return [
                ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=tool_call_id,
                    status=settled_status(status) if status else "completed",
                    content=settled_content(
                        status, message.content, diff=edit_diff(call, self._workspace)
                    )
                    if status
                    else None,
                )
            ]
        found: list[ReplayUpdate] = []
        if message.content:
            reply = message_id(scope, "message", self._replies)
            found.append(agent_text(message.content, message=reply))
        self._replies += 1
        for call in message.tool_calls:
            tool_call_id = acp_tool_call_id(scope, call.call_id)
            self._open[call.call_id] = (tool_call_id, call)
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
