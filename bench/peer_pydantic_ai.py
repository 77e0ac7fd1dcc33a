"""pydantic-ai's durable agent on Temporal, as a peer of Seawall in bench/peers.py.

Why it exists: a user building a durable agent on Temporal may pick pydantic-ai's
``TemporalAgent`` (``pydantic_ai.durable_exec.temporal``) instead of Seawall; the peer
benchmark runs the same scripted conversation through it. Set up as pydantic-ai's Temporal
documentation shows: a module-level ``Agent`` with ``@agent.tool`` tools, wrapped in a
``TemporalAgent``, listed in the workflow's ``__pydantic_ai_agents__``; the client carries
``PydanticAIPlugin`` (its converter and its sandbox passthroughs) and the worker
``AgentPlugin``; the workflow runs in the SDK's default sandbox as the plugin adjusts it.
The model is a ``FunctionModel`` that replays the script of :mod:`bench.peer_script`.
Needs the ``peers`` extra; imported only by the peer benchmark.

(In pydantic-ai-slim 2.68, the version measured, ``TemporalAgent`` is deprecated in favour
of an ``Agent`` with the ``TemporalDurability`` capability; this module uses the wrapper
the issue names. The capability path is not measured yet.)
"""

from __future__ import annotations

import asyncio
import warnings

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic_ai import Agent, RunContext
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
MODEL_ACTIVITY_MARK = "model_request"  # its model activities' type names contain this


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


agent: Agent[None, str] = Agent(FunctionModel(scripted_reply), name="peer_agent")


def _fetch_tool(name: str) -> None:
    async def fetch(ctx: RunContext[None], path: str) -> str:
        """Fetch one data file."""
        await asyncio.sleep(peer_script.SHAPE.tool_latency_seconds)
        return peer_script.fetch_result()

    agent.tool(name=name)(fetch)


for _name in peer_script.fetch_names(peer_script.SHAPE.calls):
    _fetch_tool(_name)


@agent.tool  # type: ignore[untyped-decorator]  # pydantic-ai is not followed (pyproject)
async def flaky_api(ctx: RunContext[None], attempt: int) -> str:
    """Call the flaky endpoint."""
    await asyncio.sleep(peer_script.SHAPE.tool_latency_seconds)
    return peer_script.flaky_result(attempt)


with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # PydanticAIDeprecationWarning: see the docstring
    temporal_agent = TemporalAgent(agent)


@workflow.defn(name=WORKFLOW_NAME)
class PeerPydanticAiWorkflow:
    __pydantic_ai_agents__ = [temporal_agent]  # noqa: RUF012 - the plugin's convention

    @workflow.run
    async def run(self, prompt: str) -> str:
        # Room for every model step, as Seawall's long workload raises its own cap
        # (``Workload.limits``); pydantic-ai's default request limit is 50.
        limits = UsageLimits(request_limit=peer_script.batches_in(prompt) + 1)
        result = await temporal_agent.run(prompt, usage_limits=limits)
        return str(result.output)


def client_plugins() -> list[object]:
    from pydantic_ai.durable_exec.temporal import PydanticAIPlugin

    return [PydanticAIPlugin()]


def worker_plugins() -> list[object]:
    from pydantic_ai.durable_exec.temporal import AgentPlugin

    return [AgentPlugin(temporal_agent)]


WORKFLOWS = [PeerPydanticAiWorkflow]
ACTIVITIES: list[object] = []  # AgentPlugin registers the agent's activities
