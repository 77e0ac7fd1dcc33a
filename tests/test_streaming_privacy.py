"""Streamed model text is conversation content: it reaches the prompt's clients as
``message_delta`` events and never a log line or a metric (activities/model_stream.py;
"Observability and privacy").

A real worker process, with JSON logs at DEBUG and its Prometheus endpoint on, answers a
prompt from a local OpenAI-compatible server that streams a reply carrying a sentinel.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from scripts.chat_server import ChatServer, completion
from seawall.client.events import follow_prompt_events
from tests.telemetry_helpers import free_port, worker_process
from tests.trust_helpers import signed
from workflows.contracts.activity import ModelSpec
from workflows.contracts.prompt import AgentEvent, EventKind, PromptInput
from workflows.prompt.workflow import PromptWorkflow


async def test_streamed_text_reaches_clients_but_no_log_or_metric(
    temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    client: Client = signed(temporal_env.client)
    sentinel = f"SntStreamed{uuid.uuid4().hex[:8]}"
    reply = f"Here is the secret plan: {sentinel}, in several streamed pieces."
    queue = f"privacy-stream-{uuid.uuid4().hex[:8]}"
    port = free_port()
    async with ChatServer([completion(text=reply)]) as server:
        env = {"OPENAI_BASE_URL": server.url}
        with worker_process(
            client.service_client.config.target_host,
            queue,
            tmp_path / "worker.log",
            metrics_port=port,
            env=env,
        ) as worker:
            prompt_id = f"privacy-stream-{uuid.uuid4().hex[:8]}"
            await client.start_workflow(
                PromptWorkflow.run,
                PromptInput(
                    prompt="tell me",
                    workspace_root=str(tmp_path),
                    model=ModelSpec(provider="openai"),
                ),
                id=prompt_id,
                task_queue=queue,
            )
            events = [
                item
                async for item in follow_prompt_events(client, prompt_id, 0)
                if isinstance(item, AgentEvent)
            ]
            worker.assert_running()
            scrape = worker.scrape_text()
            logs = worker.log_text()

    deltas = [e for e in events if e.kind is EventKind.MESSAGE_DELTA]
    assert len(deltas) >= 1
    assert "".join(e.text or "" for e in deltas) == reply
    assert sentinel not in logs
    assert sentinel not in scrape
