"""The model requests a prompt's history records, made whole as the model activity makes
them (activities/conversation_refs.py): after the first, a request carries only what is new
since the one before, so a test that reads what the model was sent resolves the chain."""

from __future__ import annotations

from collections.abc import AsyncIterator

from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHistory

from activities.conversation_refs import ConversationResolver, PromptRun, Recorded, recorded_in
from activities.prompt_preamble import Preamble, PromptPreambles, read_preamble
from workflows.contracts.activity import CallModelInput


async def model_requests(client: Client, history: WorkflowHistory) -> list[CallModelInput]:
    async def events() -> AsyncIterator[HistoryEvent]:
        for event in history.events:
            yield event

    def recorded(prompt: PromptRun) -> AsyncIterator[Recorded]:
        return recorded_in(client.data_converter, events())

    async def preamble(prompt: PromptRun) -> Preamble:
        return await read_preamble(client.data_converter, events())

    requests = [
        r async for r in recorded(PromptRun("recorded", "")) if isinstance(r, CallModelInput)
    ]
    # Made whole as the model activity makes them (activities/conversation_refs.py), the tools
    # and script they name read from the history (activities/prompt_preamble.py), the tool
    # results they keep from it too.
    resolver = ConversationResolver(recorded, preambles=PromptPreambles(preamble))
    return [await resolver.resolve(r, PromptRun("recorded", "")) for r in requests]
