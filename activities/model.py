"""The model activity: one request to a language-model provider, one reply.

Providers sit behind :class:`ModelProvider` so the workflow only ever sees
:class:`~workflows.contracts.activity.ModelReply`, whatever the backend; the worker hands
:class:`ModelActivities` its providers (``seawall/worker/build.py``). ``operator``, the default, is
the operator's endpoint when one is configured, else the offline demo model. A scenario run's script
(``CallModelInput.scenario_script``) answers instead of any provider; the scripted provider that
plays it is what simulations and tests run against. It is stateless (the reply is chosen from the
conversation alone), so a retried or replayed request gets the same reply.

Providers stream: each hands its reply's text, piece by piece, to the ``on_text`` sink the
activity gives it, and the activity publishes the pieces to the prompt workflow while the
reply is still coming (:mod:`activities.model_stream`; activities/model_stream.py).
The activity heartbeats for as long as the request runs, so the workflow's heartbeat
timeout of seconds notices a lost worker. A scenario's script answers at once and is not
streamed, so a scenario's history is its protections' decisions alone.

A request carried by reference to the one before it (``CallModelInput.conversation``) is made
whole first (:mod:`activities.conversation_refs`), so no provider sees the difference.

A request that carries a retry window (``CallModelInput.retry_window_seconds``) is retried by
Temporal until that window has passed since its first attempt; the activity decides which
failure is the last (:mod:`activities.model_retry`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.conversation_refs import ConversationResolver
from activities.heartbeat import activity_heartbeat, heartbeating
from activities.model_retry import RetryWindow
from activities.model_stream import DeltaPublisher, TextSink, workflow_delta_sender
from workflows.contracts import Message, Role, ToolCall
from workflows.contracts.activity import (
    CALL_MODEL,
    JUDGE_PROGRESS,
    CallModelInput,
    JudgeProgressInput,
    JudgeProgressOutput,
    ModelReply,
    ModelUsage,
)
from workflows.contracts.scenario import ModelScript, ScriptedCall, ScriptedTurn
from workflows.seed.guard import REPEATED_TOOL_FAILURE_REMINDER

from .progress_judge import judge_request, judgement, scripted_judgement
from .trust import DENY_ALL, WorkerTrust


class ModelProvider(Protocol):
    """A backend that answers one model request, handing the reply's text to ``on_text``
    piece by piece as it arrives (when given) before returning the whole reply."""

    async def complete(
        self, request: CallModelInput, on_text: TextSink | None = None
    ) -> ModelReply: ...


def estimate_tokens(text: str) -> int:
    """A rough token count (about four characters per token).

    An estimate only: the scripted provider has no tokenizer, and the figure is for
    reporting, never for control flow.
    """
    return len(text) // 4


def _message_text(message: Message) -> str:
    parts = [message.content]
    for call in message.tool_calls:
        parts.append(call.name)
        parts.append(call.raw_arguments or json.dumps(call.arguments or {}, default=str))
    return "".join(parts)


def to_tool_call(scripted: ScriptedCall, request_number: int, index: int) -> ToolCall:
    """The :class:`ToolCall` a scripted call stands for, broken arguments included.

    Argument text that is not a JSON object is kept raw with ``arguments=None``, exactly
    like a real model's malformed output, so the invalid-parameter path is exercised.
    """
    call_id = scripted.id or f"call_{request_number}_{index}"
    # A missing name stays empty: the workflow, not the provider, decides it is invalid.
    name = scripted.name or ""
    given = scripted.arguments
    if given is None:
        return ToolCall(call_id=call_id, name=name, arguments={}, raw_arguments="{}")
    if isinstance(given, dict):
        raw = json.dumps(given, default=str)
        return ToolCall(call_id=call_id, name=name, arguments=dict(given), raw_arguments=raw)
    try:
        parsed: Any = json.loads(given)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return ToolCall(call_id=call_id, name=name, arguments=parsed, raw_arguments=given)
    return ToolCall(call_id=call_id, name=name, arguments=None, raw_arguments=given)


def _pick(turns: Sequence[ScriptedTurn], index: int) -> ScriptedTurn:
    # A script that ran out ends the turn: empty text and no tool calls.
    return turns[index] if index < len(turns) else ScriptedTurn()


def scripted_turn(request: CallModelInput) -> ScriptedTurn:
    """The scripted turn answering ``request``, derived from the conversation alone."""
    script = request.scenario_script or ModelScript()
    messages = request.messages
    reminder_at = next(
        (
            i
            for i, m in enumerate(messages)
            if m.role == Role.SYSTEM and m.content == REPEATED_TOOL_FAILURE_REMINDER
        ),
        None,
    )
    if script.after_reminder is None or reminder_at is None:
        answered = sum(1 for m in messages if m.role == Role.ASSISTANT)
        return _pick(script.turns, answered)
    after = sum(1 for m in messages[reminder_at + 1 :] if m.role == Role.ASSISTANT)
    return _pick(script.after_reminder, after)


class ScriptedProvider:
    """Plays ``request.scenario_script``; the reply index is the number of earlier replies."""

    async def complete(
        self, request: CallModelInput, on_text: TextSink | None = None
    ) -> ModelReply:
        # Not streamed: a scripted reply is there at once.
        turn = scripted_turn(request)
        calls = [to_tool_call(c, request.request_number, i) for i, c in enumerate(turn.tool_calls)]
        input_text = "".join(_message_text(m) for m in request.messages)
        output_text = turn.text + "".join(c.name + (c.raw_arguments or "") for c in calls)
        return ModelReply(
            text=turn.text,
            tool_calls=calls,
            usage=ModelUsage(
                input_tokens=estimate_tokens(input_text),
                output_tokens=estimate_tokens(output_text),
            ),
            latency_seconds=turn.latency_seconds,
        )


class LazyOpenAIProvider:
    """The ``openai`` provider, imported on its first request so importing the worker's
    activities stays cheap and nothing touches the network before a prompt needs it.
    ``environ`` is where the provider reads the operator's endpoint settings."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        self._provider: ModelProvider | None = None

    async def complete(
        self, request: CallModelInput, on_text: TextSink | None = None
    ) -> ModelReply:
        if self._provider is None:
            from activities.openai_provider import OpenAIProvider

            self._provider = OpenAIProvider(self._environ)
        return await self._provider.complete(request, on_text)


