"""The progress judge on the workflow's side: asking the operator's model, durably.

docs/protections.md, "The progress judge". When the judge's trigger
(``workflows.rules.judge.ProgressJudge``) says a stale stretch is due for a look, the prompt
runs the ``seawall.judge_progress`` activity — recorded in history like every model request,
retried like one, and answered ``unknown`` when it fails for good, so the judge can never
fail a prompt — and hands the verdict to the pure step the simulator shares
(``workflows.prompt.batch.after_judgement``).

What the judge sees is built here, deterministically: the user's prompt and, for the last
:data:`~workflows.rules.judge.JUDGE_AFTER_BATCHES` batches, each call's tool name, how it
ended and the start of its result with volatile parts masked (``workflows.rules.normalize``
``mask``, the call's own argument values included), at most
:data:`~workflows.contracts.activity.JUDGE_EXCERPT_CHARS` each and
:data:`~workflows.contracts.activity.JUDGE_EVIDENCE_CHARS` in all (the newest first). Never
a call's arguments. Telemetry carries the rule, the decision and the mode, never the
verdict's reason.

Only prompts started with ``LOOP_QUALITY_V4_PATCH`` ask (``judge_mode``): the activity is a
command no older history has.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, CancelledError

from workflows.contracts.activity import (
    JUDGE_EVIDENCE_CHARS,
    JUDGE_EXCERPT_CHARS,
    JUDGE_PROGRESS,
    JUDGE_PROMPT_CHARS,
    JudgedBatch,
    JudgedCall,
    JudgeProgressInput,
    JudgeProgressOutput,
    JudgeVerdict,
    ModelUsage,
)
from workflows.contracts.conversation import Message
from workflows.contracts.outcome import ToolCall, ToolOutcome
from workflows.contracts.prompt import PromptInput, RuleEntry, guard_forced_off, route_label
from workflows.prompt import telemetry
from workflows.prompt.batch import (
    NOT_JUDGED,
    AfterBatch,
    AfterJudgement,
    DrainedInput,
    after_judgement,
)
from workflows.rules import LoopRules
from workflows.rules.judge import JUDGE_AFTER_BATCHES, JUDGE_RULE, ProgressJudge, judge_mode
from workflows.rules.normalize import mask
from workflows.seed.guard import GuardMode
from workflows.seed.protections import LoopStop

# What a request that was not made, or failed, adds to the prompt's tokens.
NO_USAGE = ModelUsage(input_tokens=0, output_tokens=0)
# Characters of a result masked before its excerpt is cut (masking collapses whitespace
# and shortens tokens, so a little more than the excerpt is read).
EXCERPT_READ_CHARS = 4 * JUDGE_EXCERPT_CHARS
STATUS_CHARS = 40

# A batch as the judge reads it: its number, its calls and their outcomes, in call order.
RecentBatch = tuple[int, Sequence[ToolCall], Sequence[ToolOutcome]]


def result_excerpt(call: ToolCall, outcome: ToolOutcome) -> str:
    """The start of a call's result, volatile parts and the call's own argument values
    masked, at most :data:`JUDGE_EXCERPT_CHARS` characters."""
    text = outcome.error_message or outcome.content
    return mask(text[:EXCERPT_READ_CHARS], call.arguments)[:JUDGE_EXCERPT_CHARS]


def judged_batches(recent: Sequence[RecentBatch]) -> list[JudgedBatch]:
    """What the judge sees of ``recent`` (oldest first): every call's tool, status and
    excerpt, newest first until :data:`JUDGE_EVIDENCE_CHARS` are spent, in batch order."""
    budget = JUDGE_EVIDENCE_CHARS
    kept: list[JudgedBatch] = []
    for batch, calls, outcomes in reversed(recent):
        judged: list[JudgedCall] = []
        for call, outcome in zip(calls, outcomes, strict=True):
            excerpt = result_excerpt(call, outcome)
            cost = len(call.name) + len(excerpt)
            if cost > budget:
                budget = 0
                break
            budget -= cost
            judged.append(
                JudgedCall(tool=call.name, status=outcome.status[:STATUS_CHARS], excerpt=excerpt)
            )
        if judged:
            kept.append(JudgedBatch(batch=batch, calls=judged))
        if budget <= 0:
            break
    return kept[::-1]


@dataclass(frozen=True)
class Judged:
    """The judge's turn after a batch, for the workflow to apply: the verdict's step
    (``after``; ``NOT_JUDGED`` when the judge was not asked) and what its request cost
    (nothing when it was not asked or failed)."""

    after: AfterJudgement = NOT_JUDGED
    usage: ModelUsage = NO_USAGE

    @property
    def entries(self) -> list[RuleEntry]:
        return [self.after.entry] if self.after.entry is not None else []

    @property
    def messages(self) -> list[Message]:
        return self.after.messages

    @property
    def reminders(self) -> list[str]:
        return self.after.reminders

    @property
    def stop(self) -> LoopStop | None:
        return self.after.stop


JUDGED_NOTHING = Judged()


@dataclass(frozen=True)
class JudgeRequests:
    """How the judge's requests run: as the prompt's model requests do (the workflow's
    timeouts and retry policy, the prompt's retry window), with an activity summary only
    when the operator asks for them."""

    retry_policy: RetryPolicy
    retry_window_seconds: float | None
    start_to_close_timeout: timedelta
    heartbeat_timeout: timedelta
    summaries: bool


class PromptJudging:
    """One prompt's progress judge: the trigger's state, the batches it may show, and how
    its requests run."""

    def __init__(
        self, prompt: PromptInput, rules: LoopRules, mode: GuardMode, requests: JudgeRequests
    ) -> None:
        self.judge = ProgressJudge(mode)
        self._prompt = prompt
        self._rules = rules
        self._requests = requests
        self._recent: deque[RecentBatch] = deque(maxlen=JUDGE_AFTER_BATCHES)

    @classmethod
    def for_prompt(
        cls, prompt: PromptInput, rules: LoopRules, requests: JudgeRequests
    ) -> PromptJudging | None:
        """The judge of a prompt, or ``None`` when it is off for it (``judge_mode``; a
        prompt whose rules replay from before the normalizer never asks)."""
        mode = judge_mode(
            rules.settings,
            route_forced_off=guard_forced_off(prompt),
            normalized=rules.normalized,
        )
        if mode is GuardMode.OFF:
            return None
        return cls(prompt, rules, mode, requests)

    async def review(
        self,
        step: AfterBatch,
        drained: DrainedInput,
        calls: Sequence[ToolCall],
        outcomes: Sequence[ToolOutcome],
    ) -> Judged:
        """After a batch's step: ask the judge when its stretch is due and apply the
        verdict (nothing when the step stopped the prompt or nothing is due)."""
        if step.stop is not None:
            return JUDGED_NOTHING
        batch = step.guard_entry.batch
        self._recent.append((batch, calls, outcomes))
        if not self.judge.due(self._rules.reviewed, input_arrived=drained.arrived):
            return JUDGED_NOTHING
        output = await self._ask(batch)
        after = after_judgement(
            self.judge,
            output.verdict if output is not None else JudgeVerdict.UNKNOWN,
            batch=batch,
            enforcement_disabled=step.guard.state.enforcement_disabled,
        )
        if after.entry is not None:
            telemetry.rule_decision(
                rule=JUDGE_RULE,
                decision=after.entry.decision,
                mode=GuardMode(after.entry.mode),
                count=after.entry.count,
                tool_name=None,
                tool_type=None,
                route=route_label(self._prompt),
                batch=batch,
            )
        return Judged(after, output.usage if output is not None else NO_USAGE)

    async def _ask(self, batch: int) -> JudgeProgressOutput | None:
        """The judge's answer; ``None`` when its request failed for good (a cancellation of
        the prompt is re-raised)."""
        scenario = self._prompt.scenario
        script = scenario.model_script if scenario is not None else None
        verdicts = None if scenario is None else list(script.judge if script else [])
        request = JudgeProgressInput(
            model=self._prompt.model,
            prompt_id=workflow.info().workflow_id,
            ask=self.judge.asks,
            user_prompt=self._prompt.prompt[:JUDGE_PROMPT_CHARS],
            batches=judged_batches(self._recent),
            scenario_verdicts=[JudgeVerdict(v) for v in verdicts] if verdicts is not None else None,
            retry_window_seconds=self._requests.retry_window_seconds,
        )
        try:
            output: JudgeProgressOutput = await workflow.execute_activity(
                JUDGE_PROGRESS,
                request,
                result_type=JudgeProgressOutput,
                start_to_close_timeout=self._requests.start_to_close_timeout,
                heartbeat_timeout=self._requests.heartbeat_timeout,
                retry_policy=self._requests.retry_policy,
                summary=f"progress judge (batch {batch})" if self._requests.summaries else None,
            )
        except ActivityError as err:
            if isinstance(err.cause, CancelledError):
                raise asyncio.CancelledError() from err
            return None
        return output
