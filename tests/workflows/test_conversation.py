"""Conversation size bounds: what keeps prompts and sessions under Temporal's payload limit."""

from __future__ import annotations

from workflows.conversation import (
    MID_TURN_INPUT_PREFIX,
    Message,
    Role,
    conversation_chars,
    recent_history,
)
from workflows.outcome import ToolCall


def prompt(n: int, size: int) -> list[Message]:
    return [
        Message(role=Role.USER, content=f"prompt {n}"),
        Message(
            role=Role.ASSISTANT,
            tool_calls=[ToolCall(call_id=f"c{n}", name="read_file", raw_arguments="{}")],
        ),
        Message(role=Role.TOOL, tool_call_id=f"c{n}", content="x" * size),
        Message(role=Role.USER, content=MID_TURN_INPUT_PREFIX + "more"),
        Message(role=Role.ASSISTANT, content="done"),
    ]


def test_recent_history_keeps_the_newest_whole_prompts_within_the_budget() -> None:
    messages = prompt(1, 1000) + prompt(2, 1000) + prompt(3, 1000)
    one_prompt = conversation_chars(prompt(3, 1000))

    kept = recent_history(messages, budget=2 * one_prompt + 5)

    assert kept == prompt(2, 1000) + prompt(3, 1000)
    assert recent_history(messages, budget=10**9) == messages
    assert recent_history(messages, budget=10) == []


def test_a_mid_turn_input_is_never_a_cut_point() -> None:
    messages = prompt(1, 10)
    kept = recent_history(messages, budget=conversation_chars(messages))

    assert kept == messages
    assert kept[0].content == "prompt 1"
