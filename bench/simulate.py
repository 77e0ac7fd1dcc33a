"""A pure, deterministic replay of a scenario: Seawall's protections, and peer baselines.

``simulate_seawall`` walks a scenario's script through the same pure pieces, in the same
order, as ``PromptWorkflow`` does: the scripted model (``activities.model.scripted_turn``),
the tool-call cap, provider call-id dedup, the failed-call refusal, fixture outcomes
(``activities.fixtures.run_fixture``), the invalid-parameter guard, the input boundary and
the repeated-failure reducer (``workflows.guard.reduce``). No Temporal, no I/O, no clock:
the same scenario gives the same result every time, in microseconds. ``bench/loops.py``
checks it against the real workflow on a sample, so any drift shows up there.

``simulate_baseline`` plays the same script with none of Seawall's protections and one of
the peer rules from ``bench/baselines.py`` instead.

What it emulates: fixture tools (every outcome a scenario can script, ``hang`` included
when a ``cancel`` event ends that batch), calls of unregistered tools and calls whose
arguments a built-in rejects (both settle before running), permissions answered from the
scenario, and every scenario event. What it does not: a built-in tool that would really
run, or an MCP server. A scenario that needs one raises :class:`SimulationError`; record
the outcomes as a fixture tool of the same name instead (fixtures replace built-ins).
"""

from __future__ import annotations

import functools
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from activities.fixtures import cancelled_fixture_outcome, run_fixture
from activities.mcp.names import is_mcp_name
from activities.model import scripted_turn, to_tool_call
from activities.tool_runner import admit, builtin_tool_specs
from activities.tools import BUILTIN_TOOLS
from seawall.scenario.driver import prompt_input
from seawall.scenario.format import Scenario, ScenarioEvent
from workflows.activity_io import CallModelInput, ToolSpec
from workflows.conversation import Message, Role, mid_turn_message, system_message
from workflows.guard import (
    REPEATED_TOOL_FAILURE_REMINDER,
    REPEATED_TOOL_FAILURE_STOP_MESSAGE,
    Batch,
    DecisionKind,
    GuardInput,
    GuardMode,
    GuardState,
    reduce,
)
from workflows.outcome import (
    ExecutionStatus,
    TerminalStatus,
    ToolCall,
    ToolErrorType,
    ToolOutcome,
)
from workflows.prompt import (
    MUTATING_TOOLS_ALLOWED_IN_AUTO_EDIT,
    PERMISSION_DENIED_CONTENT,
    _call_digest,
    _observation,
    _tool_message,
    guard_forced_off,
)
from workflows.prompt_io import (
    ApprovalMode,
    GuardEntry,
    LoopType,
    PromptInput,
    PromptResult,
    StopReason,
    ToolCallCounts,
)
from workflows.protections import (
    DUPLICATE_STOP_MESSAGE,
    INVALID_PARAMS_STOP_MESSAGE,
    TOOL_CALL_CAP_STOP_MESSAGE,
    CallIdDeduper,
    InvalidParamsGuard,
    duplicate_outcome,
    over_cap,
    skipped_outcome,
)
from workflows.repeats import (
    STATE_CHANGING_TOOLS,
    FailedCallLog,
    RepeatCheck,
    refused_outcome,
    repeat_limit_stop_message,
)

# Paths in fixture messages are never inside this root, exactly as they are never inside
# the random temporary workspace of a real run, so masking gives the same text in both.
SIM_WORKSPACE = "/nonexistent/seawall-bench-workspace"
SEAWALL = "seawall"
CAP_RULE = LoopType.TURN_TOOL_CALL_CAP.value


class SimulationError(Exception):
    """The scenario needs something the simulator does not emulate (see the module doc)."""


@dataclass
class BatchTrace:
    """What one batch cost: calls the model asked for, and what became of them."""

    batch: int
    requested: int
    executed: int = 0
    refused: int = 0
    duplicates: int = 0
    skipped: int = 0
    failed: int = 0  # executed calls whose terminal status is error


