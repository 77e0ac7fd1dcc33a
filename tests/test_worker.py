"""The worker: ``python worker.py`` as a real process, and its composition root.

A SIGKILL mid-batch loses nothing: a new worker finishes the prompt, no tool call that had
completed runs again, and the shell call lost with the worker is not run again (at most
once, unless the operator sets ``rerun_lost_calls``). The activities
``seawall.worker.build`` builds stop their MCP servers with the worker, and the default
``operator`` model is the offline demo model when no endpoint is configured.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from seawall.worker.build import build_activities, build_worker
from tests.activities.mcp_helpers import (
    FIXTURE_SERVER,
    SERVER,
    qualified,
    servers_env,
    stdio_server,
)
from tests.activities.sandbox_helpers import descendants_running
from tests.scenario_helpers import tool_messages
from tests.trust_helpers import harness_environment, harness_trust, signed
from workflows.contracts.activity import ModelSpec
from workflows.contracts.prompt import (
    EventKind,
    EventsQuery,
    PromptInput,
    PromptResult,
    StopReason,
)
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode

ROOT = Path(__file__).resolve().parent.parent


def shell(command: str) -> dict[str, object]:
    return {"name": "run_shell_command", "arguments": {"command": command}}


def crash_script() -> ModelScript:
    """Batch 1: two quick failing calls and one that blocks until ``go`` exists.
    Batches 2 and 3: more of the same failure, enough for a warning and a stop."""
    blocker = "echo started >> ran-blocker.log; while [ ! -f go ]; do sleep 0.05; done; exit 1"
    quick = [shell(f"echo x >> ran-{n}.log; exit 1") for n in range(8)]
    return ModelScript.model_validate(
        {
            "turns": [
                {"tool_calls": [quick[0], quick[1], shell(blocker)]},
                {"tool_calls": quick[2:7]},
                {"tool_calls": [quick[7]]},
            ]
        }
    )


def prompt_input(workspace: Path) -> PromptInput:
    return PromptInput(
        prompt="build it",
        workspace_root=str(workspace),
        scenario=ScenarioHooks(model_script=crash_script()),
        guard_mode=GuardMode.ENFORCE,
        approval_mode=ApprovalMode.YOLO,
    )


@contextmanager
def worker_process(
    address: str, task_queue: str, workspaces: Path, **settings: str
) -> Iterator[subprocess.Popen[bytes]]:
    """``python worker.py`` trusting as the harness's workers do (tests/trust_helpers.py),
    with ``workspaces`` and the ``settings`` given (environment variables)."""
    trusted = harness_environment(workspaces)
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "worker.py"), "--address", address, "--task-queue", task_queue],
        cwd=ROOT,
        env={**os.environ, "SEAWALL_LOG_FORMAT": "json", **trusted, **settings},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


async def settled_calls(client: Client, workflow_id: str) -> set[str]:
    events = await client.get_workflow_handle(workflow_id).query(
        PromptWorkflow.events, EventsQuery()
    )
    return {e.call_id or "" for e in events if e.kind is EventKind.TOOL_CALL_SETTLED}


async def wait_until(condition: Callable[[], Awaitable[bool]], timeout: float = 30.0) -> None:
    """Poll a condition on another process's progress, bounded by ``timeout``."""

    async def poll() -> None:
        while not await condition():
            await asyncio.sleep(0.1)

    await asyncio.wait_for(poll(), timeout)


async def crash_mid_batch(
    client: Client, tmp_path: Path, name: str, **settings: str
) -> tuple[PromptResult, Path]:
    """Run the crash script with the first worker SIGKILLed while the blocker runs, a second
    worker finishing the prompt; its result and workspace."""
    address = client.service_client.config.target_host
    crash_ws = tmp_path / name
    crash_ws.mkdir()
    queue = f"crash-{uuid.uuid4().hex[:8]}"
    workflow_id = f"prompt-crash-{uuid.uuid4().hex[:8]}"
    with worker_process(address, queue, tmp_path, **settings) as first:
        handle = await client.start_workflow(
            PromptWorkflow.run, prompt_input(crash_ws), id=workflow_id, task_queue=queue
        )

        async def quick_calls_settled_and_blocker_running() -> bool:
            settled = await settled_calls(client, workflow_id)
            return {"call_1_0", "call_1_1"} <= settled and (crash_ws / "ran-blocker.log").exists()

        await wait_until(quick_calls_settled_and_blocker_running)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)

    (crash_ws / "go").touch()
    with worker_process(address, queue, tmp_path, **settings):
        result: PromptResult = await asyncio.wait_for(handle.result(), timeout=120)
    return result, crash_ws


