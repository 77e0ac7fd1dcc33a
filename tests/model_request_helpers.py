"""The model requests a prompt's history records, made whole as the model activity makes
them (activities/conversation_refs.py): after the first, a request carries only what is new
since the one before, so a test that reads what the model was sent resolves the chain."""

from __future__ import annotations

from collections.abc import AsyncIterator

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHistory

from activities.conversation_refs import ConversationResolver, PromptRun
from activities.prompt_preamble import Preamble, PromptPreambles, read_preamble
from workflows.contracts.activity import CallModelInput, ModelReply


async def model_requests(client: Client, history: WorkflowHistory) -> list[CallModelInput]:
    requests: list[CallModelInput] = []
    recorded_order: list[CallModelInput | ModelReply] = []  # inputs and replies, in order
    scheduled: set[int] = set()
    for e in history.events:
        attributes = e.activity_task_scheduled_event_attributes
        if (
            e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
            and attributes.activity_type.name == "seawall.call_model"
        ):
            [request] = await client.data_converter.decode(
                attributes.input.payloads, type_hints=[CallModelInput]
            )
            requests.append(request)
            recorded_order.append(request)
            scheduled.add(e.event_id)
        completed = e.activity_task_completed_event_attributes
        if (
            e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
            and completed.scheduled_event_id in scheduled
        ):
            [reply] = await client.data_converter.decode(
                completed.result.payloads, type_hints=[ModelReply]
            )
            recorded_order.append(reply)

    async def recorded(prompt: PromptRun) -> AsyncIterator[CallModelInput | ModelReply]:
        for item in recorded_order:
            yield item

    async def events() -> AsyncIterator[HistoryEvent]:
        for event in history.events:
            yield event

    async def preamble(prompt: PromptRun) -> Preamble:
        return await read_preamble(client.data_converter, events())

    # Made whole as the model activity makes them (activities/conversation_refs.py), the tools
    # and script they name read from the history (activities/prompt_preamble.py).
    resolver = ConversationResolver(recorded, preambles=PromptPreambles(preamble))
    return [await resolver.resolve(r, PromptRun("recorded", "")) for r in requests]
