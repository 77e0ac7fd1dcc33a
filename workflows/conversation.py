"""The conversation a prompt carries between model requests.

One model for every message role keeps the history a flat, ordered list that providers can
translate to their wire format and that ``PromptResult`` returns as is.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from workflows.outcome import ToolCall, ToolOutcome

MID_TURN_INPUT_PREFIX = "[User message received during tool execution]: "


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None


def user_message(text: str) -> Message:
    return Message(role=Role.USER, content=text)


def system_message(text: str) -> Message:
    return Message(role=Role.SYSTEM, content=text)


def mid_turn_message(text: str) -> Message:
    return Message(role=Role.USER, content=MID_TURN_INPUT_PREFIX + text)


def tool_message(outcome: ToolOutcome) -> Message:
    """A settled call's result as the model reads it."""
    return Message(role=Role.TOOL, tool_call_id=outcome.call_id, content=outcome.content)


# Every model request carries the conversation as an activity input, and the prompt's
# result returns it: Temporal fails a workflow task whose payload passes 2 MB (and retries
# it forever). Stay well below, leaving room for JSON escaping and the other fields.
MAX_CONVERSATION_CHARS = 1_000_000


def conversation_chars(messages: list[Message]) -> int:
    return sum(
        len(m.content) + sum(len(c.name) + len(c.raw_arguments or "{}") for c in m.tool_calls)
        for m in messages
    )


def recent_history(messages: list[Message], budget: int) -> list[Message]:
    """The newest whole prompts of a conversation that fit in ``budget`` characters: it is
    cut only where a user prompt starts, so no tool result loses its call."""
    kept: list[Message] = []
    size = 0
    pending: list[Message] = []
    for message in reversed(messages):
        pending.append(message)
        if message.role is Role.USER and not message.content.startswith(MID_TURN_INPUT_PREFIX):
            chunk = conversation_chars(pending)
            if size + chunk > budget:
                break
            kept = list(reversed(pending)) + kept
            size += chunk
            pending = []
    return kept
