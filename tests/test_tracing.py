"""``--otel-tracing``: Temporal's tracing interceptor on a real worker, and a clear error
when the OpenTelemetry SDK is missing."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client

from seawall.runtime.tracing import INSTALL_HINT, TracingUnavailable, build_tracing
from seawall.scenario.driver import run_scenario
from seawall.worker.build import build_worker
from tests.scenario_helpers import scenario_file
from tests.trust_helpers import harness_trust

ROOT = Path(__file__).resolve().parent.parent


def comparable(result: object) -> dict[str, object]:
    data = result.model_dump(mode="json")  # type: ignore[attr-defined]
    data.pop("workflow_id")
    return data


async def test_a_prompt_runs_the_same_with_the_tracing_interceptor(
    client: Client, task_queue: str
) -> None:
    spec = scenario_file("read-missing-file-loop")
    with tempfile.TemporaryDirectory() as workspace:
        plain = await run_scenario(client, spec, task_queue=task_queue, workspace=Path(workspace))

    exporter = InMemorySpanExporter()
    tracing = build_tracing(
        otlp_endpoint=None,
        resource_attributes={"deployment.environment": "ci"},
        span_exporter=exporter,
    )
    traced_client = Client(
        **{
            **client.config(),
            "interceptors": [*client.config()["interceptors"], tracing.interceptor],
        }
    )
    queue = f"traced-{uuid.uuid4().hex[:8]}"
    try:
        async with build_worker(traced_client, queue, trust=harness_trust()):
            with tempfile.TemporaryDirectory() as workspace:
                traced = await run_scenario(
                    traced_client, spec, task_queue=queue, workspace=Path(workspace)
                )
    finally:
        tracing.shutdown()

    assert comparable(traced) == comparable(plain)
    spans = exporter.get_finished_spans()
    names = {span.name for span in spans}
    assert "StartWorkflow:PromptWorkflow" in names
    assert "RunWorkflow:PromptWorkflow" in names
    assert any(name.startswith("RunActivity:") for name in names)
    # The client's start span and the workflow's and activities' spans form one trace.
    (start,) = [span for span in spans if span.name == "StartWorkflow:PromptWorkflow"]
    run_spans = [span for span in spans if span.name.startswith(("RunWorkflow", "RunActivity"))]
    assert {span.context.trace_id for span in run_spans} == {start.context.trace_id}
    resource = spans[0].resource.attributes
    assert resource["service.name"] == "seawall-worker"
    assert resource["deployment.environment"] == "ci"


def test_missing_sdk_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    with pytest.raises(TracingUnavailable, match=r"OpenTelemetry SDK .*seawall\[otel\]"):
        build_tracing(otlp_endpoint=None)


def test_worker_refuses_to_start_with_tracing_but_without_the_sdk(tmp_path: Path) -> None:
    # The worker process, with the SDK made unimportable before worker.py runs.
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text("import sys\nsys.modules['opentelemetry.sdk'] = None\n")
    result = subprocess.run(
        [sys.executable, str(ROOT / "worker.py"), "--address", "127.0.0.1:1"],
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
            "SEAWALL_OTEL_TRACING": "1",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "--otel-tracing needs the OpenTelemetry SDK" in result.stderr
    assert INSTALL_HINT in result.stderr
