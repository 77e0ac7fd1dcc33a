"""The progress judge's trigger and ladder: when to ask the operator's model whether a prompt is
getting anywhere, and what its verdicts lead to.

docs/protections.md, "The progress judge". The cheap rules count what they
can see; some loops look like legitimate waiting to every one of them. A
``sleep 30; pgrep -f vite`` whose ``pgrep`` matches its own command line answers "running"
for ever, and every call of it waited, so the identical-result rule and the no-new-state rule
(R11, ``workflows.rules.stagnation``) rightly let it run: a wait whose condition *can*
change looks exactly the same. Telling the two apart takes reading what the calls are for.

So, when the cheap evidence sees a suspicious stretch, the prompt asks its own model
(``seawall.judge_progress``, a durable activity). The **stretch** is a run of settled
batches in which every call's (tool, call digest, result kind, fingerprint, writes) was
already seen in this prompt: nothing new came back. Unlike R11, a call that *waited* is not
new here — a wait that keeps coming back with the same answer is exactly what the judge is
for. New user input (mid-turn input, a queued prompt, an unreliable input boundary) ends the
stretch and returns the ladder to the bottom. The judge is asked when the stretch reaches
:data:`JUDGE_AFTER_BATCHES` stale batches, again after each further
:data:`JUDGE_AFTER_BATCHES`, and at most :data:`JUDGE_MAX_CALLS` times per prompt.

Its verdicts climb the shared ladder (``workflows.rules.ladder``) with a threshold of one:
a ``no_progress`` verdict is the reminder (``warn``; ``would_warn`` in shadow), the next
``no_progress`` after it the stop (``enforce``; ``would_stop`` otherwise), and the judge is
not asked again once it stopped or would have. A ``progress`` verdict returns the ladder to
the bottom; ``unknown`` (an unparsable reply, a failed request, no model to ask) changes
nothing. The mode is the operator's ``progress_judge`` setting alone: ``None`` (unset) is
off, whatever the guard's mode.

Everything here is pure and deterministic: the workflow (``workflows.prompt.judging``) and
the benchmark simulator (``bench/simulate.py``) drive the same object. The outcome keys are
private digests, never logged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workflows.contracts.activity import JudgeVerdict
from workflows.rules.evidence import CallEvidence
from workflows.rules.ladder import RuleDecisionKind, Rung, climb, effective_rule_mode
from workflows.rules.profiles import LoopProfile, LoopSettings
from workflows.rules.stale_waits import outcome_key
from workflows.seed.guard import GuardMode
from workflows.seed.recency import remember_latest

# Stale batches in a row before the judge is asked, and again after as many more.
JUDGE_AFTER_BATCHES = 6
# Questions to the judge per prompt, at most.
JUDGE_MAX_CALLS = 3
# Outcomes remembered; the oldest is forgotten first.
REMEMBERED_OUTCOMES = 8192
# Its name in ``PromptResult.rules`` and the ``rule`` telemetry label.
JUDGE_RULE = "progress_judge"
# The decisions of a verdict that reminds of nothing (``no_progress`` climbs the ladder:
# ``warn``, ``would_warn``, ``stop``, ``would_stop``).
JUDGED_PROGRESS = "progress"
JUDGED_UNKNOWN = "unknown"

JUDGE_REMINDER = (
    "System: a progress check found no progress over the last steps: the same calls keep "
    "returning what they returned before. Stop repeating them. Change the approach, or "
    "explain what you are waiting for and why it will change."
)
JUDGE_STOP_MESSAGE = (
    "System: Automatic continuation stopped because a progress check found no progress "
    "twice, after a corrective reminder. New user input is required to continue."
)


def judge_mode(settings: LoopSettings, *, route_forced_off: bool, normalized: bool) -> GuardMode:
    """The judge's mode in a prompt: off in the seed profile, on a route that forces the
    guard off, in a prompt that replays from before ``LOOP_QUALITY_V4_PATCH``
    (``normalized`` false) and when the operator left it unset; else the operator's."""
    if settings.profile is LoopProfile.SEED or route_forced_off or not normalized:
        return GuardMode.OFF
    return settings.progress_judge_mode or GuardMode.OFF


@dataclass(frozen=True)
class JudgeDecision:
    """What one verdict decided: ``decision`` (a ``RuleDecisionKind`` value for a
    ``no_progress`` verdict, else :data:`JUDGED_PROGRESS` or :data:`JUDGED_UNKNOWN`), the
    effective mode, and the stale stretch it was about, in batches."""

    decision: str
    mode: GuardMode
    count: int

    @property
    def warns(self) -> bool:
        return self.decision == RuleDecisionKind.WARN.value

    @property
    def stops(self) -> bool:
        return self.decision == RuleDecisionKind.STOP.value


class ProgressJudge:
    """One prompt's judge: the outcomes seen, the stale stretch, the questions asked and
    where the verdicts stand on the ladder."""

    def __init__(self, mode: GuardMode) -> None:
        self.mode = mode
        self.seen: dict[str, None] = {}
        self.stretch = 0
        self.asks = 0
        self.rung = Rung()

    def due(self, batch: Sequence[CallEvidence], *, input_arrived: bool) -> bool:
        """Read one settled batch (after the rules' review); whether the judge is to be
        asked now. Counts the question when it is."""
        if self.mode is GuardMode.OFF:
            return False
        keys = [outcome_key(call) for call in batch]
        stale = bool(keys) and all(key in self.seen for key in keys)
        for key in keys:
            remember_latest(self.seen, key, None, REMEMBERED_OUTCOMES)
        if input_arrived:
            self.rung = Rung()
        if input_arrived or not stale:
            self.stretch = 0
            return False
        self.stretch += 1
        if self.stretch % JUDGE_AFTER_BATCHES or self.asks >= JUDGE_MAX_CALLS or self.rung.latched:
            return False
        self.asks += 1
        return True

    def decide(self, verdict: JudgeVerdict, *, enforcement_disabled: bool) -> JudgeDecision:
        """Apply the judge's answer to the question :meth:`due` asked."""
        mode = effective_rule_mode(self.mode, enforcement_disabled)
        if verdict is JudgeVerdict.PROGRESS:
            self.rung = Rung()
            return JudgeDecision(JUDGED_PROGRESS, mode, self.stretch)
        if verdict is not JudgeVerdict.NO_PROGRESS:
            return JudgeDecision(JUDGED_UNKNOWN, mode, self.stretch)
        self.rung, kind = climb(self.rung, 1, 1, mode)
        return JudgeDecision(kind.value if kind else JUDGED_UNKNOWN, mode, self.stretch)
