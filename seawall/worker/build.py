"""Building a Seawall worker: its activities with their dependencies, its trust, and the
Temporal ``Worker`` that serves them.

The composition root (docs/architecture.md, "Layers"): the one place that hands every
activity class its concrete parts (:func:`build_activities`) and gives them, with the
workflows, to the Seawall Temporal plugin (:mod:`seawall.runtime.plugin`, which also carries
the data converter and the sandbox settings every client and replayer share) in a
``Worker`` (:func:`build_worker`). ``python worker.py`` (:mod:`seawall.worker.main`),
``seawall run``, ``seawall acp --embedded``, the benchmarks, the scripts and the tests all
build their workers here.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import tempfile
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Worker

from activities import WorkerActivities
from activities.conversation_refs import ConversationResolver
from activities.demo_model import DemoProvider
from activities.mcp import current_settings
from activities.mcp.pool import McpPool
from activities.model import (
    LazyOpenAIProvider,
    ModelActivities,
    ModelProvider,
    OperatorProvider,
)
from activities.model_selection import endpoint_configured
from activities.operator_settings import OperatorSettingsActivities
from activities.prompt_preamble import PromptPreambles
from activities.recorded_results import RecordedResults
from activities.sandbox import Sandbox, load_policy, probe
from activities.tool_runner import ToolActivities
from activities.tools import BUILTIN_TOOLS
from activities.trust import StartCheckActivities

# Re-exported for the CLI's in-process workers (they import this module, never activities).
from activities.trust import WorkerTrust as WorkerTrust
from seawall.runtime.grants import GrantSigner, new_signing_key, signing_client
from seawall.runtime.owners import ANY_OWNER
from seawall.runtime.plugin import SeawallPlugin, client_with_plugin
from seawall.runtime.settings import (
    default_of,
    resolve_activity_summaries,
    resolve_context_budget,
    resolve_guard_mode,
    resolve_loop_settings,
    resolve_model_retry_window,
    resolve_rollout_settings,
)


def model_providers(environ: Mapping[str, str]) -> dict[str, ModelProvider]:
    """Every ``ModelSpec.provider``: ``operator`` resolves to the endpoint the operator
    configured in ``environ`` (or its user config file), else to the offline demo model."""
    endpoint = LazyOpenAIProvider(environ)
    demo = DemoProvider()
    return {
        "operator": OperatorProvider(
            endpoint, demo, functools.partial(endpoint_configured, environ)
        ),
        "openai": endpoint,
        "demo": demo,
    }


def build_activities(
    environ: Mapping[str, str] = os.environ,
    sandbox: Sandbox | None = None,
    *,
    trust: WorkerTrust | None = None,
    preambles: PromptPreambles | None = None,
) -> WorkerActivities:
    """The worker's activities, reading operator settings from ``environ`` (and the user
    config file it locates) whenever they need them, so a changed setting applies to the
    next prompt. ``sandbox`` is the probed sandbox of shell commands and stdio MCP servers
    (default: probed now from ``environ``'s settings); it is fixed for the worker's life.
    ``trust`` is what the worker accepts of a workflow's input (scripted models, workspace
    roots, session grants; docs/security-trust.md): by default read once from the same
    settings, here. ``preambles`` is the cache of what prompts named instead of carrying
    (activities/prompt_preamble.py; default: a new one for this worker)."""
    if sandbox is None:
        # Its processes' allowlisted variables come from the same environment.
        sandbox = dataclasses.replace(probe(load_policy(environ)), environ=environ)
    if trust is None:
        trust = WorkerTrust.from_environment(environ)
    # What prompts named instead of carrying, read once per prompt for both (their tools,
    # script and fixtures: activities/prompt_preamble.py).
    preambles = preambles or PromptPreambles()
    # The tool results the next model request keeps by reference (activities/
    # recorded_results.py): the tool activity fills it, the model activity reads it.
    results = RecordedResults()
    return WorkerActivities(
        model=ModelActivities(
            model_providers(environ),
            trust=trust,
            conversations=ConversationResolver(preambles=preambles, results=results),
        ),
        tools=ToolActivities(
            BUILTIN_TOOLS,
            McpPool(),
            functools.partial(current_settings, environ),
            sandbox,
            trust=trust,
            preambles=preambles,
            results=results,
        ),
        operator_settings=OperatorSettingsActivities(
            functools.partial(resolve_guard_mode, environ),
            functools.partial(resolve_loop_settings, environ),
            functools.partial(resolve_rollout_settings, environ),
            functools.partial(resolve_context_budget, environ),
            functools.partial(resolve_activity_summaries, environ),
            functools.partial(resolve_model_retry_window, environ),
            trust=trust,
        ),
        start_check=StartCheckActivities(trust),
    )


def trusted_local_run(client: Client, roots: Sequence[Path] = ()) -> tuple[Client, WorkerTrust]:
    """For the operator's own scenario runs in one process (scripts, benchmarks): ``client``
    signing what it starts with a key made for the run, and the trust of the in-process
    worker that verifies it (:func:`local_run_trust`) — docs/security-trust.md."""
    key = new_signing_key()
    return signing_client(client, GrantSigner(key)), local_run_trust(key, roots)


def local_run_trust(key: str, roots: Sequence[Path] = ()) -> WorkerTrust:
    """The trust of a worker serving the operator's own runs: it verifies grants signed with
    ``key``, allows scripted models, workspaces under ``roots`` (default: the temporary
    directory) and channel prompts of any owner (the corpus's channel and cron scenarios run
    unguarded, as the operator's own runs)."""
    return WorkerTrust(
        allow_scripted_models=True,
        workspace_roots=tuple(roots) or (Path(tempfile.gettempdir()),),
        keys=(key,),
        channel_owners=(ANY_OWNER,),
    )


def build_worker(
    client: Client,
    task_queue: str,
    activities: WorkerActivities | None = None,
    *,
    max_cached_workflows: int = 1000,
    eager_calls_per_workflow_task: int = default_of("eager_calls_per_workflow_task"),
    trust: WorkerTrust | None = None,
) -> Worker:
    """A worker of ``task_queue`` serving Seawall's workflows and ``activities`` (by default
    :func:`build_activities`, with ``trust`` when given); its MCP servers stop when it shuts
    down.

    ``eager_calls_per_workflow_task``: how many of the model and tool calls one workflow
    task schedules this worker starts itself, in the reply to that task, instead of sending
    them through the task queue (0: none). The SDK's default of 3 sends the 4th call of a
    batch of 4 through the task queue: it starts one hand-off later, finishes later and wakes
    the workflow once more (three more history events and one more hand-off each batch;
    docs/capacity.md, "Eager calls")."""
    activities = build_activities(trust=trust) if activities is None else activities
    plugin = SeawallPlugin(activities.definitions(), run_context=activities.serving)
    return Worker(
        client_with_plugin(client, plugin),
        task_queue=task_queue,
        max_cached_workflows=max_cached_workflows,
        # Heartbeats carry cancellation to running tools: send them at least every second
        # so a cancelled prompt stops its shell promptly.
        max_heartbeat_throttle_interval=timedelta(seconds=1),
        # Lets a running tool finish or heartbeat its cancellation on SIGTERM.
        graceful_shutdown_timeout=timedelta(seconds=10),
        # The SDK wants a positive number even when eager execution is off.
        max_eager_activity_reservations_per_workflow_task=max(1, eager_calls_per_workflow_task),
        disable_eager_activity_execution=eager_calls_per_workflow_task == 0,
    )
