"""The prompt's kept context view (workflows/prompt/context_window.py) is fit_context's view,
request by request, of a conversation that grows between requests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workflows.contracts import ToolCall
from workflows.contracts.conversation import (
    ELIDED_TOOL_OUTPUT,
    MID_TURN_INPUT_PREFIX,
    Message,
    Role,
    conversation_chars,
    elided_outputs,
    fit_context,
)
from workflows.prompt.context_window import ContextWindow

# One step of a conversation: a new user prompt, mid-turn input, a batch of tool calls with
# outputs of these sizes (a marker-sized output among them: eliding it saves nothing), an
# output already elided in the history a session handed over, or the model's text.
step = st.one_of(
    st.tuples(st.just("prompt"), st.integers(1, 400)),
    st.tuples(st.just("input"), st.integers(1, 50)),
    st.tuples(st.just("tools"), st.lists(st.integers(0, 3000), min_size=1, max_size=4)),
    st.tuples(st.just("elided"), st.integers(1, 5000)),
    st.tuples(st.just("text"), st.integers(0, 200)),
)


def messages_of(kind: str, size: int | list[int], n: int) -> list[Message]:
    if kind == "prompt":
        return [Message(role=Role.USER, content=f"prompt {n} " + "p" * int(size))]  # type: ignore[arg-type]
    if kind == "input":
        return [Message(role=Role.USER, content=MID_TURN_INPUT_PREFIX + "i" * int(size))]  # type: ignore[arg-type]
    if kind == "elided":
        marker = ELIDED_TOOL_OUTPUT.format(chars=size)
        return [Message(role=Role.TOOL, tool_call_id=f"e{n}", content=marker)]
    if kind == "text":
        return [Message(role=Role.ASSISTANT, content="t" * int(size))]  # type: ignore[arg-type]
    assert isinstance(size, list)
    calls = [ToolCall(call_id=f"c{n}-{i}", name="read_file", raw_arguments="{}") for i in size]
    outputs = [
        Message(role=Role.TOOL, tool_call_id=call.call_id, content="o" * chars)
        for call, chars in zip(calls, size, strict=True)
    ]
    return [Message(role=Role.ASSISTANT, tool_calls=calls), *outputs]


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(step, min_size=1, max_size=40),
    budget=st.integers(10, 12_000),
    first_prompt=st.integers(1, 300),
)
def test_every_request_sees_what_fit_context_makes_of_the_whole_conversation(
    steps: list[tuple[str, object]], budget: int, first_prompt: int
) -> None:
    conversation = messages_of("prompt", first_prompt, 0)
    window = ContextWindow(budget)
    for n, (kind, size) in enumerate(steps, start=1):
        conversation.extend(messages_of(kind, size, n))  # type: ignore[arg-type]
        expected = fit_context(conversation, budget)
        got = window.fit(conversation)
        assert got.messages == expected
        # The same list when nothing needed fitting, as fit_context; the telemetry's figures.
        assert (got.messages is conversation) == (expected is conversation)
        assert got.fitted == (expected is not conversation)
        if got.fitted:
            assert got.sent_chars == conversation_chars(expected)
            assert got.elided_outputs == elided_outputs(expected) - elided_outputs(conversation)


def test_a_view_is_a_copy_the_next_request_does_not_change() -> None:
    conversation = messages_of("prompt", 10, 0) + messages_of("tools", [5000], 1)
    window = ContextWindow(1000)
    first = window.fit(conversation).messages
    before = list(first)
    conversation.extend(messages_of("tools", [5000], 2))
    window.fit(conversation)
    assert first == before


def test_a_conversation_that_shrank_is_refused() -> None:
    conversation = messages_of("prompt", 10, 0) + messages_of("text", 10, 1)
    window = ContextWindow(1000)
    window.fit(conversation)
    with pytest.raises(ValueError, match="only grows"):
        window.fit(conversation[:1])
