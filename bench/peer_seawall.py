"""Seawall as a peer in bench/peers.py (and the worker bench/scaling.py scales).

Why it exists: the other peers state the conversation of :mod:`bench.peer_script` through
their own scripted models and tools; Seawall runs it as a scenario, a scripted model and
fixture tools (``ScenarioHooks``). :class:`Workload` turns the script into that scenario's
``PromptInput``, so both run the one conversation by construction: batch ``b`` calls
``fetch_k(path="data/b/k.json")`` and ``flaky_api(path="status/b")``, which fails in the first
five batches, then the final text. Beside it: Seawall's worker as it ships
(:func:`seawall_worker`) and the tool latency the peers' tools sleep (:class:`ToolLatency`).
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.client import Interceptor as ClientInterceptor
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
    Worker,
)

from bench import peer_script
from bench.trusted import bench_trust
from workflows.contracts.activity import RUN_TOOL
from workflows.contracts.conversation import DEFAULT_CONTEXT_BUDGET_CHARS
from workflows.contracts.prompt import PromptInput
from workflows.contracts.prompt_options import (
    DEFAULT_MAX_MODEL_REQUESTS,
    DEFAULT_MAX_TOOL_CALLS_PER_TURN,
)
from workflows.contracts.scenario import FixtureTool, ModelScript, ScenarioHooks
from workflows.rules import LoopSettings
from workflows.seed import GuardMode


@dataclass(frozen=True)
class Workload:
    batches: int = 5
    calls: int = 4
    # sdk-python#1890's shape (bench/long_prompts.py --issue-1890): each fetch's result
    # padded to this many characters, and this many characters of conversation before it.
    result_chars: int = 0
    context_chars: int = 0

    def script(self) -> ModelScript:
        turns: list[dict[str, Any]] = [
            {
                "text": "",
                "tool_calls": [
                    {"name": c.name, "arguments": c.arguments}
                    for c in peer_script.batch_calls(b, self.calls)
                ],
            }
            for b in range(self.batches)
        ]
        turns.append({"text": peer_script.FINAL_TEXT})
        return ModelScript.model_validate({"turns": turns})

    def fixtures(self) -> dict[str, FixtureTool]:
        def ok(content: str) -> dict[str, str]:
            return {"status": "success", "execution_status": "success", "content": content}

        fail = {
            "status": "error",
            "execution_status": "error",
            "error_type": "execution_failed",
            "message": peer_script.FAIL_MESSAGE,
        }
        # Each batch's fetch answers with its own result when results are sized (as
        # peer_script.fetch_result does), the one result otherwise.
        tools: dict[str, dict[str, Any]] = {}
        for k, name in enumerate(peer_script.fetch_names(self.calls)):
            contents = (
                [
                    peer_script.sized_result(f"data/{b}/{k}.json", self.result_chars)
                    for b in range(self.batches)
                ]
                if self.result_chars
                else [peer_script.OK_CONTENT]
            )
            tools[name] = {"outcomes": [ok(c) for c in contents]}
        if self.calls > 1:  # one call a batch: only the fetch (peer_script.batch_calls)
            # Past five batches the endpoint recovers: a tool failing in every one of 100
            # batches is a loop, which the guard rightly stops.
            failing = peer_script.FAILING_BATCHES
            recovered = [fail] * failing + [ok(peer_script.OK_CONTENT)]
            tools["flaky_api"] = {"outcomes": [fail] if self.batches <= failing else recovered}
        return {name: FixtureTool.model_validate(spec) for name, spec in tools.items()}

    def limits(self) -> dict[str, int]:
        """A long workload runs to its answer: room for every model step, and the tool-call
        cap (100 per prompt by default) off, as an operator running such prompts would set
        it. The default workload stays under both and keeps the defaults."""
        options: dict[str, int] = {}
        if self.batches + 1 > DEFAULT_MAX_MODEL_REQUESTS:
            options["max_model_requests"] = self.batches + 1
        if self.batches * self.calls > DEFAULT_MAX_TOOL_CALLS_PER_TURN:
            options["max_tool_calls_per_turn"] = 0
        return options

    @functools.cache  # noqa: B019 - a handful of long-lived workloads
    def prompt_input(self, workspace: str) -> PromptInput:
        """The guard in enforce and the loop profile's rules on, its settings resolved as a
        session resolves them once for all its prompts (every gateway and editor prompt runs
        in a session): the prompt's history then holds no settings step, as in production.
        Built once per workload: the driver's cost stays out of the measurement."""
        return PromptInput(
            prompt=peer_script.context(self.context_chars) + peer_script.PROMPT,
            workspace_root=workspace,
            guard_mode=GuardMode.ENFORCE,
            loop_settings=LoopSettings(),
            context_budget_chars=DEFAULT_CONTEXT_BUDGET_CHARS,
            **self.limits(),
            scenario=ScenarioHooks(model_script=self.script(), fixture_tools=self.fixtures()),
        )


def seawall_worker(client: Client, queue: str, *, eager_calls: int) -> Worker:
    """Seawall's worker as it ships, starting ``eager_calls`` calls of a workflow task itself
    (its ``eager_calls_per_workflow_task``)."""
    from seawall.worker.build import build_worker

    return build_worker(
        client, queue, trust=bench_trust(), eager_calls_per_workflow_task=eager_calls
    )


class _SleepingTools(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, seconds: float) -> None:
        super().__init__(next)
        self._seconds = seconds

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        if activity.info().activity_type == RUN_TOOL and self._seconds > 0:
            await asyncio.sleep(self._seconds)
        return await super().execute_activity(input)


class ToolLatency(ClientInterceptor, Interceptor):
    """Seawall's fixture tools answer at once; this makes each tool call take the same
    time the peers' tools sleep, in the tool activity, before the tool runs."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _SleepingTools(next, self.seconds)
