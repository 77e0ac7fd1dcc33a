"""Seawall's workflow sandbox answers the SDK's payload-context questions outside the sandbox
(``seawall.runtime.sandbox_runner``), with exactly the answers the sandbox would give."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import CommandType
from temporalio.client import Client
from temporalio.converter import (
    ActivitySerializationContext,
    WorkflowSerializationContext,
)
from temporalio.worker import (
    UnsandboxedWorkflowRunner,
    Worker,
    WorkflowInstance,
    WorkflowInstanceDetails,
)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from seawall.runtime.plugin import SeawallPlugin, client_with_plugin, with_sandbox_passthrough
from seawall.runtime.sandbox_runner import SeawallSandboxRunner, _Instance
from seawall.worker.build import build_activities
from tests.scenario_helpers import calls, ok
from tests.trust_helpers import harness_trust
from tests.workflows.prompt.test_durable_steps import hooks, run_session_prompt
from workflows.contracts.activity import CALL_MODEL, LIST_TOOLS_WITHOUT_MCP, RUN_TOOL
from workflows.contracts.session import SessionSettings
from workflows.session import session_workflow_id

Answer = tuple[str, Any, Any, Any]  # (question, command info, direct, through the sandbox)


class _ComparingInstance(_Instance):
    """Asks each question both ways and keeps the pair."""

    def __init__(self, instance: _Instance, answers: list[Answer]) -> None:
        super().__init__(instance.sandboxed, instance.inner)
        self.answers = answers

    def get_serialization_context(self, command_info: Any) -> Any:
        direct = super().get_serialization_context(command_info)
        boxed = self.sandboxed.get_serialization_context(command_info)
        self.answers.append(("serialization", command_info, direct, boxed))
        return direct

    def get_external_store_context(self, command_info: Any) -> Any:
        direct = super().get_external_store_context(command_info)
        boxed = self.sandboxed.get_external_store_context(command_info)
        self.answers.append(("store", command_info, direct, boxed))
        return direct


def comparing_runner(answers: list[Answer]) -> SeawallSandboxRunner:
    """Seawall's runner whose instances keep each answer pair in ``answers`` (a closure:
    the plugin copies the runner with ``dataclasses.replace``)."""

    class ComparingRunner(SeawallSandboxRunner):
        def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
            instance = super().create_instance(det)
            assert isinstance(instance, _Instance)
            assert instance.inner is not None, "the instance was not handed over"
            return _ComparingInstance(instance, answers)

    return ComparingRunner()


def test_the_plugin_gives_the_sdks_own_sandbox_seawalls_runner() -> None:
    converted = with_sandbox_passthrough(SandboxedWorkflowRunner())
    assert type(converted) is SeawallSandboxRunner
    assert "workflows" in converted.restrictions.passthrough_modules
    assert with_sandbox_passthrough(None).__class__ is SeawallSandboxRunner

    class Subclass(SandboxedWorkflowRunner):
        pass

    # A subclass or another instance class may do more than the SDK's: kept as given.
    assert type(with_sandbox_passthrough(Subclass())) is Subclass

    class OtherRunner(UnsandboxedWorkflowRunner):
        pass

    other = with_sandbox_passthrough(SandboxedWorkflowRunner(runner_class=OtherRunner))
    assert type(other) is SandboxedWorkflowRunner


@pytest.mark.asyncio
async def test_every_context_answered_outside_the_sandbox_is_the_sandboxs_answer(
    client: Client, tmp_path: Path
) -> None:
    """A session runs a prompt as a child workflow: payloads of the session, its child, the
    prompt's activities and local activities, and the prompt's result to its parent. Each
    question the worker asks is answered directly and through the sandbox, alike."""
    queue = f"contexts-{uuid.uuid4().hex[:8]}"
    answers: list[Answer] = []
    runner = comparing_runner(answers)
    activities = build_activities(
        {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}, trust=harness_trust()
    )
    plugin = SeawallPlugin(activities.definitions(), run_context=activities.serving)
    scenario = hooks({"probe": {"outcomes": [ok()]}}, [calls("probe", 2), {"text": "done"}])
    async with Worker(
        client_with_plugin(client, plugin),
        task_queue=queue,
        workflow_runner=runner,
        max_cached_workflows=0,  # every task replays: questions about replayed commands too
    ):
        prompt_id = await run_session_prompt(
            client, queue, SessionSettings(workspace_root=str(tmp_path), scenario=scenario), "go"
        )

    assert answers, "no payload context was asked for"
    assert [a for a in answers if a[2] != a[3]] == []
    contexts = [a[2] for a in answers if a[0] == "serialization"]
    activities_asked = {
        (c.activity_type, c.is_local)
        for c in contexts
        if isinstance(c, ActivitySerializationContext)
    }
    assert {(CALL_MODEL, False), (RUN_TOOL, False), (LIST_TOOLS_WITHOUT_MCP, True)} <= (
        activities_asked
    )
    workflows_asked = {
        c.workflow_id for c in contexts if isinstance(c, WorkflowSerializationContext)
    }
    assert prompt_id in workflows_asked
    assert any(w.startswith(session_workflow_id("")) for w in workflows_asked)
    # The prompt's result goes to its parent's storage space: the one answer that reads
    # the instance's parent.
    results = [
        a[2].target.id
        for a in answers
        if a[0] == "store"
        and a[1] is not None
        and a[1].command_type == CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION
        and a[2].target is not None
    ]
    assert any(r.startswith(session_workflow_id("")) for r in results)