@dataclass
class SimResult:
    """One scenario under one policy; ``loop_type`` names the rule that stopped it."""

    policy: str
    stop_reason: StopReason
    loop_type: str | None
    model_requests: int
    tool_calls: ToolCallCounts
    guard: list[GuardEntry]
    messages: list[Message]
    pending_input: list[str]
    enforcement_disabled: bool
    batches: list[BatchTrace] = field(default_factory=list)

    @property
    def halted(self) -> bool:
        """Stopped by the policy (any rule, the cap included), not by the script or user."""
        return self.stop_reason is StopReason.LOOP_DETECTED

    @property
    def stopped_by_rule(self) -> bool:
        """Stopped by something other than the tool-call cap."""
        return self.halted and self.loop_type != CAP_RULE

    @property
    def last_batch(self) -> int:
        return self.batches[-1].batch if self.batches else 0

    def verdict(self) -> dict[str, Any]:
        """The fields a real ``PromptResult`` is compared on (see :func:`result_verdict`)."""
        return {
            "stop_reason": self.stop_reason.value,
            "loop_type": self.loop_type,
            "model_requests": self.model_requests,
            "tool_calls": self.tool_calls.model_dump(),
            "guard": [entry.model_dump() for entry in self.guard],
            "enforcement_disabled": self.enforcement_disabled,
            "pending_input": list(self.pending_input),
            "messages": [m.model_dump(mode="json") for m in self.messages],
        }


def result_verdict(result: PromptResult) -> dict[str, Any]:
    """The same fields of a real workflow result."""
    return {
        "stop_reason": result.stop_reason.value,
        "loop_type": result.loop_type.value if result.loop_type else None,
        "model_requests": result.model_requests,
        "tool_calls": result.tool_calls.model_dump(),
        "guard": [entry.model_dump() for entry in result.guard],
        "enforcement_disabled": result.enforcement_disabled,
        "pending_input": list(result.pending_input),
        "messages": [m.model_dump(mode="json") for m in result.messages],
    }


def verdict_differences(simulated: dict[str, Any], real: dict[str, Any]) -> list[str]:
    """Human-readable differences between two verdicts; empty when they agree."""
    out: list[str] = []
    for key in simulated:
        if simulated[key] == real.get(key):
            continue
        if key in ("messages", "guard"):
            sim_items, real_items = simulated[key], real.get(key) or []
            if len(sim_items) != len(real_items):
                out.append(f"{key}: {len(sim_items)} simulated vs {len(real_items)} real")
            for index, (a, b) in enumerate(zip(sim_items, real_items, strict=False)):
                if a != b:
                    out.append(f"{key}[{index}]: simulated {a!r} vs real {b!r}")
                    break
        else:
            out.append(f"{key}: simulated {simulated[key]!r} vs real {real.get(key)!r}")
    return out


# --- baselines interface ----------------------------------------------------------------


class BaselineRule(Protocol):
    """A peer loop rule. ``before_batch`` may refuse to run a batch (it is skipped);
    ``after_batch`` sees the settled outcomes. Either returns the rule's name to stop."""

    name: str

    def before_batch(self, calls: list[ToolCall]) -> str | None: ...

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None: ...


# --- the replay engine ------------------------------------------------------------------


@functools.cache
def _builtin_specs() -> dict[str, ToolSpec]:
    return builtin_tool_specs(BUILTIN_TOOLS)


def _complete(coro: Coroutine[Any, Any, ToolOutcome]) -> ToolOutcome:
    """Run a coroutine that never suspends (a fixture outcome that does not hang)."""
    try:
        coro.send(None)
    except StopIteration as done:
        result: ToolOutcome = done.value
        return result
    coro.close()
    raise SimulationError("a fixture outcome suspended unexpectedly")


