"""A prompt's model requests carried as a chain (CONVERSATION_REFS_PATCH) on a real worker:
each request records only what is new, and a worker that never saw the earlier requests
resolves them from the prompt's history (docs/durability.md, "Conversations stored once")."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.conversation_refs import ConversationResolver
from activities.model import ModelActivities
from activities.prompt_preamble import PromptPreambles
from seawall.worker.build import build_activities, build_worker, model_providers
from tests.scenario_helpers import calls, ok
from tests.trust_helpers import harness_trust
from tests.workflows.prompt.test_durable_steps import history_of, hooks, model_requests
from workflows.contracts.activity import CallModelInput, RunToolInput
from workflows.contracts.conversation import Message
from workflows.contracts.conversation_ref import KeptReply, KeptResult
from workflows.contracts.prompt import PromptInput, StopReason
from workflows.prompt.workflow import PromptWorkflow

pytestmark = pytest.mark.asyncio


def three_batches(tmp_path: Path) -> PromptInput:
    return PromptInput(
        prompt="go",
        workspace_root=str(tmp_path),
        scenario=hooks(
            {"probe": {"outcomes": [ok("a" * 2_000)] * 6}},
            [
                calls("probe", 2),
                calls("probe", 2, start=2),
                calls("probe", 2, start=4),
                {"text": "done"},
            ],
        ),
    )


async def test_a_worker_that_never_saw_the_earlier_requests_resolves_them_from_history(
    client: Client, tmp_path: Path
) -> None:
    queue = f"refs-{uuid.uuid4().hex[:8]}"
    trust = harness_trust()
    # No caches: every request after the first is resolved from the prompt's history, and the
    # tools, script and fixtures the prompt names are read from it every time, as on a worker
    # started after the one that sent the request before it.
    preambles = PromptPreambles(max_prompts=0)
    activities = build_activities({"HOME": str(tmp_path)}, trust=trust, preambles=preambles)
    resolver = ConversationResolver(max_prompts=0, preambles=preambles)
    activities = dataclasses.replace(
        activities,
        model=ModelActivities(model_providers({}), trust=trust, conversations=resolver),
    )
    async with build_worker(client, queue, activities):
        result = await client.execute_workflow(
            PromptWorkflow.run,
            three_batches(tmp_path),
            id=f"refs-{uuid.uuid4().hex[:10]}",
            task_queue=queue,
        )

    # The script picks each turn by the replies in the conversation it is given: a request
    # resolved short would replay the first turn until the guard or the cap stopped it.
    assert result.stop_reason is StopReason.END_TURN
    assert result.model_requests == 4
    assert result.messages[-1].content == "done"
    assert resolver.history_reads == 3
    history = await history_of(client, result.workflow_id)
    sent: list[CallModelInput] = []
    for event in history.events:
        attributes = event.activity_task_scheduled_event_attributes
        if attributes.activity_type.name == "seawall.call_model":
            [request] = await client.data_converter.decode(
                attributes.input.payloads, [CallModelInput]
            )
            sent.append(request)
    # What each request recorded: only the new messages. The tools and the script are named
    # by the first (INPUTS_BY_REFERENCE_PATCH): the listing and the start input hold them.
    assert not any(r.tools or r.scenario_script for r in sent)
    named = [(r.conversation.tools_listed, r.conversation.script_in_start) for r in sent]  # type: ignore[union-attr]
    assert named == [(True, True)] + [(False, False)] * 3
    # Read from the history: by the first request, by each later one replaying the chain
    # from its start, and by each of the six fixture calls.
    assert preambles.history_reads == 4 + 6
    run_tool = [
        e.activity_task_scheduled_event_attributes.input
        for e in history.events
        if e.activity_task_scheduled_event_attributes.activity_type.name == "seawall.run_tool"
    ]
    for payloads in run_tool:
        [tool_input] = await client.data_converter.decode(payloads.payloads, [RunToolInput])
        assert tool_input.scenario_fixture is None and tool_input.fixture_in_start
    inline = [p for r in sent for p in r.conversation.parts if isinstance(p, Message)]  # type: ignore[union-attr]
    whole = await model_requests(client, history)
    # Every message once, where it was first recorded: the first request keeps the prompt's
    # text from the start input, each later one the reply to the one before from that
    # request's result and each tool output from its call's result (RESULTS_BY_REFERENCE_PATCH).
    assert sent[0].conversation.from_start  # type: ignore[union-attr]
    replies = [p for r in sent for p in r.conversation.parts if isinstance(p, KeptReply)]  # type: ignore[union-attr]
    assert len(replies) == 3
    results = [p for r in sent for p in r.conversation.parts if isinstance(p, KeptResult)]  # type: ignore[union-attr]
    assert [p.result_of for p in results] == [f"call_{b}_{i}" for b in (1, 2, 3) for i in (0, 1)]
    assert not inline
    assert 1 + len(replies) + len(results) == len(whole[-1].messages)
    assert [m.content for m in whole[-1].messages] == [m.content for m in result.messages[:-1]]
