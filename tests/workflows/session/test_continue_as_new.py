"""A session lives through continue-as-new on a dev server that suggests it early
(``limit.historyCount.suggestContinueAsNew``): conversation, queue and finished prompts are
carried, and prompts submitted meanwhile are not lost."""

from __future__ import annotations

import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from seawall.worker.build import build_worker
from tests.trust_helpers import harness_trust, signed
from tests.workflows.session.test_workflow import prompt_result, start_session, submit
from workflows.contracts import Role
from workflows.session import SessionWorkflow


async def test_session_keeps_conversation_and_queue_across_continue_as_new(
    eager_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    client = signed(eager_env.client)
    queue = f"can-{uuid.uuid4().hex[:8]}"
    texts = [f"prompt {n}" for n in range(6)]
    replies = [{"text": f"reply {n}"} for n in range(6)]
    async with build_worker(client, queue, trust=harness_trust()):
        session = await start_session(client, queue, tmp_path, replies, guard_mode="enforce")
        first_run = (await session.describe()).run_id
        # Submitted back to back: most wait in the queue while earlier prompts run.
        ids = [await submit(session, text) for text in texts]
        results = [await prompt_result(client, prompt_id) for prompt_id in ids]
        await session.signal(SessionWorkflow.close)
        final = await session.result()
        runs = [
            execution.run_id
            async for execution in client.list_workflows(f"WorkflowId = '{session.id}'")
        ]

    assert len(set(runs)) > 1, "the session never continued as new"
    assert (await session.describe()).run_id != first_run
    assert [r.messages[-1].content for r in results] == [f"reply {n}" for n in range(6)]
    assert [m.content for m in results[-1].messages if m.role is Role.USER] == texts
    assert [f.prompt_id for f in final.finished] == ids
