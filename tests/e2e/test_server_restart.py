"""Restarting the embedded dev server (SQLite persistence) mid-prompt loses nothing: the
prompt finishes, and a client following its events across the restart sees each once."""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from pathlib import Path

from seawall.cli.stack import StackConfig, _temporal_ready, server_command
from seawall.client.events import Idle, follow_prompt_events
from seawall.runtime.plugin import connect
from seawall.runtime.temporal_setup import ensure_search_attributes
from seawall.worker.build import build_worker
from tests.e2e.test_stack import free_port, until
from tests.trust_helpers import harness_trust, signed
from workflows.contracts.prompt import AgentEvent, EventKind, PromptInput, PromptResult, StopReason
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode


def start_server(config: StackConfig) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        server_command(config), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def stop_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=30)


async def test_a_prompt_survives_a_dev_server_restart(tmp_path: Path) -> None:
    config = StackConfig(data_dir=tmp_path / "data", temporal_port=free_port(), ui_port=free_port())
    config.data_dir.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    blocker = "touch started; while [ ! -f go ]; do sleep 0.05; done; echo released"
    script = ModelScript.model_validate(
        {
            "turns": [
                {"tool_calls": [{"name": "run_shell_command", "arguments": {"command": blocker}}]},
                {"text": "done after the restart"},
            ]
        }
    )
    queue = f"restart-{uuid.uuid4().hex[:8]}"

    async def ready() -> bool:
        return await asyncio.to_thread(_temporal_ready, config)

    async def tool_started() -> bool:
        return (workspace / "started").exists()

    server = start_server(config)
    try:
        await until(ready)
        client = signed(await connect(config.temporal_address, config.namespace))
        await ensure_search_attributes(client, config.namespace)
        async with build_worker(client, queue, trust=harness_trust()):
            handle = await client.start_workflow(
                PromptWorkflow.run,
                PromptInput(
                    prompt="build",
                    workspace_root=str(workspace),
                    scenario=ScenarioHooks(model_script=script),
                    guard_mode=GuardMode.ENFORCE,
                    approval_mode=ApprovalMode.YOLO,
                ),
                id=f"prompt-restart-{uuid.uuid4().hex[:8]}",
                task_queue=queue,
                result_type=PromptResult,
            )
            await until(tool_started)

            first_event = asyncio.Event()

            async def follow() -> list[AgentEvent]:
                events = []
                async for item in follow_prompt_events(client, handle.id, 0):
                    if not isinstance(item, Idle):
                        events.append(item)
                        first_event.set()
                return events

            # Following (waiting in a history long-poll) when the server goes away.
            following = asyncio.create_task(follow())
            await asyncio.wait_for(first_event.wait(), 60)
            stop_server(server)  # mid-prompt: the tool is still running
            server = start_server(config)  # same port, same SQLite file
            await until(ready)
            (workspace / "go").touch()
            result = await asyncio.wait_for(handle.result(), 120)
            followed = await asyncio.wait_for(following, 120)
    finally:
        stop_server(server)

    assert result.stop_reason is StopReason.END_TURN
    assert result.messages[-1].content == "done after the restart"
    assert "released" in result.messages[-2].content
    # The follower rode out the outage: every event once, in order, to prompt_finished.
    assert [e.seq for e in followed] == list(range(1, len(followed) + 1))
    assert followed[-1].kind is EventKind.PROMPT_FINISHED
