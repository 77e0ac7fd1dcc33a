"""``follow_prompt_events`` against workflows the current prompt workflow is not: a worker
from before paged event reads (the follower falls back to the ``events`` query)."""

from __future__ import annotations

import uuid

from temporalio.client import Client
from temporalio.worker import Worker

from seawall.client.events import Idle, follow_prompt_events
from tests.seawall.client.old_prompt import OLD_EVENTS, OldPromptWorkflow


async def test_a_prompt_on_an_older_worker_is_followed_through_the_events_query(
    client: Client,
) -> None:
    queue = f"old-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=queue, workflows=[OldPromptWorkflow]):
        handle = await client.start_workflow(
            OldPromptWorkflow.run, id=f"old-prompt-{uuid.uuid4().hex[:8]}", task_queue=queue
        )
        followed = [
            item
            async for item in follow_prompt_events(client, handle.id, 0)
            if not isinstance(item, Idle)
        ]
        resumed = [
            item
            async for item in follow_prompt_events(client, handle.id, 1)
            if not isinstance(item, Idle)
        ]
        await handle.signal(OldPromptWorkflow.release)
        await handle.result()
    assert followed == OLD_EVENTS
    assert resumed == OLD_EVENTS[1:]
