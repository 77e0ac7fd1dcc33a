"""The loop profiles and the recommended profile's rules (docs/protections.md, "Loop profiles").

What the rest of Seawall uses is the names below; the modules behind them are private to
the package: ``profiles`` (``seed`` / ``recommended`` and ``LoopSettings``), ``registry``
(the rule table: one :class:`RuleSpec` per rule), ``loop_rules`` (``LoopRules``, one
prompt's state of the layer over the seed protections), ``evidence`` (what a result says),
``ladder`` (the reminder-then-stop escalation and the counter every rule subclasses), and one
module per rule: ``failure_cycles`` (R2), ``identical_results`` (R3), ``denied_calls`` (R4).
"""

from workflows.rules.ladder import RuleDecisionKind
from workflows.rules.loop_rules import LoopRules, RelaxReason, RuleDecision
from workflows.rules.profiles import (
    DEFAULT_LOOP_PROFILE,
    SEED_SETTINGS,
    LoopProfile,
    LoopSettings,
)
from workflows.rules.registry import RULES, LoopRule, RuleSpec, rule_spec

__all__ = [
    "DEFAULT_LOOP_PROFILE",
    "RULES",
    "SEED_SETTINGS",
    "LoopProfile",
    "LoopRule",
    "LoopRules",
    "LoopSettings",
    "RelaxReason",
    "RuleDecision",
    "RuleDecisionKind",
    "RuleSpec",
    "rule_spec",
]
