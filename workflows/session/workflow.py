"""``SessionWorkflow``: a durable conversation that runs its prompts one at a time.

A session resolves the operator's guard mode (and loop profile, context budget, and its
owner's rollout cohort: docs/rollout.md, "Rollout cohorts") once and hands them to each
prompt, so one session never mixes modes or profiles and a prompt resolves nothing itself
(docs/capacity.md, "Durable steps per prompt"), keeps the conversation
across prompts, and runs each submitted prompt, strictly FIFO, as a child
``PromptWorkflow`` whose id the gateway reports. While a prompt runs, a newly submitted
prompt waits and the running one is told ``set_queued_prompt`` (which resets its guard
streak); mid-turn input is forwarded to the running prompt. A prompt stopped by the guard
leaves the session usable: the next prompt is a new workflow with a fresh guard.

For editor clients (``seawall acp``) a session also switches its approval mode
(``set_approval_mode``, forwarded to the running prompt), withdraws a prompt still waiting
in its queue (``withdraw_prompt``) and pages through its retained conversation with each
tool call's settled status (``transcript``), so an editor can show it again after a restart.

Who may start one: the gateway (for an authenticated owner) and ``seawall acp`` sign each
session's start (a session grant, docs/security-trust.md); the worker verifies it in the
session's first activity and fails a start that is unsigned, forged, replayed for another id
or expired, before any prompt runs. A session's prompts, and the runs continue-as-new makes,
are not verified again (their start was).

- Each prompt runs as a child with the id ``{session_id}-prompt-{n}`` (the id the API
  returns; the gateway derives a prompt's session from it), parent-close policy *request
  cancel*, id reuse policy *reject duplicate* (``PROMPT_ID_REUSE_POLICY``): a run started
  under a used session id by anything else finds its prompt id taken and records that prompt
  as failed, leaving the finished prompt and its result as they were. The gateway and ``seawall
  acp`` start sessions with *reject duplicate* too, so a session id gets one run.
- ``submit_prompt`` queues a prompt (its validator refuses once the session is closing);
  Temporal deduplicates update ids only within one run, so the session remembers, by update
  id, what its newest 1,000 submits answered and carries that across continue-as-new: a
  repeat in a later run is answered as the first (even once closing), and query
  ``submitted`` tells the gateway whether a submit is known.
- ``send_input`` forwards mid-turn input to the running prompt (waiting for one still
  starting); with no running prompt it fails (the gateway's 409). Input a prompt never
  delivered (it stopped or was cancelled first) becomes the session's next prompt, at the
  front of the queue: nothing the user said is lost.
- Signal ``close`` finishes the session once its queue is empty; query ``status``.
- Each prompt gets the conversation so far under the context policy
  (``workflows.contracts.conversation.fit_context``; before ``CONTEXT_POLICY_PATCH``, its
  newest whole prompts within 500,000 characters); a finished prompt's final conversation
  becomes the session's. A child that closed without a result (terminated, failed, cancelled
  by an old worker) is recorded as finished, ``cancelled`` or ``error``, and the next prompt
  runs (``gateway.closed_prompts`` answers its clients the same way).
- When Temporal suggests it, the session continues as new, carrying (``SessionInput`` is both
  the start input and the carry) its mode, conversation, queue, finished list, prompt
  counter, closing flag, each tool message's settled status and the prompt that added each
  message, and its remembered submits.

The editor handlers add no command to existing histories, so none is patched: ``transcript``
pages (at most 200,000 characters a page) with each tool message's settled status, kept from
each prompt's ``PromptResult.tool_statuses``, and the id of the prompt that added each
message, so a replay names calls and messages as they were named live; ``set_approval_mode``
applies to the calls the running prompt admits afterwards (a request already open stays
open).
"""

from __future__ import annotations

import contextlib
from datetime import timedelta

from temporalio import workflow
from temporalio.common import SearchAttributePair, TypedSearchAttributes, WorkflowIDReusePolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
    WorkflowAlreadyStartedError,
)

