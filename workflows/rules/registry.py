"""The table of the recommended profile's own rules: each rule declared once, read by all.

docs/protections.md, "Loop profiles". A rule used to be wired in nine
places (if-chains in the profile and the prompt layer, two message maps, settings, the
result, the rule's own module), so adding one touched nine files and forgetting one was
silent. Now a rule is its own module (its counter, threshold and texts) plus one
:class:`RuleSpec` row in :data:`RULES`, and everything else reads the row:

- the profile (``workflows.rules.profiles``): which ``LoopSettings`` field holds its mode;
- the prompt layer (``workflows.rules.loop_rules``): its counter, its threshold, whether
  its decisions name a tool, and the order the rules are consulted in;
- the post-batch step (``workflows.prompt.batch``): its reminder, its stop text and loop type;
- results and telemetry: its name (``RuleEntry.rule``, the ``rule`` label);
- settings (``seawall.runtime.settings``): its setting, variable and help text;
- docs: the test ``tests/workflows/rules/test_registry.py`` checks that every row has its
  ``LoopSettings`` field, its ``LoopType``, its setting, its scenario name and its
  documentation, so a forgotten wiring fails there and not in production.

Two orders, on purpose: :data:`RULES` is the consultation order (the narrowest cause first:
it decides which stop is recorded and the order of reminders), :class:`LoopRule` the
catalogue order (settings, their diagnostics, the benchmark's report).

**How to add a rule.**

1. Write its module in ``workflows/rules/``: a :class:`~workflows.rules.ladder.RuleCounter`
   subclass with its ``review`` (and ``answers``, if it settles calls at screening), its
   threshold, its reminder and its stop message (which opens "System: Automatic continuation
   stopped because "), with a docstring saying what loop it catches, what it lets through and
   why its threshold.
2. Add a :class:`LoopRule` member (its loop type) and a :class:`RuleSpec` row to
   :data:`RULES`, at its place in the consultation order.
3. Run ``tests/workflows/rules/test_registry.py``; it names each spelled-out wiring still
   missing: the ``<name>_mode`` field of ``LoopSettings`` (a payload field: optional, so
   recorded histories replay), the ``LoopType`` member, the ``<name>_guard`` setting in the
   per-rule block of ``seawall/runtime/settings/catalogue.py`` (one line: its help and
   variable come from the row, through ``seawall/runtime/settings/rule_modes.py``), the
   scenario's ``RuleName``, its row in docs/protections.md's rule table and in
   docs/settings.md, and its name in the scenario format's ``rule_modes``.
4. A rule that changes what old prompts decide runs behind a patch (``RuleSpec.progress``,
   ``RuleSpec.normalized``, or a new one; docs/architecture.md, "Versioning").
5. Give ``bench/loops.py`` its sensitivity range and measure it (``make bench``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from workflows.rules.call_cycles import (
    CALL_CYCLE_REMINDER,
    CALL_CYCLE_STOP_MESSAGE,
    CALL_CYCLE_THRESHOLD,
    CallCycles,
)
from workflows.rules.denied_calls import (
    DENIED_CALL_REMINDER,
    DENIED_CALL_STOP_MESSAGE,
    DENIED_CALL_THRESHOLD,
    PRE_PROGRESS_DENIED_CALL_THRESHOLD,
    DeniedCalls,
)
from workflows.rules.failure_cycles import (
    FAILURE_CYCLE_REMINDER,
    FAILURE_CYCLE_STOP_MESSAGE,
    FAILURE_CYCLE_THRESHOLD,
    FailureCycles,
)
from workflows.rules.identical_results import (
    IDENTICAL_RESULT_REMINDER,
    IDENTICAL_RESULT_STOP_MESSAGE,
    IDENTICAL_RESULT_THRESHOLD,
    IdenticalResults,
)
from workflows.rules.ladder import RuleCounter
from workflows.rules.near_repeats import (
    NEAR_REPEAT_REMINDER,
    NEAR_REPEAT_STOP_MESSAGE,
    NEAR_REPEAT_THRESHOLD,
    NearRepeats,
)
from workflows.rules.reformulations import (
    REFORMULATION_BUDGET,
    REFORMULATION_REMINDER,
    REFORMULATION_STOP_MESSAGE,
    Reformulations,
)
from workflows.rules.repeated_verifications import (
    REPEATED_VERIFICATION_REMINDER,
    REPEATED_VERIFICATION_STOP_MESSAGE,
    REPEATED_VERIFICATION_THRESHOLD,
    RepeatedVerifications,
)
from workflows.rules.rewrites import (
    REWRITE_REMINDER,
    REWRITE_STOP_MESSAGE,
    REWRITE_THRESHOLD,
    Rewrites,
)
from workflows.rules.stagnation import (
    STAGNATION_REMINDER,
    STAGNATION_STOP_MESSAGE,
    STAGNATION_THRESHOLD,
    Stagnation,
)
from workflows.rules.stale_waits import (
    STALE_WAIT_MINUTES,
    STALE_WAIT_REMINDER,
    STALE_WAIT_STOP_MESSAGE,
    StaleWaits,
)
from workflows.rules.workspace_states import (
    WORKSPACE_REVISIT_REMINDER,
    WORKSPACE_REVISIT_STOP_MESSAGE,
    WORKSPACE_REVISIT_THRESHOLD,
    WorkspaceRevisits,
)


class LoopRule(StrEnum):
    """The recommended profile's own rules; each value is also its loop type (a stable
    payload value: ``PromptResult.loop_type``, ``RuleEntry.rule``, the search attribute)."""

    FAILURE_CYCLE = "repeated_failure_cycle"
    IDENTICAL_RESULT = "repeated_identical_result"
    DENIED_CALL = "repeated_denied_call"
    CALL_CYCLE = "repeated_call_cycle"
    VERIFICATION = "repeated_verification"
    WORKSPACE_REVISIT = "repeated_workspace_state"
    REFORMULATION = "repeated_reformulation"
    NEAR_REPEAT = "repeated_near_result"
    REWRITE = "repeated_rewrite"
    STAGNATION = "repeated_stagnation"
    STALE_WAIT = "repeated_stale_wait"


@dataclass(frozen=True)
class RuleSpec:
    """One rule, whole.

    ``name`` is the short name everything user-facing derives from: the scenario's
    ``rule_modes`` key, the ``LoopSettings`` field ``<name>_mode`` (a payload field), the
    setting ``<name>_guard`` and its variable ``SEAWALL_<NAME>_GUARD``. ``docs_id`` is the
    rule's number in docs/protections.md's rule table ("R2"). ``counter`` keeps one prompt's state
    of the rule and reviews each settled batch; ``threshold`` is its default reminder threshold.
    ``names_tool``: its decisions are keyed by the failing tool, so telemetry may name the tool's
    safe label; other rules key on private digests and name none. ``progress``: a rule introduced
    with ``PROGRESS_RULES_PATCH`` (a prompt replaying from before it runs with the rule off);
    ``normalized``: one introduced with ``LOOP_QUALITY_V4_PATCH``, which reads calls through the
    normalizer (off before it); ``stale_waits``: one introduced with ``STALE_WAITS_PATCH`` (off
    before it). ``by_answer``: one whose counter keys calls by what came back since
    ``NOTHING_NEW_PATCH`` (its ``by_answer`` field; as before it for a prompt started
    earlier); ``by_names``: one that joins only calls naming the same things since that
    patch (its ``by_names`` field). ``by_shape``: one whose counter takes two answers that
    differ only in a count or two for one since ``MOVED_COUNTS_PATCH`` (its ``by_shape``
    field); ``by_looks``: one whose counter takes a wait that looked at nothing for no news
    since ``LOOKS_AND_IDS_PATCH`` (its ``by_looks`` field); ``by_refusals``: one whose counter
    reads the runner's refusal to start a call as an answer since ``REFUSALS_PATCH`` (its
    ``by_refusals`` field). ``pre_progress_threshold``: the
    threshold a prompt replaying from before that patch keeps, when the patch changed it.
    """

    rule: LoopRule
    name: str
    docs_id: str
    title: str
    threshold: int
    reminder: str
    stop_message: str
    counter: type[RuleCounter]
    names_tool: bool = False
    progress: bool = False
    normalized: bool = False
    stale_waits: bool = False
    by_answer: bool = False
    by_names: bool = False
    by_shape: bool = False
    by_looks: bool = False
    by_refusals: bool = False
    pre_progress_threshold: int | None = None

    def default_threshold(self, progress_rules: bool) -> int:
        """The reminder threshold of a prompt with (or without) the progress rules."""
        if progress_rules or self.pre_progress_threshold is None:
            return self.threshold
        return self.pre_progress_threshold

    @property
    def loop_type(self) -> str:
        return self.rule.value

    @property
    def mode_field(self) -> str:
        """The ``LoopSettings`` field with the operator's mode for this rule."""
        return f"{self.name}_mode"

    @property
    def setting(self) -> str:
        """The setting (also its user config key) of the operator's mode for this rule."""
        return f"{self.name}_guard"

    @property
    def env(self) -> str:
        return f"SEAWALL_{self.name.upper()}_GUARD"

    @property
    def setting_help(self) -> str:
        return (
            f"{self.title} rule of the recommended profile: off | shadow | warn | enforce "
            "(unset: the guard's mode)"
        )


