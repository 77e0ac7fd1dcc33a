"""The per-rule mode settings of the recommended loop profile, declared in one place
(docs/architecture.md, "Loop profiles"; docs/settings.md, "The guard and the worker").

An operator may give a rule its own mode (``off``, ``shadow``, ``warn``, ``enforce``) instead
of the guard's, for a shadow-first rollout of each rule. One row of :data:`RULE_MODE_SETTINGS`
per such rule: the catalogue declares one field per row (its marked block, with
:func:`rule_mode_setting`), and the session-time read copies each into its ``LoopSettings``
field. Adding a rule's mode setting: one row here and one line in that block
(tests/seawall/runtime/test_loop_settings.py checks the two agree).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .fields import WORKER, setting


@dataclass(frozen=True)
class RuleModeSetting:
    """A rule's mode setting: its name (also its config key), its variable, the
    ``LoopSettings`` field it sets, and the rule as its help text names it."""

    name: str
    env: str
    loop_settings_field: str
    rule: str


RULE_MODE_SETTINGS: tuple[RuleModeSetting, ...] = (
    RuleModeSetting(
        "failure_cycle_guard", "SEAWALL_FAILURE_CYCLE_GUARD", "failure_cycle_mode", "failure-cycle"
    ),
    RuleModeSetting(
        "identical_result_guard",
        "SEAWALL_IDENTICAL_RESULT_GUARD",
        "identical_result_mode",
        "identical-result",
    ),
    RuleModeSetting(
        "denied_call_guard", "SEAWALL_DENIED_CALL_GUARD", "denied_call_mode", "denied-call"
    ),
)


def rule_mode_setting(name: str) -> Any:
    """The field of the rule mode setting ``name`` of :data:`RULE_MODE_SETTINGS`."""
    (row,) = (r for r in RULE_MODE_SETTINGS if r.name == name)
    return setting(
        None,
        f"{row.rule} rule of the recommended profile: off | shadow | warn | enforce "
        "(unset: the guard's mode)",
        env=row.env,
        read_by=(WORKER,),
    )
