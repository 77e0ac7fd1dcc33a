"""A prompt key stays answered as the first submit was across the session's continue-as-new
(Temporal deduplicates update ids within one run only), through a real gateway on a dev
server that suggests continue-as-new early: no old key makes a new prompt, so none runs
past the owner's limit."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from gateway.app import create_app
from gateway.settings import GatewaySettings
from seawall.client.temporal_ops import prompt_handle, session_handle
from seawall.worker.build import build_worker
from tests.gateway.owner_helpers import TOKENS, auth
from tests.trust_helpers import TEST_SIGNING_KEY, harness_trust
from workflows.contracts.session import PromptSubmission
from workflows.session import SessionWorkflow

PROMPTS = 6


async def session_finished(client: Client, session_id: str, prompt_id: str) -> None:
    """Until the session counts the prompt as finished (so its slot can be freed)."""
    session = session_handle(client, session_id)
    while prompt_id not in [
        f.prompt_id for f in (await session.query(SessionWorkflow.status)).finished
    ]:
        await asyncio.sleep(0.05)


async def test_old_prompt_keys_after_continue_as_new_make_no_new_prompt(
    eager_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    client: Client = eager_env.client
    queue = f"can-keys-{uuid.uuid4().hex[:8]}"

    async def factory() -> Client:
        return client

    settings = GatewaySettings(
        task_queue=queue,
        workspaces=tmp_path / "workspaces",
        owner_tokens={TOKENS["alice"]: f"owner-alice-{uuid.uuid4().hex[:8]}"},
        allow_scripted_models=True,
        max_concurrent_prompts_per_owner=1,
        # The gateway signs its sessions' starts, as a deployed one does.
        session_signing_key=TEST_SIGNING_KEY,
    )
    script = {"turns": [{"text": f"reply {n}"} for n in range(PROMPTS)]}
    async with (
        build_worker(client, queue, trust=harness_trust()),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(settings, factory)),
            base_url="http://gateway",
            timeout=60,
        ) as http,
    ):
        created = await http.post(
            "/v1/sessions", json={"model_script": script}, headers=auth("alice")
        )
        session_id = created.json()["session_id"]
        session = session_handle(client, session_id)
        first_run = (await session.describe()).run_id
        answers = []
        for n in range(PROMPTS):
            submitted = await http.post(
                f"/v1/sessions/{session_id}/prompts",
                json={"text": f"prompt {n}"},
                headers=auth("alice") | {"Idempotency-Key": f"key-{n}"},
            )
            assert submitted.status_code == 202, submitted.text
            answers.append(submitted.json())
            await session_finished(client, session_id, submitted.json()["prompt_id"])
        assert (await session.describe()).run_id != first_run, "never continued as new"

        # Every old key, through the gateway and straight to the session: as before.
        for n, answer in enumerate(answers):
            repeated = await http.post(
                f"/v1/sessions/{session_id}/prompts",
                json={"text": "again"},
                headers=auth("alice") | {"Idempotency-Key": f"key-{n}"},
            )
            assert repeated.status_code == 202, repeated.text
            assert repeated.json() == answer
        direct = await session.execute_update(
            SessionWorkflow.submit_prompt, PromptSubmission(text="again"), id="prompt:key-0"
        )
        assert direct.prompt_id == answers[0]["prompt_id"]

        status = await session.query(SessionWorkflow.status)
        assert status.running_prompt_id is None and status.queued_prompt_ids == []
        assert [f.prompt_id for f in status.finished] == [a["prompt_id"] for a in answers]
        reply = (await prompt_handle(client, answers[0]["prompt_id"]).result()).messages[-1]
        assert reply.content == "reply 0"
