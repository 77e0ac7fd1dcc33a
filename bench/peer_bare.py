"""The bare agent loop on Temporal, as a peer of Seawall in bench/peers.py: the floor.

Why it exists: what Seawall costs over the minimal loop a Temporal user would write by hand
is its overhead, and the peer benchmark reads it off this peer's column beside Seawall's (the
same scripted conversation, server, rounds and figures). The loop: a model activity with the
conversation so far, then the reply's tool calls as activities, gathered, their results
appended, again until the model answers without calls. No guard, refusals, caps, events,
search attributes or tool listing. The model replays :mod:`bench.peer_script`, the tools
sleep the shape's latency and answer as its script says; pydantic models on the SDK's
pydantic converter. Its module is passed through the SDK's sandbox, as Seawall passes
``workflows`` through, so neither re-imports its workflow code per run.
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from typing import Literal

from pydantic import BaseModel
from temporalio import activity, workflow
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

with workflow.unsafe.imports_passed_through():
    from bench import peer_script

WORKFLOW_NAME = "PeerBareWorkflow"
MODEL_ACTIVITY = "bare_model_request"
STEP_TIMEOUT = timedelta(minutes=2)


class Call(BaseModel):
    id: str
    name: str
    arguments: dict[str, str]


class Message(BaseModel):
    role: Literal["user", "assistant", "tool"]
    content: str = ""
    calls: list[Call] = []
    call_id: str | None = None


@activity.defn(name=MODEL_ACTIVITY)
async def model_request(messages: list[Message]) -> Message:
    """The script's next reply: batch n after n replies, then the final text."""
    done = sum(1 for m in messages if m.role == "assistant")
    if done >= peer_script.batches_in(messages[0].content):
        return Message(role="assistant", content=peer_script.FINAL_TEXT)
    calls = peer_script.batch_calls(done, peer_script.SHAPE.calls)
    return Message(
        role="assistant",
        calls=[
            Call(id=f"call-{done}-{i}", name=c.name, arguments={"path": str(c.arguments["path"])})
            for i, c in enumerate(calls)
        ],
    )


@activity.defn(name="bare_tool")
async def run_tool(call: Call) -> Message:
    content = await peer_script.answer(call.name, call.arguments["path"])
    return Message(role="tool", content=content, call_id=call.id)


@workflow.defn(name=WORKFLOW_NAME)
class PeerBareWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        messages = [Message(role="user", content=prompt)]
        while True:
            reply = await workflow.execute_activity(
                model_request, messages, start_to_close_timeout=STEP_TIMEOUT
            )
            messages.append(reply)
            if not reply.calls:
                return reply.content
            results = await asyncio.gather(
                *(
                    workflow.execute_activity(run_tool, call, start_to_close_timeout=STEP_TIMEOUT)
                    for call in reply.calls
                )
            )
            messages.extend(results)


def _passed_through(runner: WorkflowRunner | None) -> WorkflowRunner:
    base = runner if isinstance(runner, SandboxedWorkflowRunner) else SandboxedWorkflowRunner()
    restrictions = base.restrictions.with_passthrough_modules(__name__)
    return dataclasses.replace(base, restrictions=restrictions)


def client_plugins() -> list[object]:
    """The pydantic converter and the sandbox passthrough (a client plugin reaches the
    worker and the replayer built with it too)."""
    return [
        SimplePlugin(
            "bench.peer_bare",
            data_converter=pydantic_data_converter,
            workflow_runner=_passed_through,
        )
    ]


def worker_plugins() -> list[object]:
    return []


WORKFLOWS = [PeerBareWorkflow]
ACTIVITIES = [model_request, run_tool]
