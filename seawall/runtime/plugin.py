"""The Seawall Temporal plugin: what every client, worker and replayer must agree on.

:class:`SeawallPlugin` is one ``temporalio.plugin.SimplePlugin`` that carries

- the data converter (``seawall.runtime.converter``): every payload is a pydantic model,
  encoded as JSON without its defaults, and payloads past the operator's threshold live in
  External Storage (``seawall.runtime.storage``);
- the workflows (:data:`WORKFLOWS`) and the sandbox they run in, with the passthrough
  modules of :data:`SANDBOX_PASSTHROUGH` (each with its reason);
- the workflow failure exception types (:data:`WORKFLOW_FAILURE_EXCEPTION_TYPES`);
- the activities, handed in by the composition root (``seawall/worker/``).

The worker, the gateway, the CLI, the replay tests and the benchmarks all connect through
:func:`connect` or build their worker or replayer with the plugin, so they cannot disagree
on how a payload is encoded. Its client side is what the gateway and the CLI use: this
module imports ``temporalio`` and workflow code only, never an activity module, so a client
loads neither activity code nor the MCP or OpenAI SDKs (docs/architecture.md, "Layers").

Why each part: the passthrough modules (``pydantic``, ``pydantic_core``, ``annotated_types``,
``workflows``) are deterministic, and sharing them instead of re-importing them for every
workflow run saves time on every workflow task and keeps the model classes the converter
builds identical to the ones workflow code checks against. The sandbox is
``SeawallSandboxRunner`` (``seawall.runtime.sandbox_runner``), given to any worker or replayer
that would run the SDK's own ``SandboxedWorkflowRunner``; a subclass, or a sandbox built with
another instance class, is kept as given. The workflow failure exception types are empty on
purpose: anything else a workflow raises is a bug, and failing the workflow *task* keeps the
prompt where it is so a fixed deployment resumes it, where failing the workflow would end
the user's prompt for good. :func:`client_with_plugin` puts a worker's plugin (with its
activities) in place of the one a client carries, so a worker built from it registers them
once and keeps the client's payload storage.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from temporalio.client import Client, Interceptor
from temporalio.converter import DataConverter, ExternalStorage
from temporalio.plugin import SimplePlugin
from temporalio.runtime import Runtime
from temporalio.worker import WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from seawall.runtime.converter import seawall_data_converter
from seawall.runtime.sandbox_runner import seawall_sandbox
from seawall.runtime.temporal_connect import TemporalClientConfig, access_refusal, plain
from workflows.prompt.workflow import PromptWorkflow
from workflows.session import OwnerAdmissionWorkflow, SessionWorkflow

PLUGIN_NAME = "seawall"

WORKFLOWS: tuple[type, ...] = (PromptWorkflow, SessionWorkflow, OwnerAdmissionWorkflow)

# Modules the workflow sandbox shares with the worker instead of re-importing them for every
# workflow run. Only deterministic, side-effect-free code belongs here.
SANDBOX_PASSTHROUGH: Mapping[str, str] = {
    "pydantic": "every workflow input, output and activity payload is a pydantic model; "
    "re-importing pydantic per run is slow and gives the converter's classes a second "
    "identity",
    "pydantic_core": "pydantic's compiled validation core, loaded with pydantic",
    "annotated_types": "the constraint types pydantic fields use (Field(ge=...))",
    "workflows": "Seawall's own deterministic workflow code and contracts: imported once, "
    'shared by every run (docs/architecture.md, "Layers")',
    "seawall.runtime.sandbox_runner": "the sandbox builds each workflow instance with its "
    "runner class, which hands the instance to the worker side; a re-import per run would "
    "cost time and make it a different class",
}

# Exceptions that fail the workflow instead of its workflow task. Deliberately none beyond
# Temporal's own failure types: anything else a workflow raises is a bug, and failing the task
# keeps the prompt where it is, so a fixed deployment resumes it (docs/architecture.md,
# "Versioning"), where failing the workflow would end the user's prompt for good.
WORKFLOW_FAILURE_EXCEPTION_TYPES: tuple[type[BaseException], ...] = ()

RunContext = Callable[[], AbstractAsyncContextManager[None]]


def with_sandbox_passthrough(runner: WorkflowRunner | None) -> WorkflowRunner:
    """``runner`` with :data:`SANDBOX_PASSTHROUGH` added, when it is a sandbox."""
    if runner is None:
        runner = SandboxedWorkflowRunner()
    if not isinstance(runner, SandboxedWorkflowRunner):
        return runner
    restrictions = runner.restrictions.with_passthrough_modules(*SANDBOX_PASSTHROUGH)
    return seawall_sandbox(dataclasses.replace(runner, restrictions=restrictions))


class SeawallPlugin(SimplePlugin):
    """Seawall's converter, workflows, sandbox and failure types, plus the worker's
    activities.

    ``activities`` are the bound ``@activity.defn`` methods the worker registers (none for
    a client or a replayer). ``run_context`` wraps a worker's run: whatever it opens
    (MCP servers, say) it closes after the worker shut down. ``workflows`` replaces
    Seawall's own only where something else must run on the same converter and sandbox:
    a deliberately changed workflow in the replay tests.
    ``storage`` is the External Storage of the converter (``seawall.runtime.storage.
    payload_storage``); ``None`` keeps whatever the client already carries, so a worker
    built from a client (:func:`client_with_plugin`) stores and reads where it does.
    """

    def __init__(
        self,
        activities: Sequence[Callable[..., Any]] = (),
        *,
        run_context: RunContext | None = None,
        workflows: Sequence[type] = WORKFLOWS,
        storage: ExternalStorage | None = None,
    ) -> None:
        self.storage = storage

        def converter(existing: DataConverter | None) -> DataConverter:
            kept = existing.external_storage if existing is not None else None
            storage = self.storage or kept
            if storage is None:
                return seawall_data_converter
            return dataclasses.replace(seawall_data_converter, external_storage=storage)

        super().__init__(
            PLUGIN_NAME,
            data_converter=converter,
            workflows=list(workflows),
            activities=list(activities),
            workflow_runner=with_sandbox_passthrough,
            workflow_failure_exception_types=list(WORKFLOW_FAILURE_EXCEPTION_TYPES),
            run_context=run_context,
        )


def client_with_plugin(client: Client, plugin: SeawallPlugin) -> Client:
    """``client``'s connection and settings with ``plugin`` in place of any Seawall plugin it
    carries; a worker built from the result uses ``plugin`` (and its activities) once."""
    config = client.config()
    others = [p for p in config["plugins"] if not isinstance(p, SeawallPlugin)]
    if plugin.storage is None:
        # The client's payload storage stays: a worker reads and stores where it does.
        plugin.storage = client.data_converter.external_storage
    config["plugins"] = [*others, plugin]
    return Client(**config)


async def connect(
    address: str | TemporalClientConfig,
    namespace: str | None = None,
    *,
    plugin: SeawallPlugin | None = None,
    runtime: Runtime | None = None,
    interceptors: Sequence[Interceptor] = (),
    storage: ExternalStorage | None = None,
) -> Client:
    """A client with the Seawall plugin (``plugin``, or one without activities: the client
    side the gateway and the CLI use) and ``storage``, the process's payload storage
    (``seawall.runtime.storage.payload_storage``).

    ``address`` is the connection the settings describe (``seawall.runtime.temporal_connect``:
    TLS, mTLS, API key), or a bare ``host:port`` without any (a test's dev server);
    ``namespace`` replaces its namespace (default: ``default`` for a bare address)."""
    config = address if isinstance(address, TemporalClientConfig) else plain(address)
    if namespace is not None:
        config = config.with_target(namespace=namespace)
    try:
        return await Client.connect(
            **config.connect_kwargs(),
            plugins=[plugin or SeawallPlugin(storage=storage)],
            runtime=runtime,
            interceptors=interceptors,
        )
    except RuntimeError as err:
        refused = access_refusal(err, config)
        if refused is None:
            raise
        raise refused from err
