"""A pure, deterministic replay of a scenario: Seawall's protections, and peer baselines.

``simulate_seawall`` walks a scenario's script through the same pure pieces, in the same
order, as ``PromptWorkflow`` does: the scripted model (``activities.model.scripted_turn``),
batch screening and settlement (``workflows.seed.protections.BatchProtections``: the tool-call
cap, provider call-id dedup, the failed-call refusal, the invalid-parameter guard and, in
the recommended loop profile, ``workflows.rules``), fixture outcomes
(``activities.fixtures.run_fixture``), the input boundary, and the step after each batch —
the guard's reduction, the rules' review, the stop or the reminders — which is the
workflow's own function, ``workflows.prompt.batch.after_batch``, not a copy of it. No Temporal, no
I/O, no real clock: the same scenario gives the same result every time, in microseconds.
The prompt's clock is the workflow's with no real time in it: it starts at 0 and advances by
each scripted model turn's ``latency_seconds`` and, after each batch, by the longest
``duration_seconds`` of the batch's fixture calls (they run concurrently); each fixture
call's duration and the clock reach the rules exactly as in the workflow (docs/scenarios.md,
"Time").
What stays the simulator's own is what the workflow does with activities (the model, the
tools, the scenario's events); ``bench/loops.py`` checks it against the real workflow on a
sample, so any drift there shows up.

``simulate_baseline`` plays the same script with none of Seawall's protections and one of
the peer rules from ``bench/baselines.py`` or one of the faithful peers of ``bench/loop_peers/``
instead (their protocol, with its optional hooks, is ``bench/loop_peers/base.py``).

What it emulates: fixture tools (every outcome a scenario can script, ``hang`` included
when a ``cancel`` event ends that batch), calls of unregistered tools and calls whose
arguments a built-in rejects (both settle before running), permissions answered from the
scenario, and every scenario event. What it does not: a built-in tool that would really
run, or an MCP server. A scenario that needs one raises :class:`SimulationError`; record
the outcomes as a fixture tool of the same name instead (fixtures replace built-ins).
"""

from __future__ import annotations

import functools
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from activities.fixtures import cancelled_fixture_outcome, fixture_tool_spec, run_fixture
from activities.mcp.names import is_mcp_name
from activities.model import scripted_turn, to_tool_call
from activities.outcomes import not_started_outcome
from activities.progress_judge import scripted_verdict
from activities.tool_runner import builtin_tool_specs, parse_call
from activities.tools import BUILTIN_TOOLS
from bench.loop_peers.base import PeerRule
from seawall.scenario.driver import prompt_input
from seawall.scenario.format import Scenario, ScenarioEvent
from workflows.contracts import TerminalStatus, ToolCall, ToolOutcome
from workflows.contracts.activity import CallModelInput, ToolSpec
from workflows.contracts.conversation import (
    Message,
    Role,
    mid_turn_message,
    system_message,
    tool_message,
)
from workflows.contracts.outcome import ToolErrorType
from workflows.contracts.prompt import (
    GuardEntry,
    LoopType,
    PromptInput,
    PromptResult,
    RuleEntry,
    StopReason,
    ToolCallCounts,
    guard_forced_off,
)
from workflows.contracts.scenario import ScenarioHooks
from workflows.contracts.synthetic_outcomes import permission_denied_outcome, skipped_outcome
from workflows.prompt.batch import DrainedInput, after_batch, after_judgement, rule_entry
from workflows.rules import (
    SEED_SETTINGS,
    LoopProfile,
    LoopRule,
    LoopRules,
    LoopSettings,
)
from workflows.rules.judge import ProgressJudge, judge_mode
from workflows.rules.normalize import with_readings
from workflows.seed import GuardMode, GuardState
from workflows.seed.protections import BatchProtections, BatchScreening, cap_limit, over_cap

