"""A telemetry failure never changes the loop (docs/observability.md, "Privacy").

The same scripted prompts give the same ``PromptResult`` (everything but the workflow id)
when every log line Seawall emits raises in its handler, and when the worker's OTLP
collector (metrics and spans) is down, as on a clean run.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from seawall.runtime.logs import configure_logging
from seawall.runtime.settings import GUARD_MODE_ENV, LOOP_PROFILE_ENV
from seawall.scenario.driver import run_scenario
from seawall.scenario.format import Scenario
from tests.scenario_helpers import scenario_file
from tests.telemetry_helpers import closed_port, worker_process
from tests.trust_helpers import signed
from workflows.contracts.prompt import PromptResult

SEAWALL_EVENTS = (
    "guard_transition",
    "failed_call_repeat",
    "loop_detected",
    "invalid_guard_mode",
    "telemetry emission failed",
)


def scenarios() -> list[Scenario]:
    """Guard transitions, a warning and a stop, refusals, a shadow run, and a prompt that
    takes the (invalid) operator mode from the worker's environment."""
    loop = scenario_file("read-missing-file-loop")
    return [
        loop,
        loop.model_copy(update={"mode": "shadow"}),
        scenario_file("repeated-failed-call"),
        scenario_file("mid-turn-input-reset"),
        loop.model_copy(update={"mode": None, "name": "operator-mode"}),
    ]


def comparable(result: PromptResult) -> dict[str, Any]:
    data = result.model_dump(mode="json")
    data.pop("workflow_id")
    return data


async def run_all(client: Client, task_queue: str) -> list[dict[str, Any]]:
    results = []
    for spec in scenarios():
        with tempfile.TemporaryDirectory() as workspace:
            result = await asyncio.wait_for(
                run_scenario(client, spec, task_queue=task_queue, workspace=Path(workspace)), 120
            )
        results.append(comparable(result))
    return results


@pytest.fixture
def invalid_operator_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process worker's operator mode is invalid: shadow plus one diagnostic line
    per session (under the seed profile: any other refuses an invalid mode at startup)."""
    monkeypatch.setenv(GUARD_MODE_ENV, "bogus")
    monkeypatch.setenv(LOOP_PROFILE_ENV, "seed")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


class RaisingHandler(logging.Handler):
    """A log sink that fails on every line Seawall emits (workflow.logger, its activities'
    structlog lines) and on every INFO-or-above line of anyone."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.raised: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        seawall = record.name == "temporalio.workflow" or record.name.startswith(
            ("activities", "seawall", "workflows")
        )
        if seawall or record.levelno >= logging.INFO:
            message = record.getMessage()
            self.raised[next((e for e in SEAWALL_EVENTS if e in message), "other")] += 1
            raise RuntimeError("the log sink is down")


@pytest.fixture
def raising_log_sink() -> Iterator[RaisingHandler]:
    """Seawall's production logging (structlog through the stdlib root logger, at DEBUG)
    plus a handler that raises; everything is restored afterwards."""
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    saved_structlog = structlog.get_config()
    configure_logging("json", "DEBUG")
    handler = RaisingHandler()
    try:
        yield handler
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        structlog.configure(**saved_structlog)


async def test_a_raising_log_handler_changes_no_prompt(
    client: Client, task_queue: str, invalid_operator_mode: None, raising_log_sink: RaisingHandler
) -> None:
    clean = await run_all(client, task_queue)
    root = logging.getLogger()
    root.addHandler(raising_log_sink)
    try:
        broken = await run_all(client, task_queue)
    finally:
        root.removeHandler(raising_log_sink)

    assert broken == clean
    # Every kind of line Seawall emits did raise while the prompts ran.
    raised = raising_log_sink.raised
    assert all(raised[event] > 0 for event in SEAWALL_EVENTS), raised
    assert [r["stop_reason"] for r in clean] == [
        "loop_detected",
        "end_turn",
        "loop_detected",
        "end_turn",
        "end_turn",
    ]
    assert clean[4]["guard_mode"] == "shadow"


async def test_a_dead_otlp_collector_changes_no_prompt(
    temporal_env: WorkflowEnvironment,
    task_queue: str,
    invalid_operator_mode: None,
    tmp_path: Path,
) -> None:
    client = signed(temporal_env.client)
    clean = await run_all(client, task_queue)
    queue = f"otlp-down-{uuid.uuid4().hex[:8]}"
    collector = f"http://127.0.0.1:{closed_port()}"
    with worker_process(
        client.service_client.config.target_host,
        queue,
        tmp_path / "worker.log",
        # Metrics and spans both go to the dead collector.
        args=("--otel-tracing",),
        env={
            "SEAWALL_OTLP_ENDPOINT": collector,
            GUARD_MODE_ENV: "bogus",
            LOOP_PROFILE_ENV: "seed",
        },
    ) as worker:
        dead = await run_all(client, queue)
        worker.assert_running()
    assert dead == clean
