"""The recommended profile's layer over the seed protections, as pure prompt state.

docs/protections.md, "Loop profiles". ``workflows.seed.protections.BatchProtections`` consults
one :class:`LoopRules` per prompt when the profile is ``recommended`` (never in ``seed``), at
three points:

- **Screening.** An unchanged repeat of a failed call that the seed's failed-call log would
  refuse is cleared to run instead when the world may have changed since it failed (R1,
  :meth:`LoopRules.relaxation`): time passed, a refresh happened, the failure was
  transient, or the call is a shell command; a cleared repeat that then fails exactly as
  before counts toward the refusal's repeat limit (:meth:`LoopRules.unchanged_failures_over`).
  An identical re-request of a call the user denied is answered without asking again (R4,
  :meth:`LoopRules.answer_check`).
- **Settlement.** Each settled call becomes :class:`~workflows.rules.evidence.CallEvidence`,
  with the seconds it took on the prompt's clock; a
  failure of a call that failed before, now with an output it never had, is marked as
  progress for the guard, which then neither advances nor resets on it (R0).
- **Review**, after the input drain: every rule of the table (``workflows.rules.registry``:
  R4 denial rounds, R2 failure cycles, R3 identical results, R6 repeated verifications, R5
  call cycles) reviews the batch with its own
  counter and climbs its reminder ladder (``workflows.rules.ladder``). Nothing here names a
  rule: a new row in the table is reviewed, moded and reported without a change here.

**The prompt's clock** is the caller's: seconds since the prompt started, ``workflow.now()``
minus the prompt's start (workflow time, recorded in history, so a replay reads the same clock)
plus the time a scenario scripts and nothing really waits (a model turn's
``latency_seconds`` after its reply; after each batch the longest ``duration_seconds`` of its
fixture calls, which ran concurrently; docs/scenarios.md, "Time"). A call's duration is, for
a fixture, its scripted duration, for any other tool the workflow time from scheduling its
``seawall.run_tool`` activity to its result; a call that never ran took none. The workflow and
the simulator hand each batch's durations to :meth:`LoopRules.settle` (``CallEvidence.duration``)
and the clock to :meth:`LoopRules.review` (``RuleReview.now``); what the rules make of time is
``workflows.rules.evidence``, "Time as evidence". A prompt that replays from before
``PROGRESS_RULES_PATCH`` has no clock: durations 0 and ``now`` 0, whatever it is handed.

**R0, progress for the guard.** A failure is progress when the *same call* (the same digest)
failed before in this prompt and now fails with an output it never had: the same ``npm run
build`` after an edit, with a shorter error list. The guard ignores it as it ignores a provider
duplicate (it neither advances nor resets the streak), so a fix-and-rebuild session is one
streak only while the build keeps failing *the same way*. The first failure of a call is never
progress, nor is a *different* call failing differently: a new guess with a new error is a new
guess, not evidence that anything moved.

**R1, when an unchanged repeat of a failed call runs anyway** (:class:`RelaxReason`, the
``outcome`` of ``seawall_failed_call_refusals``):

- ``admitted_time_passed``: the repeat itself waits (``sleep``, ``kubectl rollout status``,
  ``gh run watch``, ``--watch``, a ``sleep``/``wait`` tool), or since that failure a waiting
  call — or any call that took 10 s or more — succeeded;
- ``admitted_transient``: the failure was ``execution_timeout``, or its text names a rate
  limit or ``429``, a ``502``/``503``/``504``, ``ECONNRESET`` or a reset connection, or
  "temporarily unavailable";
- ``admitted_refreshed``: since that failure a call succeeded that names the same path
  (``path``, ``file_path``, ``url`` … the file an edit failed on was read again), or new user
  input arrived; a refresh buys one retry (the failed repeat is recorded anew, without it);
- ``admitted_shell``: the call is ``run_shell_command``, always. Its results depend on the
  world outside the workspace (CI, a job, a port), and a status command that exits non-zero
  while it waits is how one polls: refusing failed shell repeats like any call halted a
  legitimate session polling ``gh pr checks`` and saved no wasted calls on the corpus.

"Since" includes the failure's own batch: its calls ran concurrently and the model read all
their results before repeating anything. An admitted repeat that fails exactly as before (the
same fingerprint) shows nothing had changed: past ``max_repeats`` of them in a row the prompt
stops ``repeated_failed_call`` with the refusal's stop message, where the seed would have
stopped it by refusing; repeats admitted because time passed never count. *Departs from seed
000*, which makes inferring retryability from error text a non-goal: the text is used only to
*admit* one more attempt, never to count or stop anything; a failure that keeps recurring is
still counted by R2 and by the repeat limit.

Fingerprints and digests stay in this state: never logged, labelled or put in a search
attribute. No Temporal, no I/O, no clock of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel

from workflows.contracts.outcome import ToolCall, ToolOutcome
from workflows.rules.evidence import (
    CallEvidence,
    ResultKind,
    call_evidence,
    transient_failure,
    waits_for_time,
)
from workflows.rules.inspection import SHELL_TOOL, is_inspection
from workflows.rules.ladder import RuleCounter, RuleDecisionKind, RuleReview, effective_rule_mode
from workflows.rules.normalize import window_for
from workflows.rules.profiles import LoopProfile, LoopSettings, rule_mode
from workflows.rules.registry import RULES, LoopRule
from workflows.rules.world_ids import WorldIds
from workflows.seed.guard import GuardMode
from workflows.seed.recency import remember_latest

# Failure marks and fingerprints kept per prompt (per tool for fingerprints).
REMEMBERED_MARKS = 256
REMEMBERED_FINGERPRINTS_PER_TOOL = 256


class RelaxReason(StrEnum):
    """Why an unchanged repeat of a failed call was cleared to run (R1), in the order asked."""

    TIME_PASSED = "time_passed"
    TRANSIENT = "transient"
    REFRESHED = "refreshed"
    SHELL = "shell"


class FailureMark(BaseModel):
    """What R1 knows about one remembered failure (keyed by the call's digest): when it
    happened, whether it said it was transient, what it named, whether a refresh followed,
    its output (as a private fingerprint), and how many cleared repeats in a row failed
    exactly like it."""

    wait_epoch: int
    transient: bool
    paths: frozenset[str]
    fingerprint: str
    refreshed: bool = False
    unchanged_repeats: int = 0


@dataclass(frozen=True)
class RuleDecision:
    """A rule's decision in one batch. ``tool`` is the failing tool's policy name for a rule
    whose row ``names_tool`` (telemetry reports only its safe label), else ``None``."""

    rule: LoopRule
    kind: RuleDecisionKind
    mode: GuardMode
    count: int
    tool: str | None = None


class LoopRules:
    """One prompt's recommended-profile state: R0 fingerprints, R1 failure marks, R2–R6."""

    def __init__(
        self,
        settings: LoopSettings,
        guard_mode: GuardMode,
        *,
        route_forced_off: bool,
        thresholds: Mapping[LoopRule, int] | None = None,
        progress_rules: bool = True,
        normalized: bool = True,
        stale_waits: bool = True,
        nothing_new: bool = True,
        moved_counts: bool = True,
        shell_reads: bool = True,
        looks_and_ids: bool = True,
        world_ids: bool = True,
        refusals: bool = True,
    ) -> None:
        """``thresholds`` replaces the rules' reminder thresholds (the benchmark's
        sensitivity runs only; prompts always use the defaults). ``progress_rules`` is
        false for a prompt that replays from before the progress rules existed
        (``PROGRESS_RULES_PATCH``): their rows are off, whatever the settings say.
        ``normalized`` is false for a prompt that replays from before the normalizer
        (``LOOP_QUALITY_V4_PATCH``): results keep the fingerprint they had then and the
        rows that need the normalizer are off. ``stale_waits`` is false for a prompt that
        replays from before the stale-wait rule (``STALE_WAITS_PATCH``): its row is off.
        ``nothing_new`` is false for a prompt that replays from before R11 and R12 keyed
        calls by what came back (``NOTHING_NEW_PATCH``): they key them as they did.
        ``moved_counts`` is false for a prompt that replays from before R11 took answers
        that differ only in a count for one (``MOVED_COUNTS_PATCH``). ``shell_reads`` is
        false for a prompt that replays from before any tool given a command was read as a
        shell and ``curl`` as a reader (``SHELL_READS_PATCH``). ``looks_and_ids`` is false for
        a prompt that replays from before a wait that looked at nothing was no news to R11,
        PowerShell's readers and each line of a command were read, and a labelled id was one
        whatever its characters (``LOOKS_AND_IDS_PATCH``). ``world_ids`` is false for a
        prompt that replays from before an id the world listed was what a call acts on, an
        echo's answer no news and an answer about what its call names keyed by it
        (``WORLD_IDS_PATCH``, ``workflows.rules.world_ids``). ``refusals`` is false for a
        prompt that replays from before R11 read the runner's refusal to start a call as an
        answer (``REFUSALS_PATCH``)."""
        self.settings = settings
        self.progress_rules = progress_rules
        self.shell_reads = shell_reads
        self.looks_and_ids = looks_and_ids
        self.world_ids = WorldIds() if world_ids and looks_and_ids else None
        self.normalized = normalized and progress_rules
        self.modes: dict[LoopRule, GuardMode] = {
            spec.rule: (
                GuardMode.OFF
                if (spec.progress and not progress_rules)
                or (spec.normalized and not self.normalized)
                or (spec.stale_waits and not stale_waits)
                else rule_mode(settings, spec.rule, guard_mode, route_forced_off=route_forced_off)
            )
            for spec in RULES
        }
        # Batches so far in which a call that waited (evidence.waited) succeeded.
        self.wait_epoch = 0
        # Successful calls of state-changing tools so far.
        self.changes = 0
        self.fingerprints: dict[str, dict[str, None]] = {}
        self.marks: dict[str, FailureMark] = {}
        # Digests cleared in the current batch for a reason other than time passing.
        self._relaxed: set[str] = set()
        custom = dict(thresholds or {})
        if settings.stale_wait_minutes is not None:
            custom.setdefault(LoopRule.STALE_WAIT, settings.stale_wait_minutes)
        # One counter per rule of the table, in its consultation order.
        self.counters: dict[LoopRule, RuleCounter] = {
            spec.rule: spec.counter(
                threshold=custom.get(spec.rule, spec.default_threshold(progress_rules)),
                **({"by_answer": nothing_new} if spec.by_answer else {}),
                **({"by_names": nothing_new} if spec.by_names else {}),
                **({"by_shape": moved_counts} if spec.by_shape else {}),
                **({"by_looks": looks_and_ids} if spec.by_looks else {}),
                **({"by_refusals": refusals} if spec.by_refusals else {}),
            )
            for spec in RULES
        }
        # The rows that may answer a call at screening (their counter has ``answers``), in
        # the table's order: screening asks only them, once per call.
        self._answering = [
            spec
            for spec in RULES
            if type(self.counters[spec.rule]).answers is not RuleCounter.answers
        ]
        self._settled: list[CallEvidence] = []
        # The batch the last review read (the progress judge's evidence, workflows.rules.judge).
        self.reviewed: list[CallEvidence] = []

    @property
    def active(self) -> bool:
        return self.settings.profile is LoopProfile.RECOMMENDED

    # --- screening ------------------------------------------------------------------------

    def relaxation(self, digest: str, call: ToolCall) -> RelaxReason | None:
        """Why an unchanged repeat of the remembered failure ``digest`` may run anyway, or
        ``None`` (the seed's refusal applies)."""
        if not self.active:
            return None
        mark = self.marks.get(digest)
        if waits_for_time(call, normalized=self.normalized, any_shell=self.shell_reads) or (
            mark is not None and self.wait_epoch > mark.wait_epoch
        ):
            return RelaxReason.TIME_PASSED
        reason = None
        if mark is not None and mark.transient:
            reason = RelaxReason.TRANSIENT
        elif mark is not None and mark.refreshed:
            reason = RelaxReason.REFRESHED
        elif self.settings.shell_repeats_admitted and call.name == SHELL_TOOL:
            reason = RelaxReason.SHELL
        if reason is not None:
            self._relaxed.add(digest)
        return reason

    def unchanged_failures_over(self, limit: int) -> bool:
        """Whether a cleared repeat failed exactly like the failure before it more than
        ``limit`` times in a row (the refusal's ``max_repeats``): nothing had changed after
        all, so the seed's repeat limit applies as if each had been refused. Repeats cleared
        because time passed never count: waiting is not repeating."""
        return any(mark.unchanged_repeats > limit for mark in self.marks.values())

    def answer_check(self, digest: str) -> RuleDecision | None:
        """A rule answering the call ``digest`` without running it (the denied-call rule,
        for an identical re-request of a call the user denied): ``answered`` (warn,
        enforce) or ``would_answer`` (shadow, which asks as usual); ``None`` otherwise."""
        if not self.active:
            return None
        for spec in self._answering:
            mode = self.modes[spec.rule]
            if mode is not GuardMode.OFF and self.counters[spec.rule].answers(digest):
                kind = (
                    RuleDecisionKind.WOULD_ANSWER
                    if mode is GuardMode.SHADOW
                    else RuleDecisionKind.ANSWERED
                )
                return RuleDecision(spec.rule, kind, mode, 1)
        return None

    # --- settlement -----------------------------------------------------------------------

    def settle(
        self,
        calls: list[ToolCall],
        digests: list[str],
        outcomes: list[ToolOutcome],
        state_changing: frozenset[str] = frozenset(),
        durations: Sequence[float] = (),
    ) -> list[bool]:
        """Read one settled batch (``state_changing``: the tools whose success changes the
        world; ``durations``: per outcome, the seconds the call took on the prompt's clock,
        zeros when not given); returns, per outcome, whether it is progress (R0)."""
        if not self.active:
            return [False] * len(outcomes)
        if not self.progress_rules or not durations:
            durations = [0.0] * len(outcomes)
        self._settled = []
        relaxed, self._relaxed = self._relaxed, set()
        window = (
            # Only the texts no tool activity read already share the batch's budget.
            window_for([len(o.error_message or o.content) for o in outcomes if o.readings is None])
            if self.normalized
            else None
        )
        # What each call of the batch had failed with before the batch (its siblings' failures
        # are not "before").
        before = {d: set(self.fingerprints[d]) for d in set(digests) if d in self.fingerprints}
        progress: list[bool] = []
        for call, digest, outcome, duration in zip(
            calls, digests, outcomes, durations, strict=True
        ):
            inspects = is_inspection(call, any_shell=self.shell_reads, looks=self.looks_and_ids)
            evidence = call_evidence(
                call,
                digest,
                outcome,
                # An inspection command changes nothing, even on a state-changing tool.
                state_changing=call.name in state_changing
                and not (self.progress_rules and inspects),
                changes_before=self.changes,
                duration=duration,
                window=window,
                any_shell=self.shell_reads,
                inspects=inspects,
                looks_and_ids=self.looks_and_ids,
                world_ids=self.world_ids is not None,
            )
            if self.world_ids is not None and evidence.asked_ids:
                evidence = evidence._replace(acts_on=self.world_ids.acts_on(evidence))
            self.changes += evidence.changes
            self._settled.append(evidence)
            if not outcome.ran_and_failed or outcome.refused_repeat:
                progress.append(False)
                continue
            # Progress: the same call failed before, and now it fails differently.
            seen = self.fingerprints.setdefault(digest, {})
            progress.append(bool(before.get(digest)) and evidence.fingerprint not in seen)
            remember_latest(seen, evidence.fingerprint, None, REMEMBERED_FINGERPRINTS_PER_TOOL)
            earlier = self.marks.pop(digest, None)
            unchanged = (
                earlier.unchanged_repeats + 1
                if earlier is not None
                and digest in relaxed
                and earlier.fingerprint == evidence.fingerprint
                else 0
            )
            mark = FailureMark(
                wait_epoch=self.wait_epoch,
                transient=transient_failure(
                    outcome.execution_error_type, outcome.error_message or outcome.content
                ),
                paths=evidence.paths,
                fingerprint=evidence.fingerprint,
                unchanged_repeats=unchanged,
            )
            remember_latest(self.marks, digest, mark, REMEMBERED_MARKS)
        if self.world_ids is not None:
            self.world_ids.read(self._settled)
        return progress

    # --- review ---------------------------------------------------------------------------

    def review(
        self, *, input_arrived: bool, enforcement_disabled: bool, now: float = 0.0
    ) -> list[RuleDecision]:
        """After the input drain: refresh the failure marks, let every rule of the table
        review the batch in consultation order (``now``: the prompt's clock when the batch
        settled, in seconds), advance the wait epoch when a call of the batch waited and
        succeeded."""
        if not self.active:
            return []
        batch, self._settled = self._settled, []
        self.reviewed = batch
        refreshed_paths = frozenset().union(
            *(call.paths for call in batch if call.kind is ResultKind.SUCCESS)
        )
        for mark in self.marks.values():
            if input_arrived or (mark.paths & refreshed_paths):
                mark.refreshed = True

        decisions: list[RuleDecision] = []
        for spec in RULES:
            mode = self.modes[spec.rule]
            if mode is GuardMode.OFF:
                continue  # an off rule does not count at all
            mode = effective_rule_mode(mode, enforcement_disabled)
            found = self.counters[spec.rule].review(
                RuleReview(
                    batch=batch,
                    wait_epoch=self.wait_epoch,
                    input_arrived=input_arrived,
                    mode=mode,
                    now=now if self.progress_rules else 0.0,
                    progress_rules=self.progress_rules,
                )
            )
            for key, kind, count in found:
                tool = key if spec.names_tool else None
                decisions.append(RuleDecision(spec.rule, kind, mode, count, tool))

        if any(call.kind is ResultKind.SUCCESS and call.waits for call in batch):
            self.wait_epoch += 1
        return decisions
