"""The Seawall Temporal plugin: one converter, one sandbox, one set of workflows for every
client, worker and replayer (docs/architecture.md, "Layers")."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client
from temporalio.converter import ExternalStorage
from temporalio.worker import UnsandboxedWorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from seawall.runtime.converter import seawall_data_converter
from seawall.runtime.plugin import (
    SANDBOX_PASSTHROUGH,
    WORKFLOWS,
    SeawallPlugin,
    client_with_plugin,
    with_sandbox_passthrough,
)
from seawall.runtime.storage import FilesystemStorageDriver
from workflows.prompt.workflow import PromptWorkflow
from workflows.session import OwnerAdmissionWorkflow, SessionWorkflow


def test_every_passthrough_module_says_why() -> None:
    assert "workflows" in SANDBOX_PASSTHROUGH
    assert all(reason.strip() for reason in SANDBOX_PASSTHROUGH.values())


def test_the_sandbox_gains_the_passthrough_modules_and_keeps_its_own() -> None:
    runner = SandboxedWorkflowRunner()
    bench = runner.restrictions.with_passthrough_modules("bench")
    extended = with_sandbox_passthrough(SandboxedWorkflowRunner(restrictions=bench))

    assert isinstance(extended, SandboxedWorkflowRunner)
    assert set(SANDBOX_PASSTHROUGH) | {"bench"} <= extended.restrictions.passthrough_modules
    unsandboxed = UnsandboxedWorkflowRunner()
    assert with_sandbox_passthrough(unsandboxed) is unsandboxed


def test_the_dev_server_client_carries_the_client_side(client: Client) -> None:
    assert set(WORKFLOWS) == {PromptWorkflow, SessionWorkflow, OwnerAdmissionWorkflow}
    assert [type(p) for p in client.config()["plugins"]] == [SeawallPlugin]
    assert client.data_converter is seawall_data_converter


def test_a_worker_client_carries_one_seawall_plugin_the_one_with_activities(
    client: Client,
) -> None:
    plugin = SeawallPlugin()
    worker_client = client_with_plugin(client, plugin)

    assert worker_client.config()["plugins"] == [plugin]
    assert worker_client.service_client is client.service_client
    assert worker_client.data_converter is seawall_data_converter


def test_a_worker_client_keeps_the_payload_storage_of_the_client_it_is_built_from(
    client: Client, tmp_path: Path
) -> None:
    storage = ExternalStorage(drivers=[FilesystemStorageDriver(tmp_path)])
    stored = client_with_plugin(client, SeawallPlugin(storage=storage))
    worker_client = client_with_plugin(stored, SeawallPlugin())

    for each in (stored, worker_client):
        assert each.data_converter.external_storage is storage
        assert each.data_converter.payload_converter_class is (
            seawall_data_converter.payload_converter_class
        )
