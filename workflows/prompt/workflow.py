"""``PromptWorkflow``: one prompt's agent loop as a durable Temporal workflow
(docs/architecture.md, "The life of a prompt").

Loop: model activity → batch screening → approval → gathered tool activities → settlement →
drain input → after the batch (reduce, review, branch: continue | reminder | stop). The
protections are consulted most specific first, and only the first that stops records the
loop type; all their state is deterministic workflow state, so a worker crash or a replay
reaches the same decisions.

This module is the orchestration and its durable side (activities, events). Each step is a
named collaborator beside it: screening and settlement (``workflows.seed.protections``) and
the step after a batch (``workflows.prompt.batch``), both shared with the benchmark
simulator; approvals (``workflows.prompt.permissions``, ``approval_policy``); what the UI
shows (``workflows.prompt.visibility``); the event log (``workflows.prompt.events``); the
scenario driver's hooks; patch ids and activity options (``patches``, ``activity_options``).
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, CancelledError

with workflow.unsafe.imports_passed_through():
    from workflows.contracts import search_attributes
    from workflows.contracts.activity import (
        CALL_MODEL,
        CHECK_TOOL_CALL,
        LIST_TOOLS,
        LIST_TOOLS_WITHOUT_MCP,
        RESOLVE_OPERATOR_SETTINGS,
        RUN_TOOL,
        CallModelInput,
        CheckToolCallInput,
        ListToolsInput,
        ListToolsOutput,
        ModelReply,
        ModelUsage,
        OperatorSettings,
        ResolveOperatorSettingsInput,
        RunToolInput,
        ToolSpec,
        add_tokens,
    )
    from workflows.contracts.approval import ApprovalDecision
    from workflows.contracts.conversation import (
        DEFAULT_CONTEXT_BUDGET_CHARS,
        MAX_CONVERSATION_CHARS,
        Message,
        conversation_chars,
        system_message,
        tool_message,
    )
    from workflows.contracts.outcome import ExecutionStatus, ToolCall, ToolOutcome
    from workflows.contracts.prompt import (
        AWAITING_APPROVAL_STATUS,
        PUBLISH_MODEL_DELTA,
        AgentEvent,
        ErrorReason,
        EventKind,
        EventsPage,
        EventsQuery,
        GuardEntry,
        InputBoundaryReport,
        LoopType,
        ModelDelta,
        PromptInput,
        PromptResult,
        PromptStatus,
        QueuedPrompt,
        RuleEntry,
        StopReason,
        ToolCallsQuery,
        ToolResult,
        UserInput,
        guard_forced_off,
        route_label,
    )
    from workflows.contracts.prompt_options import DEFAULT_MODEL_RETRY_WINDOW_SECONDS
    from workflows.contracts.start_claims import RunGrantInbox, refused_start
    from workflows.contracts.synthetic_outcomes import (
        cancelled_outcome,
        permission_denied_outcome,
        rule_denied_outcome,
        worker_lost_outcome,
    )
    from workflows.prompt import telemetry
    from workflows.prompt.activity_options import (
        MODEL_HEARTBEAT_TIMEOUT,
        MODEL_RETRY,
        MODEL_RETRY_WINDOW,
        MODEL_TIMEOUT,
        QUICK_ACTIVITY,
        SETTINGS_LOCAL_ACTIVITY,
        SETTINGS_RETRY,
        TOOL_HEARTBEAT_TIMEOUT,
        TOOL_RETRY,
    )
    from workflows.prompt.approval_policy import Approval
    from workflows.prompt.batch import (
        AfterBatch,
        DrainedInput,
        after_batch,
        rule_entry,
        shadow_decisions,
    )
    from workflows.prompt.client_connection import ClientConnection
    from workflows.prompt.context_window import ContextWindow
    from workflows.prompt.conversation_chain import ConversationChain
    from workflows.prompt.editor_calls import EditorCalls
    from workflows.prompt.events import EventLog, StreamedText
    from workflows.prompt.judging import JUDGED_NOTHING, JudgeRequests, PromptJudging
    from workflows.prompt.model_failures import model_failure
    from workflows.prompt.patches import (
        CANCEL_BEFORE_LOOP_PATCH,
        CONTEXT_POLICY_PATCH,
        LOOP_PROFILE_PATCH,
        REFUSAL_FORGETS_AFTER_CHANGE_PATCH,
        StartPatches,
        fixture_carried,
    )
    from workflows.prompt.permissions import PermissionRequests
    from workflows.prompt.scenario_hooks import ScenarioDriverHooks
    from workflows.prompt.visibility import SearchAttributes, current_details, tool_summary
    from workflows.rules import SEED_SETTINGS, LoopRules, LoopSettings, RuleDecision
    from workflows.seed.guard import GuardMode, GuardState, telemetry_record
    from workflows.seed.protections import BatchProtections, BatchScreening, Cleared, LoopStop


@workflow.defn(name="PromptWorkflow")
class PromptWorkflow(
    ScenarioDriverHooks, PermissionRequests, EditorCalls, ClientConnection, RunGrantInbox
):
    """One prompt's agent loop. The mixins add the ``answer_permission`` update, the scenario
    driver's ``wait_for_driver`` update and ``release_batch`` signal, and ``grant``."""

    @workflow.init
    def __init__(self, prompt: PromptInput) -> None:
        super().__init__()
        self._input = prompt
        self._messages: list[Message] = []
        self._log = EventLog()
        self._streamed = StreamedText()
        # The number of the model request running now; 0 between requests.
        self._model_in_flight = 0
        self._tools: dict[str, ToolSpec] = {}
        self._guard_mode: GuardMode | None = None
        self._loop_settings: LoopSettings = SEED_SETTINGS
        self._guard_state = GuardState()
        self._guard_entries: list[GuardEntry] = []
        self._rule_entries: list[RuleEntry] = []
        self._protections = BatchProtections(prompt, prompt.workspace_root)
        self._model_requests = 0
        self._batch = 0
        # None (unknown) once a reply came without usage.
        self._input_tokens: int | None = 0
        self._output_tokens: int | None = 0
        # Mid-turn input boundary, drained once per settled batch.
        self._pending_input: list[str] = []
        self._queued_prompt = False
        self._input_unreliable = False
        self._stop_reason: StopReason | None = None
        # Decided when the loop starts (CONTEXT_POLICY_PATCH); the policy's view, kept and extended.
        self._context_policy = False
        self._context_window: ContextWindow | None = None
        self._chain = ConversationChain(prompt)  # requests by reference (CONVERSATION_REFS_PATCH)
        self._context_budget = prompt.context_budget_chars or DEFAULT_CONTEXT_BUDGET_CHARS
        # Decided first of all: which start patches apply (workflows/prompt/patches.py).
        self._patches = StartPatches()
        self._search_attributes = SearchAttributes()
        # Whether activities carry a summary for the UI: each is one more payload through
        # the converter and the sandbox, so only when the operator asks (docs/settings.md).
        self._activity_summaries = False
        self._started_at: datetime | None = None
        self._scripted_seconds = 0.0
        self._model_retry_window = DEFAULT_MODEL_RETRY_WINDOW_SECONDS
        # Why the prompt ended ``error``, and what the failed model request had streamed.
        self._error_reason: ErrorReason | None = None
        self._failed_request_text: str | None = None
        # The progress judge (workflows/prompt/judging.py); None: off in this prompt.
        self._judging: PromptJudging | None = None

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

    @workflow.signal(name=PUBLISH_MODEL_DELTA)
    def publish_model_delta(self, delta: ModelDelta) -> None:
        """Model text as it streams: shown to clients as ``message_delta`` events, never
        added to the conversation (the complete reply is, when the request returns)."""
        shown = self._streamed.receive(delta, in_flight=self._model_in_flight)
        if shown is not None:
            text, status = shown
            self._emit(EventKind.MESSAGE_DELTA, text=text, status=status)

    @workflow.query
    def status(self) -> PromptStatus:
        return PromptStatus(
            running=self._stop_reason is None,
            batch=self._batch,
            model_requests=self._model_requests,
            guard_mode=self._guard_mode.value if self._guard_mode else None,
            loop_profile=self._loop_settings.profile.value if self._guard_mode else None,
            guard_phase=self._guard_state.phase.value,
            paused_batch=self._paused_batch,
            pending_permissions=list(self._pending_permissions.values()),
            tool_calls=self._protections.counts.model_copy(),
            stop_reason=self._stop_reason,
        )

    @workflow.query
    def events(self, query: EventsQuery) -> list[AgentEvent]:
        return self._log.after(query.after)

    @workflow.query
    def events_page(self, query: EventsQuery) -> EventsPage:
        """``events``, in pages of bounded size (what ``follow_prompt_events`` reads)."""
        return self._log.page(query.after)

    @workflow.query
    def tool_calls(self, query: ToolCallsQuery) -> list[ToolCall]:
        wanted = set(query.call_ids)
        return [
            call
            for message in self._messages
            for call in message.tool_calls
            if call.call_id in wanted
        ]

    @workflow.query
    def tool_results(self, query: ToolCallsQuery) -> list[ToolResult]:
        """The settled calls' statuses and the start of their output (an editor shows them
        as each call settles; its batch's results reach the conversation only later)."""
        return self._log.results(query.call_ids)

    # --- the loop -------------------------------------------------------------------------

    @workflow.run
    async def run(self, prompt: PromptInput) -> PromptResult:
        error: str | None = None
        loop_type: LoopType | None = None
        self._patches = StartPatches.ask()  # before any other command
        self._search_attributes.changed_only = self._patches.durable_steps
        self._search_attributes.guard_from_warning = self._patches.one_marker
        if self._patches.progress_rules:
            self._started_at = workflow.now()
        try:
            (
                self._guard_mode,
                self._loop_settings,
                self._context_budget,
                self._activity_summaries,
                self._model_retry_window,
            ) = await self._resolve_operator_settings()
            rules = LoopRules(
                self._loop_settings,
                self._guard_mode,
                route_forced_off=guard_forced_off(prompt),
                progress_rules=self._patches.progress_rules,
                normalized=self._patches.normalized,
                stale_waits=self._patches.stale_waits,
                nothing_new=self._patches.nothing_new,
                moved_counts=self._patches.moved_counts,
                shell_reads=self._patches.shell_reads,
                looks_and_ids=self._patches.looks_and_ids,
                world_ids=self._patches.world_ids,
                refusals=self._patches.refusals,
            )
            self._protections.use_loop_rules(rules)
            self._judging = PromptJudging.for_prompt(
                prompt,
                rules,
                JudgeRequests(
                    retry_policy=MODEL_RETRY_WINDOW,
                    retry_window_seconds=self._model_retry_window,
                    start_to_close_timeout=MODEL_TIMEOUT,
                    heartbeat_timeout=MODEL_HEARTBEAT_TIMEOUT,
                    summaries=self._activity_summaries,
                ),
            )
            try:
                listed = await self._list_tools()
            except ActivityError as err:
                # The worker refused the prompt's start: fail with its reason, before any
                # model request or tool call (docs/security-trust.md).
                refused = refused_start(err)
                if refused is None:
                    raise
                raise refused from None
            self._tools = {tool.name: tool for tool in listed.tools}
            self._messages = prompt.start_messages()
            stop_reason, loop_type, error = await self._loop()
        except asyncio.CancelledError:
            stop_reason = StopReason.CANCELLED
        except ActivityError as err:
            # Only the settings and tool-listing activities raise here (the loop turns its
            # own into outcomes): a cancel that arrived while one was awaited.
            if not (
                isinstance(err.cause, CancelledError)
                and (self._patches.one_marker or workflow.patched(CANCEL_BEFORE_LOOP_PATCH))
            ):
                raise
            stop_reason = StopReason.CANCELLED
        self._stop_reason = stop_reason
        self._search_attributes.upsert(
            search_attributes.STOP_REASON.value_set(stop_reason.value),
            *([search_attributes.LOOP_TYPE.value_set(loop_type.value)] if loop_type else []),
        )
        self._emit(EventKind.PROMPT_FINISHED, status=stop_reason.value)
        telemetry.prompt_finished(
            stop_reason=stop_reason.value,
            mode=self._guard_mode or GuardMode.OFF,
            route=route_label(prompt),
            seconds=(workflow.now() - workflow.info().workflow_start_time).total_seconds(),
            input_tokens=self._input_tokens,
            output_tokens=self._output_tokens,
            rounds=self._model_requests,
        )
        await workflow.wait_condition(workflow.all_handlers_finished)
        return PromptResult(
            workflow_id=workflow.info().workflow_id,
            stop_reason=stop_reason,
            loop_type=loop_type,
            error=error,
            error_reason=self._error_reason if error is not None else None,
            model_requests=self._model_requests,
            tool_calls=self._protections.counts,
            guard_mode=(self._guard_mode or GuardMode.OFF).value,
            refusal_mode=prompt.refusal_mode.value,
            enforcement_disabled=self._guard_state.enforcement_disabled,
            pending_input=self._pending_input,
            input_tokens=self._input_tokens,
            output_tokens=self._output_tokens,
            guard=self._guard_entries,
            messages=self._messages,
            loop_profile=self._loop_settings.profile.value,
            rules=self._rule_entries,
            tool_statuses={
                event.call_id: event.status
                for event in self._log.after(0)
                if event.kind is EventKind.TOOL_CALL_SETTLED and event.call_id and event.status
            },
            client_disconnects=self._client_disconnects,
            streamed_text=self._failed_request_text,
            remembered_approvals=list(self._remembered),
        )

    def _clock(self) -> float:
        """The prompt's clock: seconds since the prompt started, the scenario's scripted time
        included (workflows/rules/evidence.py, "Time as evidence"); 0 in a prompt replaying
        from before PROGRESS_RULES_PATCH, which had no clock. ``workflow.now()`` is the
        workflow task's time, recorded in history, so a replay reads the same clock."""
        if self._started_at is None:
            return 0.0
        return (workflow.now() - self._started_at).total_seconds() + self._scripted_seconds

    def _patched(self, patch_id: str) -> bool:
        """Whether a change made before DURABLE_STEPS_PATCH applies: always after it, else
        as the history recorded it."""
        return self._patches.durable_steps or workflow.patched(patch_id)

    async def _resolve_operator_settings(
        self,
    ) -> tuple[GuardMode, LoopSettings, int, bool, float]:
        """The guard mode, the loop settings, the context budget, whether activities carry
        summaries and the model retry window: from the prompt input when it carries them (a
        session resolved them once), else from the operator-settings activity — a local
        activity since DURABLE_STEPS_PATCH: it only reads the worker's settings, is
        idempotent and needs no heartbeat or cancellation, and its result is recorded in
        history all the same.

        Summaries and the retry window alone never start the activity (that would change
        the commands of prompts recorded before the setting): unset and not resolved,
        summaries are off and the window is the default."""
        prompt = self._input
        self._operator_rules = prompt.approval_rules or ()
        guard_mode = GuardMode.OFF if guard_forced_off(prompt) else prompt.guard_mode
        loop_settings = prompt.loop_settings if self._patched(LOOP_PROFILE_PATCH) else SEED_SETTINGS
        budget = prompt.context_budget_chars
        summaries = prompt.activity_summaries
        retry_window = prompt.model_retry_window_seconds
        if not self._patches.durable_steps:
            budget = budget or DEFAULT_CONTEXT_BUDGET_CHARS
        if guard_mode is None or loop_settings is None or budget is None:
            settings: OperatorSettings
            if self._patches.durable_steps:
                settings = await workflow.execute_local_activity(
                    RESOLVE_OPERATOR_SETTINGS,
                    ResolveOperatorSettingsInput(),
                    result_type=OperatorSettings,
                    start_to_close_timeout=SETTINGS_LOCAL_ACTIVITY,
                    retry_policy=SETTINGS_RETRY,
                )
            else:
                settings = await workflow.execute_activity(
                    RESOLVE_OPERATOR_SETTINGS,
                    ResolveOperatorSettingsInput(),
                    result_type=OperatorSettings,
                    start_to_close_timeout=QUICK_ACTIVITY,
                )
            if guard_mode is None:
                guard_mode = settings.guard_mode
            if loop_settings is None:
                loop_settings = settings.loop_settings or LoopSettings()
            if budget is None:
                budget = settings.context_budget_chars or DEFAULT_CONTEXT_BUDGET_CHARS
            if summaries is None:
                summaries = settings.activity_summaries
            if retry_window is None:
                retry_window = settings.model_retry_window_seconds
            if prompt.approval_rules is None:
                self._operator_rules = tuple(settings.approval_rules or ())
        return (
            guard_mode,
            loop_settings,
            budget,
            bool(summaries),
            retry_window or DEFAULT_MODEL_RETRY_WINDOW_SECONDS,
        )

    async def _list_tools(self) -> ListToolsOutput:
        """The tools the model may call. Since TOOLS_WITHOUT_HOP_PATCH a local activity
        answers when no MCP server is configured (the worker's built-ins and the scenario's
        fixtures: cheap, idempotent, no heartbeat or cancellation needed); otherwise, and in
        prompts started before the patch, the ``seawall.list_tools`` activity, which may wait
        on MCP servers and heartbeats while it does."""
        # A root prompt's start is checked by the worker; a session's prompts were started
        # by a checked session (docs/security-trust.md).
        request = ListToolsInput(
            scenario_tools=self._input.scenario.listed_fixtures() if self._input.scenario else None,
            start=await self.root_prompt_claim(self._input),
            workspace_root=self._input.workspace_root,
            owner_id=self._input.owner_id,
        )
        if self._patches.tools_without_hop:
            local: ListToolsOutput | None = await workflow.execute_local_activity(
                LIST_TOOLS_WITHOUT_MCP,
                request,
                result_type=ListToolsOutput | None,  # type: ignore[arg-type]
                start_to_close_timeout=SETTINGS_LOCAL_ACTIVITY,
                retry_policy=SETTINGS_RETRY,
            )
            if local is not None:
                return local
        listed: ListToolsOutput = await workflow.execute_activity(
            LIST_TOOLS,
            request,
            result_type=ListToolsOutput,
            start_to_close_timeout=QUICK_ACTIVITY,
            # Listing may wait on MCP servers; a lost worker is noticed in seconds.
            heartbeat_timeout=TOOL_HEARTBEAT_TIMEOUT,
        )
        return listed

    def _summary(self, text: str) -> str | None:
        """``text`` as an activity's summary in the UI, when the operator turned them on."""
        return text if self._activity_summaries else None

    def _tool_summary(
        self, call: ToolCall, policy: str | None, tool_type: str | None, batch: int
    ) -> str | None:
        """A tool activity's summary in the UI, when the operator turned them on."""
        if not self._activity_summaries:
            return None
        return tool_summary(call, policy, tool_type, batch, self._input.redacted_arguments)

    async def _loop(self) -> tuple[StopReason, LoopType | None, str | None]:
        prompt = self._input
        self._context_policy = self._patched(CONTEXT_POLICY_PATCH)
        while True:
            if self._model_requests >= prompt.max_model_requests:
                return StopReason.MAX_TURN_REQUESTS, None, None
            if (
                not self._context_policy
                and conversation_chars(self._messages) > MAX_CONVERSATION_CHARS
            ):
                self._error_reason = ErrorReason.CONVERSATION_TOO_LARGE
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
                return StopReason.ERROR, None, self._model_failure(err)
            self._messages.append(self._chain.replied(reply))
            if reply.text:
                self._emit(EventKind.AGENT_MESSAGE, text=reply.text)
            if not reply.tool_calls:
                return StopReason.END_TURN, None, None

            self._batch += 1
            screening = self._protections.screen(reply.tool_calls, self._tools)
            if screening.capped:
                self._messages.extend(tool_message(outcome) for outcome in screening.skipped)
                stop = self._protections.cap_stop()
                self._messages.append(system_message(stop.message))
                self._announce_stop(stop)
                return StopReason.LOOP_DETECTED, stop.loop_type, None

            outcomes, cancelled = await self._run_batch(screening)
            self._messages.extend(tool_message(outcome) for outcome in outcomes)
            if cancelled:
                raise asyncio.CancelledError()

            drained = self._drain_input()
            step = after_batch(
                self._protections,
                self._guard_state,
                self._guard_mode or GuardMode.OFF,
                outcomes,
                drained,
                batch=self._batch,
                now=self._clock(),
            )
            self._record_guard(step)
            self._record_rule_decisions(step.rule_decisions)
            self._messages.extend(step.messages)
            judged = JUDGED_NOTHING
            if self._judging is not None:  # the progress judge, its tokens the prompt's
                judged = await self._judging.review(step, drained, reply.tool_calls, outcomes)
            self._count_usage(judged.usage)
            self._rule_entries.extend(judged.entries)
            self._messages.extend(judged.messages)
            for status, loop_type in shadow_decisions(step, judged.entries):
                self._emit(EventKind.SHADOW_DECISION, status=status, text=loop_type)
            ended = step.stop or judged.stop
            if ended is not None:
                self._announce_stop(ended)
                # Input that arrived with the stopping batch stays queued for the user.
                self._pending_input = step.requeued + self._pending_input
                return StopReason.LOOP_DETECTED, ended.loop_type, None
            for reminder in [*step.reminders, *judged.reminders]:
                self._emit(EventKind.REMINDER, text=reminder)

    async def _call_model(self) -> ModelReply:
        scenario = self._input.scenario
        windowed = self._patches.model_retry_window
        self._model_in_flight = self._model_requests + 1
        try:
            reply: ModelReply = await workflow.execute_activity(
                CALL_MODEL,
                self._chain.carry(
                    CallModelInput(
                        model=self._input.model,
                        messages=self._model_context(),
                        tools=list(self._tools.values()),
                        request_number=self._model_in_flight,
                        scenario_script=scenario.model_script if scenario else None,
                        retry_window_seconds=self._model_retry_window if windowed else None,
                    ),
                    self._patches,
                ),
                result_type=ModelReply,
                start_to_close_timeout=MODEL_TIMEOUT,
                heartbeat_timeout=MODEL_HEARTBEAT_TIMEOUT,
                retry_policy=MODEL_RETRY_WINDOW if windowed else MODEL_RETRY,
                summary=self._summary(f"model request {self._model_in_flight}"),
            )
        except ActivityError as err:
            if not isinstance(err.cause, CancelledError):
                # A failed request was still made, and clients saw what it streamed.
                self._model_requests += 1
                self._failed_request_text = self._streamed.shown(self._model_in_flight) or None
            raise
        finally:
            self._model_in_flight = 0
        self._model_requests += 1
        if self._patches.progress_rules:
            self._scripted_seconds += reply.latency_seconds
        self._count_usage(reply.usage)
        return reply

    def _count_usage(self, usage: ModelUsage) -> None:
        self._input_tokens = add_tokens(self._input_tokens, usage.input_tokens)
        self._output_tokens = add_tokens(self._output_tokens, usage.output_tokens)

    def _model_failure(self, err: ActivityError) -> str:
        """The error text of a model request that failed for good, its reason kept."""
        self._error_reason, text = model_failure(err)
        return text

    def _model_context(self) -> list[Message]:
        """The next request's conversation: whole, or (context policy) its view in budget."""
        if not self._context_policy:
            return self._messages
        if self._context_window is None:
            self._context_window = ContextWindow(self._context_budget)
        view = self._context_window.fit(self._messages)
        if view.fitted:
            telemetry.context_fitted(
                request=self._model_requests + 1,
                messages=len(self._messages),
                sent_messages=len(view.messages),
                elided_outputs=view.elided_outputs,
                sent_chars=view.sent_chars,
            )
        return view.messages

    def _announce_stop(self, stop: LoopStop) -> None:
        """Stream the stop message (already in the conversation) exactly once; the ``stop``
        event that follows names the loop type only. Then count the stop."""
        self._emit(EventKind.AGENT_MESSAGE, text=stop.message)
        self._emit(EventKind.STOP, status=stop.loop_type.value)
        telemetry.loop_stop(
            loop_type=stop.loop_type.value,
            mode=self._guard_mode or GuardMode.OFF,
            route=route_label(self._input),
            batch=self._batch,
        )

    # --- one batch ------------------------------------------------------------------------

    async def _run_batch(self, screening: BatchScreening) -> tuple[list[ToolOutcome], bool]:
        """Run the cleared calls of one batch concurrently and settle every call, in call
        order.

        Returns the outcomes and whether the prompt was cancelled while the batch ran; a
        cancellation still lets every started call settle (as cancelled when it was cut).
        """
        batch = self._batch
        route = route_label(self._input)
        for flagged in screening.flagged_repeats:
            telemetry.refusal(
                outcome=flagged.outcome,
                tool_name=flagged.policy_tool_name,
                tool_type=flagged.tool_type,
                route=route,
            )
        for denied in screening.denied_repeats:
            self._record_rule_decisions(
                [denied.decision], tool_name=denied.policy_tool_name, tool_type=denied.tool_type
            )
        running: dict[int, asyncio.Task[ToolOutcome]] = {}
        # Seconds each call that ran took on the prompt's clock, by index (progress rules).
        durations: dict[int, float] = {}
        for decision in screening.decisions:
            if not isinstance(decision, Cleared):
                self._log.emit_settled(decision.outcome, batch=batch)
                continue
            call = decision.call
            # State only, no command: the call's task decides the same in this activation.
            approval = self._approval_of(call)
            asks = approval.decision is ApprovalDecision.ASK
            self._emit(
                EventKind.TOOL_CALL_STARTED,
                call_id=call.call_id,
                tool_name=call.name,
                status=AWAITING_APPROVAL_STATUS if asks else None,
                rule=approval.rule,
            )
            running[decision.index] = asyncio.create_task(
                self._run_and_report(decision, batch, durations)
            )

        cancelled = False
        results: list[ToolOutcome | BaseException]
        scenario = self._input.scenario
        try:
            if scenario is not None and scenario.pauses_at(batch):
                settling = [
                    running[d.index]
                    for d in screening.cleared
                    if not scenario.scripted_to_hang(d.call.name, d.ordinal)
                ]
                await self._pause_for_driver(batch, settling)
            results = list(await asyncio.gather(*running.values()))
        except asyncio.CancelledError:
            cancelled = True
            for task in running.values():
                task.cancel()
            results = await asyncio.gather(*running.values(), return_exceptions=True)

        # A task cancelled before it could start has no outcome: settlement cancels it.
        ran = {
            index: result if isinstance(result, ToolOutcome) else None
            for index, result in zip(running, results, strict=True)
        }
        if scenario is not None and self._patches.progress_rules:
            # The batch's fixture calls ran concurrently, in no real time: the clock moves on
            # by the longest of their scripted durations.
            self._scripted_seconds += max(
                (
                    scenario.scripted_duration(d.call.name, d.ordinal) or 0.0
                    for d in screening.cleared
                    if d.index in durations
                ),
                default=0.0,
            )
        outcomes = self._protections.settle(
            screening,
            ran,
            may_forget=lambda: self._patched(REFUSAL_FORGETS_AFTER_CHANGE_PATCH),
            durations=durations,
        )
        for index, result in ran.items():
            if result is None:
                self._log.emit_settled(outcomes[index], batch=batch)
        return outcomes, cancelled

    async def _run_and_report(
        self, cleared: Cleared, batch: int, durations: dict[int, float]
    ) -> ToolOutcome:
        """Run one call and stream its settlement as soon as it happens."""
        outcome = await self._run_call(cleared, batch, durations)
        self._log.emit_settled(outcome, batch=batch)
        return outcome

    def _approval_of(self, call: ToolCall) -> Approval:
        """Whether this call runs, asks first or never runs (now), and the rule that says
        so. With no rules but the approval mode's preset, exactly what the mode decided
        before rules existed, so recorded prompts replay unchanged."""
        spec = self._tools.get(call.name)
        return self._approval(self._input, call, mutating=spec is not None and spec.mutating)

    async def _run_call(
        self, cleared: Cleared, batch: int, durations: dict[int, float]
    ) -> ToolOutcome:
        """Run one cleared call (asking permission first when the approval mode says so).
        Since PROGRESS_RULES_PATCH, a call whose tool ran records in ``durations`` the
        seconds it took: a fixture its scripted duration, any other tool the workflow
        time from scheduling its activity to its result (deterministic on replay)."""
        prompt = self._input
        call, policy = cleared.call, cleared.policy_tool_name
        spec = self._tools.get(call.name)
        tool_type = spec.tool_type if spec else None
        fixture = prompt.scenario.fixture_tools.get(call.name) if prompt.scenario else None
        carried = fixture_carried(fixture, self._patches)  # or named (INPUTS_BY_REFERENCE)
        approval = self._approval_of(call)
        if approval.decision is ApprovalDecision.DENY:
            return rule_denied_outcome(
                call, approval.rule, policy_tool_name=policy, tool_type=tool_type
            )
        try:
            if approval.decision is ApprovalDecision.ASK:
                invalid: ToolOutcome | None = await workflow.execute_activity(
                    CHECK_TOOL_CALL,
                    CheckToolCallInput(call=call, workspace_root=prompt.workspace_root, **carried),
                    result_type=ToolOutcome | None,  # type: ignore[arg-type]
                    start_to_close_timeout=QUICK_ACTIVITY,
                    summary=self._summary(
                        f"{telemetry.tool_label(policy, tool_type)}: validate (batch {batch})"
                    ),
                )
                if invalid is not None:
                    return invalid
                request = self._open_permission_request(
                    call, batch, prompt.redacted_arguments, approval.rule
                )
                self._log.emit(
                    EventKind.PERMISSION_REQUEST,
                    batch=self._batch,
                    call_id=call.call_id,
                    tool_name=call.name,
                    request_id=request.request_id,
                    text=request.summary,
                    arguments=request.arguments,
                    rule=request.rule,
                )
                workflow.set_current_details(self._details())
                granted = await self._permission_granted(request, prompt.permission_timeout_seconds)
                workflow.set_current_details(self._details())
                if not granted:
                    return permission_denied_outcome(
                        call, policy_tool_name=policy, tool_type=tool_type
                    )
            if self._runs_in_editor(prompt, call):
                summary = self._tool_summary(call, policy, tool_type, batch)
                return await self._run_in_editor(prompt, call, summary)
            scheduled = workflow.now()
            outcome: ToolOutcome = await workflow.execute_activity(
                RUN_TOOL,
                RunToolInput(
                    call=call,
                    workspace_root=prompt.workspace_root,
                    ordinal=cleared.ordinal,
                    batch=batch,
                    max_output_chars=prompt.max_output_chars,
                    shell_timeout_seconds=prompt.tool_timeout_seconds,
                    owner_id=prompt.owner_id,
                    labelled_ids=self._patches.looks_and_ids,
                    world_ids=self._patches.world_ids,
                    **carried,
                ),
                result_type=ToolOutcome,
                start_to_close_timeout=timedelta(seconds=prompt.tool_timeout_seconds + 30),
                heartbeat_timeout=TOOL_HEARTBEAT_TIMEOUT,
                retry_policy=TOOL_RETRY,
                cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
                summary=self._tool_summary(call, policy, tool_type, batch),
            )
            self._chain.recorded(batch, outcome)
            if self._patches.progress_rules:
                durations[cleared.index] = (
                    (workflow.now() - scheduled).total_seconds()
                    if fixture is None
                    else fixture.outcome_for(cleared.ordinal).duration_seconds
                )
            return outcome
        except ActivityError as err:
            if isinstance(err.cause, CancelledError):
                return cancelled_outcome(
                    call, policy_tool_name=policy, execution_status=ExecutionStatus.CANCELLED
                )
            return worker_lost_outcome(call, policy_tool_name=policy, tool_type=tool_type)
        except asyncio.CancelledError:
            return cancelled_outcome(
                call, policy_tool_name=policy, execution_status=ExecutionStatus.NOT_STARTED
            )

    # --- input boundary and guard ---------------------------------------------------------

    def _drain_input(self) -> DrainedInput:
        drained = DrainedInput(
            texts=self._pending_input,
            queued=self._queued_prompt,
            unreliable=self._input_unreliable,
        )
        self._pending_input, self._queued_prompt, self._input_unreliable = [], False, False
        return drained

    def _record_guard(self, step: AfterBatch) -> None:
        """Keep the guard's new state and entry; on a transition, count it and upsert the
        guard's search attributes."""
        mode = self._guard_mode or GuardMode.OFF
        before, decision = self._guard_state, step.guard
        self._guard_state = decision.state
        self._guard_entries.append(step.guard_entry)
        record = telemetry_record(before, mode, decision)
        if record is not None:
            telemetry.guard_transition(record, route=route_label(self._input), batch=self._batch)
        if record is not None:
            self._search_attributes.record_guard(decision)
        workflow.set_current_details(self._details())

    def _record_rule_decisions(
        self,
        decisions: list[RuleDecision],
        *,
        tool_name: str | None = None,
        tool_type: str | None = None,
    ) -> None:
        """Keep each recommended-profile rule decision in the result and emit its
        telemetry (never a fingerprint or a digest: a failing tool's safe label at most)."""
        for decision in decisions:
            self._rule_entries.append(rule_entry(self._batch, decision))
            name = decision.tool or tool_name
            spec = self._tools.get(name) if name else None
            telemetry.rule_decision(
                rule=decision.rule.value,
                decision=decision.kind.value,
                mode=decision.mode,
                count=decision.count,
                tool_name=name,
                tool_type=tool_type or (spec.tool_type if spec else None),
                route=route_label(self._input),
                batch=self._batch,
            )

    def _details(self) -> str:
        return current_details(
            self._guard_mode,
            self._guard_state,
            batch=self._batch,
            model_requests=self._model_requests,
            counts=self._protections.counts,
            waiting=self._pending_permissions.values(),
            tools=self._tools,
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
        rule: str | None = None,
    ) -> None:
        self._log.emit(
            kind,
            batch=self._batch,
            call_id=call_id,
            tool_name=tool_name,
            status=status,
            text=text,
            request_id=request_id,
            rule=rule,
        )
