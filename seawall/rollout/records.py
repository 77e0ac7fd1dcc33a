"""One prompt as the rollout report sees it, read from Temporal's own records.

No new database (issue 14): the prompts of a window and an environment are listed from
visibility by their search attributes (``SeawallEnvironment``, set when a session starts the
prompt; docs/rollout.md, "Rollout cohorts"), and each prompt's history supplies the
rest: its input (owner, route, text digest, tool-call cap, which loop rules run in the guard's
mode), every tool activity with its batch and outcome, when a client dropped its event stream,
and its result (stop, guard and rule decisions, tokens, rounds). A prompt that failed, timed
out or was terminated has no result; it is still a record (its status says how it ended).

The owner id and the prompt text are read only to block the bootstrap by owner and to
recognise a resubmission; a record keeps the owner id in memory and a digest of the text,
and nothing of either ever reaches the report's output.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus

from workflows.contracts import ToolOutcome, search_attributes
from workflows.contracts.activity import RUN_TOOL, RunToolInput
from workflows.contracts.prompt import (
    GuardEntry,
    PromptInput,
    PromptResult,
    RuleEntry,
    route_label,
)
from workflows.rules.judge import JUDGE_RULE
from workflows.rules.profiles import LoopProfile
from workflows.rules.registry import LoopRule

T = TypeVar("T")

# The prompt's signal that a client's event stream ended early (workflows/prompt/
# client_connection.py); its history event carries the time it arrived.
CLIENT_DISCONNECTED = "client_disconnected"
# Histories fetched at once: enough to keep a remote frontend busy, few enough for a laptop.
FETCH_CONCURRENCY = 16
# The guard's reset reason when the host cannot prove its input drain.
UNRELIABLE_INPUT = "unreliable_input"


@dataclass
class ToolActivity:
    """One scheduled ``seawall.run_tool``: its batch, and its outcome once it completed."""

    batch: int
    call_id: str
    outcome: ToolOutcome | None = None
    # Ended without an outcome: "failed", "timed_out" or "canceled"; None otherwise.
    ended: str | None = None


@dataclass
class PromptRecord:
    workflow_id: str
    # Who the prompt belongs to, for blocking: the owner id, else the session (in memory only).
    block: str
    owned: bool
    session_id: str | None
    environment: str | None
    service_version: str | None
    cohort: str | None
    guard_mode: str | None
    route: str
    start: datetime
    close: datetime | None
    status: str
    text_digest: str
    max_tool_calls: int | None
    result: PromptResult | None
    tools: list[ToolActivity] = field(default_factory=list)
    # Every Seawall search attribute as Temporal holds it (the privacy invariant checks them).
    attributes: dict[str, str] = field(default_factory=dict)
    # When each client_disconnected signal arrived (history event times).
    disconnects: list[datetime] = field(default_factory=list)
    # The loop rules that run in the prompt's guard mode, i.e. the cohort's (the recommended
    # profile's rules without an operator override); None: the input did not say (a rule
    # decision then counts when its mode is the guard's).
    governed_rules: frozenset[str] | None = None

    @property
    def guard(self) -> list[GuardEntry]:
        return self.result.guard if self.result else []

    @property
    def latency_seconds(self) -> float | None:
        if self.close is None:
            return None
        return max(0.0, (self.close - self.start).total_seconds())

    @property
    def unreliable_input(self) -> bool:
        """The prompt's host could not prove its input drain (an ``unreliable_input`` reset):
        segmented out of the supported-host baseline. (Enforcement disabled by an outcome
        contract violation is not a host property and stays in.)"""
        return any(entry.reason == UNRELIABLE_INPUT for entry in self.guard)

    def governs(self, entry: RuleEntry) -> bool:
        """The prompt's mode (its cohort's) governs this loop-rule decision: the rule runs in
        the guard's mode (never the progress judge, which has a mode of its own)."""
        if entry.rule == JUDGE_RULE:
            return False
        if self.governed_rules is not None:
            return entry.rule in self.governed_rules
        return self.result is not None and entry.mode == self.result.guard_mode

    def batches(self) -> dict[int, list[ToolActivity]]:
        """The prompt's tool activities by batch."""
        found: dict[int, list[ToolActivity]] = {}
        for tool in self.tools:
            found.setdefault(tool.batch, []).append(tool)
        return found


def visibility_query(environment: str, since: datetime, until: datetime) -> str:
    """Prompts started in ``[since, until)`` in ``environment``."""
    return (
        "WorkflowType = 'PromptWorkflow' "
        f"AND {search_attributes.ENVIRONMENT.name} = '{_quoted(environment)}' "
        f"AND StartTime >= '{_iso(since)}' AND StartTime < '{_iso(until)}'"
    )


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace("'", "\\'")


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def list_prompts(
    client: Client, environment: str, since: datetime, until: datetime
) -> list[WorkflowExecution]:
    return [
        execution
        async for execution in client.list_workflows(visibility_query(environment, since, until))
    ]