with workflow.unsafe.imports_passed_through():
    from workflows.contracts import search_attributes
    from workflows.contracts.activity import (
        RESOLVE_OPERATOR_SETTINGS,
        OperatorSettings,
        ResolveOperatorSettingsInput,
    )
    from workflows.contracts.approval import ApprovalRule
    from workflows.contracts.conversation import (
        DEFAULT_CONTEXT_BUDGET_CHARS,
        MAX_CONVERSATION_CHARS,
        Message,
        Role,
        conversation_chars,
        fit_context,
        recent_history,
    )
    from workflows.contracts.prompt import (
        ApprovalModeChange,
        PromptInput,
        PromptResult,
        QueuedPrompt,
        StopReason,
        UserInput,
        prompt_title,
    )
    from workflows.contracts.prompt_options import looser_mode_refusal
    from workflows.contracts.session import (
        FINISHED_PROMPTS_KEPT,
        SUBMITS_REMEMBERED,
        FinishedPrompt,
        InputDelivery,
        PromptSubmission,
        PromptWithdrawal,
        QueuedSessionPrompt,
        RememberedSubmit,
        SessionInput,
        SessionOwner,
        SessionStatus,
        SubmitFound,
        SubmitLookup,
        SubmittedPrompt,
        TranscriptPage,
        TranscriptQuery,
    )
    from workflows.contracts.start_claims import RunGrantInbox, fresh_start, refused_start
    from workflows.prompt.patches import CONTEXT_POLICY_PATCH
    from workflows.prompt.workflow import PromptWorkflow
    from workflows.rules import LoopSettings
    from workflows.seed.guard import GuardMode
    from workflows.seed.rollout import RolloutAssignment


# A fresh session started with its guard mode (and so no settings to resolve) runs the
# operator-settings activity all the same, for the worker to check its start
# (docs/security-trust.md); sessions recorded before it have no such activity.
SESSION_START_CHECK_PATCH = "seawall-session-start-check-v1"


def session_workflow_id(session_id: str) -> str:
    return f"session-{session_id}"


# A prompt's workflow id is never given to a second run (the module docstring): a session started
# anew under a used id (which the gateway and seawall acp never do) finds its first prompt's id
# taken and fails that prompt instead of replacing the finished one's result. A command attribute
# only: replay compares a child's id and type, so sessions started before it replay unchanged
# (tests/replay).
PROMPT_ID_REUSE_POLICY = WorkflowIDReusePolicy.REJECT_DUPLICATE


