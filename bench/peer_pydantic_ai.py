"""pydantic-ai's durable agents on Temporal, as peers of Seawall in bench/peers.py.

Why it exists: a user building a durable agent on Temporal may pick pydantic-ai
(``pydantic_ai.durable_exec.temporal``) instead of Seawall; the peer benchmark runs the same
scripted conversation through it, both ways its documentation has shown:

- ``TemporalAgent``, the wrapper issue 27 names: a module-level ``Agent`` with
  ``agent.tool_plain`` tools wrapped in a ``TemporalAgent`` listed in the workflow's
  ``__pydantic_ai_agents__`` (:class:`PeerPydanticAiWorkflow`). Deprecated in
  pydantic-ai-slim 2.68, the version measured;
- the ``TemporalDurability`` capability that replaces it: the same agent built with
  ``capabilities=[TemporalDurability()]`` and run directly
  (:mod:`bench.peer_pydantic_ai_durability`).

Either way the client carries ``PydanticAIPlugin`` (its converter and its sandbox
passthroughs) and the worker ``AgentPlugin``; the workflow runs in the SDK's default sandbox
as the plugin adjusts it. The model is a ``FunctionModel`` that replays the script of
:mod:`bench.peer_script`. Needs the ``peers`` extra; imported only by the peer benchmark.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic_ai import Agent
    from pydantic_ai.durable_exec.temporal import TemporalAgent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import UsageLimits

    from bench import peer_script

WORKFLOW_NAME = "PeerPydanticAiWorkflow"


def scripted_reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The script's next reply: batch n after n model responses, then the final text."""
    done = sum(1 for m in messages if isinstance(m, ModelResponse))
    prompt = next(
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    )
    if done >= peer_script.batches_in(prompt):
        return ModelResponse(parts=[TextPart(peer_script.FINAL_TEXT)])
    calls = peer_script.batch_calls(done, peer_script.SHAPE.calls)
    return ModelResponse(
        parts=[
            ToolCallPart(c.name, c.arguments, tool_call_id=f"call-{done}-{i}")
            for i, c in enumerate(calls)
        ]
    )


def scripted_agent(name: str, capabilities: Sequence[Any] = ()) -> Agent[None, str]:
    """The agent both peers run: the scripted model and the script's tools."""
    agent: Agent[None, str] = Agent(
        FunctionModel(scripted_reply), name=name, capabilities=list(capabilities)
    )
    for tool in peer_script.tools(peer_script.SHAPE.calls):
        agent.tool_plain(name=tool.__name__)(tool)
    return agent


def usage_limits(prompt: str) -> UsageLimits:
    """Room for every model step, as Seawall's long workload raises its own cap
    (``Workload.limits``); pydantic-ai's default request limit is 50."""
    return UsageLimits(request_limit=peer_script.batches_in(prompt) + 1)


agent = scripted_agent("peer_agent")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # PydanticAIDeprecationWarning: see the docstring
    temporal_agent = TemporalAgent(agent)


@workflow.defn(name=WORKFLOW_NAME)
class PeerPydanticAiWorkflow:
    __pydantic_ai_agents__ = [temporal_agent]  # noqa: RUF012 - the plugin's convention

    @workflow.run
    async def run(self, prompt: str) -> str:
        result = await temporal_agent.run(prompt, usage_limits=usage_limits(prompt))
        return str(result.output)


def client_plugins() -> list[object]:
    from pydantic_ai.durable_exec.temporal import PydanticAIPlugin

    return [PydanticAIPlugin()]


def worker_plugins() -> list[object]:
    from pydantic_ai.durable_exec.temporal import AgentPlugin

    return [AgentPlugin(temporal_agent)]


WORKFLOWS = [PeerPydanticAiWorkflow]
ACTIVITIES: list[object] = []  # AgentPlugin registers the agent's activities
