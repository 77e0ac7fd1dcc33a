"""A scenario file may pin the loop profile and per-rule modes (docs/scenarios.md, "Scenario
format"; docs/protections.md, "Loop profiles"); without them the operator's settings decide."""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.scenario.driver import prompt_input
from seawall.scenario.format import Scenario, ScenarioError, load_scenario, scenario_loop_settings
from workflows.rules import LoopProfile, LoopSettings
from workflows.seed import GuardMode


def test_a_scenario_without_them_leaves_them_to_the_operator() -> None:
    spec = Scenario(name="x")
    assert scenario_loop_settings(spec) is None
    assert prompt_input(spec, Path("/ws")).loop_settings is None


def test_profile_and_rule_modes_become_the_prompts_loop_settings() -> None:
    spec = Scenario.model_validate(
        {"name": "x", "profile": "seed", "rule_modes": {"failure_cycle": "shadow"}}
    )
    assert scenario_loop_settings(spec) == LoopSettings(
        profile=LoopProfile.SEED, failure_cycle_mode=GuardMode.SHADOW
    )
    only_modes = Scenario.model_validate({"name": "x", "rule_modes": {"denied_call": "off"}})
    assert scenario_loop_settings(only_modes) == LoopSettings(denied_call_mode=GuardMode.OFF)
    # The benchmark's override wins over the file.
    override = LoopSettings(profile=LoopProfile.RECOMMENDED)
    assert prompt_input(spec, Path("/ws"), loop_override=override).loop_settings == override


def test_an_unknown_rule_or_profile_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nrule_modes: {failure_cycles: off}\n")
    with pytest.raises(ScenarioError, match="rule_modes"):
        load_scenario(bad)
    bad.write_text("name: x\nprofile: strict\n")
    with pytest.raises(ScenarioError, match="profile"):
        load_scenario(bad)


def test_a_scenario_may_turn_the_progress_judge_on_and_script_its_verdicts(
    tmp_path: Path,
) -> None:
    """docs/scenarios.md: ``progress_judge`` is the judge's mode, ``model.judge`` its
    verdicts in order (docs/protections.md, "The progress judge")."""
    spec = Scenario.model_validate(
        {"name": "x", "progress_judge": "warn", "model": {"judge": ["no_progress", "progress"]}}
    )
    assert scenario_loop_settings(spec) == LoopSettings(progress_judge_mode=GuardMode.WARN)
    hooks = prompt_input(spec, Path("/ws")).scenario
    assert hooks is not None and hooks.model_script is not None
    assert hooks.model_script.judge == ["no_progress", "progress"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmodel: {judge: [stuck]}\n")
    with pytest.raises(ScenarioError, match=r"model\.judge"):
        load_scenario(bad)
