"""The chaos suite's model endpoint: scripted replies over the OpenAI wire, with faults.

``scripts/chaos.py`` points its workers at this server (``OPENAI_BASE_URL``), so the model
activity goes through the real OpenAI provider (``activities/openai_provider.py``: the SDK,
streaming, error mapping, Temporal's retries) instead of the in-process scripted provider.
Each prompt's text carries a marker naming its script (:func:`marked`); the reply to a
request is chosen from the conversation alone, exactly like the scripted provider
(``activities/model.py``, ``scripted_turn``): the number of assistant messages so far, or
after the repeated-failure reminder its ``after_reminder`` turns. So a retried request gets
the same reply, and the reply is streamed as OpenAI streams it (the chunks of
``scripts/chat_server.py``).

Faults are planned by request number (:meth:`ChaosModel.plan`), so they land at seeded
moments without depending on timing: the request that draws one is answered with

- ``rate_limit``: HTTP 429 with ``Retry-After: 1``;
- ``server_error``: HTTP 500;
- ``hang``: no answer until the client gives up (its ``model_timeout_seconds``);
- ``malformed``: the first chunks of the reply, then a chunk that is not JSON;
- ``cut_stream``: the first chunks of the reply, then the connection closes (no
  ``finish_reason``, no ``[DONE]``: what a proxy cutting the stream looks like).

One conversation state (one model request of one prompt) draws at most one fault: its retry
must then succeed, so every prompt ends as its undisturbed run did, well within the model
activity's retry window even when a worker is killed too.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from scripts.chat_server import ChatServer, Received, Reply, completion, stream_events
from scripts.chat_server import tool_call as wire_tool_call
from workflows.contracts.scenario import ModelScript, ScriptedTurn
from workflows.seed.guard import REPEATED_TOOL_FAILURE_REMINDER

FAULT_KINDS = ("rate_limit", "server_error", "hang", "malformed", "cut_stream")
MARKER = re.compile(r"\[chaos-script (\S+)\]")
# A hang outlasts any client timeout the suite sets; the server stops waiting as soon as
# the client hangs up.
HANG_SECONDS = 600.0
# How many chunks of a reply go out before the malformed one, or before the cut.
CHUNKS_BEFORE_FAULT = 2


def marked(prompt: str, key: str) -> str:
    """``prompt`` with the marker that tells this server which script answers it."""
    return f"{prompt} [chaos-script {key}]"


def turn_for(script: ModelScript, messages: list[dict[str, Any]]) -> ScriptedTurn:
    """The scripted turn answering ``messages`` (as ``activities.model.scripted_turn``)."""
    reminder_at = next(
        (
            i
            for i, m in enumerate(messages)
            if m.get("role") == "system" and m.get("content") == REPEATED_TOOL_FAILURE_REMINDER
        ),
        None,
    )
    if script.after_reminder is None or reminder_at is None:
        turns, answered = script.turns, messages
    else:
        turns, answered = script.after_reminder, messages[reminder_at + 1 :]
    index = sum(1 for m in answered if m.get("role") == "assistant")
    return turns[index] if index < len(turns) else ScriptedTurn()


def _wire_reply(turn: ScriptedTurn) -> Reply:
    calls = []
    for call in turn.tool_calls:
        given = call.arguments
        arguments = (
            "{}" if given is None else given if isinstance(given, str) else json.dumps(given)
        )
        # No id: the provider then numbers the call as the scripted provider does.
        calls.append(wire_tool_call(call.name or None, arguments, call_id=call.id))
    return completion(text=turn.text or None, tool_calls=calls or None)


class ChaosModel:
    """Scripts by key, a fault plan by request number, and the faults served by kind."""

    def __init__(self) -> None:
        self.scripts: dict[str, ModelScript] = {}
        self.requests = 0
        self.faults: Counter[str] = Counter()
        self.unknown = 0
        self._plan: dict[int, str] = {}
        self._faulted: set[tuple[str, int]] = set()
        self.server = ChatServer(self.answer)

    @property
    def url(self) -> str:
        return self.server.url

    async def __aenter__(self) -> ChaosModel:
        await self.server.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.server.__aexit__(*exc)

    def add(self, key: str, script: ModelScript) -> None:
        self.scripts[key] = script

    def plan(self, faults: dict[int, str]) -> None:
        """Answer request number ``n`` (counted from now, from 0) with ``faults[n]``; a
        fault that meets a request which already drew one moves to the next request."""
        unknown = set(faults.values()) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown model faults: {sorted(unknown)}")
        self._plan = {self.requests + n: kind for n, kind in faults.items()}

    @property
    def pending(self) -> int:
        """Planned faults not served yet."""
        return len(self._plan)

    def answer(self, received: Received) -> Reply:
        number = self.requests
        self.requests += 1
        # The server records every request for tests; the suite has no use for them.
        self.server.requests.clear()
        body = received.body if isinstance(received.body, dict) else {}
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        key = next(
            (
                found.group(1)
                for m in messages
                if m.get("role") == "user"
                and (found := MARKER.search(str(m.get("content") or ""))) is not None
            ),
            None,
        )
        script = self.scripts.get(key or "")
        if script is None:
            self.unknown += 1
            return completion(text=None)
        reply = _wire_reply(turn_for(script, messages))
        fault = self._plan.pop(number, None)
        state = (key or "", len(messages))
        if fault is not None and state in self._faulted:
            # This request is a retry of one that already failed: the fault waits for
            # the next request, so no request fails twice in a row because of it.
            later = self.requests
            while later in self._plan:
                later += 1
            self._plan[later] = fault
            fault = None
        if fault is None:
            return reply
        self._faulted.add(state)
        self.faults[fault] += 1
        return _faulty(fault, reply, body)


def _faulty(kind: str, reply: Reply, body: dict[str, Any]) -> Reply:
    if kind == "rate_limit":
        return _error(429, "rate limited (chaos)", {"retry-after": "1"})
    if kind == "server_error":
        return _error(500, "internal error (chaos)")
    if kind == "hang":
        return Reply(delay=HANG_SECONDS)
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    chunks = stream_events(reply.body, include_usage)[:CHUNKS_BEFORE_FAULT]
    if kind == "cut_stream":
        return Reply(events=chunks)
    return Reply(events=[*chunks, '{"id": "chatcmpl-chaos", "choices": [{"delta": {"cont'])


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status=status,
        body={"error": {"message": message, "type": "server_error", "code": None}},
        headers=headers or {},
    )