async def _decode(client: Client, payloads: Sequence[Payload], kind: type[T]) -> T | None:
    if not payloads:
        return None
    decoded = await client.data_converter.decode(list(payloads), [kind])
    value = decoded[0]
    return value if isinstance(value, kind) else None


async def read_execution(client: Client, execution: WorkflowExecution) -> PromptRecord:
    """One prompt's record from its visibility entry (or description) and its history."""
    history = await client.get_workflow_handle(
        execution.id, run_id=execution.run_id
    ).fetch_history()
    prompt: PromptInput | None = None
    result: PromptResult | None = None
    tools: dict[int, ToolActivity] = {}
    disconnects: list[datetime] = []
    for event in history.events:
        prompt = await _on_event(client, event, tools, prompt) or prompt
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
            attrs = event.workflow_execution_completed_event_attributes
            result = await _decode(client, attrs.result.payloads, PromptResult)
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
            signal = event.workflow_execution_signaled_event_attributes
            if signal.signal_name == CLIENT_DISCONNECTED:
                disconnects.append(event.event_time.ToDatetime(tzinfo=UTC))
    attributes = {pair.key.name: str(pair.value) for pair in execution.typed_search_attributes}
    owner = prompt.owner_id if prompt is not None else None
    session = execution.parent_id
    return PromptRecord(
        workflow_id=execution.id,
        block=f"owner:{owner}" if owner else f"session:{session or execution.id}",
        owned=bool(owner),
        session_id=session,
        environment=attributes.get(search_attributes.ENVIRONMENT.name),
        service_version=attributes.get(search_attributes.SERVICE_VERSION.name),
        cohort=attributes.get(search_attributes.ROLLOUT_COHORT.name),
        guard_mode=attributes.get(search_attributes.GUARD_MODE.name),
        route=route_label(prompt) if prompt is not None else "unknown",
        start=execution.start_time,
        close=execution.close_time,
        status=_status_name(execution.status),
        text_digest=hashlib.sha256((prompt.prompt if prompt else "").encode()).hexdigest(),
        max_tool_calls=prompt.max_tool_calls_per_turn if prompt else None,
        result=result,
        tools=list(tools.values()),
        attributes=attributes,
        disconnects=disconnects,
        governed_rules=governed_rules(prompt),
    )


def governed_rules(prompt: PromptInput | None) -> frozenset[str] | None:
    """The rules whose mode is the prompt's guard mode (docs/protections.md, "Loop profiles"): none
    in the seed profile, else every rule without its own mode."""
    if prompt is None or prompt.loop_settings is None:
        return None
    settings = prompt.loop_settings
    if settings.profile is LoopProfile.SEED:
        return frozenset()
    return frozenset(rule.value for rule in LoopRule if settings.override(rule) is None)


async def _on_event(
    client: Client,
    event: HistoryEvent,
    tools: dict[int, ToolActivity],
    prompt: PromptInput | None,
) -> PromptInput | None:
    kind = event.event_type
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED and prompt is None:
        attrs = event.workflow_execution_started_event_attributes
        return await _decode(client, attrs.input.payloads, PromptInput)
    if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        scheduled = event.activity_task_scheduled_event_attributes
        if scheduled.activity_type.name == RUN_TOOL:
            run = await _decode(client, scheduled.input.payloads, RunToolInput)
            if run is not None:
                tools[event.event_id] = ToolActivity(batch=run.batch, call_id=run.call.call_id)
    elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        completed = event.activity_task_completed_event_attributes
        tool = tools.get(completed.scheduled_event_id)
        if tool is not None:
            tool.outcome = await _decode(client, completed.result.payloads, ToolOutcome)
    elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
        _ended(tools, event.activity_task_failed_event_attributes.scheduled_event_id, "failed")
    elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
        _ended(
            tools, event.activity_task_timed_out_event_attributes.scheduled_event_id, "timed_out"
        )
    elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
        _ended(tools, event.activity_task_canceled_event_attributes.scheduled_event_id, "canceled")
    return None


def _ended(tools: dict[int, ToolActivity], scheduled: int, how: str) -> None:
    tool = tools.get(scheduled)
    if tool is not None:
        tool.ended = how


def _status_name(status: WorkflowExecutionStatus | None) -> str:
    return status.name.lower() if status is not None else "unknown"


async def read_records(
    client: Client, environment: str, since: datetime, until: datetime
) -> list[PromptRecord]:
    """Every prompt of ``environment`` started in ``[since, until)``, oldest first."""
    executions = await list_prompts(client, environment, since, until)
    gate = asyncio.Semaphore(FETCH_CONCURRENCY)

    async def one(execution: WorkflowExecution) -> PromptRecord:
        async with gate:
            return await read_execution(client, execution)

    records = await asyncio.gather(*(one(e) for e in executions))
    return sorted(records, key=lambda r: (r.start, r.workflow_id))
