"""The baselines of the durability benchmark: the same agent-loop shape without Seawall.

- :class:`BareLoopWorkflow` — a bare Temporal workflow: model activity → the batch's tool
  activities, gathered → a trivial reducer (failures per tool) → again, until the model
  answers without tool calls. No guard, no refusal, no dedup, no cap, no events, no search
  attributes, no tool listing activity.
- :func:`run_inprocess` — the same loop as a plain asyncio coroutine, no Temporal at all.

Both call the same step functions as Seawall's activities do (the scripted model provider
and the tool runner, fixtures included) with the same payload types, so what differs from
Seawall is the orchestration, not the work of a step.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field
from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from activities.mcp.pool import McpPool
    from activities.model import ScriptedProvider
    from activities.tool_runner import ToolActivities
    from activities.tools import BUILTIN_TOOLS
    from bench.trusted import bench_trust
    from workflows.contracts import Message, Role, TerminalStatus, ToolCall, ToolOutcome
    from workflows.contracts.activity import (
        CallModelInput,
        ModelReply,
        ModelSpec,
        RunToolInput,
        ToolSpec,
    )
    from workflows.contracts.scenario import FixtureTool, ModelScript

BARE_MODEL = "bench.bare.model"
BARE_TOOL = "bench.bare.tool"
STEP_TIMEOUT = timedelta(minutes=2)

_provider = ScriptedProvider()
_tools = ToolActivities(BUILTIN_TOOLS, McpPool(), trust=bench_trust())


class BareInput(BaseModel):
    prompt: str
    workspace_root: str
    model_script: ModelScript
    tools: list[ToolSpec] = Field(default_factory=list)
    fixture_tools: dict[str, FixtureTool] = Field(default_factory=dict)
    # Memory benchmark only: hold after this batch's tools settled until ``release``.
    pause_after_batch: int | None = None


class BareResult(BaseModel):
    model_requests: int
    batches: int
    failures: dict[str, int]


# --- the steps (shared by the activities and the in-process loop) -------------------------


async def model_step(request: CallModelInput) -> ModelReply:
    return await _provider.complete(request)


async def tool_step(inp: RunToolInput, heartbeat: Callable[[], None] | None = None) -> ToolOutcome:
    return await _tools.execute(inp, heartbeat)


@activity.defn(name=BARE_MODEL)
async def bare_model(request: CallModelInput) -> ModelReply:
    return await model_step(request)


@activity.defn(name=BARE_TOOL)
async def bare_tool(inp: RunToolInput) -> ToolOutcome:
    return await tool_step(inp, activity.heartbeat)


BARE_ACTIVITIES: list[Callable[..., Any]] = [bare_model, bare_tool]


def _tool_input(inp: BareInput, batch: int, runs: dict[str, int], call: ToolCall) -> RunToolInput:
    ordinal = runs.get(call.name, 0)
    runs[call.name] = ordinal + 1
    return RunToolInput(
        call=call,
        workspace_root=inp.workspace_root,
        ordinal=ordinal,
        batch=batch,
        scenario_fixture=inp.fixture_tools.get(call.name),
    )


def _model_input(inp: BareInput, messages: list[Message], request_number: int) -> CallModelInput:
    return CallModelInput(
        model=ModelSpec(),
        messages=messages,
        tools=inp.tools,
        request_number=request_number,
        scenario_script=inp.model_script,
    )


def _reduce(failures: dict[str, int], outcomes: list[ToolOutcome]) -> None:
    """The trivial reducer: count failures per tool."""
    for outcome in outcomes:
        if outcome.status == TerminalStatus.ERROR:
            failures[outcome.tool_name] = failures.get(outcome.tool_name, 0) + 1


# --- (d) the bare workflow ----------------------------------------------------------------


@workflow.defn(name="BareLoopWorkflow")
class BareLoopWorkflow:
    def __init__(self) -> None:
        self._paused = False
        self._released = False

    @workflow.signal
    def release(self) -> None:
        self._released = True

    @workflow.query
    def paused(self) -> bool:
        return self._paused

    @workflow.run
    async def run(self, inp: BareInput) -> BareResult:
        messages = [Message(role=Role.USER, content=inp.prompt)]
        failures: dict[str, int] = {}
        runs: dict[str, int] = {}
        requests = 0
        batch = 0
        while True:
            reply: ModelReply = await workflow.execute_activity(
                BARE_MODEL,
                _model_input(inp, messages, requests + 1),
                result_type=ModelReply,
                start_to_close_timeout=STEP_TIMEOUT,
            )
            requests += 1
            messages.append(
                Message(role=Role.ASSISTANT, content=reply.text, tool_calls=reply.tool_calls)
            )
            if not reply.tool_calls:
                return BareResult(model_requests=requests, batches=batch, failures=failures)
            batch += 1
            outcomes: list[ToolOutcome] = list(
                await asyncio.gather(
                    *(
                        workflow.execute_activity(
                            BARE_TOOL,
                            _tool_input(inp, batch, runs, call),
                            result_type=ToolOutcome,
                            start_to_close_timeout=STEP_TIMEOUT,
                        )
                        for call in reply.tool_calls
                    )
                )
            )
            messages.extend(
                Message(role=Role.TOOL, tool_call_id=o.call_id, content=o.content) for o in outcomes
            )
            _reduce(failures, outcomes)
            if inp.pause_after_batch == batch:
                self._paused = True
                await workflow.wait_condition(lambda: self._released)
                self._paused = False


# --- (c) the in-process loop --------------------------------------------------------------


async def run_inprocess(
    inp: BareInput, on_model_start: Callable[[float], None] | None = None
) -> BareResult:
    """The same loop as :class:`BareLoopWorkflow`, as one plain coroutine."""
    messages = [Message(role=Role.USER, content=inp.prompt)]
    failures: dict[str, int] = {}
    runs: dict[str, int] = {}
    requests = 0
    batch = 0
    while True:
        if on_model_start is not None:
            on_model_start(time.perf_counter())
        reply = await model_step(_model_input(inp, messages, requests + 1))
        requests += 1
        messages.append(
            Message(role=Role.ASSISTANT, content=reply.text, tool_calls=reply.tool_calls)
        )
        if not reply.tool_calls:
            return BareResult(model_requests=requests, batches=batch, failures=failures)
        batch += 1
        outcomes = list(
            await asyncio.gather(
                *(tool_step(_tool_input(inp, batch, runs, call)) for call in reply.tool_calls)
            )
        )
        messages.extend(
            Message(role=Role.TOOL, tool_call_id=o.call_id, content=o.content) for o in outcomes
        )
        _reduce(failures, outcomes)
