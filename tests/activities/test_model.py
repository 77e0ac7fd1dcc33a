"""The scripted model provider: stateless replay of a scenario's turns (docs/scenarios.md, "Running
a scenario")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.demo_model import DemoProvider
from activities.model import (
    ModelActivities,
    ScriptedProvider,
    estimate_tokens,
    to_tool_call,
)
from tests.trust_helpers import harness_trust
from workflows.contracts import ToolCall
from workflows.contracts.activity import CallModelInput, ModelSpec
from workflows.contracts.conversation import Message, Role, system_message, user_message
from workflows.contracts.scenario import ModelScript, ScriptedCall, ScriptedTurn
from workflows.seed.guard import REPEATED_TOOL_FAILURE_REMINDER


def assistant(text: str = "") -> Message:
    return Message(role=Role.ASSISTANT, content=text)


def tool_result(call_id: str, text: str = "result") -> Message:
    return Message(role=Role.TOOL, tool_call_id=call_id, content=text)


def request(
    messages: list[Message],
    turns: list[ScriptedTurn],
    after_reminder: list[ScriptedTurn] | None = None,
    request_number: int = 1,
) -> CallModelInput:
    return CallModelInput(
        model=ModelSpec(),
        scenario_script=ModelScript(turns=turns, after_reminder=after_reminder),
        messages=messages,
        request_number=request_number,
    )


async def reply_text(req: CallModelInput) -> str:
    return (await ScriptedProvider().complete(req)).text


TURNS = [ScriptedTurn(text="one"), ScriptedTurn(text="two"), ScriptedTurn(text="three")]


async def test_replies_follow_the_script_in_order() -> None:
    convo = [user_message("go")]
    seen = []
    for _ in range(3):
        text = await reply_text(request(convo, TURNS))
        seen.append(text)
        convo = [*convo, assistant(text), tool_result("x")]
    assert seen == ["one", "two", "three"]


async def test_reply_depends_only_on_the_conversation() -> None:
    convo = [user_message("go"), assistant("one")]
    first = await ScriptedProvider().complete(request(convo, TURNS, request_number=2))
    again = await ScriptedProvider().complete(request(convo, TURNS, request_number=2))
    assert first == again
    assert first.text == "two"


async def test_exhausted_script_ends_the_turn_with_an_empty_reply() -> None:
    convo = [user_message("go"), assistant("one"), assistant("two"), assistant("three")]
    reply = await ScriptedProvider().complete(request(convo, TURNS))
    assert reply.text == ""
    assert reply.tool_calls == []


async def test_after_reminder_replies_start_after_the_first_reminder() -> None:
    after = [ScriptedTurn(text="changed approach"), ScriptedTurn(text="still changed")]
    base = [user_message("go"), assistant("one"), assistant("two")]
    assert await reply_text(request(base, TURNS, after)) == "three"

    reminded = [*base, system_message(REPEATED_TOOL_FAILURE_REMINDER)]
    assert await reply_text(request(reminded, TURNS, after)) == "changed approach"

    # A second reminder does not restart the after-reminder script.
    later = [
        *reminded,
        assistant("changed approach"),
        system_message(REPEATED_TOOL_FAILURE_REMINDER),
    ]
    assert await reply_text(request(later, TURNS, after)) == "still changed"

    exhausted = [*later, assistant("still changed")]
    assert await reply_text(request(exhausted, TURNS, after)) == ""


async def test_reminder_without_after_reminder_keeps_playing_turns() -> None:
    convo = [user_message("go"), assistant("one"), system_message(REPEATED_TOOL_FAILURE_REMINDER)]
    assert await reply_text(request(convo, TURNS)) == "two"


async def test_other_system_messages_do_not_switch_scripts() -> None:
    after = [ScriptedTurn(text="after")]
    convo = [system_message("You are helpful."), user_message("go"), assistant("one")]
    assert await reply_text(request(convo, TURNS, after)) == "two"


async def test_empty_after_reminder_ends_the_turn_after_a_reminder() -> None:
    convo = [user_message("go"), assistant("one"), system_message(REPEATED_TOOL_FAILURE_REMINDER)]
    assert await reply_text(request(convo, TURNS, [])) == ""


# --- tool calls ---------------------------------------------------------------------------


async def test_tool_call_ids_default_from_request_number_and_position() -> None:
    turn = ScriptedTurn(
        tool_calls=[
            ScriptedCall(name="read_file", arguments={"path": "a.txt"}),
            ScriptedCall(name="read_file", arguments={"path": "b.txt"}, id="given-id"),
        ]
    )
    reply = await ScriptedProvider().complete(
        request([user_message("go")], [turn], request_number=7)
    )
    assert [c.call_id for c in reply.tool_calls] == ["call_7_0", "given-id"]


def call_from(arguments: Any, name: str | None = "read_file") -> ToolCall:
    return to_tool_call(ScriptedCall(name=name, arguments=arguments), 1, 0)


def test_dict_arguments_are_kept_with_their_json_text() -> None:
    call = call_from({"path": "notes.txt", "limit": 3})
    assert call.arguments == {"path": "notes.txt", "limit": 3}
    assert call.raw_arguments is not None
    assert json.loads(call.raw_arguments) == {"path": "notes.txt", "limit": 3}


def test_string_arguments_holding_a_json_object_are_parsed() -> None:
    call = call_from('{"path": "notes.txt"}')
    assert call.arguments == {"path": "notes.txt"}
    assert call.raw_arguments == '{"path": "notes.txt"}'


@pytest.mark.parametrize("raw", ['{"path": "notes.txt"', "not json", "[1, 2]", '"a string"', "42"])
def test_broken_or_non_object_json_gives_no_arguments(raw: str) -> None:
    call = call_from(raw)
    assert call.arguments is None
    assert call.raw_arguments == raw


def test_missing_name_stays_empty() -> None:
    assert call_from({}, name=None).name == ""


async def test_usage_is_a_character_based_estimate() -> None:
    convo = [user_message("x" * 40)]
    reply = await ScriptedProvider().complete(request(convo, [ScriptedTurn(text="y" * 20)]))
    assert reply.usage.input_tokens == estimate_tokens("x" * 40) == 10
    assert reply.usage.output_tokens == 5


async def test_a_scripted_turn_reports_its_scripted_latency() -> None:
    """The prompt's clock moves by it (docs/scenarios.md, "Time"); nothing waits here."""
    turns = [ScriptedTurn(text="slow", latency_seconds=12.5), ScriptedTurn(text="quick")]
    first = await ScriptedProvider().complete(request([user_message("go")], turns))
    assert first.latency_seconds == 12.5
    second = await ScriptedProvider().complete(
        request([user_message("go"), assistant("slow")], turns, request_number=2)
    )
    assert second.latency_seconds == 0.0


