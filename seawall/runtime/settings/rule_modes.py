"""The per-rule mode settings of the recommended loop profile, declared in one place
(docs/protections.md, "Loop profiles"; docs/settings.md, "The guard and the worker").

An operator may give a rule its own mode (``off``, ``shadow``, ``warn``, ``enforce``) instead
of the guard's, for a shadow-first rollout of each rule. :data:`RULE_MODE_SETTINGS` has one
row per rule of the rule table (``workflows/rules/registry.py``), its names derived there;
the catalogue declares one field per row (its marked block, with :func:`rule_mode_setting`),
and the session-time read copies each into its ``LoopSettings`` field. Adding a rule: its
row in the table and one line in that block (tests/seawall/runtime/test_loop_settings.py
and tests/workflows/rules/test_registry.py check they agree).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workflows.rules import LoopRule, rule_spec

from .fields import WORKER, setting


@dataclass(frozen=True)
class RuleModeSetting:
    """A rule's mode setting: its name (also its config key), its variable, the
    ``LoopSettings`` field it sets, and the rule's loop type (its ``LoopRule``)."""

    name: str
    env: str
    loop_settings_field: str
    loop_type: str


# One row per rule of the table, in ``LoopRule``'s (catalogue) order.
RULE_MODE_SETTINGS: tuple[RuleModeSetting, ...] = tuple(
    RuleModeSetting(spec.setting, spec.env, spec.mode_field, spec.rule.value)
    for spec in (rule_spec(rule) for rule in LoopRule)
)


def rule_mode_setting(name: str) -> Any:
    """The field of the rule mode setting ``name`` of :data:`RULE_MODE_SETTINGS`."""
    (row,) = (r for r in RULE_MODE_SETTINGS if r.name == name)
    return setting(
        None,
        rule_spec(LoopRule(row.loop_type)).setting_help,
        env=row.env,
        read_by=(WORKER,),
    )