# Paths in fixture messages are never inside this root, exactly as they are never inside
# the random temporary workspace of a real run, so masking gives the same text in both.
SIM_WORKSPACE = "/nonexistent/seawall-bench-workspace"
# The recommended profile keeps the name every earlier report used; the seed profile
# runs beside it under its own.
SEAWALL = "seawall"
SEAWALL_SEED = "seawall-seed"
PROFILE_POLICIES: dict[LoopProfile, str] = {
    LoopProfile.RECOMMENDED: SEAWALL,
    LoopProfile.SEED: SEAWALL_SEED,
}
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
    denied_repeats: int = 0  # re-requests of denied calls answered without asking
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
    loop_profile: str = LoopProfile.SEED.value
    rules: list[RuleEntry] = field(default_factory=list)
    # Warnings the policy put into the conversation: Seawall's reminders (the post-batch
    # step's), or a peer's injected warnings (bench/loop_peers/base.py).
    warnings: int = 0

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
        return _verdict(self, self.loop_type)


def result_verdict(result: PromptResult) -> dict[str, Any]:
    """The same fields of a real workflow result."""
    return _verdict(result, result.loop_type.value if result.loop_type else None)


def _verdict(result: SimResult | PromptResult, loop_type: str | None) -> dict[str, Any]:
    return {
        "stop_reason": result.stop_reason.value,
        "loop_type": loop_type,
        "model_requests": result.model_requests,
        "tool_calls": result.tool_calls.model_dump(),
        "guard": [entry.model_dump() for entry in result.guard],
        "enforcement_disabled": result.enforcement_disabled,
        "pending_input": list(result.pending_input),
        "messages": [m.model_dump(mode="json") for m in result.messages],
        "loop_profile": result.loop_profile,
        "rules": [entry.model_dump() for entry in result.rules],
    }


def verdict_differences(simulated: dict[str, Any], real: dict[str, Any]) -> list[str]:
    """Human-readable differences between two verdicts; empty when they agree."""
    out: list[str] = []
    for key in simulated:
        if simulated[key] == real.get(key):
            continue
        if key in ("messages", "guard", "rules"):
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


