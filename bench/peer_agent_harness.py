"""Temporal's own Temporal Agent Harness, as a peer of Seawall in bench/peers.py (issue 39).

Why it exists: ``temporal-agent-harness`` (0.8.0, the version measured) is the durable-agent
toolkit Temporal itself publishes, so a Temporal user may pick it instead of Seawall; the
peer benchmark runs the same scripted conversation through it, set up as its 0.8.0
documentation shows (the wheel's README, its sections on a first agent and on running a
worker, and the docstring of ``temporal_agent_harness.ai_sdks.pydantic_ai_harness``, its
Pydantic AI integration):

- the agent is an ``@agent.defn`` class whose ``@agent.init`` builds an
  ``AgentWorkflowRunner`` over a ``WorkflowStream`` (its event stream) with
  ``ToolApprovalPolicy.allow_inherently_safe()``, and one ``@agent.accepts`` handler
  (``ask``) that runs the turn;
- the turn is a Pydantic AI ``TemporalAgent`` with the harness's
  ``harness_event_stream_handler`` (model deltas onto the event stream), its tools
  ``@agent.activity_tool_defn`` tools (each an activity, run through the runner's approval
  gate) adapted by ``build_harness_toolset``, and ``HarnessDeps(runner=...)`` per run;
- the client carries ``PydanticAIPlugin`` then ``AgentHarnessPlugin(tools=...)`` (last, as
  its README says), the worker ``AgentPlugin``;
- a prompt is what its documented client does for one request and response
  (``AgentClient.send_message``, as its web app's ``/api/chat``): the agent session started,
  the message sent, the turn's events streamed to ``turn_end``, then the ``close`` signal.

The model is a ``FunctionModel`` replaying :mod:`bench.peer_script` (streamed: the
harness's stream handler runs the model-request activity streaming). Needs the ``peers``
extra; imported only by the peer benchmark.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.client import Client
from temporalio.contrib.workflow_streams import WorkflowStream
from temporalio.workflow import ActivityConfig

with workflow.unsafe.imports_passed_through():
    from pydantic_ai import Agent
    from pydantic_ai.durable_exec.temporal import TemporalAgent
    from pydantic_ai.messages import ModelMessage, TextPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
    from temporal_agent_harness.ai_sdks.pydantic_ai_harness import (
        HarnessDeps,
        build_harness_toolset,
        harness_event_stream_handler,
    )
    from temporal_agent_harness.harness import AgentWorkflowRunner, agent
    from temporal_agent_harness.harness.agent_protocol import (
        AgentConfig,
        TextMessage,
        TextReply,
        ToolApprovalPolicy,
    )

    from bench import peer_script
    from bench.peer_pydantic_ai import scripted_reply, usage_limits

WORKFLOW_NAME = "PeerAgentHarnessWorkflow"
TOOL_CONFIG = ActivityConfig(start_to_close_timeout=timedelta(minutes=2))


async def scripted_stream(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    """The script's next reply, streamed: the batch's calls in one chunk, or the text."""
    reply = scripted_reply(messages, info)
    if isinstance(reply.parts[0], TextPart):
        yield peer_script.FINAL_TEXT
        return
    yield {
        i: DeltaToolCall(p.tool_name, p.args_as_json_str(), tool_call_id=p.tool_call_id)
        for i, p in enumerate(reply.parts)
    }


def harness_tool(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` as a durable (activity) harness tool, declared safe so the policy runs it."""
    fn.__name__ = fn.__qualname__ = name
    tool: Callable[..., Any] = agent.activity_tool_defn(
        inherently_safe=True, activity_config=TOOL_CONFIG, name=name
    )(fn)
    return tool


