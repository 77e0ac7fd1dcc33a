"""The conversation a prompt carries between model requests.

One model for every message role keeps the history a flat, ordered list that providers can
translate to their wire format and that ``PromptResult`` returns as is.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from workflows.outcome import ToolCall

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
