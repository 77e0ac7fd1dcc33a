"""``PromptWorkflow``: one prompt's agent loop as a durable Temporal workflow
(docs/architecture.md, "The prompt loop").

Loop: model activity → admission → gathered tool activities → batch receipt → drain input →
reduce → branch (continue | reminder | stop). The protections are consulted most specific
first — call-id dedup, invalid parameters, failed-call refusal, the repeated-failure guard,
the tool-call cap — and only the first that stops records the loop type. All guard state
lives here as deterministic workflow state, so a worker crash or a replay reaches the same
decisions.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy, SearchAttributeUpdate
from temporalio.exceptions import ActivityError, CancelledError

with workflow.unsafe.imports_passed_through():
    from workflows import search_attributes, telemetry
    from workflows.activity_io import (
        CALL_MODEL,
        CHECK_TOOL_CALL,
        LIST_TOOLS,
        RESOLVE_OPERATOR_SETTINGS,
        RUN_TOOL,
        CallModelInput,
        CheckToolCallInput,
        ListToolsInput,
        ListToolsOutput,
        ModelReply,
        OperatorSettings,
        ResolveOperatorSettingsInput,
        RunToolInput,
        ToolSpec,
    )
    from workflows.conversation import (
        MAX_CONVERSATION_CHARS,
        Message,
        Role,
        conversation_chars,
        mid_turn_message,
        system_message,
    )
    from workflows.guard import (
        REPEATED_TOOL_FAILURE_REMINDER,
        REPEATED_TOOL_FAILURE_STOP_MESSAGE,
        Batch,
        DecisionKind,
        GuardInput,
        GuardMode,
        GuardState,
        Observation,
        reduce,
        telemetry_record,
    )
    from workflows.outcome import (
        ExecutionStatus,
        TerminalStatus,
        ToolCall,
        ToolErrorType,
        ToolOutcome,
    )
    from workflows.prompt_io import (
        AgentEvent,
        ApprovalMode,
        BatchRelease,
        DriverWait,
        EventKind,
        EventsQuery,
        GuardEntry,
        InputBoundaryReport,
        LoopType,
        PauseInfo,
        PermissionAnswer,
        PermissionRequest,
        PromptInput,
        PromptResult,
        PromptStatus,
        QueuedPrompt,
        Route,
        StopReason,
        ToolCallCounts,
        UserInput,
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
        argument_digest,
        refused_outcome,
        repeat_limit_stop_message,
    )

MODEL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=5,
    non_retryable_error_types=["ModelRequestRejected"],
)
# A tool error is a returned outcome; only a lost worker or a crashed activity retries.
TOOL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=3,
)
QUICK_ACTIVITY = timedelta(seconds=30)
TOOL_HEARTBEAT_TIMEOUT = timedelta(seconds=10)

# Prompts started before search attributes existed replay without the upserts.
SEARCH_ATTRIBUTES_PATCH = "seawall-search-attributes-v1"
# Prompts started before a successful state-changing call cleared the failed-call log
# replay with the log kept.
REFUSAL_FORGETS_AFTER_CHANGE_PATCH = "seawall-refusal-forgets-after-change-v1"

PERMISSION_DENIED_CONTENT = "The user did not approve this call; it was not run."
MUTATING_TOOLS_ALLOWED_IN_AUTO_EDIT = frozenset({"write_file", "edit_file"})


def route_label(prompt: PromptInput) -> str:
    """The route as a telemetry label: a channel prompt is its own route."""
    return "channel" if prompt.client_metadata.get("channel") else prompt.route.value


def guard_forced_off(prompt: PromptInput) -> bool:
    """Channel prompts and the cron, notification and background routes run unguarded."""
    return route_label(prompt) != Route.INTERACTIVE.value


def _cancelled_outcome(call: ToolCall, policy: str | None, execution: str) -> ToolOutcome:
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=policy,
        status=TerminalStatus.CANCELLED,
        execution_status=execution,
        content="The call was cancelled.",
    )


def _tool_message(outcome: ToolOutcome) -> Message:
    return Message(role=Role.TOOL, tool_call_id=outcome.call_id, content=outcome.content)


def _observation(outcome: ToolOutcome) -> Observation:
    return Observation(
        call_id=outcome.call_id,
        policy_tool_name=outcome.policy_tool_name,
        tool_type=outcome.tool_type,
        terminal_status=outcome.status,
        execution_status=outcome.execution_status,
        execution_error_type=outcome.execution_error_type,
        provider_duplicate=outcome.provider_duplicate,
        refused_repeat=outcome.refused_repeat,
    )


def _call_digest(call: ToolCall) -> str:
    arguments = call.arguments if call.arguments is not None else {"<raw>": call.raw_arguments}
    return argument_digest(call.name, arguments)


@workflow.defn(name="PromptWorkflow")
class PromptWorkflow:
    @workflow.init
    def __init__(self, prompt: PromptInput) -> None:
        self._input = prompt
        self._messages: list[Message] = []
        self._events: list[AgentEvent] = []
        self._tools: dict[str, ToolSpec] = {}
        self._guard_mode: GuardMode | None = None
        self._guard_state = GuardState()
        self._guard_entries: list[GuardEntry] = []
        self._failed_calls = FailedCallLog(
            mode=prompt.refusal_mode,
            remembered_limit=prompt.remembered_failures,
            max_repeats=prompt.max_repeats,
        )
        self._deduper = CallIdDeduper()
        self._invalid_params = InvalidParamsGuard()
        self._counts = ToolCallCounts()
        self._model_requests = 0
        self._batch = 0
        self._calls_requested = 0
        self._runs_per_tool: dict[str, int] = {}
        self._input_tokens = 0
        self._output_tokens = 0
        # Mid-turn input boundary, drained once per settled batch.
        self._pending_input: list[str] = []
        self._queued_prompt = False
        self._input_unreliable = False
        # Scenario-driver pause and permission requests.
        self._paused_batch: int | None = None
        self._released: set[int] = set()
        self._pending_permissions: dict[str, PermissionRequest] = {}
        self._permission_answers: dict[str, bool] = {}
        self._permission_seq = 0
        self._stop_reason: StopReason | None = None

    # --- messages -------------------------------------------------------------------------

    @workflow.signal
    def submit_input(self, user_input: UserInput) -> None:
        self._pending_input.append(user_input.text)

    @workflow.signal
    def set_queued_prompt(self, queued: QueuedPrompt) -> None:
        self._queued_prompt = self._queued_prompt or queued.queued

    @workflow.signal
    def report_unreliable_input(self, report: InputBoundaryReport) -> None:
        self._input_unreliable = True

    @workflow.signal
    def release_batch(self, release: BatchRelease) -> None:
        self._released.add(release.batch)
        if self._paused_batch == release.batch:
            self._paused_batch = None

    @workflow.update
    def answer_permission(self, answer: PermissionAnswer) -> str:
        self._pending_permissions.pop(answer.request_id, None)
        self._permission_answers[answer.request_id] = answer.approve
        return "approved" if answer.approve else "rejected"

    @answer_permission.validator
    def _validate_permission_answer(self, answer: PermissionAnswer) -> None:
        if answer.request_id not in self._pending_permissions:
            raise ValueError(f"no pending permission request {answer.request_id!r}")

    @workflow.update
    async def wait_for_driver(self, wait: DriverWait) -> PauseInfo:
        """Return once a scenario driver has something to do: a paused batch, a permission
        request it has not chosen to ignore, or the end of the prompt."""
        ignored = set(wait.ignored_permissions)

        def actionable() -> list[PermissionRequest]:
            return [r for r in self._pending_permissions.values() if r.request_id not in ignored]

        await workflow.wait_condition(
            lambda: (
                self._paused_batch is not None
                or bool(actionable())
                or self._stop_reason is not None
            )
        )
        return PauseInfo(
            paused_batch=self._paused_batch,
            pending_permissions=actionable(),
            finished=self._stop_reason is not None,
        )

    @workflow.query
    def status(self) -> PromptStatus:
        return PromptStatus(
            running=self._stop_reason is None,
            batch=self._batch,
            model_requests=self._model_requests,
            guard_mode=self._guard_mode.value if self._guard_mode else None,
            guard_phase=self._guard_state.phase.value,
            paused_batch=self._paused_batch,
            pending_permissions=list(self._pending_permissions.values()),
            tool_calls=self._counts.model_copy(),
            stop_reason=self._stop_reason,
        )

    @workflow.query
    def events(self, query: EventsQuery) -> list[AgentEvent]:
        return [event for event in self._events if event.seq > query.after]

    # --- the loop -------------------------------------------------------------------------

    @workflow.run
    async def run(self, prompt: PromptInput) -> PromptResult:
        error: str | None = None
        loop_type: LoopType | None = None
        try:
            self._guard_mode = await self._resolve_guard_mode()
            listed = await workflow.execute_activity(
                LIST_TOOLS,
                ListToolsInput(fixture_tools=prompt.fixture_tools),
                result_type=ListToolsOutput,
                start_to_close_timeout=QUICK_ACTIVITY,
            )
            self._tools = {tool.name: tool for tool in listed.tools}
            self._messages = [*prompt.history, Message(role=Role.USER, content=prompt.prompt)]
            stop_reason, loop_type, error = await self._loop()
        except asyncio.CancelledError:
            stop_reason = StopReason.CANCELLED
        self._stop_reason = stop_reason
        self._upsert_search_attributes(
            search_attributes.STOP_REASON.value_set(stop_reason.value),
            *([search_attributes.LOOP_TYPE.value_set(loop_type.value)] if loop_type else []),
        )
        self._emit(EventKind.PROMPT_FINISHED, status=stop_reason.value)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return PromptResult(
            workflow_id=workflow.info().workflow_id,
            stop_reason=stop_reason,
            loop_type=loop_type,
            error=error,
            model_requests=self._model_requests,
            tool_calls=self._counts,
            guard_mode=(self._guard_mode or GuardMode.OFF).value,
            refusal_mode=prompt.refusal_mode.value,
            enforcement_disabled=self._guard_state.enforcement_disabled,
            pending_input=self._pending_input,
            input_tokens=self._input_tokens,
            output_tokens=self._output_tokens,
            guard=self._guard_entries,
            messages=self._messages,
        )

    async def _resolve_guard_mode(self) -> GuardMode:
        prompt = self._input
        if guard_forced_off(prompt):
            return GuardMode.OFF
        if prompt.guard_mode is not None:
            return prompt.guard_mode
        settings: OperatorSettings = await workflow.execute_activity(
            RESOLVE_OPERATOR_SETTINGS,
            ResolveOperatorSettingsInput(),
            result_type=OperatorSettings,
            start_to_close_timeout=QUICK_ACTIVITY,
        )
        return settings.guard_mode

    async def _loop(self) -> tuple[StopReason, LoopType | None, str | None]:
        prompt = self._input
        while True:
            if self._model_requests >= prompt.max_model_requests:
                return StopReason.MAX_TURN_REQUESTS, None, None
            if conversation_chars(self._messages) > MAX_CONVERSATION_CHARS:
                return (
                    StopReason.ERROR,
                    None,
                    f"the conversation passed {MAX_CONVERSATION_CHARS} characters, the most "
                    "a durable prompt carries; start a new session or prompt",
                )
            try:
                reply = await self._call_model()
            except ActivityError as err:
                if isinstance(err.cause, CancelledError):
                    raise asyncio.CancelledError() from err
                cause = err.cause if err.cause is not None else err
                return StopReason.ERROR, None, f"model request failed: {cause}"
            self._messages.append(
                Message(role=Role.ASSISTANT, content=reply.text, tool_calls=reply.tool_calls)
            )
            if reply.text:
                self._emit(EventKind.AGENT_MESSAGE, text=reply.text)
            if not reply.tool_calls:
                return StopReason.END_TURN, None, None

            self._batch += 1
            calls = reply.tool_calls
            if over_cap(prompt.max_tool_calls_per_turn, self._calls_requested, len(calls)):
                self._skip_batch(calls)
                cap_message = TOOL_CALL_CAP_STOP_MESSAGE.format(cap=prompt.max_tool_calls_per_turn)
                self._add_stop(cap_message, LoopType.TURN_TOOL_CALL_CAP)
                self._record_stop(LoopType.TURN_TOOL_CALL_CAP)
                return StopReason.LOOP_DETECTED, LoopType.TURN_TOOL_CALL_CAP, None
            self._calls_requested += len(calls)

            outcomes, cancelled = await self._run_batch(calls)
            self._messages.extend(_tool_message(outcome) for outcome in outcomes)
            if cancelled:
                raise asyncio.CancelledError()

            drained, queued, unreliable = self._drain_input()
            decision_kind = self._reduce(outcomes, drained, queued, unreliable)

            stop = self._first_stop(decision_kind)
            if stop is not None:
                loop_type, message = stop
                self._add_stop(message, loop_type)
                self._record_stop(loop_type)
                # Input that arrived with the stopping batch stays queued for the user.
                self._pending_input = drained + self._pending_input
                return StopReason.LOOP_DETECTED, loop_type, None
            if decision_kind is DecisionKind.WARN:
                self._messages.append(system_message(REPEATED_TOOL_FAILURE_REMINDER))
                self._emit(EventKind.REMINDER, text=REPEATED_TOOL_FAILURE_REMINDER)
            self._messages.extend(mid_turn_message(text) for text in drained)

    async def _call_model(self) -> ModelReply:
        reply: ModelReply = await workflow.execute_activity(
            CALL_MODEL,
            CallModelInput(
                model=self._input.model,
                messages=self._messages,
                tools=list(self._tools.values()),
                request_number=self._model_requests + 1,
            ),
            result_type=ModelReply,
            start_to_close_timeout=timedelta(minutes=5),
            retry_policy=MODEL_RETRY,
            summary=f"model request {self._model_requests + 1}",
        )
        self._model_requests += 1
        self._input_tokens += reply.usage.input_tokens
        self._output_tokens += reply.usage.output_tokens
        return reply

    def _skip_batch(self, calls: list[ToolCall]) -> None:
        for call in calls:
            outcome = skipped_outcome(call.call_id, call.name)
            self._messages.append(_tool_message(outcome))
            self._counts.skipped += 1

    def _add_stop(self, message: str, loop_type: LoopType) -> None:
        """Keep the stop message in the conversation and stream it exactly once; the
        ``stop`` event that follows names the loop type only."""
        self._messages.append(system_message(message))
        self._emit(EventKind.AGENT_MESSAGE, text=message)
        self._emit(EventKind.STOP, status=loop_type.value)

    def _first_stop(self, decision_kind: DecisionKind) -> tuple[LoopType, str] | None:
        if self._deduper.stop:
            return LoopType.GLOBAL_TOOL_CALL_DUPLICATE, DUPLICATE_STOP_MESSAGE
        if self._invalid_params.stop:
            return LoopType.INVALID_TOOL_PARAMS_STAGNATION, INVALID_PARAMS_STOP_MESSAGE
        if self._failed_calls.limit_exceeded:
            return LoopType.REPEATED_FAILED_CALL, repeat_limit_stop_message(
                self._failed_calls.max_repeats
            )
        if decision_kind is DecisionKind.STOP:
            return LoopType.REPEATED_TOOL_EXECUTION_FAILURE, REPEATED_TOOL_FAILURE_STOP_MESSAGE
        return None

    # --- one batch ------------------------------------------------------------------------

    async def _run_batch(self, calls: list[ToolCall]) -> tuple[list[ToolOutcome], bool]:
        """Admit, run concurrently, and settle every call of one model batch, in call order.

        Returns the outcomes and whether the prompt was cancelled while the batch ran; a
        cancellation still lets every started call settle (as cancelled when it was cut).
        """
        batch = self._batch
        settled: dict[int, ToolOutcome] = {}
        digests: dict[int, str] = {}
        running: dict[int, asyncio.Task[ToolOutcome]] = {}
        ordinals: dict[int, int] = {}
        for index, call in enumerate(calls):
            policy = call.name if call.name in self._tools else None
            digest = _call_digest(call)
            digests[index] = digest
            if self._deduper.is_duplicate(call.call_id, digest):
                settled[index] = duplicate_outcome(call.call_id, call.name, policy)
                self._emit_settled(settled[index])
                self._counts.duplicates += 1
                continue
            self._deduper.remember(call.call_id, digest)
            check = self._failed_calls.check(digest)
            if check is not RepeatCheck.ADMIT:
                telemetry.refusal(
                    outcome="repeat" if check is RepeatCheck.REFUSE else check.value,
                    tool_name=policy,
                    tool_type=self._tools[policy].tool_type if policy else None,
                    route=route_label(self._input),
                )
            if check is RepeatCheck.REFUSE:
                settled[index] = refused_outcome(
                    call_id=call.call_id,
                    tool_name=call.name,
                    policy_tool_name=policy,
                    tool_type=self._tools[policy].tool_type if policy else None,
                    reason=self._failed_calls.earlier_reason(digest) or "",
                )
                self._emit_settled(settled[index])
                self._counts.refused += 1
                continue
            self._counts.executed += 1
            ordinal = self._runs_per_tool.get(call.name, 0)
            self._runs_per_tool[call.name] = ordinal + 1
            ordinals[index] = ordinal
            self._emit(EventKind.TOOL_CALL_STARTED, call_id=call.call_id, tool_name=call.name)
            running[index] = asyncio.create_task(self._run_and_report(call, policy, ordinal, batch))

        cancelled = False
        results: list[ToolOutcome | BaseException]
        try:
            if batch in self._input.pause_at_batches:
                # Pause once every call that can settle on its own has settled, so the
                # driver's event lands at the same point of the batch on every run.
                settling = [
                    task
                    for index, task in running.items()
                    if not self._scripted_to_hang(calls[index], ordinals[index])
                ]
                await workflow.wait_condition(lambda: all(task.done() for task in settling))
                self._paused_batch = batch
                await workflow.wait_condition(lambda: batch in self._released)
            results = list(await asyncio.gather(*running.values()))
        except asyncio.CancelledError:
            cancelled = True
            self._paused_batch = None
            for task in running.values():
                task.cancel()
            results = await asyncio.gather(*running.values(), return_exceptions=True)
        finally:
            self._paused_batch = None

        for (index, _task), result in zip(running.items(), results, strict=True):
            call = calls[index]
            if isinstance(result, ToolOutcome):
                settled[index] = result
            else:  # cancelled before it could start
                policy = call.name if call.name in self._tools else None
                settled[index] = _cancelled_outcome(call, policy, ExecutionStatus.NOT_STARTED)
                self._emit_settled(settled[index])

        outcomes = [settled[index] for index in range(len(calls))]
        if any(self._changed_state(outcome) for outcome in outcomes) and workflow.patched(
            REFUSAL_FORGETS_AFTER_CHANGE_PATCH
        ):
            self._failed_calls.forget_failures()
        for index, outcome in enumerate(outcomes):
            self._failed_calls.record(digests[index], outcome, self._input.workspace_root)
            self._invalid_params.observe(outcome)
        return outcomes, cancelled

    def _changed_state(self, outcome: ToolOutcome) -> bool:
        """A successful call of a tool that can change what a repeat would meet."""
        if outcome.status != TerminalStatus.SUCCESS:
            return False
        spec = self._tools.get(outcome.tool_name)
        return outcome.tool_name in STATE_CHANGING_TOOLS or (spec is not None and spec.mutating)

    async def _run_and_report(
        self, call: ToolCall, policy: str | None, ordinal: int, batch: int
    ) -> ToolOutcome:
        """Run one call and stream its settlement as soon as it happens."""
        outcome = await self._run_call(call, policy, ordinal, batch)
        self._emit_settled(outcome)
        return outcome

    def _emit_settled(self, outcome: ToolOutcome) -> None:
        self._emit(
            EventKind.TOOL_CALL_SETTLED,
            call_id=outcome.call_id,
            tool_name=outcome.tool_name,
            status=outcome.status,
        )

    async def _run_call(
        self, call: ToolCall, policy: str | None, ordinal: int, batch: int
    ) -> ToolOutcome:
        prompt = self._input
        spec = self._tools.get(call.name)
        fixture = prompt.fixture_tools.get(call.name)
        try:
            if spec is not None and self._needs_permission(spec):
                invalid: ToolOutcome | None = await workflow.execute_activity(
                    CHECK_TOOL_CALL,
                    CheckToolCallInput(call=call, fixture=fixture),
                    result_type=ToolOutcome | None,  # type: ignore[arg-type]
                    start_to_close_timeout=QUICK_ACTIVITY,
                    summary=f"{telemetry.tool_label(policy, spec.tool_type)}: validate "
                    f"(batch {batch})",
                )
                if invalid is not None:
                    return invalid
                if not await self._ask_permission(call, batch):
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
            outcome: ToolOutcome = await workflow.execute_activity(
                RUN_TOOL,
                RunToolInput(
                    call=call,
                    workspace_root=prompt.workspace_root,
                    ordinal=ordinal,
                    batch=batch,
                    fixture=fixture,
                    max_output_chars=prompt.max_output_chars,
                    shell_timeout_seconds=prompt.tool_timeout_seconds,
                ),
                result_type=ToolOutcome,
                start_to_close_timeout=timedelta(seconds=prompt.tool_timeout_seconds + 30),
                heartbeat_timeout=TOOL_HEARTBEAT_TIMEOUT,
                retry_policy=TOOL_RETRY,
                cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
                # Names MCP tools only as "mcp": their names carry the server's name.
                summary=f"{telemetry.tool_label(policy, spec.tool_type if spec else None)} "
                f"(batch {batch})",
            )
            return outcome
        except ActivityError as err:
            if isinstance(err.cause, CancelledError):
                return _cancelled_outcome(call, policy, ExecutionStatus.CANCELLED)
            # The activity itself failed (a lost worker, every retry spent): whether the
            # tool ran is unknown, which the guard treats as untrusted.
            return ToolOutcome(
                call_id=call.call_id,
                tool_name=call.name,
                policy_tool_name=policy,
                tool_type=spec.tool_type if spec else None,
                status=TerminalStatus.ERROR,
                execution_status=None,
                error_type=ToolErrorType.UNHANDLED_EXCEPTION,
                content="The tool call could not be completed by the worker.",
            )
        except asyncio.CancelledError:
            return _cancelled_outcome(call, policy, ExecutionStatus.NOT_STARTED)

    def _scripted_to_hang(self, call: ToolCall, ordinal: int) -> bool:
        fixture = self._input.fixture_tools.get(call.name)
        if fixture is None:
            return False
        return fixture.outcomes[min(ordinal, len(fixture.outcomes) - 1)].hang

    def _needs_permission(self, spec: ToolSpec) -> bool:
        mode = self._input.approval_mode
        if not spec.mutating or mode is ApprovalMode.YOLO:
            return False
        return not (
            mode is ApprovalMode.AUTO_EDIT and spec.name in MUTATING_TOOLS_ALLOWED_IN_AUTO_EDIT
        )

    async def _ask_permission(self, call: ToolCall, batch: int) -> bool:
        """Ask the user; a rejection or no answer in time means the call does not run."""
        self._permission_seq += 1
        request_id = f"permission-{self._permission_seq}"
        request = PermissionRequest(
            request_id=request_id, call_id=call.call_id, tool_name=call.name, batch=batch
        )
        self._pending_permissions[request_id] = request
        self._emit(
            EventKind.PERMISSION_REQUEST,
            call_id=call.call_id,
            tool_name=call.name,
            request_id=request_id,
        )
        try:
            await workflow.wait_condition(
                lambda: request_id in self._permission_answers,
                timeout=timedelta(seconds=self._input.permission_timeout_seconds),
            )
        except TimeoutError:
            pass
        finally:
            self._pending_permissions.pop(request_id, None)
        return self._permission_answers.get(request_id, False)

    # --- input boundary and guard ---------------------------------------------------------

    def _drain_input(self) -> tuple[list[str], bool, bool]:
        drained, self._pending_input = self._pending_input, []
        queued, self._queued_prompt = self._queued_prompt, False
        unreliable, self._input_unreliable = self._input_unreliable, False
        return drained, queued, unreliable

    def _reduce(
        self, outcomes: list[ToolOutcome], drained: list[str], queued: bool, unreliable: bool
    ) -> DecisionKind:
        mode = self._guard_mode or GuardMode.OFF
        before = self._guard_state
        decision = reduce(
            before,
            GuardInput(
                mode=mode,
                batch=Batch(observations=[_observation(outcome) for outcome in outcomes]),
                has_external_input=bool(drained),
                has_queued_prompt=queued,
                input_reliable=not unreliable,
            ),
        )
        self._guard_state = decision.state
        self._guard_entries.append(
            GuardEntry(
                batch=self._batch,
                decision=decision.kind.value,
                phase_before=before.phase.value,
                phase_after=decision.state.phase.value,
                reason=decision.reason.value if decision.reason else None,
                failure_count=decision.state.failure_count,
                batch_count=decision.state.batch_count,
                candidate_ordinal=decision.state.candidate_ordinal,
                mode=mode.value,
            )
        )
        record = telemetry_record(before, mode, decision)
        if record is not None:
            telemetry.guard_transition(record, route=route_label(self._input), batch=self._batch)
            self._upsert_search_attributes(
                search_attributes.GUARD_PHASE.value_set(decision.state.phase.value),
                search_attributes.LAST_DECISION.value_set(decision.kind.value),
            )
        workflow.set_current_details(self._details())
        return decision.kind

    def _record_stop(self, loop_type: LoopType) -> None:
        telemetry.loop_stop(
            loop_type=loop_type.value,
            mode=self._guard_mode or GuardMode.OFF,
            route=route_label(self._input),
            batch=self._batch,
        )

    def _upsert_search_attributes(self, *updates: SearchAttributeUpdate[str]) -> None:
        if updates and workflow.patched(SEARCH_ATTRIBUTES_PATCH):
            workflow.upsert_search_attributes(list(updates))

    def _details(self) -> str:
        state = self._guard_state
        return (
            f"**Guard** ({(self._guard_mode or GuardMode.OFF).value}): {state.phase.value}, "
            f"{state.failure_count} failures over {state.batch_count} batches "
            f"(candidate {state.candidate_ordinal}) after batch {self._batch}; "
            f"{self._model_requests} model requests, {self._counts.executed} calls run, "
            f"{self._counts.refused} refused."
        )

    def _emit(
        self,
        kind: EventKind,
        *,
        call_id: str | None = None,
        tool_name: str | None = None,
        status: str | None = None,
        text: str | None = None,
        request_id: str | None = None,
    ) -> None:
        self._events.append(
            AgentEvent(
                seq=len(self._events) + 1,
                kind=kind,
                batch=self._batch,
                call_id=call_id,
                tool_name=tool_name,
                status=status,
                text=text,
                request_id=request_id,
            )
        )
