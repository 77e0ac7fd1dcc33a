"""``seawall run`` as a user runs it: a real process, a real dev server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from seawall.cli.main import build_parser, readers_of
from seawall.cli.prompt import EXIT_LOOP_STOPPED
from seawall.runtime.settings import ACP, GATEWAY, PROMPT, RUN, STORAGE, UP, WORKER
from tests.scenario_helpers import SCENARIOS

SEAWALL = str(Path(sys.executable).parent / "seawall")


def seawall(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "TEMPORAL_ADDRESS"}
    return subprocess.run(
        [SEAWALL, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, **(env or {})},
    )


def test_the_summary_says_which_rule_reminded_and_which_stopped() -> None:
    done = seawall("run", str(SCENARIOS / "wrapped-sweep.yaml"))

    assert done.returncode == EXIT_LOOP_STOPPED, done.stderr
    lines = done.stdout.splitlines()
    assert "stop:       loop_detected (repeated_stagnation)" in lines
    rules = [line.split(": ", 1)[1] for line in lines if "repeated_stagnation " in line]
    assert [r.split(" (")[0] for r in rules] == [
        "repeated_stagnation warn",
        "repeated_stagnation stop",
    ]


def test_run_json_on_the_embedded_server_prints_exactly_one_result_object() -> None:
    done = seawall("run", str(SCENARIOS / "read-missing-file-loop.yaml"), "--json")

    assert done.returncode == EXIT_LOOP_STOPPED, done.stderr
    result = json.loads(done.stdout)  # one object, nothing else on stdout
    assert result["workflow_id"].startswith("prompt-read-missing-file-loop-")
    assert result["stop_reason"] == "loop_detected"
    assert result["loop_type"] == "repeated_tool_execution_failure"
    assert result["model_requests"] == 3
    assert result["tool_calls"] == {
        "executed": 9,
        "refused": 0,
        "duplicates": 0,
        "skipped": 0,
        "denied_repeats": 0,
    }
    assert [g["decision"] for g in result["guard"]] == ["tracked", "warn", "stop"]
    assert result["guard"][0] == {
        "batch": 1,
        "decision": "tracked",
        "phase_before": "idle",
        "phase_after": "tracking",
        "reason": None,
        "failure_count": 4,
        "batch_count": 1,
        "candidate_ordinal": 1,
        "mode": "enforce",
    }
    assert {m["role"] for m in result["messages"]} == {"user", "assistant", "tool", "system"}


def test_mode_flag_overrides_and_uses_temporal_address(temporal_env: WorkflowEnvironment) -> None:
    address = temporal_env.client.service_client.config.target_host
    done = seawall(
        "run",
        str(SCENARIOS / "read-missing-file-loop.yaml"),
        "--mode",
        "shadow",
        env={"TEMPORAL_ADDRESS": address},
    )

    assert done.returncode == 0, done.stderr
    assert "stop:       end_turn" in done.stdout
    assert "would_warn" in done.stdout and "would_stop" in done.stdout


async def test_run_uses_the_server_and_task_queue_of_the_user_config_file(
    temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    address = temporal_env.client.service_client.config.target_host
    queue = f"run-from-file-{uuid.uuid4().hex[:8]}"
    config = tmp_path / "xdg" / "seawall" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(f"temporal_address: {address}\ntask_queue: {queue}\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "SEAWALL_TASK_QUEUE": ""}

    done = await asyncio.to_thread(
        seawall, "run", str(SCENARIOS / "read-missing-file-loop.yaml"), "--json", env=env
    )

    assert done.returncode == EXIT_LOOP_STOPPED, done.stderr
    workflow_id = json.loads(done.stdout)["workflow_id"]
    # The run happened on the file's server (not an embedded one), on the file's queue.
    described = await temporal_env.client.get_workflow_handle(workflow_id).describe()
    assert described.task_queue == queue


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ("name: x\nmodel: {turns: [}\n", "malformed YAML at line"),
        ("name: x\nmodel: {turns: [], after_remindr: []}\n", "model.after_remindr"),
        ("name: x\nsurprise: 1\n", "surprise: Extra inputs are not permitted"),
        ("- just\n- a list\n", "must be a YAML mapping"),
        ("name: x\nmode: sometimes\n", "mode:"),
    ],
)
def test_bad_scenarios_get_one_line_and_exit_code_2(
    tmp_path: Path, content: str | None, expected: str
) -> None:
    path = tmp_path / "scenario.yaml"
    if content is not None:
        path.write_text(content)

    done = seawall("run", str(path))

    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert expected in lines[0]


def test_invalid_mode_flag_is_a_usage_error() -> None:
    done = seawall("run", str(SCENARIOS / "queued-prompt.yaml"), "--mode", "loud")

    assert done.returncode == 2
    assert "invalid mode 'loud'" in done.stderr


@pytest.mark.parametrize(
    ("argv", "reader", "also"),
    [
        (["config"], None, ()),
        (["up"], UP, (WORKER, GATEWAY)),
        (["run", "s.yaml"], (RUN, WORKER), ()),
        (["run", "s.yaml", "--external-worker"], RUN, ()),
        (["acp"], ACP, ()),
        (["acp", "--embedded"], (ACP, WORKER), ()),
        (["prompt", "hi"], PROMPT, ()),
        (["answer", "p", "r", "yes"], PROMPT, ()),
        (["storage", "gc"], STORAGE, ()),
    ],
)
def test_each_command_reads_its_own_settings(
    argv: list[str], reader: object, also: tuple[str, ...]
) -> None:
    """docs/settings.md, "Each process reads its own settings": run and acp --embedded are
    also a worker; up reads its worker's and gateway's settings, their secrets aside."""
    assert readers_of(build_parser().parse_args(argv)) == (reader, also)


def test_seawall_run_and_up_start_themselves_again_without_what_they_do_not_read() -> None:
    """The console script's first act (``keep_own_secrets``): ``run`` keeps its own and its
    worker's secrets, not the gateway's; ``up`` what its worker and gateway get, not the
    Temporal API key. The same process (pid), started again."""
    operator = {
        "SEAWALL_GATEWAY_TOKEN": "admin-token-0123456789",
        "SEAWALL_CODEC_TOKEN": "codec-token-0123456789",
        "OPENAI_API_KEY": "sk-model-key",
        "TEMPORAL_API_KEY": "temporal-cloud-key",
    }
    run = kept_environment(["run", "s.yaml"], operator)
    assert run["OPENAI_API_KEY"] == "sk-model-key"
    assert run["TEMPORAL_API_KEY"] == "temporal-cloud-key"  # a Temporal client
    assert "SEAWALL_GATEWAY_TOKEN" not in run and "SEAWALL_CODEC_TOKEN" not in run
    up = kept_environment(["up"], operator)
    assert up["SEAWALL_GATEWAY_TOKEN"] == "admin-token-0123456789"  # its gateway's
    assert up["OPENAI_API_KEY"] == "sk-model-key"  # its worker's
    assert "TEMPORAL_API_KEY" not in up


def kept_environment(argv: list[str], extra: dict[str, str]) -> dict[str, str]:
    """The environment a program keeps after ``keep_own_secrets(argv)`` (it starts itself
    again, same pid, when there is something to drop)."""
    program = (
        "import json, os\n"
        "from seawall.cli.main import keep_own_secrets\n"
        "print(os.getpid(), flush=True)\n"
        f"keep_own_secrets({argv!r})\n"
        "print(json.dumps(dict(os.environ)), flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        env={**os.environ, **extra},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    first, again, kept = done.stdout.splitlines()
    assert first == again  # ran twice, in one process
    environ: dict[str, str] = json.loads(kept)
    return environ
