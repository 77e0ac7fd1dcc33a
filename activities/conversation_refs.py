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

from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence

import structlog
from pydantic import BaseModel
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.prompt_preamble import PromptPreambles, PromptRun
from seawall.runtime.storage import STORED_PAYLOAD_CORRUPT, STORED_PAYLOAD_MISSING
from workflows.contracts.activity import CALL_MODEL, CallModelInput, ModelReply
from workflows.contracts.conversation import assistant_message, conversation_chars
from workflows.contracts.conversation_ref import (
    CONVERSATION_UNRESOLVED,
    Carried,
    Unresolvable,
    resolve,
    started,
    with_reply,
)

# The cache's bounds: prompts, and characters of their cached conversations.
CACHED_PROMPTS = 1_024
CACHED_CHARS = 64_000_000

log = structlog.get_logger("seawall.model")


# The ``seawall.call_model`` inputs of a prompt's history and their replies, in history order.
HistoryInputs = Callable[[PromptRun], AsyncIterator[CallModelInput | ModelReply]]


async def inputs_in_history(prompt: PromptRun) -> AsyncIterator[CallModelInput | ModelReply]:
    """The prompt's model-request inputs and replies as its history recorded them, read
    through the activity's client (and so its converter and payload store)."""
    client = activity.client()
    handle = client.get_workflow_handle(prompt.workflow_id, run_id=prompt.run_id)
    requests: set[int] = set()
    async for event in handle.fetch_history_events():
        if event.HasField("activity_task_completed_event_attributes"):
            completed = event.activity_task_completed_event_attributes
            if completed.scheduled_event_id in requests:
                [reply] = await client.data_converter.decode(
                    completed.result.payloads, [ModelReply]
                )
                yield reply
            continue
        if not event.HasField("activity_task_scheduled_event_attributes"):
            continue
        scheduled = event.activity_task_scheduled_event_attributes
        if scheduled.activity_type.name != CALL_MODEL:
            continue
        requests.add(event.event_id)
        [value] = await client.data_converter.decode(scheduled.input.payloads, [CallModelInput])
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
    ) -> None:
        self._history = history
        # The tools and script a request names (activities/prompt_preamble.py).
        self._preambles = preambles or PromptPreambles()
        self._max_prompts = max_prompts
        self._max_chars = max_chars
        self._cache: OrderedDict[PromptRun, tuple[Carried, int]] = OrderedDict()
        self._chars = 0
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
            self._cache[prompt] = (with_reply(cached[0], message), cached[1])

    async def _resolved(
        self, prompt: PromptRun, request: CallModelInput, *, cached: bool
    ) -> Carried:
        ref = request.conversation
        assert ref is not None
        previous = (
            None if ref.previous is None else await self._previous(prompt, ref.previous, cached)
        )
        return resolve(previous, ref, *await self._from_preamble(prompt, request))

    async def _previous(self, prompt: PromptRun, digest: str, cached: bool) -> Carried:
        entry = self._cache.get(prompt) if cached else None
        if entry is not None and entry[0].digest == digest:
            self._cache.move_to_end(prompt)
            return entry[0]
        self.history_reads += 1
        carried: Carried | None = None
        found: Carried | None = None
        async for earlier in self._history(prompt):
            if isinstance(earlier, ModelReply):  # the reply to the request before it
                if carried is not None:
                    carried = with_reply(
                        carried, assistant_message(earlier.text, earlier.tool_calls)
                    )
                    if found is not None:
                        return carried
                continue
            if found is not None:
                return found  # no reply recorded before the next request
            ref = earlier.conversation
            if ref is None:
                continue
            carried = resolve(
                carried if ref.previous is not None else None,
                ref,
                *await self._from_preamble(prompt, earlier),
            )
            if carried.digest == digest:
                found = carried
        if found is not None:
            return found
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
        size = conversation_chars(carried.messages)
        old = self._cache.pop(prompt, None)
        if old is not None:
            self._chars -= old[1]
        if size > self._max_chars or self._max_prompts < 1:
            return
        self._cache[prompt] = (carried, size)
        self._chars += size
        while len(self._cache) > self._max_prompts or self._chars > self._max_chars:
            _, (_, dropped) = self._cache.popitem(last=False)
            self._chars -= dropped
