"""Guard telemetry never carries user data (docs/observability.md, "Privacy", seed
"Telemetry and privacy").

Scripted prompts put unique sentinel strings in every place user data can be: tool
arguments (parsed and raw), tool results, absolute paths outside the workspace, error
messages, MCP server names, the prompt, mid-turn input, workspace file names and a tool
name the model invented. A real worker process runs them with its Prometheus endpoint on
and JSON logs at DEBUG; afterwards every guard log line (``guard_transition``,
``failed_call_repeat``, ``loop_detected``), every other log line, every metric sample, every
search attribute and the current details of the prompts are searched for the sentinels.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from seawall.runtime.logs import PAYLOAD_OMITTED
from seawall.scenario.driver import run_scenario
from seawall.scenario.format import Scenario
from tests.scenario_helpers import fail, ok, scenario
from tests.telemetry_helpers import GUARD_EVENTS, free_port, worker_process
from tests.trust_helpers import signed
from workflows.contracts.prompt import LoopType, PromptResult, StopReason
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.contracts.session import PromptSubmission, SessionInput, SessionSettings
from workflows.seed import GuardMode
from workflows.session import SessionWorkflow, session_workflow_id

KINDS = ("arg", "raw", "result", "path", "err", "mcp", "prompt", "input", "file", "tool")


@pytest.fixture
def sentinels() -> dict[str, str]:
    """One unique, unmistakable string per kind of user data."""
    tag = uuid.uuid4().hex[:8]
    return {kind: f"Snt{kind.capitalize()}{tag}" for kind in KINDS}


def found_in(text: str, sentinels: dict[str, str]) -> list[str]:
    lowered = text.lower()
    return [kind for kind, value in sentinels.items() if value.lower() in lowered]


def mcp_loop(s: dict[str, str]) -> Scenario:
    """An MCP tool whose server name is a sentinel keeps failing with a sentinel message
    naming a path outside the workspace: tracked, warn, stop."""
    tool = f"mcp__srv{s['mcp']}__fetch"
    message = f"{s['err']}: cannot open /home/alice/{s['path']}/cache.json"

    def turn(start: int, count: int) -> dict[str, Any]:
        return {
            "tool_calls": [
                {"name": tool, "arguments": {"url": f"https://{s['arg']}.example/{start + i}"}}
                for i in range(count)
            ]
        }

    return scenario(
        name="privacy-mcp-loop",
        mode=GuardMode.ENFORCE,
        prompt=f"fetch it {s['prompt']}",
        tools={tool: {"tool_type": "mcp", "outcomes": [fail(message)]}},
        model={"turns": [turn(0, 4), turn(4, 4), turn(8, 1)]},
    )


def outside_workspace_loop(s: dict[str, str]) -> Scenario:
    """read_file on absolute paths outside the workspace (shadow), next to a directory
    listing whose result names a sentinel file."""

    def reads(start: int, count: int) -> list[dict[str, Any]]:
        return [
            {"name": "read_file", "arguments": {"path": f"/tmp/{s['path']}/secret-{start + i}"}}
            for i in range(count)
        ]

    return scenario(
        name="privacy-outside-workspace",
        mode=GuardMode.SHADOW,
        workspace={"files": {f"{s['file']}.txt": f"content {s['result']}"}},
        model={
            "turns": [
                {"tool_calls": [*reads(0, 4), {"name": "list_directory", "arguments": {}}]},
                {"tool_calls": reads(4, 4)},
                {"tool_calls": reads(8, 1)},
            ]
        },
    )


def mcp_refusals(s: dict[str, str]) -> Scenario:
    """The same failing MCP call again and again: refused, then stopped."""
    tool = f"mcp__srv{s['mcp']}__query"
    call = {"name": tool, "arguments": {"sql": f"select {s['arg']}"}}
    return scenario(
        name="privacy-mcp-refusals",
        mode=GuardMode.ENFORCE,
        tools={tool: {"tool_type": "mcp", "outcomes": [fail(f"{s['err']} at /srv/{s['path']}")]}},
        model={"turns": [{"tool_calls": [call]} for _ in range(6)]},
    )


def recurring_failure(s: dict[str, str]) -> Scenario:
    """The recommended profile's rules: an MCP tool fails the same way for varied sentinel
    arguments in every batch (the failure-cycle rule reminds; the guard stops)."""
    tool = f"mcp__srv{s['mcp']}__gen"
    return scenario(
        name="privacy-recurring-failure",
        mode=GuardMode.ENFORCE,
        profile="recommended",
        tools={tool: {"tool_type": "mcp", "outcomes": [fail(f"{s['err']} in /srv/{s['path']}")]}},
        model={
            "turns": [
                {"tool_calls": [{"name": tool, "arguments": {"q": f"{s['arg']}-{i}"}}]}
                for i in range(10)
            ]
        },
    )


def denied_calls(s: dict[str, str]) -> Scenario:
    """A mutating call the user rejects, requested again and again with sentinel arguments:
    answered without asking, reminded, stopped."""
    deploy = {"name": "deploy", "arguments": {"target": s["arg"]}}
    return scenario(
        name="privacy-denied-calls",
        mode=GuardMode.ENFORCE,
        profile="recommended",
        permissions={"deploy": "reject"},
        tools={"deploy": {"mutating": True, "outcomes": [ok(f"deployed {s['result']}")]}},
        model={"turns": [{"tool_calls": [deploy]}] * 6},
    )


def mixed(s: dict[str, str]) -> Scenario:
    """Results, mid-turn input, raw invalid arguments, an invented tool name and a
    post-execution failure, all carrying sentinels."""
    deploy = {"name": "deploy", "arguments": {"target": s["arg"]}}
    return scenario(
        name="privacy-mixed",
        mode=GuardMode.WARN,
        prompt=f"deploy {s['prompt']}",
        tools={
            "deploy": {"outcomes": [fail(f"{s['err']} in /opt/{s['path']}/deploy.sh")]},
            "lookup": {"outcomes": [ok(f"result {s['result']}")]},
            "render": {
                "outcomes": [
                    {
                        "status": "error",
                        "execution_status": "success",
                        "error_type": "output_truncated",
                        "message": f"{s['err']} render {s['result']}",
                    }
                ]
            },
        },
        model={
            "turns": [
                {
                    "tool_calls": [
                        deploy,
                        deploy,
                        deploy,
                        deploy,
                        {"name": "lookup", "arguments": {}},
                    ]
                },
                {
                    "tool_calls": [
                        {**deploy, "arguments": {"target": f"{s['arg']}-{i}"}} for i in range(4)
                    ]
                },
                {
                    "tool_calls": [
                        {"name": "read_file", "arguments": '{"path": "' + s["raw"]},
                        {"name": f"tool_{s['tool']}", "arguments": {"x": s["arg"]}},
                        {"name": "render", "arguments": {"doc": s["arg"]}},
                    ]
                },
                {"text": f"done {s['result']}"},
            ]
        },
        events=[{"batch": 2, "input": f"careful {s['input']}"}],
    )


async def test_no_sentinel_reaches_guard_logs_metrics_or_search_attributes(
    temporal_env: WorkflowEnvironment, tmp_path: Path, sentinels: dict[str, str]
) -> None:
    client: Client = signed(temporal_env.client)
    address = client.service_client.config.target_host
    queue = f"privacy-{uuid.uuid4().hex[:8]}"
    port = free_port()
    results: dict[str, PromptResult] = {}
    with worker_process(address, queue, tmp_path / "worker.log", metrics_port=port) as worker:
        for build in (
            mcp_loop,
            outside_workspace_loop,
            mcp_refusals,
            mixed,
            recurring_failure,
            denied_calls,
        ):
            spec = build(sentinels)
            workspace = tmp_path / spec.name
            workspace.mkdir()
            results[spec.name] = await run_scenario(
                client, spec, task_queue=queue, workspace=workspace
            )
            worker.assert_running()
        scrape = worker.scrape_text()
        samples = worker.samples()
        logs = worker.log_lines()
        attributes = {}
        details = {}
        for name, result in results.items():
            handle = client.get_workflow_handle(result.workflow_id)
            description = await handle.describe()
            attributes[name] = {
                pair.key.name: pair.value for pair in description.typed_search_attributes
            }
            # The UI's "current details" (the guard's phase and counts).
            metadata = await handle.query(
                "__temporal_workflow_metadata", result_type=WorkflowMetadata
            )
            details[name] = metadata.current_details

    # The prompts did what they were scripted to do (so the telemetry below is non-trivial).
    loop = results["privacy-mcp-loop"]
    assert (loop.stop_reason, loop.loop_type) == (
        StopReason.LOOP_DETECTED,
        LoopType.REPEATED_TOOL_EXECUTION_FAILURE,
    )
    assert [e.decision for e in results["privacy-outside-workspace"].guard] == [
        "tracked",
        "would_warn",
        "would_stop",
    ]
    assert results["privacy-mcp-refusals"].loop_type is LoopType.REPEATED_FAILED_CALL
    assert {r.rule for r in results["privacy-recurring-failure"].rules} == {
        "repeated_failure_cycle"
    }
    assert results["privacy-denied-calls"].loop_type is LoopType.REPEATED_DENIED_CALL
    assert [e.reason for e in results["privacy-mixed"].guard][1] == "external_input"
    # The sentinels really are in what the prompts saw: the test can find them.
    conversation = json.dumps([r.model_dump(mode="json") for r in results.values()])
    assert set(found_in(conversation, sentinels)) == set(KINDS)

    # 1. Guard log lines: present, typed as expected, and free of every sentinel.
    guard_lines = [line for line in logs if line.get("event") in GUARD_EVENTS]
    events = [line["event"] for line in guard_lines]
    assert events.count("loop_detected") == 4
    rule_lines = [line for line in guard_lines if line["event"] == "loop_rule_decision"]
    assert {line["rule"] for line in rule_lines} == {
        "repeated_failure_cycle",
        "repeated_denied_call",
    }
    assert {line["tool_name"] for line in rule_lines} <= {"mcp", "deploy", "none"}
    assert events.count("failed_call_repeat") >= 4
    transitions = [line for line in guard_lines if line["event"] == "guard_transition"]
    assert {line["tool_type"] for line in transitions if line.get("tool_type")} == {
        "mcp",
        "native",
    }
    assert {line["tool_name"] for line in guard_lines if line["event"] == "failed_call_repeat"} == {
        "mcp"
    }
    assert all("prompt_id" in line and "candidate_ordinal" in line for line in transitions)
    leaks = {
        line["event"]: found_in(json.dumps(line), sentinels)
        for line in guard_lines
        if found_in(json.dumps(line), sentinels)
    }
    assert leaks == {}, f"guard telemetry carries user data: {leaks}"
    # Beyond the guard's lines: nothing the worker logged, even at DEBUG, carries user data
    # (the SDK's payload dumps are redacted by seawall.runtime.logs).
    everywhere = {
        str(line.get("event"))[:80]: found_in(json.dumps(line), sentinels)
        for line in logs
        if found_in(json.dumps(line), sentinels)
    }
    assert everywhere == {}, f"a log line carries user data: {everywhere}"
    assert any(PAYLOAD_OMITTED in str(line.get("event")) for line in logs)

    # 2. Metrics: the guard's counters exist (MCP tools as tool_type="mcp"), and nothing
    #    in the whole scrape, Seawall's counters or Temporal's, carries a sentinel.
    seawall = [sample for sample in samples if sample[0].startswith("seawall_")]
    assert {name for name, _, _ in seawall} >= {
        "seawall_guard_transitions",
        "seawall_failed_call_refusals",
        "seawall_loop_stops",
        "seawall_loop_rule_decisions",
    }
    assert any(labels.get("tool_type") == "mcp" for _, labels, _ in seawall)
    label_names = {key for _, labels, _ in seawall for key in labels}
    assert not label_names & {"prompt_id", "candidate_ordinal", "execution_error_type", "tool_name"}
    assert found_in(scrape, sentinels) == [], "a metric carries user data"

    # 3. Search attributes: the guard's are set, and none carries a sentinel.
    assert attributes["privacy-mcp-loop"]["SeawallLoopType"] == "repeated_tool_execution_failure"
    assert attributes["privacy-outside-workspace"]["SeawallLastDecision"] == "would_stop"
    for name, values in attributes.items():
        assert found_in(json.dumps(values, default=str), sentinels) == [], name

    # 4. The workflow's current details in the UI: the guard's state, no user data.
    assert "latched" in details["privacy-mcp-loop"]
    for name, text in details.items():
        assert found_in(text, sentinels) == [], (name, text)


async def test_an_owner_id_reaches_no_log_metric_or_search_attribute(
    temporal_env: WorkflowEnvironment, tmp_path: Path, sentinels: dict[str, str]
) -> None:
    """docs/rollout.md, "Rollout cohorts": the owner id is hashed into a cohort by the
    operator-settings activity and kept in history; logs, metric labels and search
    attributes carry only the cohort, the environment and the version."""
    client: Client = signed(temporal_env.client)
    address = client.service_client.config.target_host
    queue = f"privacy-owner-{uuid.uuid4().hex[:8]}"
    port = free_port()
    owner = f"owner-{sentinels['arg']}"
    rollout = {
        "SEAWALL_GUARD_ROLLOUT": "enforce:5%,warn:rest",
        "SEAWALL_GUARD_ROLLOUT_SALT": "privacy",
        "SEAWALL_DEPLOYMENT_ENVIRONMENT": "internal",
        "SEAWALL_SERVICE_VERSION": "3.1.4",
    }
    failing = {
        "tool_calls": [
            {"name": "read_file", "arguments": {"path": f"{sentinels['path']}-{n}"}}
            for n in range(4)
        ]
    }
    script = ModelScript.model_validate({"turns": [failing, failing, failing, {"text": "ok"}]})
    log_path = tmp_path / "worker.log"
    with worker_process(address, queue, log_path, metrics_port=port, env=rollout) as worker:
        session_id = f"privacy-{uuid.uuid4().hex[:8]}"
        handle = await client.start_workflow(
            SessionWorkflow.run,
            SessionInput(
                session_id=session_id,
                settings=SessionSettings(
                    workspace_root=str(tmp_path),
                    scenario=ScenarioHooks(model_script=script),
                    approval_mode=ApprovalMode.YOLO,
                ),
                owner_id=owner,
            ),
            id=session_workflow_id(session_id),
            task_queue=queue,
        )
        submitted = await handle.execute_update(
            SessionWorkflow.submit_prompt, PromptSubmission(text=f"read {sentinels['prompt']}")
        )
        await handle.signal(SessionWorkflow.close)
        status = await handle.result()
        worker.assert_running()
        scrape = worker.scrape_text()
        samples = worker.samples()
        logs = worker.log_lines()
        prompt = await client.get_workflow_handle(submitted.prompt_id).describe()
        session = await handle.describe()

    assert status.rollout_cohort in ("enforce", "warn")
    guard = [s for s in samples if s[0] == "seawall_guard_transitions"]
    assert guard and {labels["cohort"] for _, labels, _ in guard} == {status.rollout_cohort}
    assert all("owner" not in key for _, labels, _ in samples for key in labels)
    assert owner not in scrape
    assert not [line for line in logs if owner in json.dumps(line)]
    values = {pair.key.name: pair.value for pair in prompt.typed_search_attributes}
    assert values["SeawallRolloutCohort"] == status.rollout_cohort
    assert values["SeawallEnvironment"] == "internal"
    for described in (prompt, session):
        assert owner not in json.dumps(
            {p.key.name: p.value for p in described.typed_search_attributes}, default=str
        )
