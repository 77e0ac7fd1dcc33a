"""A model request carried by reference is made whole again on the activity's side: from the
worker's cache, else from the prompt's earlier requests; a link that is lost or altered fails
with a classified, non-retryable error naming the prompt (activities/conversation_refs.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.converter import ExternalStorage
from temporalio.exceptions import ApplicationError

from activities.conversation_refs import ConversationResolver, PromptRun
from activities.prompt_preamble import Preamble, PromptPreambles
from activities.recorded_results import RecordedResults
from seawall.runtime.converter import seawall_data_converter
from seawall.runtime.storage import FilesystemStorageDriver
from workflows.contracts.activity import CallModelInput, ModelReply, ModelSpec, ToolSpec
from workflows.contracts.conversation import Message, Role, user_message
from workflows.contracts.conversation_ref import (
    CONVERSATION_UNRESOLVED,
    KeptMessages,
    KeptReply,
    KeptResult,
)
from workflows.contracts.outcome import ToolCall, ToolOutcome
from workflows.contracts.prompt import PromptInput
from workflows.prompt.context_window import ContextWindow
from workflows.prompt.conversation_chain import ConversationChain
from workflows.prompt.patches import StartPatches

pytestmark = pytest.mark.asyncio

PROMPT = PromptRun("s1-prompt-1", "run-1")
TOOLS = [ToolSpec(name="read_file", description="read a file " * 40, parameters={"type": "object"})]


def conversation(batches: int, output_chars: int = 3_000) -> list[list[Message]]:
    """The conversation before each model request of a prompt of ``batches`` batches."""
    messages = [user_message("fix the build")]
    views = [list(messages)]
    for batch in range(batches):
        calls = [
            ToolCall(call_id=f"c{batch}-{i}", name="read_file", arguments={"i": i})
            for i in range(3)
        ]
        messages.append(Message(role=Role.ASSISTANT, content=f"batch {batch}", tool_calls=calls))
        for call in calls:
            messages.append(
                Message(
                    role=Role.TOOL,
                    tool_call_id=call.call_id,
                    content=f"{call.call_id}:" + "x" * output_chars,
                )
            )
        views.append(list(messages))
    return views


def whole_requests(batches: int, budget: int = 10**9) -> list[CallModelInput]:
    """The whole requests a prompt sends, each view fitted by the context policy."""
    window = ContextWindow(budget)
    return [
        CallModelInput(
            model=ModelSpec(), messages=window.fit(view).messages, tools=TOOLS, request_number=n + 1
        )
        for n, view in enumerate(conversation(batches))
    ]


def chained(requests: list[CallModelInput]) -> list[CallModelInput]:
    chain = ConversationChain(PromptInput(prompt="go", workspace_root="/tmp"))
    return [chain.carry(r, StartPatches(conversation_refs=True)) for r in requests]


def history_of(requests: list[CallModelInput]):  # type: ignore[no-untyped-def]
    async def history(prompt: PromptRun) -> AsyncIterator[CallModelInput]:
        assert prompt == PROMPT
        for request in requests:
            yield request

    return history


@pytest.mark.parametrize("budget", [10**9, 20_000])
async def test_every_request_resolves_to_the_whole_request_it_stands_for(budget: int) -> None:
    whole = whole_requests(8, budget)
    links = chained(whole)
    resolver = ConversationResolver(history_of(links))
    for sent, expected in zip(links, whole, strict=True):
        resolved = await resolver.resolve(sent, PROMPT)
        assert resolved.messages == expected.messages
        assert resolved.tools == expected.tools
        assert resolved.conversation is None
    assert resolver.history_reads == 0  # one worker, one request after another: the cache


async def test_each_message_is_carried_once_even_when_the_budget_elides_outputs() -> None:
    links = chained(whole_requests(8, budget=20_000))
    assert links[0].conversation is not None and links[0].conversation.previous is None
    carried = [p for link in links for p in link.conversation.parts if isinstance(p, Message)]  # type: ignore[union-attr]
    originals = [m for m in carried if not m.content.startswith("[tool output elided")]
    assert len(originals) == len({(m.role, m.content, m.tool_call_id) for m in originals})
    assert len(originals) == len(conversation(8)[-1])
    # The tools went once; later requests keep them and carry no message of their own.
    assert [bool(link.tools) for link in links] == [True] + [False] * 8
    assert all(not link.messages for link in links)
    # An elided output is replaced in place: ranges around it, nothing after it resent.
    elided_at = next(
        i
        for i, link in enumerate(links)
        if any(
            isinstance(p, Message) and p.content.startswith("[tool output elided")
            for p in link.conversation.parts
        )
    )  # type: ignore[union-attr]
    assert sum(isinstance(p, KeptMessages) for p in links[elided_at].conversation.parts) >= 2  # type: ignore[union-attr]


async def test_a_worker_that_never_saw_the_prompt_resolves_from_its_history() -> None:
    whole = whole_requests(5)
    links = chained(whole)
    resolver = ConversationResolver(history_of(links), max_prompts=0)
    resolved = await resolver.resolve(links[-1], PROMPT)
    assert resolved.messages == whole[-1].messages
    assert resolver.history_reads == 1


async def unresolved(resolver: ConversationResolver, request: CallModelInput) -> ApplicationError:
    with pytest.raises(ApplicationError) as raised:
        await resolver.resolve(request, PROMPT)
    err = raised.value
    assert err.type == CONVERSATION_UNRESOLVED
    assert err.non_retryable
    assert "s1-prompt-1" in str(err) and f"model request {request.request_number}" in str(err)
    return err


async def test_an_altered_earlier_request_fails_naming_the_prompt() -> None:
    links = chained(whole_requests(4))
    ref = links[2].conversation
    assert ref is not None
    parts = [
        p.model_copy(update={"content": p.content + "!"}) if isinstance(p, Message) else p
        for p in ref.parts
    ]
    altered = links[2].model_copy(update={"conversation": ref.model_copy(update={"parts": parts})})
    resolver = ConversationResolver(history_of([*links[:2], altered, *links[3:]]), max_prompts=0)
    err = await unresolved(resolver, links[3])
    assert "does not match its digest" in str(err)


async def test_a_request_whose_previous_is_not_in_the_history_fails() -> None:
    links = chained(whole_requests(4))
    resolver = ConversationResolver(history_of(links[:1]), max_prompts=0)
    err = await unresolved(resolver, links[3])
    assert "not in the prompt's history" in str(err)


async def test_a_lost_stored_link_fails_as_unresolved_not_a_crash(tmp_path: Path) -> None:
    """The earlier requests stored through the real payload store, then removed from it."""
    storage = ExternalStorage(drivers=[FilesystemStorageDriver(tmp_path)], payload_size_threshold=1)
    converter = seawall_data_converter.__class__(
        payload_converter_class=seawall_data_converter.payload_converter_class,
        external_storage=storage,
    )
    links = chained(whole_requests(3))
    stored: list[list[Payload]] = [await converter.encode([link]) for link in links]
    for blob in (tmp_path / "blobs").rglob("*"):
        if blob.is_file():
            blob.unlink()

    async def history(prompt: PromptRun) -> AsyncIterator[CallModelInput]:
        for payloads in stored:
            [value] = await converter.decode(payloads, [CallModelInput])
            yield value

    err = await unresolved(ConversationResolver(history, max_prompts=0), links[-1])
    assert "is missing from the payload store" in str(err)


async def test_a_request_naming_what_the_prompts_history_does_not_hold_fails() -> None:
    """A first request since RESULTS_BY_REFERENCE_PATCH names the listed tools and keeps the
    start's messages; against a preamble without the listing, or another start, it fails."""
    prompt = PromptInput(prompt="go", workspace_root="/tmp")
    chain = ConversationChain(prompt)
    by_reference = StartPatches(by_reference=True, conversation_refs=True)
    first = CallModelInput(
        model=ModelSpec(), messages=prompt.start_messages(), tools=TOOLS, request_number=1
    )
    link = chain.carry(first, by_reference)
    assert link.tools == [] and link.conversation is not None
    assert link.conversation.tools_listed and link.conversation.from_start
    assert link.conversation.parts == [KeptMessages(start=0, stop=1)]

    async def listed(prompt: PromptRun) -> Preamble:
        return Preamble(None, tuple(TOOLS), tuple(prompt_messages))

    prompt_messages = prompt.start_messages()
    resolved = await ConversationResolver(preambles=PromptPreambles(listed)).resolve(link, PROMPT)
    assert resolved.tools == TOOLS and resolved.messages == prompt.start_messages()

    async def unlisted(prompt: PromptRun) -> Preamble:
        return Preamble(None, None, tuple(prompt_messages))

    err = await unresolved(ConversationResolver(preambles=PromptPreambles(unlisted)), link)
    assert "the tools it names are not in the prompt's history" in str(err)
    prompt_messages = [user_message("another start")]
    err = await unresolved(ConversationResolver(preambles=PromptPreambles(listed)), link)
    assert "does not match its digest" in str(err)