class _Replay:
    """The parts of a prompt that every policy shares: model, tools, events, counts."""

    def __init__(self, scenario: Scenario, mode: GuardMode | None) -> None:
        self.scenario = scenario
        self.input: PromptInput = prompt_input(scenario, Path(SIM_WORKSPACE), mode)
        self.tools: dict[str, ToolSpec] = dict(_builtin_specs())
        for name, fixture in self.input.fixture_tools.items():
            self.tools[name] = ToolSpec(
                name=name,
                description=fixture.description,
                parameters={"type": "object"},
                mutating=fixture.mutating,
                tool_type=fixture.tool_type,
            )
        self.messages: list[Message] = [Message(role=Role.USER, content=self.input.prompt)]
        self.model_requests = 0
        self.batch = 0
        self.calls_requested = 0
        self.counts = ToolCallCounts()
        self.runs_per_tool: dict[str, int] = {}
        self.pending_input: list[str] = []
        self.queued_prompt = False
        self.input_unreliable = False
        self.traces: list[BatchTrace] = []

    # model -------------------------------------------------------------------------------

    def next_calls(self) -> list[ToolCall]:
        request_number = self.model_requests + 1
        turn = scripted_turn(
            CallModelInput(
                model=self.input.model, messages=self.messages, request_number=request_number
            )
        )
        calls = [to_tool_call(c, request_number, i) for i, c in enumerate(turn.tool_calls)]
        self.model_requests += 1
        self.messages.append(Message(role=Role.ASSISTANT, content=turn.text, tool_calls=calls))
        return calls

    # batch bookkeeping -------------------------------------------------------------------

    def open_batch(self, calls: list[ToolCall]) -> BatchTrace:
        self.batch += 1
        trace = BatchTrace(batch=self.batch, requested=len(calls))
        self.traces.append(trace)
        return trace

    def skip(self, calls: list[ToolCall], trace: BatchTrace) -> None:
        for call in calls:
            self.messages.append(_tool_message(skipped_outcome(call.call_id, call.name)))
            self.counts.skipped += 1
            trace.skipped += 1

    def events(self) -> list[ScenarioEvent]:
        return [event for event in self.scenario.events if event.batch == self.batch]

    def deliver_events(self) -> bool:
        """Send this batch's events the way the scenario driver does; True on cancel."""
        events = self.events()
        for event in events:
            if event.input is not None:
                self.pending_input.append(event.input)
            elif event.queued_prompt:
                self.queued_prompt = True
            elif event.unreliable_input:
                self.input_unreliable = True
        return any(event.cancel for event in events)

    def drain(self) -> tuple[list[str], bool, bool]:
        drained, self.pending_input = self.pending_input, []
        queued, self.queued_prompt = self.queued_prompt, False
        unreliable, self.input_unreliable = self.input_unreliable, False
        return drained, queued, unreliable

    # tools -------------------------------------------------------------------------------

    def changed_state(self, outcome: ToolOutcome) -> bool:
        """Mirrors PromptWorkflow._changed_state: this success forgets earlier failures."""
        if outcome.status != TerminalStatus.SUCCESS:
            return False
        spec = self.tools.get(outcome.tool_name)
        return outcome.tool_name in STATE_CHANGING_TOOLS or (spec is not None and spec.mutating)

    def admit_to_run(self, call: ToolCall) -> int:
        """Count an executed call and return its per-tool ordinal (picks fixture outcomes)."""
        self.counts.executed += 1
        ordinal = self.runs_per_tool.get(call.name, 0)
        self.runs_per_tool[call.name] = ordinal + 1
        return ordinal

    def run_call(self, call: ToolCall, policy: str | None, ordinal: int) -> ToolOutcome | None:
        """The settled outcome of one admitted call; ``None`` while it hangs."""
        spec = self.tools.get(call.name)
        fixture = self.input.fixture_tools.get(call.name)
        if spec is not None and self._needs_permission(spec):
            if fixture is None:
                invalid = admit(call, BUILTIN_TOOLS)
                if isinstance(invalid, ToolOutcome):
                    return invalid
            choice = self.scenario.permissions.get(call.name, "approve")
            if choice != "approve":  # rejected, or ignored until the request timed out
                return ToolOutcome(
                    call_id=call.call_id,
                    tool_name=call.name,
                    policy_tool_name=policy,
                    tool_type=spec.tool_type,
                    status=TerminalStatus.CANCELLED,
                    execution_status=ExecutionStatus.NOT_STARTED,
                    error_type=ToolErrorType.EXECUTION_DENIED,
                    content=PERMISSION_DENIED_CONTENT,
                )
        if fixture is not None:
            scripted = fixture.outcomes[min(max(ordinal, 0), len(fixture.outcomes) - 1)]
            if scripted.hang:
                return None
            return _complete(run_fixture(call, fixture, ordinal))
        if is_mcp_name(call.name) and call.name not in BUILTIN_TOOLS:
            raise SimulationError(
                f"{self.scenario.name}: calls the MCP tool {call.name!r} without a fixture"
            )
        admitted = admit(call, BUILTIN_TOOLS)
        if isinstance(admitted, ToolOutcome):
            return admitted
        raise SimulationError(
            f"{self.scenario.name}: calls the built-in tool {call.name!r} with valid arguments "
            "and no fixture; the simulator cannot run it (script it as a fixture tool)"
        )

    def _needs_permission(self, spec: ToolSpec) -> bool:
        mode = self.input.approval_mode
        if not spec.mutating or mode is ApprovalMode.YOLO:
            return False
        return not (
            mode is ApprovalMode.AUTO_EDIT and spec.name in MUTATING_TOOLS_ALLOWED_IN_AUTO_EDIT
        )

    def settle(
        self,
        calls: list[ToolCall],
        settled: dict[int, ToolOutcome],
        running: dict[int, ToolOutcome | None],
        trace: BatchTrace,
    ) -> tuple[list[ToolOutcome], bool]:
        """Deliver the batch's events and settle every call, in call order.

        Returns the outcomes and whether the prompt was cancelled during the batch.
        """
        cancelled = self.deliver_events()
        for index, outcome in running.items():
            if outcome is None:
                if not cancelled:
                    raise SimulationError(
                        f"{self.scenario.name}: a call hangs in batch {self.batch} and no "
                        "cancel event ends it"
                    )
                fixture = self.input.fixture_tools[calls[index].name]
                outcome = cancelled_fixture_outcome(calls[index], fixture)
            settled[index] = outcome
        outcomes = [settled[index] for index in range(len(calls))]
        trace.failed = sum(1 for index in running if settled[index].status == TerminalStatus.ERROR)
        return outcomes, cancelled

    def result(
        self,
        policy: str,
        stop_reason: StopReason,
        loop_type: str | None,
        guard: list[GuardEntry] | None = None,
        enforcement_disabled: bool = False,
    ) -> SimResult:
        return SimResult(
            policy=policy,
            stop_reason=stop_reason,
            loop_type=loop_type,
            model_requests=self.model_requests,
            tool_calls=self.counts,
            guard=guard or [],
            messages=self.messages,
            pending_input=self.pending_input,
            enforcement_disabled=enforcement_disabled,
            batches=self.traces,
        )


