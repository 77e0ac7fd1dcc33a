"""What the worker reads at each session's start is what it read before the settings became a
package (issue 24): the guard mode, the loop settings, the context budget, activity summaries
and the rollout settings, with their diagnostics' text, for fixed setups of the sources.

Captured from the code before the refactor into ``session_reads_output.json``;
``python -m tests.seawall.runtime.test_session_reads_output --write`` rewrites it (only for a
change users are meant to see). Where the session reads used to disagree with startup the
expected values were corrected with the change that made both use one validator.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from seawall.runtime.settings import (
    resolve_activity_summaries,
    resolve_context_budget,
    resolve_guard_mode,
    resolve_loop_settings,
    resolve_rollout_settings,
)

EXPECTED = Path(__file__).with_name("session_reads_output.json")
SCRATCH_SHOWN = "<scratch>"

# Each case: variables, and the text of config.yaml (None: no file).
CASES: dict[str, tuple[dict[str, str], str | None]] = {
    "nothing": ({}, None),
    "environment": (
        {
            "QWEN_CODE_ACP_REPEATED_TOOL_FAILURE_GUARD": "WARN",
            "SEAWALL_LOOP_PROFILE": " seed ",
            "SEAWALL_IDENTICAL_RESULT_GUARD": "off",
            "SEAWALL_CONTEXT_BUDGET_CHARS": " 20000 ",
            "SEAWALL_ACTIVITY_SUMMARIES": "Y",
            "SEAWALL_GUARD_ROLLOUT": "enforce:50%,warn:rest",
            "SEAWALL_GUARD_ROLLOUT_SALT": "s",
            "SEAWALL_GUARD_ROLLOUT_ALLOW_WIDE_ENFORCE": "on",
            "SEAWALL_GUARD_ROLLOUT_VERSION": "1.2",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod,service.version=1.2",
        },
        None,
    ),
    "user_config": (
        {"SEAWALL_CONTEXT_BUDGET_CHARS": ""},
        "repeated_tool_failure_guard: off\nloop_profile: recommended\n"
        "failure_cycle_guard: off\ndenied_call_guard: Enforce\n"
        "context_budget_chars: 30000\nactivity_summaries: true\n"
        "guard_rollout: enforce:5%,warn:rest\nguard_rollout_salt: s\n"
        "deployment_environment: staging\nservice_version: 2.0\n",
    ),
    "invalid_in_environment": (
        {
            "SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "loud",
            "SEAWALL_LOOP_PROFILE": "fancy",
            "SEAWALL_FAILURE_CYCLE_GUARD": "maybe",
            "SEAWALL_CONTEXT_BUDGET_CHARS": "9999",
            "SEAWALL_ACTIVITY_SUMMARIES": "maybe",
            "SEAWALL_GUARD_ROLLOUT": "enforce:50%,warn:rest",
            "SEAWALL_GUARD_ROLLOUT_SALT": "s",
            "SEAWALL_DEPLOYMENT_ENVIRONMENT": "prod",
        },
        "repeated_tool_failure_guard: enforce\ncontext_budget_chars: 50000\n",
    ),
    "invalid_in_user_config": (
        {},
        "repeated_tool_failure_guard: 3\nidentical_result_guard: loud\n"
        "context_budget_chars: abc\nactivity_summaries: sometimes\n"
        "guard_rollout: enforce:5%,warn:rest\n",
    ),
    "broken_user_config": (
        {"SEAWALL_ACTIVITY_SUMMARIES": "1"},
        "context_budget_chars: [\n",
    ),
}

READS = {
    "guard_mode": resolve_guard_mode,
    "loop_settings": resolve_loop_settings,
    "context_budget": resolve_context_budget,
    "activity_summaries": resolve_activity_summaries,
    "rollout": resolve_rollout_settings,
}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "model_dump"):
        return _plain(value.model_dump(mode="json"))
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _reads(name: str, scratch: Path) -> dict[str, Any]:
    variables, config = CASES[name]
    home = scratch / name
    environ = {"HOME": str(home / "home"), "XDG_CONFIG_HOME": str(home / "xdg"), **variables}
    if config is not None:
        path = home / "xdg" / "seawall" / "config.yaml"
        path.parent.mkdir(parents=True)
        path.write_text(config)
    results = {read: _plain(resolve(environ)) for read, resolve in READS.items()}
    return json.loads(json.dumps(results).replace(str(scratch), SCRATCH_SHOWN))


@pytest.mark.parametrize("name", CASES)
def test_session_reads_are_unchanged(name: str, tmp_path: Path) -> None:
    expected = json.loads(EXPECTED.read_text())
    assert _reads(name, tmp_path) == expected[name]


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        captured = {name: _reads(name, Path(scratch)) for name in CASES}
    EXPECTED.write_text(json.dumps(captured, indent=1) + "\n")