# --- the activity ---------------------------------------------------------------------------


async def test_activity_plays_the_scenario_script_whatever_the_provider() -> None:
    # No provider is configured at all: the scenario channel answers on its own.
    activities = ModelActivities({}, trust=harness_trust())
    turn = ScriptedTurn(text="hi", tool_calls=[ScriptedCall(name="glob", arguments="{oops")])
    reply = await ActivityEnvironment().run(
        activities.call_model, request([user_message("go")], [turn])
    )
    assert reply.text == "hi"
    assert reply.tool_calls[0].arguments is None
    assert reply.tool_calls[0].raw_arguments == "{oops"


async def test_an_unknown_provider_fails_without_retrying() -> None:
    activities = ModelActivities({"demo": DemoProvider()})
    unscripted = CallModelInput(
        model=ModelSpec(provider="openai"), messages=[user_message("go")], request_number=1
    )
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(activities.call_model, unscripted)
    assert caught.value.non_retryable
    assert caught.value.type == "UnknownModelProvider"


async def test_the_demo_model_streams_its_reply_word_by_word() -> None:
    hello = CallModelInput(
        model=ModelSpec(provider="demo"), messages=[user_message("hello")], request_number=1
    )
    pieces: list[str] = []
    reply = await DemoProvider(word_seconds=0).complete(hello, pieces.append)
    assert len(pieces) == len(reply.text.split())
    assert "".join(pieces) == reply.text
    # Streaming changes nothing about the reply itself.
    assert await DemoProvider(word_seconds=0).complete(hello) == reply