def peer_refusal_outcome(call: ToolCall, text: str) -> ToolOutcome:
    """A call a peer refused to run: it never started and the model reads the peer's text."""
    return not_started_outcome(
        call, ToolErrorType.EXECUTION_DENIED, text, policy_tool_name=None, tool_type=None
    )


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

    def __init__(
        self, scenario: Scenario, mode: GuardMode | None, loop: LoopSettings | None = None
    ) -> None:
        self.scenario = scenario
        self.input: PromptInput = prompt_input(scenario, Path(SIM_WORKSPACE), mode, loop)
        self.hooks: ScenarioHooks = self.input.scenario or ScenarioHooks()
        self.tools: dict[str, ToolSpec] = dict(_builtin_specs())
        for name, fixture in self.hooks.fixture_tools.items():
            self.tools[name] = fixture_tool_spec(name, fixture)
        self.messages: list[Message] = [Message(role=Role.USER, content=self.input.prompt)]
        self.model_requests = 0
        self.batch = 0
        self.counts = ToolCallCounts()
        self.pending_input: list[str] = []
        self.queued_prompt = False
        self.input_unreliable = False
        self.traces: list[BatchTrace] = []
        # The prompt's clock: scripted seconds since the prompt started.
        self.clock = 0.0

    # model -------------------------------------------------------------------------------

    def next_calls(self) -> list[ToolCall]:
        request_number = self.model_requests + 1
        turn = scripted_turn(
            CallModelInput(
                model=self.input.model,
                messages=self.messages,
                request_number=request_number,
                scenario_script=self.hooks.model_script,
            )
        )
        calls = [to_tool_call(c, request_number, i) for i, c in enumerate(turn.tool_calls)]
        self.model_requests += 1
        self.clock += turn.latency_seconds
        self.messages.append(Message(role=Role.ASSISTANT, content=turn.text, tool_calls=calls))
        return calls

    # batch bookkeeping -------------------------------------------------------------------

    def open_batch(self, calls: list[ToolCall]) -> BatchTrace:
        self.batch += 1
        trace = BatchTrace(batch=self.batch, requested=len(calls))
        self.traces.append(trace)
        return trace

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

    def drain(self) -> DrainedInput:
        drained = DrainedInput(self.pending_input, self.queued_prompt, self.input_unreliable)
        self.pending_input, self.queued_prompt, self.input_unreliable = [], False, False
        return drained

    # tools -------------------------------------------------------------------------------

    def run_call(self, call: ToolCall, policy: str | None, ordinal: int) -> ToolOutcome | None:
        """The outcome of one cleared call, as the tool activities would settle it;
        ``None`` while it hangs."""
        return self.run_timed_call(call, policy, ordinal)[0]

    def run_timed_call(
        self, call: ToolCall, policy: str | None, ordinal: int
    ) -> tuple[ToolOutcome | None, float | None]:
        """:meth:`run_call`, and the seconds the call took when its fixture ran (its
        scripted duration; ``None`` when no tool ran: denied, invalid, or hanging)."""
        spec = self.tools.get(call.name)
        fixture = self.hooks.fixture_tools.get(call.name)
        if spec is not None and self.input.approval_mode.asks_before(
            spec.name, mutating=spec.mutating
        ):
            if fixture is None:
                invalid = parse_call(call, BUILTIN_TOOLS)
                if isinstance(invalid, ToolOutcome):
                    return invalid, None
            choice = self.scenario.permissions.get(call.name, "approve")
            if choice != "approve":  # rejected, or ignored until the request timed out
                denied = permission_denied_outcome(
                    call, policy_tool_name=policy, tool_type=spec.tool_type
                )
                return denied, None
        if fixture is not None:
            scripted = fixture.outcome_for(ordinal)
            if scripted.hang:
                return None, None
            ran = _complete(run_fixture(call, fixture, ordinal))
            read = with_readings(call.name, call.arguments, ran, labelled_ids=True, world_ids=True)
            return read, scripted.duration_seconds
        if is_mcp_name(call.name) and call.name not in BUILTIN_TOOLS:
            raise SimulationError(
                f"{self.scenario.name}: calls the MCP tool {call.name!r} without a fixture"
            )
        parsed = parse_call(call, BUILTIN_TOOLS)
        if isinstance(parsed, ToolOutcome):  # the tool activity's answer: it reads it
            return with_readings(
                call.name, call.arguments, parsed, labelled_ids=True, world_ids=True
            ), None
        raise SimulationError(
            f"{self.scenario.name}: calls the built-in tool {call.name!r} with valid arguments "
            "and no fixture; the simulator cannot run it (script it as a fixture tool)"
        )

    def finish_running(
        self, calls: list[ToolCall], running: dict[int, ToolOutcome | None], trace: BatchTrace
    ) -> tuple[dict[int, ToolOutcome], bool]:
        """Deliver the batch's events, then settle every running call (a hanging one as
        its fixture reports a cancellation). Returns the outcomes by call index and whether
        the prompt was cancelled during the batch."""
        cancelled = self.deliver_events()
        ran: dict[int, ToolOutcome] = {}
        for index, outcome in running.items():
            if outcome is None:
                if not cancelled:
                    raise SimulationError(
                        f"{self.scenario.name}: a call hangs in batch {self.batch} and no "
                        "cancel event ends it"
                    )
                call = calls[index]
                outcome = cancelled_fixture_outcome(call, self.hooks.fixture_tools[call.name])
            ran[index] = outcome
        trace.failed = sum(1 for outcome in ran.values() if outcome.status == TerminalStatus.ERROR)
        return ran, cancelled

    def result(
        self,
        policy: str,
        stop_reason: StopReason,
        loop_type: str | None,
        guard: list[GuardEntry] | None = None,
        enforcement_disabled: bool = False,
        loop_profile: LoopProfile = LoopProfile.SEED,
        rules: list[RuleEntry] | None = None,
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
            loop_profile=loop_profile.value,
            rules=rules or [],
        )


# --- Seawall ------------------------------------------------------------------------------


def _trace_screening(trace: BatchTrace, screening: BatchScreening) -> None:
    trace.skipped = len(screening.skipped)
    trace.executed = len(screening.cleared)
    answers = [answered.outcome for answered in screening.answered]
    trace.duplicates = sum(1 for outcome in answers if outcome.provider_duplicate)
    trace.refused = sum(1 for outcome in answers if outcome.refused_repeat)
    trace.denied_repeats = len(answers) - trace.duplicates - trace.refused