async def test_sigkilled_worker_mid_batch_loses_nothing_and_reruns_no_call(
    temporal_env: WorkflowEnvironment, task_queue: str, tmp_path: Path
) -> None:
    client = signed(temporal_env.client)
    reference_ws = tmp_path / "reference"
    reference_ws.mkdir()
    (reference_ws / "go").touch()
    reference: PromptResult = await client.execute_workflow(
        PromptWorkflow.run,
        prompt_input(reference_ws),
        id=f"prompt-reference-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )

    result, crash_ws = await crash_mid_batch(client, tmp_path, "crash")

    for n in range(8):
        assert (crash_ws / f"ran-{n}.log").read_text().splitlines() == ["x"], n
    # The shell call lost with its worker was not run again (it may change things): the
    # model was told so, truthfully, instead.
    assert (crash_ws / "ran-blocker.log").read_text().splitlines() == ["started"]
    (blocker,) = [m.content for m in tool_messages(result) if "worker running" in m.content]
    assert "may have run partly or fully" in blocker and "Check its effects" in blocker
    # Every batch was settled and judged: nothing lost. (The guard saw the lost call as the
    # different failure it is, so its decisions need not match the reference's, where the
    # blocker failed like the others.)
    assert [e.batch for e in result.guard] == [e.batch for e in reference.guard]
    assert reference.stop_reason is StopReason.LOOP_DETECTED


async def test_rerun_lost_calls_keeps_at_least_once_for_operators_who_want_it(
    temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    client = signed(temporal_env.client)
    _, crash_ws = await crash_mid_batch(client, tmp_path, "rerun", SEAWALL_RERUN_LOST_CALLS="true")
    # Run again after its worker was lost, as before: twice.
    assert (crash_ws / "ran-blocker.log").read_text().splitlines() == ["started", "started"]
    for n in range(8):
        assert (crash_ws / f"ran-{n}.log").read_text().splitlines() == ["x"], n


async def test_worker_shuts_down_gracefully_on_sigterm(temporal_env: WorkflowEnvironment) -> None:
    address = temporal_env.client.service_client.config.target_host
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "worker.py"), "--address", address, "--task-queue", "bye"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    started = await asyncio.wait_for(
        asyncio.to_thread(lambda: next(x for x in process.stderr if "worker_started" in x)), 60
    )
    assert '"task_queue": "bye"' in started

    process.send_signal(signal.SIGTERM)
    _, rest = await asyncio.to_thread(process.communicate, timeout=60)

    assert process.returncode == 0
    assert "worker_stopped" in rest


# --- the composition root ------------------------------------------------------------------


def process_gone(pid: int) -> bool:
    """The process exited and was reaped (or is a zombie waiting to be)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


async def test_the_worker_stops_its_mcp_servers_when_it_shuts_down(
    client: Client, tmp_path: Path
) -> None:
    environ = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "operator-config"),
        "SEAWALL_MCP_SERVERS": servers_env({SERVER: stdio_server(trust=True)}),
    }
    script = ModelScript.model_validate(
        {"turns": [{"tool_calls": [{"name": qualified("pid"), "arguments": {}}]}, {"text": "ok"}]}
    )
    queue = f"mcp-{uuid.uuid4().hex[:8]}"
    async with build_worker(client, queue, build_activities(environ, trust=harness_trust())):
        result: PromptResult = await client.execute_workflow(
            PromptWorkflow.run,
            PromptInput(
                prompt="which process?",
                workspace_root=str(tmp_path / "ws"),
                scenario=ScenarioHooks(model_script=script),
            ),
            id=f"prompt-mcp-{uuid.uuid4().hex[:8]}",
            task_queue=queue,
        )
        (pid_message,) = tool_messages(result)
        assert int(pid_message.content) > 0
        # Sandboxed, the server knows only its pid inside the sandbox: found on the host.
        servers = descendants_running(str(FIXTURE_SERVER))
        assert servers  # pooled: it outlives the prompt

    assert all(process_gone(server) for server in servers)


async def test_the_operator_model_is_the_demo_model_when_no_endpoint_is_configured(
    client: Client, tmp_path: Path
) -> None:
    environ = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SEAWALL_MODEL"))
    }
    environ["XDG_CONFIG_HOME"] = str(tmp_path / "operator-config")
    queue = f"operator-{uuid.uuid4().hex[:8]}"
    prompts = {
        provider: PromptInput(
            prompt="hello",
            workspace_root=str(tmp_path / provider),
            model=ModelSpec.model_validate({"provider": provider}),
        )
        for provider in ("operator", "demo")
    }
    async with build_worker(client, queue, build_activities(environ, trust=harness_trust())):
        results = {
            provider: await client.execute_workflow(
                PromptWorkflow.run,
                prompt,
                id=f"prompt-{provider}-{uuid.uuid4().hex[:8]}",
                task_queue=queue,
                result_type=PromptResult,
            )
            for provider, prompt in prompts.items()
        }

    assert PromptInput(prompt="x", workspace_root="w").model.provider == "operator"
    operator, demo = results["operator"], results["demo"]
    assert operator.stop_reason == demo.stop_reason
    assert [m.content for m in operator.messages] == [m.content for m in demo.messages]
