"""The model activity's side of a conversation carried by reference: a request made whole again.

Why it exists: a prompt started after ``CONVERSATION_REFS_PATCH`` sends each model request as a
link of a chain, what is new since the request before it (``workflows/contracts/
conversation_ref.py``). A provider needs the whole request, so :class:`ConversationResolver`
rebuilds it before any provider sees it:

- from this worker's cache, which keeps the last request it resolved of each prompt (at most
  :data:`CACHED_PROMPTS` prompts and :data:`CACHED_CHARS` characters of their conversations, the
  least recently used dropped first): the usual case, a prompt's requests one after another;
- else from the prompt's own history (after a worker restart, or when another worker resolved
  the request before): the activity reads the prompt's earlier ``seawall.call_model`` inputs
  through the same data converter as every input (stored payloads included, owner-scoped as
  ever) and replays the chain up to the request named. Nothing is stored beside the history, so
  nothing new needs collecting, and any worker that can read the history can resolve.

A request since ``RESULTS_BY_REFERENCE_PATCH`` keeps tool messages that are exactly their calls'
``seawall.run_tool`` results by the call's id: the worker's :class:`~activities.recorded_results.
RecordedResults` supplies them (the tool activity filled it), else the same read of the history
(the results it records), and the request's digest covers them as ever.

A first request since ``INPUTS_BY_REFERENCE_PATCH`` names its tools (those the prompt listed)
and its script (its start input's) instead of carrying them: the worker's
:class:`~activities.prompt_preamble.PromptPreambles` supplies them, from its cache or the
prompt's history, and the request's digest covers them as ever.

A request that cannot be resolved (the request it names is not in the history, a stored part of
it is missing or corrupt, or what it resolves to does not match its digest) fails at once with a
non-retryable ``ConversationUnresolved`` error naming the prompt and the request: retrying cannot
bring it back, and the prompt ends ``error`` saying why. One ``conversation_unresolved`` log line
says which prompt and request and the kind of fault (never content). A history that cannot be
read for now (the server unreachable) fails the attempt like any model fault, retried within
the request's retry window.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence

import structlog
from pydantic import BaseModel
from temporalio import activity
from temporalio.api.history.v1 import HistoryEvent
from temporalio.converter import DataConverter
from temporalio.exceptions import ApplicationError

from activities.prompt_cache import CACHED_CHARS, CACHED_PROMPTS, PromptCache
from activities.prompt_preamble import PromptPreambles, PromptRun
from activities.recorded_results import RecordedResults
from seawall.runtime.storage import STORED_PAYLOAD_CORRUPT, STORED_PAYLOAD_MISSING
from workflows.contracts.activity import CALL_MODEL, RUN_TOOL, CallModelInput, ModelReply
from workflows.contracts.conversation import assistant_message, conversation_chars
from workflows.contracts.conversation_ref import (
    CONVERSATION_UNRESOLVED,
    Carried,
    Unresolvable,
    resolve,
    results_named,
    started,
    with_reply,
)
from workflows.contracts.outcome import ToolOutcome

log = structlog.get_logger("seawall.model")


# What a prompt's history recorded that a request may keep: its ``seawall.call_model`` inputs,
# their replies and its ``seawall.run_tool`` results, in history order.
Recorded = CallModelInput | ModelReply | ToolOutcome
HistoryInputs = Callable[[PromptRun], AsyncIterator[Recorded]]


async def recorded_in(
    converter: DataConverter, events: AsyncIterable[HistoryEvent]
) -> AsyncIterator[Recorded]:
    """The model-request inputs and replies and the tool results of the history whose events
    ``events`` yields, decoded by ``converter`` (and so its payload store)."""
    requests: set[int] = set()
    calls: set[int] = set()
    async for event in events:
        if event.HasField("activity_task_completed_event_attributes"):
            completed = event.activity_task_completed_event_attributes
            kind = (
                ModelReply
                if completed.scheduled_event_id in requests
                else ToolOutcome
                if completed.scheduled_event_id in calls
                else None
            )
            if kind is not None:
                [value] = await converter.decode(completed.result.payloads, [kind])
                yield value
            continue
        if not event.HasField("activity_task_scheduled_event_attributes"):
            continue
        scheduled = event.activity_task_scheduled_event_attributes
        if scheduled.activity_type.name == RUN_TOOL:
            calls.add(event.event_id)
        elif scheduled.activity_type.name == CALL_MODEL:
            requests.add(event.event_id)
            [request] = await converter.decode(scheduled.input.payloads, [CallModelInput])
            yield request


async def inputs_in_history(prompt: PromptRun) -> AsyncIterator[Recorded]:
    """What the prompt's history recorded (:func:`recorded_in`), read through the activity's
    client (and so its converter and payload store)."""
    client = activity.client()
    handle = client.get_workflow_handle(prompt.workflow_id, run_id=prompt.run_id)
    async for value in recorded_in(client.data_converter, handle.fetch_history_events()):
        yield value


def _unresolved(prompt: PromptRun, request: CallModelInput, kind: str, why: str) -> Exception:
    log.error(
        "conversation_unresolved",
        prompt_id=prompt.workflow_id,
        request=request.request_number,
        kind=kind,
    )
    return ApplicationError(
        f"the conversation of prompt {prompt.workflow_id}, model request "
        f"{request.request_number}, cannot be resolved: {why}",
        type=CONVERSATION_UNRESOLVED,
        non_retryable=True,
    )


class ConversationResolver:
    """Rebuilds chained requests; one per worker (its cache is the worker's)."""

    def __init__(
        self,
        history: HistoryInputs = inputs_in_history,
        *,
        max_prompts: int = CACHED_PROMPTS,
        max_chars: int = CACHED_CHARS,
        preambles: PromptPreambles | None = None,
        results: RecordedResults | None = None,
    ) -> None:
        self._history = history
        # The tools and script a request names (activities/prompt_preamble.py).
        self._preambles = preambles or PromptPreambles()
        # The tool results a request keeps, as this worker's tool activity returned them.
        self._results = results or RecordedResults()
        self._cache: PromptCache[PromptRun, Carried] = PromptCache(
            max_prompts=max_prompts, max_chars=max_chars
        )
        self.history_reads = 0  # how often the cache could not answer (for tests)

    async def resolve(
        self, request: CallModelInput, prompt: PromptRun | None = None
    ) -> CallModelInput:
        """``request`` whole: itself when it carries its conversation whole."""
        ref = request.conversation
        if ref is None:
            return request
        if prompt is None:
            prompt = PromptRun.current()
        try:
            try:
                carried = await self._resolved(prompt, request, cached=True)
            except Unresolvable:
                # What this worker cached may not be what the history recorded (an attempt
                # whose reply was not the one completed): the history decides.
                carried = await self._resolved(prompt, request, cached=False)
        except Unresolvable as err:
            raise _unresolved(prompt, request, "mismatch", str(err)) from None
        except ApplicationError as err:
            if err.type not in (STORED_PAYLOAD_MISSING, STORED_PAYLOAD_CORRUPT):
                raise
            raise _unresolved(prompt, request, "stored_payload", str(err.message)) from None
        self._remember(prompt, carried)
        return request.model_copy(
            update={
                "messages": carried.messages,
                "tools": list(carried.tools),
                "scenario_script": carried.script,
                "conversation": None,
            }
        )

    def replied(self, reply: ModelReply, prompt: PromptRun | None = None) -> None:
        """Remember the reply to the request this worker resolved last for the prompt: the
        next request keeps it by reference (``KeptReply``)."""
        prompt = prompt or PromptRun.current()
        cached = self._cache.get(prompt)
        if cached is not None:
            message = assistant_message(reply.text, reply.tool_calls)
            self._cache.replace(prompt, with_reply(cached, message))

    async def _resolved(
        self, prompt: PromptRun, request: CallModelInput, *, cached: bool
    ) -> Carried:
        ref = request.conversation
        assert ref is not None
        previous, walked = (
            (None, None)
            if ref.previous is None
            else await self._previous(prompt, ref.previous, cached)
        )
        named = results_named(ref)
        results = self._results.get(prompt, named) if cached else None
        if named and results is None:
            results = walked if walked is not None else await self._results_in_history(prompt)
        return resolve(previous, ref, *await self._from_preamble(prompt, request), results)

    async def _results_in_history(self, prompt: PromptRun) -> dict[str, str]:
        """The contents of the tool results the prompt's history recorded, by call id."""
        self.history_reads += 1
        return {
            earlier.call_id: earlier.content
            async for earlier in self._history(prompt)
            if isinstance(earlier, ToolOutcome)
        }

    async def _previous(
        self, prompt: PromptRun, digest: str, cached: bool
    ) -> tuple[Carried, dict[str, str] | None]:
        """The request named ``digest`` (with the reply it got), and, when it was read from
        the history, every tool result the history recorded (what the request being resolved
        may keep: the history is read once)."""
        entry = self._cache.get(prompt) if cached else None
        if entry is not None and entry.digest == digest:
            self._cache.touch(prompt)
            return entry, None
        self.history_reads += 1
        carried: Carried | None = None
        found: Carried | None = None
        settled = False  # past the reply to the request found (or the request after it)
        results: dict[str, str] = {}
        async for earlier in self._history(prompt):
            if isinstance(earlier, ToolOutcome):
                results[earlier.call_id] = earlier.content
                continue
            if found is not None:
                if isinstance(earlier, ModelReply) and not settled:
                    found = with_reply(found, assistant_message(earlier.text, earlier.tool_calls))
                settled = True  # a reply, or the next request without one recorded before
                continue
            if isinstance(earlier, ModelReply):  # the reply to the request before it
                if carried is not None:
                    carried = with_reply(
                        carried, assistant_message(earlier.text, earlier.tool_calls)
                    )
                continue
            ref = earlier.conversation
            if ref is None:
                continue
            carried = resolve(
                carried if ref.previous is not None else None,
                ref,
                *await self._from_preamble(prompt, earlier),
                results,
            )
            if carried.digest == digest:
                found = carried
        if found is not None:
            return found, results
        raise Unresolvable("the request it builds on is not in the prompt's history")

    async def _from_preamble(
        self, prompt: PromptRun, request: CallModelInput
    ) -> tuple[Sequence[BaseModel], BaseModel | None, Carried | None]:
        """The tools and script of ``request`` (its own, or those it names: the prompt's
        listed tools, its start input's script) and, for a first request ``from_start``, the
        conversation the prompt started with."""
        ref = request.conversation
        tools: Sequence[BaseModel] = request.tools
        script: BaseModel | None = request.scenario_script
        if ref is None or not (ref.tools_listed or ref.script_in_start or ref.from_start):
            return tools, script, None
        preamble = await self._preambles.of(prompt)
        if ref.tools_listed:
            if preamble.tools is None:
                raise Unresolvable("the tools it names are not in the prompt's history")
            tools = list(preamble.tools)
        if ref.script_in_start:
            if preamble.scenario is None or preamble.scenario.model_script is None:
                raise Unresolvable("the script it names is not in the prompt's start input")
            script = preamble.scenario.model_script
        return tools, script, started(preamble.messages) if ref.from_start else None

    def _remember(self, prompt: PromptRun, carried: Carried) -> None:
        self._cache.put(prompt, carried, conversation_chars(carried.messages))