# --- Seawall ------------------------------------------------------------------------------


def simulate_seawall(
    scenario: Scenario,
    mode: GuardMode | None = GuardMode.ENFORCE,
    *,
    operator_mode: GuardMode = GuardMode.SHADOW,
) -> SimResult:
    """Replay ``scenario`` through Seawall's protections, exactly as ``PromptWorkflow``.

    ``mode`` overrides the scenario's guard mode like ``seawall run --mode``; with neither,
    ``operator_mode`` stands in for the operator setting the worker would resolve.
    """
    r = _Replay(scenario, mode)
    inp = r.input
    guard_mode = GuardMode.OFF if guard_forced_off(inp) else (inp.guard_mode or operator_mode)
    state = GuardState()
    entries: list[GuardEntry] = []
    failed_calls = FailedCallLog(
        mode=inp.refusal_mode, remembered_limit=inp.remembered_failures, max_repeats=inp.max_repeats
    )
    deduper = CallIdDeduper()
    invalid_params = InvalidParamsGuard()

    def done(stop: StopReason, loop_type: LoopType | None = None) -> SimResult:
        return r.result(
            SEAWALL,
            stop,
            loop_type.value if loop_type else None,
            entries,
            state.enforcement_disabled,
        )

    while True:
        if r.model_requests >= inp.max_model_requests:
            return done(StopReason.MAX_TURN_REQUESTS)
        calls = r.next_calls()
        if not calls:
            return done(StopReason.END_TURN)
        trace = r.open_batch(calls)
        if over_cap(inp.max_tool_calls_per_turn, r.calls_requested, len(calls)):
            r.skip(calls, trace)
            r.messages.append(
                system_message(TOOL_CALL_CAP_STOP_MESSAGE.format(cap=inp.max_tool_calls_per_turn))
            )
            return done(StopReason.LOOP_DETECTED, LoopType.TURN_TOOL_CALL_CAP)
        r.calls_requested += len(calls)

        settled: dict[int, ToolOutcome] = {}
        digests: dict[int, str] = {}
        running: dict[int, ToolOutcome | None] = {}
        for index, call in enumerate(calls):
            policy = call.name if call.name in r.tools else None
            digest = _call_digest(call)
            digests[index] = digest
            if deduper.is_duplicate(call.call_id, digest):
                settled[index] = duplicate_outcome(call.call_id, call.name, policy)
                r.counts.duplicates += 1
                trace.duplicates += 1
                continue
            deduper.remember(call.call_id, digest)
            if failed_calls.check(digest) is RepeatCheck.REFUSE:
                settled[index] = refused_outcome(
                    call_id=call.call_id,
                    tool_name=call.name,
                    policy_tool_name=policy,
                    tool_type=r.tools[policy].tool_type if policy else None,
                    reason=failed_calls.earlier_reason(digest) or "",
                )
                r.counts.refused += 1
                trace.refused += 1
                continue
            ordinal = r.admit_to_run(call)
            trace.executed += 1
            running[index] = r.run_call(call, policy, ordinal)

        outcomes, cancelled = r.settle(calls, settled, running, trace)
        if any(r.changed_state(outcome) for outcome in outcomes):
            failed_calls.forget_failures()
        for index, outcome in enumerate(outcomes):
            failed_calls.record(digests[index], outcome, inp.workspace_root)
            invalid_params.observe(outcome)
        r.messages.extend(_tool_message(outcome) for outcome in outcomes)
        if cancelled:
            return done(StopReason.CANCELLED)

        drained, queued, unreliable = r.drain()
        before = state
        decision = reduce(
            before,
            GuardInput(
                mode=guard_mode,
                batch=Batch(observations=[_observation(outcome) for outcome in outcomes]),
                has_external_input=bool(drained),
                has_queued_prompt=queued,
                input_reliable=not unreliable,
            ),
        )
        state = decision.state
        entries.append(
            GuardEntry(
                batch=r.batch,
                decision=decision.kind.value,
                phase_before=before.phase.value,
                phase_after=state.phase.value,
                reason=decision.reason.value if decision.reason else None,
                failure_count=state.failure_count,
                batch_count=state.batch_count,
                candidate_ordinal=state.candidate_ordinal,
                mode=guard_mode.value,
            )
        )

        stop: tuple[LoopType, str] | None = None
        if deduper.stop:
            stop = LoopType.GLOBAL_TOOL_CALL_DUPLICATE, DUPLICATE_STOP_MESSAGE
        elif invalid_params.stop:
            stop = LoopType.INVALID_TOOL_PARAMS_STAGNATION, INVALID_PARAMS_STOP_MESSAGE
        elif failed_calls.limit_exceeded:
            stop = (
                LoopType.REPEATED_FAILED_CALL,
                repeat_limit_stop_message(failed_calls.max_repeats),
            )
        elif decision.kind is DecisionKind.STOP:
            stop = LoopType.REPEATED_TOOL_EXECUTION_FAILURE, REPEATED_TOOL_FAILURE_STOP_MESSAGE
        if stop is not None:
            loop_type, message = stop
            r.messages.append(system_message(message))
            r.pending_input = drained + r.pending_input
            return done(StopReason.LOOP_DETECTED, loop_type)
        if decision.kind is DecisionKind.WARN:
            r.messages.append(system_message(REPEATED_TOOL_FAILURE_REMINDER))
        r.messages.extend(mid_turn_message(text) for text in drained)


