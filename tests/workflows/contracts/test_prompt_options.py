"""Prompt options (``workflows/contracts/prompt_options.py``): one set of defaults, flat JSON on
both the prompt and the session, and the approval policy."""

from __future__ import annotations

import json

import pytest

from seawall.scenario.format import Scenario
from workflows.contracts.prompt import PromptInput
from workflows.contracts.prompt_options import (
    DEFAULT_MAX_MODEL_REQUESTS,
    ApprovalMode,
    PromptOptions,
)
from workflows.contracts.session import SessionSettings
from workflows.seed import RefusalMode


def test_prompts_and_sessions_share_one_set_of_defaults() -> None:
    prompt = PromptInput(prompt="go", workspace_root="/ws")
    session = SessionSettings(workspace_root="/ws")

    assert prompt.prompt_options() == session.prompt_options() == PromptOptions().prompt_options()


def test_the_options_stay_top_level_fields_in_json() -> None:
    prompt = PromptInput(prompt="go", workspace_root="/ws", max_tool_calls_per_turn=7)
    payload = json.loads(prompt.model_dump_json())

    assert payload["max_tool_calls_per_turn"] == 7
    assert set(PromptOptions.model_fields) <= set(payload)


def test_a_session_hands_its_prompts_every_option() -> None:
    settings = SessionSettings(
        workspace_root="/ws",
        refusal_mode=RefusalMode.SHADOW,
        max_model_requests=3,
        tool_timeout_seconds=5,
    )

    prompt = PromptInput(prompt="go", workspace_root="/ws", **settings.prompt_options())

    assert prompt.refusal_mode is RefusalMode.SHADOW
    assert (prompt.max_model_requests, prompt.tool_timeout_seconds) == (3, 5)


def test_the_scenario_format_reuses_the_prompt_defaults() -> None:
    scenario = Scenario(name="defaults")

    # Unset in both: the default cap, hard or adaptive by loop profile.
    assert scenario.max_tool_calls_per_turn is None
    assert PromptOptions().max_tool_calls_per_turn is None
    assert scenario.max_model_requests == DEFAULT_MAX_MODEL_REQUESTS


def test_unknown_options_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_tool_calls"):
        PromptInput.model_validate({"prompt": "go", "workspace_root": "/ws", "max_tool_calls": 3})


@pytest.mark.parametrize(
    ("mode", "tool", "mutating", "asks"),
    [
        (ApprovalMode.DEFAULT, "read_file", False, False),
        (ApprovalMode.DEFAULT, "write_file", True, True),
        (ApprovalMode.DEFAULT, "run_shell_command", True, True),
        (ApprovalMode.AUTO_EDIT, "write_file", True, False),
        (ApprovalMode.AUTO_EDIT, "edit_file", True, False),
        (ApprovalMode.AUTO_EDIT, "run_shell_command", True, True),
        (ApprovalMode.YOLO, "run_shell_command", True, False),
    ],
)
def test_which_calls_ask_for_approval(
    mode: ApprovalMode, tool: str, mutating: bool, asks: bool
) -> None:
    assert mode.asks_before(tool, mutating=mutating) is asks
