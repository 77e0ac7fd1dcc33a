"""Every row of the rule table is wired everywhere it must be (``workflows/rules/registry.py``,
"How to add a rule").

A rule is declared once, in ``workflows/rules/registry.py``; what reads the row at run time
(the prompt layer, the post-batch step, settings' variables and help) cannot forget it. What
cannot read it — the payload fields, enums and docs that are spelled out for the type checker
and for readers — is checked here, row by row, so adding a rule without its setting, its
``LoopSettings`` field, its loop type, its scenario name or its documentation fails this test
and not a deployment.
"""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from seawall.acp.mapping import is_stop_message
from seawall.runtime.settings import RULE_MODE_SETTINGS, SeawallSettings
from seawall.scenario.format import RuleName, scenario_loop_settings
from seawall.scenario.format import Scenario as ScenarioFile
from workflows.contracts.prompt import LoopType
from workflows.contracts.prompt_options import PromptOptions
from workflows.prompt.batch import rule_entry, rule_reminders
from workflows.rules import (
    RULES,
    LoopRule,
    LoopRules,
    LoopSettings,
    RuleDecision,
    RuleDecisionKind,
    RuleSpec,
)
from workflows.rules.ladder import RuleCounter
from workflows.seed.guard import DecisionKind, GuardMode
from workflows.seed.protections import BatchProtections

ROOT = Path(__file__).resolve().parents[3]
DOCS = "\n".join(page.read_text() for page in sorted((ROOT / "docs").rglob("*.md")))

rows = pytest.mark.parametrize("spec", RULES, ids=[spec.name for spec in RULES])


def test_every_rule_has_exactly_one_row_and_every_name_is_its_own() -> None:
    assert sorted(spec.rule for spec in RULES) == sorted(LoopRule)
    for attribute in ("name", "docs_id", "title", "reminder", "stop_message"):
        values = [getattr(spec, attribute) for spec in RULES]
        assert len(set(values)) == len(values), attribute


@rows
def test_the_rule_has_its_loop_settings_field(spec: RuleSpec) -> None:
    field = LoopSettings.model_fields[spec.mode_field]
    assert field.default is None  # unset: the rule runs in the guard's mode
    settings = LoopSettings.model_validate({spec.mode_field: "warn"})
    assert settings.override(spec.rule) is GuardMode.WARN
    others = [other.rule for other in RULES if other is not spec]
    assert all(settings.override(rule) is None for rule in others)


def test_loop_settings_has_no_mode_field_without_a_rule() -> None:
    # The progress judge's mode is the one that is not a row (workflows/rules/judge.py).
    modes = {name for name in LoopSettings.model_fields if name.endswith("_mode")}
    assert modes == {spec.mode_field for spec in RULES} | {"progress_judge_mode"}


@rows
def test_the_rule_is_a_loop_type_and_its_result_and_telemetry_name(spec: RuleSpec) -> None:
    """The stop records ``LoopType(loop_type)`` (the ``loop_type`` label and search
    attribute); ``RuleEntry.rule`` and the ``rule`` telemetry label are the same value."""
    assert LoopType(spec.loop_type).value == spec.rule.value
    decision = RuleDecision(spec.rule, RuleDecisionKind.WARN, GuardMode.ENFORCE, 7)
    assert rule_entry(3, decision).rule == spec.loop_type


@rows
def test_the_rule_has_its_setting_variable_and_help(spec: RuleSpec) -> None:
    (row,) = (r for r in RULE_MODE_SETTINGS if r.name == spec.setting)
    assert (row.env, row.loop_settings_field, row.loop_type) == (
        spec.env,
        spec.mode_field,
        spec.loop_type,
    )
    field = SeawallSettings.model_fields[spec.setting]
    assert field.default is None
    assert field.description == spec.setting_help
    extra = field.json_schema_extra
    assert isinstance(extra, dict) and extra["env"] == [spec.env]


@rows
def test_a_scenario_can_name_the_rule(spec: RuleSpec) -> None:
    assert spec.name in get_args(RuleName)
    scenario = ScenarioFile.model_validate({"name": "s", "rule_modes": {spec.name: "off"}})
    pinned = scenario_loop_settings(scenario)
    assert pinned is not None and pinned.override(spec.rule) is GuardMode.OFF


def test_a_scenario_names_no_rule_the_table_lacks() -> None:
    assert set(get_args(RuleName)) == {spec.name for spec in RULES}


@rows
def test_the_rule_is_documented(spec: RuleSpec) -> None:
    assert f"| {spec.docs_id} | `{spec.loop_type}` |" in DOCS  # docs/protections.md's rule table
    assert f"| `{spec.setting}` | `{spec.env}` |" in DOCS  # the settings table
    assert f"`{spec.name}`" in DOCS  # the scenario format's rule_modes


@rows
def test_the_rule_reminds_and_stops_with_its_own_texts(spec: RuleSpec) -> None:
    """The post-batch step reads the row: its reminder on a warning, its stop text and loop
    type on a stop, and the ACP client tells the stop from a reminder."""
    assert rule_reminders([RuleDecision(spec.rule, RuleDecisionKind.WARN, GuardMode.WARN, 1)]) == [
        spec.reminder
    ]
    protections = BatchProtections(PromptOptions(), "/nonexistent")
    protections.use_loop_rules(LoopRules(LoopSettings(), GuardMode.ENFORCE, route_forced_off=False))
    stop = protections.stop_after(
        DecisionKind.NONE, [RuleDecision(spec.rule, RuleDecisionKind.STOP, GuardMode.ENFORCE, 1)]
    )
    assert stop is not None
    assert (stop.loop_type.value, stop.message) == (spec.loop_type, spec.stop_message)
    assert is_stop_message(spec.stop_message) and not is_stop_message(spec.reminder)


@rows
def test_the_rule_counts_with_its_own_counter_and_threshold(spec: RuleSpec) -> None:
    assert issubclass(spec.counter, RuleCounter) and spec.counter is not RuleCounter
    assert spec.counter.model_fields["threshold"].default == spec.threshold
    rules = LoopRules(
        LoopSettings(),
        GuardMode.ENFORCE,
        route_forced_off=False,
        thresholds={spec.rule: spec.threshold + 1},
    )
    counter = rules.counters[spec.rule]
    assert type(counter) is spec.counter and counter.threshold == spec.threshold + 1
    assert list(rules.counters) == [row.rule for row in RULES]  # the consultation order
