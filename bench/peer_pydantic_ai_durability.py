"""pydantic-ai's ``TemporalDurability`` capability, as a peer of Seawall in bench/peers.py.

Why it exists: since pydantic-ai-slim 2.68 its documentation recommends a plain ``Agent``
with the ``TemporalDurability`` capability over the ``TemporalAgent`` wrapper
(:mod:`bench.peer_pydantic_ai`), so the benchmark runs that too. The same scripted agent
(``scripted_agent``), built with ``capabilities=[TemporalDurability()]``, listed in the
workflow's ``__pydantic_ai_agents__`` and run directly; the client carries
``PydanticAIPlugin`` and the worker ``AgentPlugin(agent)``, as with the wrapper.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic_ai.durable_exec.temporal import TemporalDurability

    from bench.peer_pydantic_ai import client_plugins, scripted_agent, usage_limits

WORKFLOW_NAME = "PeerPydanticAiDurabilityWorkflow"

agent = scripted_agent("peer_durable_agent", capabilities=[TemporalDurability()])


@workflow.defn(name=WORKFLOW_NAME)
class PeerPydanticAiDurabilityWorkflow:
    __pydantic_ai_agents__ = [agent]  # noqa: RUF012 - the plugin's convention

    @workflow.run
    async def run(self, prompt: str) -> str:
        result = await agent.run(prompt, usage_limits=usage_limits(prompt))
        return str(result.output)


def worker_plugins() -> list[object]:
    from pydantic_ai.durable_exec.temporal import AgentPlugin

    return [AgentPlugin(agent)]


__all__ = ["client_plugins", "worker_plugins"]
WORKFLOWS = [PeerPydanticAiDurabilityWorkflow]
ACTIVITIES: list[object] = []