def simulate_seawall(
    scenario: Scenario,
    mode: GuardMode | None = GuardMode.ENFORCE,
    *,
    operator_mode: GuardMode = GuardMode.SHADOW,
    loop: LoopSettings | None = None,
    operator_loop: LoopSettings | None = None,
    thresholds: Mapping[LoopRule, int] | None = None,
) -> SimResult:
    """Replay ``scenario`` through Seawall's protections, exactly as ``PromptWorkflow``.

    ``mode`` and ``loop`` override the scenario's guard mode and loop settings like the
    benchmark's policies do; with neither, ``operator_mode`` and ``operator_loop`` (default:
    the recommended profile in the guard's mode) stand in for the operator settings the
    worker would resolve. ``thresholds`` replaces the recommended rules' reminder thresholds
    (sensitivity runs; the workflow always uses the defaults).
    """
    r = _Replay(scenario, mode, loop)
    inp = r.input
    forced_off = guard_forced_off(inp)
    guard_mode = GuardMode.OFF if forced_off else (inp.guard_mode or operator_mode)
    loop_settings = inp.loop_settings or operator_loop or LoopSettings()
    state = GuardState()
    entries: list[GuardEntry] = []
    rule_entries: list[RuleEntry] = []
    protections = BatchProtections(inp, inp.workspace_root)
    rules = LoopRules(loop_settings, guard_mode, route_forced_off=forced_off, thresholds=thresholds)
    protections.use_loop_rules(rules)
    # The progress judge, answered by the script's ``model.judge`` (``unknown`` past it).
    judge = ProgressJudge(
        judge_mode(
            loop_settings,
            route_forced_off=forced_off,
            normalized=rules.normalized,
        )
    )
    script = r.hooks.model_script
    verdicts = list(script.judge) if script is not None else []
    r.counts = protections.counts
    policy = PROFILE_POLICIES[loop_settings.profile]
    reminders = 0  # the post-batch step's reminders: Seawall's warnings

    def done(stop: StopReason, loop_type: LoopType | None = None) -> SimResult:
        result = r.result(
            policy,
            stop,
            loop_type.value if loop_type else None,
            entries,
            state.enforcement_disabled,
            loop_settings.profile,
            rule_entries,
        )
        result.warnings = reminders
        return result

    while True:
        if r.model_requests >= inp.max_model_requests:
            return done(StopReason.MAX_TURN_REQUESTS)
        calls = r.next_calls()
        if not calls:
            return done(StopReason.END_TURN)
        trace = r.open_batch(calls)
        screening = protections.screen(calls, r.tools)
        _trace_screening(trace, screening)
        rule_entries.extend(rule_entry(r.batch, d.decision) for d in screening.denied_repeats)
        if screening.capped:
            r.messages.extend(tool_message(outcome) for outcome in screening.skipped)
            cap = protections.cap_stop()
            r.messages.append(system_message(cap.message))
            return done(StopReason.LOOP_DETECTED, cap.loop_type)

        running: dict[int, ToolOutcome | None] = {}
        durations: dict[int, float] = {}
        for cleared in screening.cleared:
            outcome, seconds = r.run_timed_call(
                cleared.call, cleared.policy_tool_name, cleared.ordinal
            )
            running[cleared.index] = outcome
            if seconds is not None:
                durations[cleared.index] = seconds
        ran, cancelled = r.finish_running(calls, running, trace)
        # The batch's calls ran concurrently: the clock moves on by the longest.
        r.clock += max(durations.values(), default=0.0)
        outcomes = protections.settle(screening, ran, durations=durations)
        r.messages.extend(tool_message(outcome) for outcome in outcomes)
        if cancelled:
            return done(StopReason.CANCELLED)

        drained = r.drain()
        step = after_batch(
            protections, state, guard_mode, outcomes, drained, batch=r.batch, now=r.clock
        )
        state = step.guard.state
        entries.append(step.guard_entry)
        rule_entries.extend(rule_entry(r.batch, d) for d in step.rule_decisions)
        r.messages.extend(step.messages)
        reminders += len(step.reminders)
        stop = step.stop
        # The workflow's PromptJudging.review, with the script answering for the activity.
        if stop is None and judge.due(rules.reviewed, input_arrived=drained.arrived):
            judged = after_judgement(
                judge,
                scripted_verdict(verdicts, judge.asks),
                batch=r.batch,
                enforcement_disabled=state.enforcement_disabled,
            )
            rule_entries.extend([judged.entry] if judged.entry is not None else [])
            r.messages.extend(judged.messages)
            reminders += len(judged.reminders)
            stop = judged.stop
        if stop is not None:
            r.pending_input = step.requeued + r.pending_input
            return done(StopReason.LOOP_DETECTED, stop.loop_type)