async def test_the_reply_before_is_kept_and_a_stale_cached_reply_yields_to_the_history() -> None:
    """Since RESULTS_BY_REFERENCE_PATCH a request keeps the reply to the one before, which that
    request's result records. The worker's cache holds the reply it gave; when that is not the
    one the history recorded (an attempt whose completion lost), the history decides."""
    prompt = PromptInput(prompt="go", workspace_root="/tmp")
    chain = ConversationChain(prompt)
    by_reference = StartPatches(by_reference=True, conversation_refs=True)
    start = prompt.start_messages()
    first = chain.carry(
        CallModelInput(model=ModelSpec(), messages=start, tools=TOOLS, request_number=1),
        by_reference,
    )
    reply = ModelReply(tool_calls=[ToolCall(call_id="c1", name="read_file", arguments={})])
    said = chain.replied(reply)
    view = [*start, said, Message(role=Role.TOOL, tool_call_id="c1", content="x" * 5_000)]
    second = chain.carry(
        CallModelInput(model=ModelSpec(), messages=view, tools=TOOLS, request_number=2),
        by_reference,
    )
    assert second.conversation is not None
    assert KeptReply() in second.conversation.parts and said not in second.conversation.parts

    async def listed(p: PromptRun) -> Preamble:
        return Preamble(None, tuple(TOOLS), tuple(start))

    async def history(p: PromptRun) -> AsyncIterator[CallModelInput | ModelReply]:
        for item in (first, reply, second):
            yield item

    resolver = ConversationResolver(history, preambles=PromptPreambles(listed))
    await resolver.resolve(first, PROMPT)
    resolver.replied(reply, PROMPT)
    assert (await resolver.resolve(second, PROMPT)).messages == view
    assert resolver.history_reads == 0  # from the cache: the reply this worker gave

    stale = ConversationResolver(history, preambles=PromptPreambles(listed))
    await stale.resolve(first, PROMPT)
    stale.replied(ModelReply(text="an attempt whose completion lost"), PROMPT)
    assert (await stale.resolve(second, PROMPT)).messages == view
    assert stale.history_reads == 1


