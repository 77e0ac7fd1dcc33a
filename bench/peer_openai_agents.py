"""The OpenAI Agents SDK on Temporal, as a peer of Seawall in bench/peers.py.

Why it exists: the other durable agent a Temporal user may pick is the OpenAI Agents SDK
with Temporal's integration (``temporalio.contrib.openai_agents``, since temporalio 1.35 a
re-export of the standalone ``temporalio-openai-agents`` package's
``temporalio.openai_agents``). Set up as its documentation shows: an ``Agent`` built in the
workflow with ``activity_as_tool`` tools, run by ``Runner.run``; the client carries
``OpenAIAgentsPlugin`` (its converter, interceptors, sandbox passthroughs and model
activity) with a fake ``ModelProvider`` whose model replays the script of
:mod:`bench.peer_script`; the workflow runs in the SDK's default sandbox as the plugin
adjusts it. Needs the ``peers`` extra; imported only by the peer benchmark.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from agents import Agent, Runner
    from agents.items import ModelResponse
    from agents.models.interface import Model, ModelProvider
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )
    from temporalio.openai_agents import workflow as agents_workflow

    from bench import peer_script

WORKFLOW_NAME = "PeerOpenAiAgentsWorkflow"
TOOL_TIMEOUT = timedelta(minutes=2)


def _user_prompt(items: str | list[Any]) -> str:
    if isinstance(items, str):
        return items
    for item in items:
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            return content if isinstance(content, str) else str(content)
    raise ValueError("no user prompt in the model input")


class ScriptedModel(Model):  # type: ignore[misc]  # agents is not followed (pyproject)
    """The script's next reply: batch n after n batches of tool outputs, then the text."""

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        calls_per_batch = peer_script.SHAPE.calls
        outputs = (
            0
            if isinstance(input, str)
            else sum(
                1 for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"
            )
        )
        done = outputs // calls_per_batch
        output: list[Any]
        if done >= peer_script.batches_in(_user_prompt(input)):
            text = ResponseOutputText(
                text=peer_script.FINAL_TEXT, annotations=[], type="output_text"
            )
            output = [
                ResponseOutputMessage(
                    id="msg", content=[text], role="assistant", status="completed", type="message"
                )
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    arguments=c.arguments_json(),
                    call_id=f"call-{done}-{i}",
                    name=c.name,
                    type="function_call",
                    id=f"fc-{done}-{i}",
                    status="completed",
                )
                for i, c in enumerate(peer_script.batch_calls(done, calls_per_batch))
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark does not stream")


class ScriptedModelProvider(ModelProvider):  # type: ignore[misc]
    def get_model(self, model_name: str | None) -> Model:
        return ScriptedModel()


TOOL_ACTIVITIES: list[Callable[..., Any]] = [
    activity.defn(name=fn.__name__)(fn) for fn in peer_script.tools(peer_script.SHAPE.calls)
]


@workflow.defn(name=WORKFLOW_NAME)
class PeerOpenAiAgentsWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> str:
        agent = Agent(
            name="peer_agent",
            instructions="Fetch the data files.",
            tools=[
                agents_workflow.activity_as_tool(fn, start_to_close_timeout=TOOL_TIMEOUT)
                for fn in TOOL_ACTIVITIES
            ],
        )
        result = await Runner.run(agent, prompt, max_turns=peer_script.batches_in(prompt) + 2)
        return str(result.final_output)


def client_plugins() -> list[object]:
    from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin

    return [
        OpenAIAgentsPlugin(
            model_params=ModelActivityParameters(start_to_close_timeout=timedelta(minutes=2)),
            model_provider=ScriptedModelProvider(),
        )
    ]


def worker_plugins() -> list[object]:
    return []


WORKFLOWS = [PeerOpenAiAgentsWorkflow]
ACTIVITIES = TOOL_ACTIVITIES
