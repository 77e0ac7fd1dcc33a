"""Live model text, end to end on the real dev server (workflows/prompt/events.py):
the model activity streams, the prompt workflow turns the text into ``message_delta`` events,
and ``follow_prompt_events`` hands them to a client before the durable ``agent_message``."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from activities.model import ModelActivities
from activities.model_stream import TextSink
from seawall.client.events import Idle, follow_prompt_events
from seawall.worker.build import build_activities, build_worker
from tests.trust_helpers import harness_trust
from workflows.contracts.activity import CallModelInput, ModelReply, ModelSpec
from workflows.contracts.prompt import (
    DELTA_RETRY_STATUS,
    AgentEvent,
    EventKind,
    EventsQuery,
    PromptInput,
    PromptResult,
)
from workflows.prompt.workflow import PromptWorkflow


def prompt_input(workspace: Path, text: str = "hello", provider: str = "demo") -> PromptInput:
    return PromptInput.model_validate(
        {
            "prompt": text,
            "workspace_root": str(workspace),
            "model": ModelSpec.model_validate({"provider": provider}),
            "approval_mode": "yolo",
        }
    )


async def start(client: Client, task_queue: str, prompt: PromptInput) -> str:
    prompt_id = f"stream-{uuid.uuid4().hex[:10]}"
    await client.start_workflow(PromptWorkflow.run, prompt, id=prompt_id, task_queue=task_queue)
    return prompt_id


async def follow(client: Client, prompt_id: str, after: int = 0) -> list[AgentEvent]:
    return [
        item
        async for item in follow_prompt_events(client, prompt_id, after)
        if not isinstance(item, Idle)
    ]


def text_by_batch(events: list[AgentEvent]) -> list[tuple[int, str, str]]:
    """(batch, streamed text, whole message) for each agent message that was streamed."""
    streamed: dict[int, str] = {}
    pairs = []
    for event in events:
        if event.kind is EventKind.MESSAGE_DELTA:
            streamed[event.batch] = streamed.get(event.batch, "") + (event.text or "")
        elif event.kind is EventKind.AGENT_MESSAGE and event.batch in streamed:
            pairs.append((event.batch, streamed.pop(event.batch), event.text or ""))
    assert not streamed, "deltas without their agent_message"
    return pairs


async def test_a_streamed_prompt_delivers_deltas_in_order_before_the_message(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    prompt_id = await start(client, task_queue, prompt_input(tmp_path))
    events = await follow(client, prompt_id)

    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert events[-1].kind is EventKind.PROMPT_FINISHED
    # Both demo replies streamed, word by word, and add up to the durable message exactly.
    pairs = text_by_batch(events)
    assert [batch for batch, _, _ in pairs] == [0, 1]
    assert all(streamed == whole for _, streamed, whole in pairs)
    first_deltas = [e for e in events if e.kind is EventKind.MESSAGE_DELTA and e.batch == 0]
    assert len(first_deltas) > 1
    assert all(e.status is None for e in first_deltas)
    first_message = next(e for e in events if e.kind is EventKind.AGENT_MESSAGE)
    assert max(e.seq for e in first_deltas) < first_message.seq


async def test_resuming_from_any_cursor_gives_the_rest_exactly_once(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    prompt_id = await start(client, task_queue, prompt_input(tmp_path))
    # Follow live, stopping after the second delta: a client that went away mid-reply.
    seen: list[AgentEvent] = []
    async for item in follow_prompt_events(client, prompt_id, 0):
        if isinstance(item, AgentEvent):
            seen.append(item)
            if sum(e.kind is EventKind.MESSAGE_DELTA for e in seen) == 2:
                break
    resumed = await follow(client, prompt_id, after=seen[-1].seq)
    everything = await follow(client, prompt_id)

    assert seen + resumed == everything
    for cursor in range(len(everything) + 1):
        assert await follow(client, prompt_id, after=cursor) == everything[cursor:]


async def test_the_conversation_is_the_same_whether_or_not_anyone_watched(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    watched_id = await start(client, task_queue, prompt_input(tmp_path))
    watched_events = await follow(client, watched_id)
    unwatched_id = await start(client, task_queue, prompt_input(tmp_path))

    watched: PromptResult = await client.get_workflow_handle_for(
        PromptWorkflow.run, watched_id
    ).result()
    unwatched: PromptResult = await client.get_workflow_handle_for(
        PromptWorkflow.run, unwatched_id
    ).result()
    assert watched.messages == unwatched.messages
    assert watched.stop_reason == unwatched.stop_reason
    # The deltas were there for the watcher; the unwatched prompt's log has them too (a
    # client joining late reads them; how the text was batched is a matter of timing).
    unwatched_log = await client.get_workflow_handle(unwatched_id).query(
        PromptWorkflow.events, EventsQuery()
    )
    assert text_by_batch(unwatched_log) == text_by_batch(watched_events)
    durable = [e.kind for e in watched_events if e.kind is not EventKind.MESSAGE_DELTA]
    assert [e.kind for e in unwatched_log if e.kind is not EventKind.MESSAGE_DELTA] == durable


class FlakyStreamingModel:
    """Attempt 1 streams the start of a reply and breaks off (a lost connection); attempt 2
    streams ``retried_text`` in two pieces and answers it."""

    def __init__(self, first_text: str, retried_text: str) -> None:
        self._first = first_text
        self._retried = retried_text

    async def complete(
        self, request: CallModelInput, on_text: TextSink | None = None
    ) -> ModelReply:
        assert on_text is not None
        if activity.info().attempt == 1:
            on_text(self._first)
            raise ApplicationError("the stream broke off", type="ModelUnreachable")
        half = len(self._retried) // 2
        on_text(self._retried[:half])
        on_text(self._retried[half:])
        return ModelReply(text=self._retried)


async def run_with_model(
    client: Client, tmp_path: Path, model: FlakyStreamingModel
) -> tuple[list[AgentEvent], PromptResult]:
    """One prompt answered by ``model`` (standing in for the demo provider) on its own worker."""
    activities = dataclasses.replace(
        build_activities(trust=harness_trust()),
        model=ModelActivities({"demo": model}, trust=harness_trust()),
    )
    queue = f"stream-{uuid.uuid4().hex[:8]}"
    async with build_worker(client, queue, activities):
        prompt_id = await start(client, queue, prompt_input(tmp_path))
        events = await follow(client, prompt_id)
        result: PromptResult = await client.get_workflow_handle_for(
            PromptWorkflow.run, prompt_id
        ).result()
    return events, result


async def test_a_retried_request_that_says_the_same_shows_no_text_twice(
    client: Client, tmp_path: Path
) -> None:
    text = "Hello world, once only."
    events, result = await run_with_model(client, tmp_path, FlakyStreamingModel("Hello wor", text))
    deltas = [e for e in events if e.kind is EventKind.MESSAGE_DELTA]
    assert "".join(e.text or "" for e in deltas) == text
    assert deltas[0].text == "Hello wor"
    assert all(e.status is None for e in deltas)
    assert result.messages[-1].content == text


async def test_a_retried_request_that_says_something_else_restarts_the_text(
    client: Client, tmp_path: Path
) -> None:
    events, result = await run_with_model(
        client, tmp_path, FlakyStreamingModel("Hello wor", "Goodbye, then.")
    )
    deltas = [e for e in events if e.kind is EventKind.MESSAGE_DELTA]
    assert deltas[0].text == "Hello wor"
    restart = next(i for i, e in enumerate(deltas) if e.status == DELTA_RETRY_STATUS)
    assert "".join(e.text or "" for e in deltas[restart:]) == "Goodbye, then."
    assert result.messages[-1].content == "Goodbye, then."
    message = next(e for e in events if e.kind is EventKind.AGENT_MESSAGE)
    assert message.text == "Goodbye, then."