TOOLS = [harness_tool(fn, fn.__name__) for fn in peer_script.tools(peer_script.SHAPE.calls)]
_TOOLSET, _TOOL_CONFIG = build_harness_toolset(TOOLS, id="peer-tools")
with warnings.catch_warnings():
    # PydanticAIDeprecationWarning: the harness's 0.8.0 integration is built on the
    # TemporalAgent wrapper (see bench/peer_pydantic_ai.py).
    warnings.simplefilter("ignore")
    temporal_agent = TemporalAgent(
        Agent(
            FunctionModel(scripted_reply, stream_function=scripted_stream),
            name="peer_harness_agent",
            deps_type=HarnessDeps,
            toolsets=[_TOOLSET],
        ),
        name="peer_harness_agent",
        event_stream_handler=harness_event_stream_handler,
        tool_activity_config=_TOOL_CONFIG,
    )


@agent.defn(name=WORKFLOW_NAME)
class PeerAgentHarnessWorkflow:
    @agent.init  # type: ignore[untyped-decorator]  # the harness is not followed (pyproject)
    def __init__(self, config: AgentConfig) -> None:
        self._runner = AgentWorkflowRunner(
            config,
            stream=WorkflowStream(),
            approval_policy_default=ToolApprovalPolicy.allow_inherently_safe(),
        )

    @agent.accepts  # type: ignore[untyped-decorator]
    async def ask(self, message: TextMessage) -> TextReply:
        """Ask the agent to fetch the data files."""
        result = await temporal_agent.run(
            message.text,
            deps=HarnessDeps(runner=self._runner),
            usage_limits=usage_limits(message.text),
        )
        return TextReply(text=str(result.output))


# How often run_prompt re-attaches to a session whose stream ended before the reply.
REATTACHES = 10


async def run_prompt(client: Client, workflow_id: str, task_queue: str, prompt: str) -> str:
    """One prompt as the harness's client runs one request and response: the session
    started, the message sent and its turn streamed to ``turn_end``, the session closed.

    A read error ends the client's stream early (under load a workflow task of the agent can
    fail, e.g. on the SDK's deadlock timeout, and its stream updates fail until Temporal
    retries it); its stream merge then ends, saying the consumer can re-attach, which this
    does (``AgentClient.attach``), as a client would, until the reply has arrived."""
    from temporal_agent_harness.harness.agent_client import (
        AgentClient,
        AgentTurnError,
        AgentTurnTimeout,
    )
    from temporal_agent_harness.harness.agent_protocol import AgentEventType

    reply: str | None = None

    def seen(item: Any, _offset: int) -> None:
        nonlocal reply
        if isinstance(item, AgentTurnError | AgentTurnTimeout):
            raise RuntimeError(f"the harness turn failed: {item}")
        if item.event.type == AgentEventType.MESSAGE_HANDLER_END:
            reply = str(item.event.output["text"])

    handle = await client.start_workflow(
        WORKFLOW_NAME, AgentConfig(), id=workflow_id, task_queue=task_queue
    )
    session = AgentClient(client, workflow_id)
    # No turn timeout (its client's default is 300 s): at 100 prompts in flight on a loaded
    # machine a turn may take longer, and the benchmark measures how long, not whether.
    async for _ in await session.send_message(
        "ask", TextMessage(text=prompt).model_dump(), on_item=seen, timeout=None
    ):
        pass
    for attempt in range(REATTACHES):
        if reply is not None:
            break
        try:
            async for _ in await session.attach(on_item=seen):
                pass
        except Exception:  # the agent's workflow task still failing: wait, then again
            await asyncio.sleep(attempt + 1)
    await handle.signal("close")
    await handle.result()
    assert reply is not None, "the turn ended without the handler's reply"
    return reply


def client_plugins() -> list[object]:
    from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
    from temporal_agent_harness.plugin import AgentHarnessPlugin

    return [PydanticAIPlugin(), AgentHarnessPlugin(tools=TOOLS)]


def worker_plugins() -> list[object]:
    from pydantic_ai.durable_exec.temporal import AgentPlugin

    return [AgentPlugin(temporal_agent)]


WORKFLOWS = [PeerAgentHarnessWorkflow]
ACTIVITIES: list[object] = []  # AgentHarnessPlugin and AgentPlugin register them