# The rules in the order they are consulted: the narrowest cause first.
RULES: tuple[RuleSpec, ...] = (
    RuleSpec(
        rule=LoopRule.DENIED_CALL,
        name="denied_call",
        docs_id="R4",
        title="denied-call",
        threshold=DENIED_CALL_THRESHOLD,
        pre_progress_threshold=PRE_PROGRESS_DENIED_CALL_THRESHOLD,
        reminder=DENIED_CALL_REMINDER,
        stop_message=DENIED_CALL_STOP_MESSAGE,
        counter=DeniedCalls,
    ),
    RuleSpec(
        rule=LoopRule.FAILURE_CYCLE,
        name="failure_cycle",
        docs_id="R2",
        title="failure-cycle",
        threshold=FAILURE_CYCLE_THRESHOLD,
        reminder=FAILURE_CYCLE_REMINDER,
        stop_message=FAILURE_CYCLE_STOP_MESSAGE,
        counter=FailureCycles,
        names_tool=True,
    ),
    RuleSpec(
        rule=LoopRule.IDENTICAL_RESULT,
        name="identical_result",
        docs_id="R3",
        title="identical-result",
        threshold=IDENTICAL_RESULT_THRESHOLD,
        reminder=IDENTICAL_RESULT_REMINDER,
        stop_message=IDENTICAL_RESULT_STOP_MESSAGE,
        counter=IdenticalResults,
    ),
    # R6 before R5: a re-run check is the narrower cause of a cycle of checks.
    RuleSpec(
        rule=LoopRule.VERIFICATION,
        name="verification",
        docs_id="R6",
        title="repeated-verification",
        threshold=REPEATED_VERIFICATION_THRESHOLD,
        reminder=REPEATED_VERIFICATION_REMINDER,
        stop_message=REPEATED_VERIFICATION_STOP_MESSAGE,
        counter=RepeatedVerifications,
        progress=True,
    ),
    RuleSpec(
        rule=LoopRule.CALL_CYCLE,
        name="call_cycle",
        docs_id="R5",
        title="call-cycle",
        threshold=CALL_CYCLE_THRESHOLD,
        reminder=CALL_CYCLE_REMINDER,
        stop_message=CALL_CYCLE_STOP_MESSAGE,
        counter=CallCycles,
        progress=True,
    ),
    RuleSpec(
        rule=LoopRule.WORKSPACE_REVISIT,
        name="workspace_revisit",
        docs_id="R7",
        title="workspace-revisit",
        threshold=WORKSPACE_REVISIT_THRESHOLD,
        reminder=WORKSPACE_REVISIT_REMINDER,
        stop_message=WORKSPACE_REVISIT_STOP_MESSAGE,
        counter=WorkspaceRevisits,
        progress=True,
    ),
    RuleSpec(
        rule=LoopRule.REFORMULATION,
        name="reformulation",
        docs_id="R8",
        title="reformulation-budget",
        threshold=REFORMULATION_BUDGET,
        reminder=REFORMULATION_REMINDER,
        stop_message=REFORMULATION_STOP_MESSAGE,
        counter=Reformulations,
        progress=True,
    ),
    RuleSpec(
        rule=LoopRule.NEAR_REPEAT,
        name="near_repeat",
        docs_id="R9",
        title="near-repeat",
        threshold=NEAR_REPEAT_THRESHOLD,
        reminder=NEAR_REPEAT_REMINDER,
        stop_message=NEAR_REPEAT_STOP_MESSAGE,
        counter=NearRepeats,
        progress=True,
        normalized=True,
        by_names=True,
    ),
    RuleSpec(
        rule=LoopRule.REWRITE,
        name="rewrite",
        docs_id="R10",
        title="reworded-rewrite",
        threshold=REWRITE_THRESHOLD,
        reminder=REWRITE_REMINDER,
        stop_message=REWRITE_STOP_MESSAGE,
        counter=Rewrites,
        progress=True,
        normalized=True,
        by_names=True,
    ),
    # Last: the broadest cause (nothing new at all), after every narrower rule had its say.
    RuleSpec(
        rule=LoopRule.STAGNATION,
        name="stagnation",
        docs_id="R11",
        title="no-new-state",
        threshold=STAGNATION_THRESHOLD,
        reminder=STAGNATION_REMINDER,
        stop_message=STAGNATION_STOP_MESSAGE,
        counter=Stagnation,
        progress=True,
        normalized=True,
        by_answer=True,
        by_shape=True,
        by_looks=True,
        by_refusals=True,
    ),
    # After R11, which excuses every wait: this one counts the time nothing changed, waits
    # included. Its threshold is minutes, not batches (workflows.rules.stale_waits).
    RuleSpec(
        rule=LoopRule.STALE_WAIT,
        name="stale_wait",
        docs_id="R12",
        title="stale-wait",
        threshold=STALE_WAIT_MINUTES,
        reminder=STALE_WAIT_REMINDER,
        stop_message=STALE_WAIT_STOP_MESSAGE,
        counter=StaleWaits,
        progress=True,
        normalized=True,
        stale_waits=True,
        by_answer=True,
    ),
)

_BY_RULE: Mapping[LoopRule, RuleSpec] = {spec.rule: spec for spec in RULES}
# A rule with no row, or a row twice, fails at import, not in a prompt.
if set(_BY_RULE) != set(LoopRule) or len(_BY_RULE) != len(RULES):
    raise RuntimeError("workflows.rules.registry: every LoopRule needs exactly one RuleSpec")


def rule_spec(rule: LoopRule) -> RuleSpec:
    """The row of ``rule``."""
    return _BY_RULE[rule]