# --- baselines ----------------------------------------------------------------------------


def simulate_baseline(scenario: Scenario, rule: BaselineRule) -> SimResult:
    """Replay ``scenario`` with no Seawall protection, under the per-prompt tool-call cap
    (the scenario's, 100 by default) and ``rule``. Every admitted call runs."""
    r = _Replay(scenario, GuardMode.OFF)
    inp = r.input
    while True:
        if r.model_requests >= inp.max_model_requests:
            return r.result(rule.name, StopReason.MAX_TURN_REQUESTS, None)
        calls = r.next_calls()
        if not calls:
            return r.result(rule.name, StopReason.END_TURN, None)
        trace = r.open_batch(calls)
        if over_cap(inp.max_tool_calls_per_turn, r.calls_requested, len(calls)):
            r.skip(calls, trace)
            return r.result(rule.name, StopReason.LOOP_DETECTED, CAP_RULE)
        r.calls_requested += len(calls)
        stopped = rule.before_batch(calls)
        if stopped is not None:
            r.skip(calls, trace)
            return r.result(rule.name, StopReason.LOOP_DETECTED, stopped)

        running: dict[int, ToolOutcome | None] = {}
        for index, call in enumerate(calls):
            ordinal = r.admit_to_run(call)
            trace.executed += 1
            policy = call.name if call.name in r.tools else None
            running[index] = r.run_call(call, policy, ordinal)
        outcomes, cancelled = r.settle(calls, {}, running, trace)
        r.messages.extend(_tool_message(outcome) for outcome in outcomes)
        if cancelled:
            return r.result(rule.name, StopReason.CANCELLED, None)
        drained, _queued, _unreliable = r.drain()
        r.messages.extend(mid_turn_message(text) for text in drained)
        stopped = rule.after_batch(calls, outcomes)
        if stopped is not None:
            return r.result(rule.name, StopReason.LOOP_DETECTED, stopped)