@workflow.defn(name="SessionWorkflow")
class SessionWorkflow(RunGrantInbox):
    """The mixin adds the ``grant`` signal (docs/security-trust.md)."""

    @workflow.init
    def __init__(self, session: SessionInput) -> None:
        super().__init__()
        self._input = session
        self._guard_mode: GuardMode | None = session.guard_mode
        self._loop_settings: LoopSettings | None = session.loop_settings
        self._rollout: RolloutAssignment | None = session.rollout
        self._conversation: list[Message] = list(session.conversation)
        self._tool_statuses: list[str | None] = list(session.tool_statuses)
        self._message_prompts: list[str | None] = list(session.message_prompt_ids)
        self._queue: list[QueuedSessionPrompt] = list(session.queue)
        self._finished: list[FinishedPrompt] = list(session.finished)
        self._submitted = session.prompts_submitted
        self._submits: dict[str, RememberedSubmit] = {
            submit.update_id: submit for submit in session.submits
        }
        self._closing = session.closing
        self._running: workflow.ChildWorkflowHandle[PromptWorkflow, PromptResult] | None = None
        self._starting: str | None = None

    # --- messages -------------------------------------------------------------------------

    @workflow.update
    async def submit_prompt(self, submission: PromptSubmission) -> SubmittedPrompt:
        update = workflow.current_update_info()
        update_id = update.id if update is not None else ""
        known = self._submits.get(update_id)
        if known is not None:
            # Repeated after a continue-as-new (within a run Temporal answers it itself).
            return SubmittedPrompt(prompt_id=known.prompt_id, position=known.position)
        self._submitted += 1
        prompt_id = f"{self._input.session_id}-prompt-{self._submitted}"
        position = len(self._queue)
        self._queue.append(QueuedSessionPrompt(prompt_id=prompt_id, text=submission.text))
        self._remember_submit(
            RememberedSubmit(update_id=update_id, prompt_id=prompt_id, position=position)
        )
        running = self._running
        if running is not None:
            # It may have finished meanwhile; then nothing is left to tell.
            with contextlib.suppress(ApplicationError):
                await running.signal(PromptWorkflow.set_queued_prompt, QueuedPrompt())
        return SubmittedPrompt(prompt_id=prompt_id, position=position)

    @submit_prompt.validator
    def _validate_submission(self, submission: PromptSubmission) -> None:
        update = workflow.current_update_info()
        if update is not None and update.id in self._submits:
            return  # a repeat is answered as before, closing or not
        if self._closing:
            raise ValueError("the session is closing and takes no new prompts")

    def _remember_submit(self, submit: RememberedSubmit) -> None:
        self._submits[submit.update_id] = submit
        while len(self._submits) > SUBMITS_REMEMBERED:
            del self._submits[next(iter(self._submits))]

    @workflow.query
    def submitted(self, lookup: SubmitLookup) -> SubmitFound:
        """What the submit with this update id answered, if the session remembers it."""
        known = self._submits.get(lookup.update_id)
        if known is None:
            return SubmitFound()
        return SubmitFound(
            submitted=SubmittedPrompt(prompt_id=known.prompt_id, position=known.position)
        )

    @workflow.update
    async def send_input(self, user_input: UserInput) -> InputDelivery:
        # A prompt that is still starting gets the input as soon as it runs.
        await workflow.wait_condition(lambda: self._running is not None or self._starting is None)
        running = self._running
        if running is None:
            raise ApplicationError("no prompt is running in this session", non_retryable=True)
        try:
            await running.signal(PromptWorkflow.submit_input, user_input)
        except ApplicationError:
            raise ApplicationError(
                "the prompt finished before the input reached it", non_retryable=True
            ) from None
        return InputDelivery(prompt_id=running.id)

    @send_input.validator
    def _validate_input(self, user_input: UserInput) -> None:
        if self._running is None and self._starting is None:
            raise ValueError("no prompt is running in this session")

    @workflow.update
    async def set_approval_mode(self, change: ApprovalModeChange) -> ApprovalModeChange:
        """Later prompts start in this mode; the running one applies it to its next calls."""
        settings = self._input.settings.model_copy(update={"approval_mode": change.approval_mode})
        self._input = self._input.model_copy(update={"settings": settings})
        running = self._running
        if running is not None:
            with contextlib.suppress(ApplicationError):  # it may have finished meanwhile
                await running.signal(PromptWorkflow.set_approval_mode, change)
        return change

    @set_approval_mode.validator
    def _validate_approval_mode(self, change: ApprovalModeChange) -> None:
        # The operator's bound, fixed at the start (docs/security.md, "What a client may
        # choose"): a client may tighten the mode, never loosen it past the bound.
        loosest = self._input.settings.loosest_approval_mode
        if loosest is not None and not change.approval_mode.allowed_by(loosest):
            where = "where the session was started (a session keeps the bound it started with)"
            raise ValueError(looser_mode_refusal(change.approval_mode, loosest, where=where))

    @workflow.update
    def withdraw_prompt(self, withdrawal: PromptWithdrawal) -> PromptWithdrawal:
        """Drop a prompt that has not started; it never runs."""
        self._queue = [item for item in self._queue if item.prompt_id != withdrawal.prompt_id]
        return withdrawal

    @withdraw_prompt.validator
    def _validate_withdrawal(self, withdrawal: PromptWithdrawal) -> None:
        if all(item.prompt_id != withdrawal.prompt_id for item in self._queue):
            raise ValueError(f"prompt {withdrawal.prompt_id!r} is not waiting in the queue")

    @workflow.query
    def transcript(self, query: TranscriptQuery) -> TranscriptPage:
        total = len(self._conversation)
        statuses = self._tool_statuses if len(self._tool_statuses) == total else [None] * total
        prompts = self._message_prompts if len(self._message_prompts) == total else [None] * total
        end = query.after
        chars = 0
        while end < total:
            chars += conversation_chars([self._conversation[end]])
            if chars > query.max_chars and end > query.after:
                break
            end += 1
        return TranscriptPage(
            messages=self._conversation[query.after : end],
            tool_statuses=statuses[query.after : end],
            prompt_ids=prompts[query.after : end],
            next_index=max(end, query.after),
            total=total,
        )

    @workflow.signal
    def close(self) -> None:
        """Finish once the queued prompts have run."""
        self._closing = True

    @workflow.query
    def status(self) -> SessionStatus:
        return SessionStatus(
            session_id=self._input.session_id,
            guard_mode=self._guard_mode,
            loop_profile=self._loop_settings.profile if self._loop_settings else None,
            rollout_cohort=self._rollout.cohort.value if self._rollout else None,
            running_prompt_id=self._running.id if self._running else self._starting,
            queued_prompt_ids=[item.prompt_id for item in self._queue],
            finished=self._finished,
            conversation_messages=len(self._conversation),
            closing=self._closing,
            approval_mode=self._input.settings.approval_mode,
        )

    @workflow.query
    def owner(self) -> SessionOwner:
        """Who started the session: the gateway shows a session to its owner only."""
        return SessionOwner(owner_id=self._input.owner_id)

    # --- the loop -------------------------------------------------------------------------

    @workflow.run
    async def run(self, session: SessionInput) -> SessionStatus:
        operator_budget: int | None = None
        operator_summaries: bool | None = None
        operator_retry_window: float | None = None
        operator_rules: tuple[ApprovalRule, ...] | None = None
        try:
            # A fresh start is checked by the worker (its grant, workspace and scenario); a
            # run continue-as-new made carries what the checked start began with.
            claim = await self.run_claim(session) if fresh_start(workflow.info()) else None
            request = ResolveOperatorSettingsInput(owner_id=session.owner_id, start=claim)
            if self._guard_mode is None:
                settings = await self._resolve_operator_settings(request)
                self._guard_mode = settings.guard_mode
                # The owner's cohort, fixed for the session (None from workers before
                # cohorts).
                self._rollout = settings.rollout
                # None when resolved by a worker before loop profiles: prompts resolve their
                # own.
                self._loop_settings = self._loop_settings or settings.loop_settings
                operator_budget = settings.context_budget_chars
                operator_summaries = settings.activity_summaries
                operator_retry_window = settings.model_retry_window_seconds
                if settings.approval_rules is not None:
                    operator_rules = tuple(settings.approval_rules)
            elif claim is not None and workflow.patched(SESSION_START_CHECK_PATCH):
                await self._resolve_operator_settings(request)  # for the check alone
        except ActivityError as err:
            refused = refused_start(err)
            if refused is None:
                raise
            raise refused from None
        self._use_operator_defaults(
            operator_budget, operator_summaries, operator_retry_window, operator_rules
        )
        while True:
            await workflow.wait_condition(lambda: bool(self._queue) or self._closing)
            if not self._queue:
                break
            await self._run_prompt(self._queue.pop(0))
            if workflow.info().is_continue_as_new_suggested():
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(self._carry())
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self.status()

    async def _resolve_operator_settings(
        self, request: ResolveOperatorSettingsInput
    ) -> OperatorSettings:
        settings: OperatorSettings = await workflow.execute_activity(
            RESOLVE_OPERATOR_SETTINGS,
            request,
            result_type=OperatorSettings,
            start_to_close_timeout=timedelta(seconds=30),
        )
        return settings

    def _use_operator_defaults(
        self,
        operator_budget: int | None,
        operator_summaries: bool | None,
        operator_retry_window: float | None = None,
        operator_rules: tuple[ApprovalRule, ...] | None = None,
    ) -> None:
        """Unless the session's settings set them, the operator's context budget and activity
        summaries (the defaults when the starter gave the session its guard mode, or a worker
        from before the setting resolved them), kept in the settings every prompt inherits
        and continue-as-new carries. The operator's model retry window likewise, when the
        worker resolved one (else each prompt uses the default). The operator's approval
        rules, whenever the worker resolved them: the operator's, never the starter's."""
        current = self._input.settings
        update: dict[str, object] = {}
        if current.context_budget_chars is None:
            update["context_budget_chars"] = operator_budget or DEFAULT_CONTEXT_BUDGET_CHARS
        if current.activity_summaries is None:
            update["activity_summaries"] = bool(operator_summaries)
        if current.model_retry_window_seconds is None and operator_retry_window is not None:
            update["model_retry_window_seconds"] = operator_retry_window
        if operator_rules is not None:
            update["approval_rules"] = operator_rules
        if update:
            settings = current.model_copy(update=update)
            self._input = self._input.model_copy(update={"settings": settings})

    def _remember_approvals(self, rules: list[ApprovalRule]) -> None:
        """The calls the user allowed "always for this session" in a prompt: every later
        prompt of the session (and continue-as-new) carries them."""
        if rules:
            current = self._input.settings
            remembered = (*current.remembered_approvals, *rules)
            settings = current.model_copy(update={"remembered_approvals": remembered})
            self._input = self._input.model_copy(update={"settings": settings})

    async def _run_prompt(self, item: QueuedSessionPrompt) -> None:
        self._starting = item.prompt_id
        settings = self._input.settings
        # The session's conversation as the new prompt starts from it (the context policy).
        history = self._history()
        prompt = PromptInput(
            prompt=item.text,
            workspace_root=settings.workspace_root,
            model=settings.model,
            history=history,
            client_metadata=settings.client_metadata,
            guard_mode=self._guard_mode,
            loop_settings=self._loop_settings,
            scenario=settings.scenario,
            owner_id=self._input.owner_id,
            rollout=self._rollout,
            **settings.prompt_options(),
        )
        try:
            self._running = await workflow.start_child_workflow(
                PromptWorkflow.run,
                prompt,
                id=item.prompt_id,
                id_reuse_policy=PROMPT_ID_REUSE_POLICY,
                parent_close_policy=workflow.ParentClosePolicy.REQUEST_CANCEL,
                search_attributes=self._prompt_search_attributes(),
                # What the Temporal UI lists the prompt as (user metadata: a payload the
                # codec encodes like the input; no command of its own).
                static_summary=prompt_title(item.text),
                static_details=f"A prompt of session `{self._input.session_id}`.",
            )
        except WorkflowAlreadyStartedError:
            # The id belongs to another run's prompt, whose result stays as it is.
            self._starting = None
            failed = FinishedPrompt(prompt_id=item.prompt_id, stop_reason=StopReason.ERROR)
            self._finished = [*self._finished, failed][-FINISHED_PROMPTS_KEPT:]
            return
        # Prompts submitted while this one was starting found nothing running to tell.
        if self._queue:
            with contextlib.suppress(ApplicationError):  # it may already have finished
                await self._running.signal(PromptWorkflow.set_queued_prompt, QueuedPrompt())
        try:
            result = await self._running
            self._tool_statuses = self._statuses_after(history, result)
            self._message_prompts = self._prompts_after(history, result, item.prompt_id)
            self._conversation = result.messages
            self._remember_approvals(result.remembered_approvals)
            if result.pending_input:
                self._submitted += 1
                self._queue.insert(
                    0,
                    QueuedSessionPrompt(
                        prompt_id=f"{self._input.session_id}-prompt-{self._submitted}",
                        text="\n\n".join(result.pending_input),
                    ),
                )
            finished = FinishedPrompt(
                prompt_id=item.prompt_id, stop_reason=result.stop_reason, loop_type=result.loop_type
            )
        except ChildWorkflowError as err:
            # Without a result: a prompt cancelled before CANCEL_BEFORE_LOOP_PATCH settled it
            # (docs/architecture.md, "Cancellation"), or one that failed or was terminated.
            # State only, no command: recorded sessions replay unchanged.
            stopped = (
                StopReason.CANCELLED if isinstance(err.cause, CancelledError) else StopReason.ERROR
            )
            finished = FinishedPrompt(prompt_id=item.prompt_id, stop_reason=stopped)
        finally:
            self._running = None
            self._starting = None
        self._finished = [*self._finished, finished][-FINISHED_PROMPTS_KEPT:]

    def _prompts_after(
        self, history: list[Message], result: PromptResult, prompt_id: str
    ) -> list[str | None]:
        """The prompt ids aligned with ``result.messages``, as ``_statuses_after`` aligns the
        statuses: the history's kept, ``prompt_id`` for the messages the prompt added."""
        kept: list[str | None] = [None] * len(history)
        if len(self._message_prompts) == len(self._conversation) and history:
            kept = self._message_prompts[len(self._conversation) - len(history) :]
        added = len(result.messages) - len(history)
        if added < 0 or len(kept) != len(history):
            return [None] * len(result.messages)
        return kept + [prompt_id] * added

    def _statuses_after(self, history: list[Message], result: PromptResult) -> list[str | None]:
        """The statuses aligned with ``result.messages``: the history's kept, the new
        tool messages' from the result."""
        kept: list[str | None] = [None] * len(history)
        if len(self._tool_statuses) == len(self._conversation) and history:
            kept = self._tool_statuses[len(self._conversation) - len(history) :]
        new = result.messages[len(history) :] if len(result.messages) >= len(history) else []
        if len(new) + len(kept) != len(result.messages):
            return [None] * len(result.messages)
        return kept + [
            result.tool_statuses.get(m.tool_call_id or "") if m.role is Role.TOOL else None
            for m in new
        ]

    def _prompt_search_attributes(self) -> TypedSearchAttributes | None:
        """The cohort, guard mode, environment and version a prompt starts with, so that
        visibility can select a rollout's prompts (docs/rollout.md, "Rollout cohorts").
        Only when the cohort was resolved; never the owner."""
        rollout = self._rollout
        if rollout is None:
            return None
        pairs: list[SearchAttributePair[str]] = [
            SearchAttributePair(search_attributes.ROLLOUT_COHORT, rollout.cohort.value)
        ]
        if self._guard_mode is not None:
            pairs.append(SearchAttributePair(search_attributes.GUARD_MODE, self._guard_mode.value))
        if rollout.environment:
            pairs.append(SearchAttributePair(search_attributes.ENVIRONMENT, rollout.environment))
        if rollout.service_version:
            pairs.append(
                SearchAttributePair(search_attributes.SERVICE_VERSION, rollout.service_version)
            )
        return TypedSearchAttributes(pairs)

    def _history(self) -> list[Message]:
        """The conversation a new prompt starts from: under the context policy, the view
        ``fit_context`` makes within the session's context budget (oldest tool outputs
        elided first, then the oldest prompts); for sessions started before it, the newest
        whole prompts within half the old size bound."""
        if workflow.patched(CONTEXT_POLICY_PATCH):
            budget = self._input.settings.context_budget_chars or DEFAULT_CONTEXT_BUDGET_CHARS
            return fit_context(self._conversation, budget)
        return recent_history(self._conversation, MAX_CONVERSATION_CHARS // 2)

    def _carry(self) -> SessionInput:
        return self._input.model_copy(
            update={
                "guard_mode": self._guard_mode,
                "rollout": self._rollout,
                "loop_settings": self._loop_settings,
                "conversation": self._conversation,
                "tool_statuses": self._tool_statuses,
                "message_prompt_ids": self._message_prompts,
                "queue": self._queue,
                "finished": self._finished,
                "prompts_submitted": self._submitted,
                "closing": self._closing,
                "submits": list(self._submits.values()),
            }
        )