class OperatorProvider:
    """``operator``, the default provider: the operator's OpenAI-compatible endpoint when
    one is configured (``endpoint_configured()``, asked on every request), else the offline
    demo model. The choice is the worker's: workflow history records only ``operator``, and
    clients never see the operator's endpoint or keys."""

    def __init__(
        self,
        endpoint: ModelProvider,
        offline: ModelProvider,
        endpoint_configured: Callable[[], bool],
    ) -> None:
        self._endpoint = endpoint
        self._offline = offline
        self._endpoint_configured = endpoint_configured

    async def complete(
        self, request: CallModelInput, on_text: TextSink | None = None
    ) -> ModelReply:
        provider = self._endpoint if self._endpoint_configured() else self._offline
        return await provider.complete(request, on_text)


class ModelActivities:
    """The model activity of one worker; ``providers`` are keyed by ``ModelSpec.provider``.
    ``publish_text=False`` turns streaming to the workflow off (a benchmark's baseline).
    A scenario's script answers only when ``trust`` allows scripted models
    (activities/trust.py; by default it does not)."""

    def __init__(
        self,
        providers: Mapping[str, ModelProvider],
        *,
        publish_text: bool = True,
        trust: WorkerTrust = DENY_ALL,
        conversations: ConversationResolver | None = None,
    ) -> None:
        self._trust = trust
        # Requests carried by reference, made whole (activities/conversation_refs.py).
        self._conversations = conversations or ConversationResolver()
        self._providers = dict(providers)
        self._publish_text = publish_text
        # The scenario channel: a scripted run's turns, never an operator's provider.
        self._scripted = ScriptedProvider()

    def activities(self) -> list[Callable[..., Any]]:
        return [self.call_model, self.judge_progress]

    @activity.defn(name=CALL_MODEL)
    async def call_model(self, request: CallModelInput) -> ModelReply:
        """Ask the request's provider for the next reply (a scenario's script, when it has
        one)."""
        chained = request.conversation is not None
        request = await self._conversations.resolve(request)
        if request.scenario_script is not None:
            self._trust.check_scripted()  # a non-retryable refusal: the prompt ends in error
            reply = await self._scripted.complete(request)
        else:
            provider = self._provider(request.model.provider)
            reply = await _within_window(
                request.retry_window_seconds, lambda: self._complete(provider, request)
            )
        if chained:  # the next request keeps it by reference
            self._conversations.replied(reply)
        return reply

    @activity.defn(name=JUDGE_PROGRESS)
    async def judge_progress(self, request: JudgeProgressInput) -> JudgeProgressOutput:
        """Ask the prompt's model whether its agent is making progress (docs/protections.md, "The
        progress judge"): a scenario's scripted verdicts, else the provider, retried like a model
        request and never streamed to the prompt. The reason stays in the result (history), never in
        a log."""
        if request.scenario_verdicts is not None:
            self._trust.check_scripted()
            return scripted_judgement(request, estimate_tokens)
        provider = self._provider(request.model.provider)
        asked = judge_request(request)

        async def ask() -> ModelReply:
            async with heartbeating(activity_heartbeat()):
                return await provider.complete(asked)

        return judgement(await _within_window(request.retry_window_seconds, ask))

    def _provider(self, name: str) -> ModelProvider:
        provider = self._providers.get(name)
        if provider is None:
            # A configuration error: retrying cannot make the provider appear.
            raise ApplicationError(
                f"unknown model provider {name!r}",
                type="UnknownModelProvider",
                non_retryable=True,
            )
        return provider

    async def _complete(self, provider: ModelProvider, request: CallModelInput) -> ModelReply:
        heartbeat = activity_heartbeat()
        send = workflow_delta_sender() if self._publish_text else None
        async with heartbeating(heartbeat):
            if send is None:
                return await provider.complete(request)
            publisher = DeltaPublisher(
                send,
                request_number=request.request_number,
                attempt=activity.info().attempt,
                heartbeat=heartbeat,
            )
            async with publisher:
                return await provider.complete(request, publisher)


def _retry_window(seconds: float | None) -> RetryWindow | None:
    """This attempt's retry window, when the request has one and runs as an activity."""
    if seconds is None or not activity.in_activity():
        return None
    info = activity.info()
    return RetryWindow(seconds, info.scheduled_time, info.attempt)


async def _within_window(
    seconds: float | None, request: Callable[[], Awaitable[ModelReply]]
) -> ModelReply:
    """One attempt of a model request with a retry window of ``seconds`` (``None``: the
    retry policy counts attempts): a failure after which no attempt could start within the
    window is final (activities/model_retry.py)."""
    window = _retry_window(seconds)
    if window is not None:
        window.check_start()
    try:
        return await request()
    except Exception as err:
        if window is None:
            raise
        final = window.after_failure(err)
        if final is err:
            raise
        raise final from None
