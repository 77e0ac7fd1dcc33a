"""What a prompt's history recorded before its first model request: its start input's scenario
and conversation, and the tools it listed, read once per worker for the activity inputs that
name them.

Why it exists: a prompt's start input (a scenario's script and fixtures among it) and its tool
listing (a local activity's marker, or the ``seawall.list_tools`` activity's result) are in its
history from its first workflow task on. Before ``INPUTS_BY_REFERENCE_PATCH`` the first model
request carried the tools and the script again, and every scenario tool call its fixture, so each
was recorded twice or twenty times (about 15 KB of a 75 KB five-batch prompt; docs/durability.md,
"Conversations stored once"). A prompt started after the patch names them instead
(``ConversationRef.tools_listed`` and ``script_in_start``, ``RunToolInput.fixture_in_start``),
and its first request keeps ranges of the conversation the start input holds (a session's
history, a long pasted text) instead of recording it again (``ConversationRef.from_start``),
and :class:`PromptPreambles` reads them here: from this worker's cache of the last
:data:`CACHED_PROMPTS` prompts, else from the first events of the prompt's history, through the
activity's client (its converter, stored payloads and their owner scoping as ever). One read per
prompt per worker; nothing stored beside the history.

A preamble that does not hold what a request names fails the request as the conversation
resolver fails one it cannot resolve (``activities/conversation_refs.py``); a tool call whose
fixture is not there fails non-retryably with ``FixtureUnresolved`` naming the prompt.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, Awaitable, Callable
from dataclasses import dataclass

from temporalio import activity
from temporalio.api.history.v1 import HistoryEvent
from temporalio.converter import DataConverter
from temporalio.exceptions import ApplicationError

from activities.prompt_cache import CACHED_PROMPTS, PromptCache
from workflows.contracts.activity import (
    CALL_MODEL,
    LIST_TOOLS,
    LIST_TOOLS_WITHOUT_MCP,
    ListToolsOutput,
    ToolSpec,
)
from workflows.contracts.conversation import Message
from workflows.contracts.prompt import PromptInput
from workflows.contracts.scenario import FixtureTool, ScenarioHooks

# The history is read in pages this long: the start and the listing are among its first events.
PAGE_EVENTS = 32
LOCAL_ACTIVITY_MARKER = "core_local_activity"
FIXTURE_UNRESOLVED = "FixtureUnresolved"


@dataclass(frozen=True)
class PromptRun:
    """Which prompt (workflow id and run) an activity belongs to."""

    workflow_id: str
    run_id: str

    @classmethod
    def current(cls) -> PromptRun:
        info = activity.info()
        return cls(info.workflow_id or "", info.workflow_run_id or "")


@dataclass(frozen=True)
class Preamble:
    """A prompt's scenario (None: an ordinary prompt), listed tools (None: not found) and the
    conversation it started with (``PromptInput.start_messages``)."""

    scenario: ScenarioHooks | None
    tools: tuple[ToolSpec, ...] | None
    messages: tuple[Message, ...] = ()


async def read_preamble(converter: DataConverter, events: AsyncIterable[HistoryEvent]) -> Preamble:
    """The preamble of the history whose events ``events`` yields, read up to its listing (or
    its first model request, which comes after the listing)."""
    scenario: ScenarioHooks | None = None
    messages: tuple[Message, ...] = ()
    listing_activities: set[int] = set()
    async for event in events:
        if event.HasField("workflow_execution_started_event_attributes"):
            payloads = event.workflow_execution_started_event_attributes.input.payloads
            [start] = await converter.decode(payloads, [PromptInput])
            scenario, messages = start.scenario, tuple(start.start_messages())
        elif event.HasField("marker_recorded_event_attributes"):
            marker = event.marker_recorded_event_attributes
            if marker.marker_name != LOCAL_ACTIVITY_MARKER or "result" not in marker.details:
                continue
            data = json.loads(marker.details["data"].payloads[0].data)
            if data.get("activity_type") != LIST_TOOLS_WITHOUT_MCP:
                continue
            [listed] = await converter.decode(
                marker.details["result"].payloads,
                [ListToolsOutput | None],  # type: ignore[list-item]
            )
            if listed is not None:  # None: MCP servers, the listing activity follows
                return Preamble(scenario, tuple(listed.tools), messages)
        elif event.HasField("activity_task_scheduled_event_attributes"):
            kind = event.activity_task_scheduled_event_attributes.activity_type.name
            if kind == LIST_TOOLS:
                listing_activities.add(event.event_id)
            elif kind == CALL_MODEL:
                break
        elif event.HasField("activity_task_completed_event_attributes"):
            completed = event.activity_task_completed_event_attributes
            if completed.scheduled_event_id in listing_activities:
                [listed] = await converter.decode(completed.result.payloads, [ListToolsOutput])
                return Preamble(scenario, tuple(listed.tools), messages)
    return Preamble(scenario, None, messages)


async def preamble_in_history(prompt: PromptRun) -> Preamble:
    """The prompt's preamble as its history recorded it, read through the activity's client."""
    client = activity.client()
    handle = client.get_workflow_handle(prompt.workflow_id, run_id=prompt.run_id)
    return await read_preamble(
        client.data_converter, handle.fetch_history_events(page_size=PAGE_EVENTS)
    )


PreambleSource = Callable[[PromptRun], Awaitable[Preamble]]


class PromptPreambles:
    """One worker's preambles, shared by its model and tool activities."""

    def __init__(
        self, source: PreambleSource = preamble_in_history, *, max_prompts: int = CACHED_PROMPTS
    ) -> None:
        self._source = source
        self._cache: PromptCache[PromptRun, Preamble] = PromptCache(max_prompts=max_prompts)
        self.history_reads = 0  # how often the cache could not answer (for tests)

    async def of(self, prompt: PromptRun) -> Preamble:
        cached = self._cache.get(prompt)
        if cached is not None and cached.tools is not None:
            self._cache.touch(prompt)
            return cached
        self.history_reads += 1
        preamble = await self._source(prompt)
        self._cache.put(prompt, preamble)
        return preamble

    async def fixture(self, prompt: PromptRun, name: str) -> FixtureTool:
        """The fixture the prompt's start input scripts for tool ``name``."""
        scenario = (await self.of(prompt)).scenario
        fixture = scenario.fixture_tools.get(name) if scenario is not None else None
        if fixture is None:
            raise ApplicationError(
                f"prompt {prompt.workflow_id} names a fixture its start input does not script",
                type=FIXTURE_UNRESOLVED,
                non_retryable=True,
            )
        return fixture