def _batch_of_results(
    by: StartPatches,
) -> tuple[list[Message], CallModelInput, ModelReply, list[ToolOutcome], CallModelInput, str]:
    """A first request, its reply (two calls), their recorded results and the second request
    as a chain under ``by`` carries them; and the second request's tool content."""
    prompt = PromptInput(prompt="go", workspace_root="/tmp")
    chain = ConversationChain(prompt)
    start = prompt.start_messages()
    first = chain.carry(
        CallModelInput(model=ModelSpec(), messages=start, tools=TOOLS, request_number=1), by
    )
    calls = [ToolCall(call_id=f"c{i}", name="read_file", arguments={"i": i}) for i in (0, 1)]
    reply = ModelReply(tool_calls=calls)
    said = chain.replied(reply)
    content = "page " * 1_000
    results = [
        ToolOutcome(call_id=c.call_id, tool_name="read_file", status="success", content=content)
        for c in calls
    ]
    for outcome in results:
        chain.recorded(1, outcome)
    view = [
        *start,
        said,
        *(Message(role=Role.TOOL, tool_call_id=o.call_id, content=o.content) for o in results),
    ]
    second = chain.carry(
        CallModelInput(model=ModelSpec(), messages=view, tools=TOOLS, request_number=2), by
    )
    return view, first, reply, results, second, content


async def test_a_tool_output_is_kept_by_its_call_and_read_back_from_the_recorded_results() -> None:
    """Since RESULTS_BY_REFERENCE_PATCH a tool message that is exactly its call's recorded
    result is kept by the call's id: the output is recorded once, in the result. The worker
    that ran the call supplies it; another reads the prompt's history; a stale entry (an
    attempt whose result was not the one recorded) yields to the history."""
    by = StartPatches(results_by_reference=True, by_reference=True, conversation_refs=True)
    view, first, reply, results, second, content = _batch_of_results(by)
    assert second.conversation is not None
    assert [p for p in second.conversation.parts if isinstance(p, KeptResult)] == [
        KeptResult(result_of="c0"),
        KeptResult(result_of="c1"),
    ]
    assert content not in second.model_dump_json()

    async def listed(p: PromptRun) -> Preamble:
        return Preamble(None, tuple(TOOLS), tuple(view[:1]))

    async def history(p: PromptRun) -> AsyncIterator[CallModelInput | ModelReply | ToolOutcome]:
        for item in (first, reply, *results, second):
            yield item

    recorded = RecordedResults()
    for outcome in results:  # as the tool activity of this worker records them
        recorded.record(PROMPT, 1, outcome.call_id, outcome.content)
    same_worker = ConversationResolver(history, preambles=PromptPreambles(listed), results=recorded)
    await same_worker.resolve(first, PROMPT)
    same_worker.replied(reply, PROMPT)
    assert (await same_worker.resolve(second, PROMPT)).messages == view
    assert same_worker.history_reads == 0

    other_worker = ConversationResolver(history, preambles=PromptPreambles(listed))
    assert (await other_worker.resolve(second, PROMPT)).messages == view
    assert other_worker.history_reads == 1  # the request before and the results: one read

    stale = RecordedResults()
    stale.record(PROMPT, 1, "c0", "an attempt whose result was not recorded")
    stale.record(PROMPT, 1, "c1", content)
    resolver = ConversationResolver(history, preambles=PromptPreambles(listed), results=stale)
    await resolver.resolve(first, PROMPT)
    resolver.replied(reply, PROMPT)
    assert (await resolver.resolve(second, PROMPT)).messages == view
    assert resolver.history_reads == 1