# --- baselines ----------------------------------------------------------------------------


def simulate_baseline(scenario: Scenario, rule: PeerRule) -> SimResult:
    """Replay ``scenario`` with no Seawall protection, under the per-prompt tool-call cap
    (the scenario's, 100 by default) and ``rule``. Every call the rule lets through runs.

    The optional hooks of ``bench/loop_peers/base.py`` are called when the rule has them,
    in the order that module documents: the reply's text, single-call refusals, the batch
    check, a warning, the batch, the settled check, a warning. A warning is appended to the
    conversation (as ``rule.warning_role``, ``user`` by default) and counted."""
    r = _Replay(scenario, GuardMode.OFF, SEED_SETTINGS)
    inp = r.input
    calls_requested = 0
    runs_per_tool: dict[str, int] = {}
    warnings = 0
    observe_model = getattr(rule, "observe_model", None)
    refuse_call = getattr(rule, "refuse_call", None)
    take_warning = getattr(rule, "warning", None)
    observe_user = getattr(rule, "observe_user", None)
    warning_role: Role = getattr(rule, "warning_role", Role.USER)

    def result(stop_reason: StopReason, loop_type: str | None) -> SimResult:
        out = r.result(rule.name, stop_reason, loop_type)
        out.warnings = warnings
        return out

    def warn() -> None:
        nonlocal warnings
        text = take_warning() if take_warning is not None else None
        if text is not None:
            r.messages.append(Message(role=warning_role, content=text))
            warnings += 1

    def skip(calls: list[ToolCall], trace: BatchTrace) -> None:
        r.messages.extend(tool_message(skipped_outcome(call)) for call in calls)
        r.counts.skipped += len(calls)
        trace.skipped += len(calls)

    while True:
        if r.model_requests >= inp.max_model_requests:
            return result(StopReason.MAX_TURN_REQUESTS, None)
        calls = r.next_calls()
        if not calls:
            return result(StopReason.END_TURN, None)
        trace = r.open_batch(calls)
        if over_cap(cap_limit(inp.max_tool_calls_per_turn), calls_requested, len(calls)):
            skip(calls, trace)
            return result(StopReason.LOOP_DETECTED, CAP_RULE)
        calls_requested += len(calls)
        if observe_model is not None:
            observe_model(r.messages[-1].content, calls)
        refused: dict[int, ToolOutcome] = {}
        if refuse_call is not None:
            for index, call in enumerate(calls):
                text = refuse_call(call)
                if text is not None:
                    refused[index] = peer_refusal_outcome(call, text)
        stopped = rule.before_batch(calls)
        if stopped is not None:
            skip(calls, trace)
            warn()
            return result(StopReason.LOOP_DETECTED, stopped)
        warn()

        running: dict[int, ToolOutcome | None] = {}
        for index, call in enumerate(calls):
            if index in refused:
                continue
            ordinal = runs_per_tool.get(call.name, 0)
            runs_per_tool[call.name] = ordinal + 1
            r.counts.executed += 1
            trace.executed += 1
            policy = call.name if call.name in r.tools else None
            running[index] = r.run_call(call, policy, ordinal)
        r.counts.refused += len(refused)
        trace.refused += len(refused)
        ran, cancelled = r.finish_running(calls, running, trace)
        ran.update(refused)
        outcomes = [ran[index] for index in range(len(calls))]
        r.messages.extend(tool_message(outcome) for outcome in outcomes)
        if cancelled:
            return result(StopReason.CANCELLED, None)
        user_texts = r.drain().texts
        r.messages.extend(mid_turn_message(text) for text in user_texts)
        if user_texts and observe_user is not None:
            observe_user(user_texts)
        stopped = rule.after_batch(calls, outcomes)
        warn()
        if stopped is not None:
            return result(StopReason.LOOP_DETECTED, stopped)
