"""The rollout gates' quantities as the worker exports them (workflows/prompt/telemetry.py,
``prompt_finished``): one finished-prompt count by stop reason, and latency, rounds and
(known) tokens histograms, each labelled by cohort and mode, counted once however often a
prompt replays; the Grafana dashboard charts them (tests/test_grafana_dashboard.py)."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from bench.server_metrics import free_port
from seawall.scenario.driver import run_scenario
from tests.scenario_helpers import scenario_file
from tests.test_observability import metrics_worker, scrape, total
from tests.trust_helpers import signed
from workflows.contracts.prompt import EventsQuery, PromptResult
from workflows.prompt import telemetry
from workflows.prompt.workflow import PromptWorkflow


async def test_each_finished_prompt_exports_its_outcome_latency_rounds_and_tokens(
    temporal_env: WorkflowEnvironment,
) -> None:
    client = signed(temporal_env.client)
    address = client.service_client.config.target_host
    queue = f"prompt-metrics-{uuid.uuid4().hex[:8]}"
    port = free_port()
    runs: list[PromptResult] = []
    with metrics_worker(address, queue, port):
        for scenario in ("read-missing-file-loop", "repeated-failed-call"):
            with tempfile.TemporaryDirectory() as workspace:
                runs.append(
                    await run_scenario(
                        client, scenario_file(scenario), task_queue=queue, workspace=Path(workspace)
                    )
                )
        first = scrape(port)
        for result in runs:  # replays every closed prompt on this cache-less worker
            await client.get_workflow_handle(result.workflow_id).query(
                PromptWorkflow.events, EventsQuery()
            )
        second = scrape(port)

    finished = telemetry.PROMPTS_FINISHED
    assert total(first, finished) == len(runs)
    for reason in {r.stop_reason.value for r in runs}:
        expected = sum(1 for r in runs if r.stop_reason.value == reason)
        assert total(first, finished, stop_reason=reason, mode="enforce") == expected
    assert total(first, finished, cohort="unassigned", deployment_environment="ci") == len(runs)
    latency = telemetry.PROMPT_LATENCY
    assert total(first, f"{latency}_count", mode="enforce") == len(runs)
    assert total(first, f"{latency}_sum") > 0
    # The largest bucket holds every prompt; the buckets are the ones the worker configured.
    assert total(first, f"{latency}_bucket", le="3600") == len(runs)
    rounds = telemetry.PROMPT_ROUNDS
    assert total(first, f"{rounds}_sum") == sum(r.model_requests for r in runs)
    assert total(first, f"{rounds}_count") == len(runs)
    tokens = telemetry.PROMPT_TOKENS
    reported = [r for r in runs if r.input_tokens + r.output_tokens > 0]
    assert total(first, f"{tokens}_count") == len(reported)
    assert total(first, f"{tokens}_sum") == sum(r.input_tokens + r.output_tokens for r in reported)
    # Every finished-prompt series the dashboard reads is one the worker exports.
    from tests.test_grafana_dashboard import METRIC, dashboard, expressions

    charted = {
        name
        for panel in dashboard()["panels"]
        for expr in expressions(panel)
        for name in METRIC.findall(expr)
        if name.startswith("seawall_prompt")
    }
    assert charted and charted <= {metric for metric, _ in first}
    seawall_only = {k: v for k, v in second.items() if k[0].startswith("seawall_prompt")}
    assert seawall_only == {k: v for k, v in first.items() if k[0].startswith("seawall_prompt")}
