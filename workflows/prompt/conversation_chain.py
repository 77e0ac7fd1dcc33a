"""The prompt's model requests as a chain: each carries what is new since the one before.

Why it exists: the workflow used to hand every model request its whole conversation view, its
tools and its script, so each message was recorded in history again by every later request (the
format and the reasons: ``workflows/contracts/conversation_ref.py``). :class:`ConversationChain`
remembers the request it built last and turns the next whole request into its
:class:`~workflows.contracts.conversation_ref.ConversationRef` form; the model activity resolves
it back (``activities/conversation_refs.py``). Only prompts started after
``CONVERSATION_REFS_PATCH`` use it (``workflows/prompt/patches.py``); it changes an activity's
input, never which commands are issued.

A request small enough (:data:`WHOLE_REQUEST_CHARS`) is sent whole, its own first link: it
costs at most that many bytes more than a reference, and the activity resolves it without a
cache or the prompt's history, which a reference whose previous request the worker has not seen
needs (a fetch of the history). Since ``INPUTS_BY_REFERENCE_PATCH`` the tools and script of a
link that does not keep them are named instead (the tool list the prompt recorded when it
listed them, the script its start input recorded): what a worker reads of the history once per
prompt, not bytes every prompt records twice. For the same reason a first request keeps the
conversation the prompt started with as ranges of its start input (``from_start``), and a later
one keeps the reply to the request before (:meth:`ConversationChain.replied`), which that
request's result records. Since ``RESULTS_BY_REFERENCE_PATCH`` a tool message that is exactly
its call's ``seawall.run_tool`` result (:meth:`ConversationChain.recorded`) is kept by the
call's id: each tool output is then recorded once, in its call's result, not again in the
next request (at 20 KB a page, half of a long reading prompt's history).

Each message's digest is computed once (messages are frozen and the view reuses the
conversation's objects), so a request costs its new messages and one pass over the view's
digests, not a re-serialization of the conversation.
"""

from __future__ import annotations

import json

from workflows.contracts.activity import CallModelInput, ModelReply
from workflows.contracts.conversation import Message, assistant_message, conversation_chars
from workflows.contracts.conversation_ref import (
    Carried,
    ConversationRef,
    message_digest,
    part_digest,
    parts_between,
    request_digest,
    started,
    with_reply,
)
from workflows.contracts.outcome import ToolOutcome
from workflows.contracts.prompt import PromptInput
from workflows.prompt.patches import StartPatches

# A request whose conversation, tools and script together are at most this many characters
# is sent whole (the module docstring says why).
WHOLE_REQUEST_CHARS = 4_096


class ConversationChain:
    """The last request one prompt sent, and the digests of the messages it has seen."""

    def __init__(self, prompt: PromptInput) -> None:
        self._prompt = prompt  # its start messages: what a first request keeps ranges of
        self._previous: Carried | None = None
        # id(message) → (message, digest); the message kept so its id is never reused.
        self._digests: dict[int, tuple[Message, str]] = {}
        self._tools_chars = 0
        self._script_chars = 0
        self._by_reference = False
        # call id → the content of its recorded run_tool result; only the latest batch's (a
        # later request keeps older ones as ranges).
        self._recorded: dict[str, str] = {}
        self._recorded_batch = 0

    def _digest(self, message: Message) -> str:
        known = self._digests.get(id(message))
        if known is None or known[0] is not message:
            known = (message, message_digest(message))
            self._digests[id(message)] = known
        return known[1]

    def carry(self, request: CallModelInput, patches: StartPatches) -> CallModelInput:
        """``request`` (whole) as the chain carries it; itself in a prompt started before
        ``CONVERSATION_REFS_PATCH``. Since ``INPUTS_BY_REFERENCE_PATCH`` tools and a script
        that are not kept are named, not carried: the workflow's requests offer exactly the
        tools it listed and the script of its start input."""
        if not patches.conversation_refs:
            return request
        self._by_reference = patches.by_reference
        previous = self._previous
        view = request.messages
        digests = [self._digest(m) for m in view]
        tools = tuple(request.tools)
        if previous is not None and previous.tools == tools:
            tools_digest = previous.tools_digest
        else:
            tools_digest = part_digest(list(tools))
            self._tools_chars = len(json.dumps([t.model_dump(mode="json") for t in tools]))
        script = request.scenario_script
        if previous is not None and previous.script == script:
            script_digest = previous.script_digest
        else:
            script_digest = part_digest(script)
            self._script_chars = len(script.model_dump_json()) if script is not None else 0
        digest = request_digest(digests, tools_digest, script_digest)
        whole = conversation_chars(view) + self._tools_chars + self._script_chars
        base = None if previous is None or whole <= WHOLE_REQUEST_CHARS else previous
        tools_kept = base is not None and base.tools_digest == tools_digest
        script_kept = base is not None and base.script_digest == script_digest
        tools_listed = patches.by_reference and not tools_kept
        script_in_start = patches.by_reference and not script_kept and script is not None
        from_start = patches.by_reference and previous is None
        kept_from = started(self._prompt.start_messages()) if from_start else base
        ref = ConversationRef(
            previous=base.digest if base is not None else None,
            parts=parts_between(
                kept_from, digests, view, self._recorded if patches.results_by_reference else None
            ),
            tools_kept=tools_kept,
            script_kept=script_kept,
            tools_listed=tools_listed,
            script_in_start=script_in_start,
            from_start=from_start,
            digest=digest,
        )
        self._previous = Carried(
            list(view), digests, tools, tools_digest, script, script_digest, digest
        )
        return request.model_copy(
            update={
                "messages": [],
                "tools": [] if tools_kept or tools_listed else request.tools,
                "scenario_script": None if script_kept or script_in_start else script,
                "conversation": ref,
            }
        )

    def recorded(self, batch: int, outcome: ToolOutcome) -> None:
        """``outcome`` is the result ``seawall.run_tool`` recorded for its call in ``batch``:
        since ``RESULTS_BY_REFERENCE_PATCH`` a request whose tool message is exactly it keeps
        it by the call's id (``KeptResult``)."""
        if batch != self._recorded_batch:
            self._recorded, self._recorded_batch = {}, batch
        self._recorded[outcome.call_id] = outcome.content

    def replied(self, reply: ModelReply) -> Message:
        """The reply to the request carried last, as the conversation records it; since
        ``INPUTS_BY_REFERENCE_PATCH`` the next request keeps it by reference (``KeptReply``):
        that request's result records it already."""
        message = assistant_message(reply.text, reply.tool_calls)
        if self._by_reference and self._previous is not None:
            self._previous = with_reply(self._previous, message)
        return message
