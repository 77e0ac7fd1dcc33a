"""The conversation's size policies: the context policy every new prompt and session uses, and
the whole-prompt cut sessions made before it (kept for replay)."""

from __future__ import annotations

from temporalio.exceptions import ActivityError, ApplicationError

from workflows.contracts import ToolCall
from workflows.contracts.conversation import (
    ELIDED_TOOL_OUTPUT,
    MID_TURN_INPUT_PREFIX,
    Message,
    Role,
    conversation_chars,
    elided_outputs,
    fit_context,
    recent_history,
)
from workflows.prompt.model_failures import failure_text


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


# --- the context policy (workflows/contracts/conversation.py) ---------------------


def test_a_conversation_within_the_budget_is_sent_as_it_is() -> None:
    messages = prompt(1, 1000)

    assert fit_context(messages, conversation_chars(messages)) is messages


def test_the_oldest_tool_outputs_are_elided_first_with_a_marker_naming_their_size() -> None:
    messages = prompt(1, 5000) + prompt(2, 5000) + prompt(3, 5000)
    budget = conversation_chars(messages) - 4000

    view = fit_context(messages, budget)

    assert conversation_chars(view) <= budget
    assert len(view) == len(messages)  # every call keeps its result message
    assert view[2].content == ELIDED_TOOL_OUTPUT.format(chars=5000)
    assert view[2].tool_call_id == "c1"
    assert view[3:] == messages[3:]  # the newer tool outputs are untouched
    assert elided_outputs(view) == 1
    assert messages[2].content == "x" * 5000  # the durable conversation is not changed


def test_it_is_deterministic_and_stable_once_elided() -> None:
    messages = prompt(1, 5000) + prompt(2, 5000) + prompt(3, 5000)
    budget = conversation_chars(messages) // 2

    view = fit_context(messages, budget)

    assert fit_context(messages, budget) == view
    assert fit_context(view, budget) == view


def test_past_every_tool_output_the_oldest_whole_prompts_are_left_out() -> None:
    chatty = [Message(role=Role.USER, content=f"p{n}" + "y" * 3000) for n in range(4)]

    view = fit_context(chatty, 7000)

    assert view == chatty[2:]
    assert fit_context(chatty, 10) == chatty[3:]  # never the newest prompt


def test_a_mid_turn_input_is_never_where_the_policy_cuts() -> None:
    messages = [
        Message(role=Role.USER, content="first" + "y" * 3000),
        Message(role=Role.USER, content=MID_TURN_INPUT_PREFIX + "z" * 3000),
        Message(role=Role.USER, content="second"),
    ]

    assert fit_context(messages, 4000) == messages[2:]


def test_a_failed_model_request_names_every_cause_outermost_first() -> None:
    # What a prompt's result says when a model request could not read its stored input
    # (docs/durability.md, "When a payload cannot be read or stored").
    missing = ApplicationError("stored payload d is missing from the payload store")
    decoding = ApplicationError("Failed decoding arguments")
    decoding.__cause__ = missing
    err = ActivityError(
        "Activity task failed",
        scheduled_event_id=5,
        started_event_id=6,
        identity="w",
        activity_type="seawall.call_model",
        activity_id="1",
        retry_state=None,
    )
    err.__cause__ = decoding

    assert failure_text(err) == (
        "Failed decoding arguments: stored payload d is missing from the payload store"
    )