async def test_a_kept_result_the_history_does_not_hold_fails_naming_the_call() -> None:
    by = StartPatches(results_by_reference=True, by_reference=True, conversation_refs=True)
    view, first, reply, results, second, _ = _batch_of_results(by)

    async def listed(p: PromptRun) -> Preamble:
        return Preamble(None, tuple(TOOLS), tuple(view[:1]))

    async def history(p: PromptRun) -> AsyncIterator[CallModelInput | ModelReply | ToolOutcome]:
        for item in (first, reply, results[1], second):  # c0's result lost
            yield item

    err = await unresolved(ConversationResolver(history, preambles=PromptPreambles(listed)), second)
    assert "it keeps the result of call c0, not recorded" in str(err)


async def test_another_prompts_results_under_the_same_call_ids_are_never_used() -> None:
    """Call ids are the model's to choose and repeat across prompts; the recorded results are
    the prompt's own (its run), so a request of one prompt never reads another's output."""
    by = StartPatches(results_by_reference=True, by_reference=True, conversation_refs=True)
    view, first, reply, results, second, _ = _batch_of_results(by)
    recorded = RecordedResults()
    other = PromptRun("s2-prompt-1", "run-9")
    for outcome in results:
        recorded.record(other, 1, outcome.call_id, "bob's secret " + outcome.content)

    async def listed(p: PromptRun) -> Preamble:
        return Preamble(None, tuple(TOOLS), tuple(view[:1]))

    async def history(p: PromptRun) -> AsyncIterator[CallModelInput | ModelReply | ToolOutcome]:
        assert p == PROMPT
        for item in (first, reply, *results, second):
            yield item

    resolver = ConversationResolver(history, preambles=PromptPreambles(listed), results=recorded)
    resolved = await resolver.resolve(second, PROMPT)
    assert resolved.messages == view and "bob's secret" not in resolved.model_dump_json()
    assert resolver.history_reads == 1


async def test_an_output_that_is_not_its_calls_result_is_carried_and_older_prompts_carry_all() -> (
    None
):
    by = StartPatches(results_by_reference=True, by_reference=True, conversation_refs=True)
    prompt = PromptInput(prompt="go", workspace_root="/tmp")
    for patches, kept in (
        (by, {"c0"}),
        (StartPatches(by_reference=True, conversation_refs=True), set()),
    ):
        chain = ConversationChain(prompt)
        start = prompt.start_messages()
        chain.carry(
            CallModelInput(model=ModelSpec(), messages=start, tools=TOOLS, request_number=1),
            patches,
        )
        calls = [ToolCall(call_id=f"c{i}", name="read_file", arguments={}) for i in (0, 1)]
        said = chain.replied(ModelReply(tool_calls=calls))
        for call in calls:
            chain.recorded(
                1,
                ToolOutcome(
                    call_id=call.call_id,
                    tool_name="read_file",
                    status="success",
                    content="x" * 9_000,
                ),
            )
        view = [
            *start,
            said,
            Message(role=Role.TOOL, tool_call_id="c0", content="x" * 9_000),
            # The context policy elided this one: no longer the recorded result.
            Message(role=Role.TOOL, tool_call_id="c1", content="[tool output elided]"),
        ]
        second = chain.carry(
            CallModelInput(model=ModelSpec(), messages=view, tools=TOOLS, request_number=2),
            patches,
        )
        assert second.conversation is not None
        parts = second.conversation.parts
        assert {p.result_of for p in parts if isinstance(p, KeptResult)} == kept
        assert view[-1] in parts
