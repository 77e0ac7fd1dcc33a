"""A workflow started directly on Temporal with hostile input fails clearly, and runs no tool
(docs/security-trust.md, "What the worker checks").

Each hostile start goes through the dev server's own client (``temporal_env.client``), which
signs nothing, or through a signer that forges or replays a grant; the worker is the real one.
Each must fail with its refusal's type before any model request or tool call: the marker file
the hostile script would write is never written, and no ``run_tool`` or ``call_model``
activity is in the workflow's history. The legitimate paths (a signed session, the gateway's
session, a signed scenario) still run.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from activities.trust import WorkerTrust
from gateway.app import create_app
from gateway.settings import GatewaySettings
from seawall.runtime.grants import GrantSigner, new_signing_key, signing_client
from seawall.worker.build import build_worker
from tests.trust_helpers import TEST_SIGNER, TEST_SIGNING_KEY, harness_trust
from workflows.contracts.activity import CALL_MODEL, RUN_TOOL
from workflows.contracts.grant import (
    GRANT_EXPIRED,
    GRANT_INVALID,
    GRANT_MISSING,
    SCRIPTED_MODELS_DISABLED,
    WORKSPACE_OUTSIDE_ROOT,
)
from workflows.contracts.prompt import PromptInput, StopReason
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.scenario import FixtureTool, ModelScript, ScenarioHooks
from workflows.contracts.session import PromptSubmission, SessionInput, SessionSettings
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode
from workflows.session import SessionWorkflow, session_workflow_id

MARKER = "pwned.txt"
BOB = "owner-bob"


def hostile_script(marker: Path = Path(MARKER)) -> ScenarioHooks:
    """A prompt-injected model: it writes ``marker`` (relative: in its workspace)."""
    turns: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": str(marker), "content": "x"}}
            ]
        },
        {
            "tool_calls": [
                {"name": "run_shell_command", "arguments": {"command": f"touch {marker}"}}
            ]
        },
        {"text": "done"},
    ]
    return ScenarioHooks(model_script=ModelScript.model_validate({"turns": turns}))


def prompt(workspace: Path | str, **fields: Any) -> PromptInput:
    fields.setdefault("scenario", hostile_script())
    return PromptInput(
        prompt="go",
        workspace_root=str(workspace),
        approval_mode=ApprovalMode.YOLO,
        **fields,
    )


def session(workspace: Path | str, session_id: str | None = None, **fields: Any) -> SessionInput:
    settings = SessionSettings(
        workspace_root=str(workspace),
        scenario=fields.pop("scenario", hostile_script()),
        approval_mode=ApprovalMode.YOLO,
    )
    return SessionInput(session_id=session_id or uuid.uuid4().hex[:12], settings=settings, **fields)


async def start_prompt(
    client: Client, queue: str, inp: PromptInput, workflow_id: str | None = None
) -> WorkflowHandle[Any, Any]:
    return await client.start_workflow(
        PromptWorkflow.run,
        inp,
        id=workflow_id or f"hostile-{uuid.uuid4().hex[:10]}",
        task_queue=queue,
    )


async def start_session(
    client: Client, queue: str, inp: SessionInput, workflow_id: str | None = None
) -> WorkflowHandle[Any, Any]:
    handle = await client.start_workflow(
        SessionWorkflow.run,
        inp,
        id=workflow_id or session_workflow_id(inp.session_id),
        task_queue=queue,
    )
    # The attacker submits a prompt at once: it must never run. (The update may find the
    # session already failed.)
    with contextlib.suppress(Exception):
        await handle.execute_update(SessionWorkflow.submit_prompt, PromptSubmission(text="go"))
    return handle


async def activities_scheduled(handle: WorkflowHandle[Any, Any]) -> list[str]:
    history = await handle.fetch_history()
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]


async def assert_refused(
    handle: WorkflowHandle[Any, Any], refusal: str, *, markers: list[Path]
) -> ApplicationError:
    """The workflow failed with ``refusal``, ran no model request and no tool, and wrote
    none of ``markers``; the failure names no key and no owner."""
    with pytest.raises(WorkflowFailureError) as failed:
        await handle.result()
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError), cause
    assert cause.type == refusal, cause
    assert cause.non_retryable
    assert TEST_SIGNING_KEY not in cause.message and BOB not in cause.message
    scheduled = await activities_scheduled(handle)
    assert RUN_TOOL not in scheduled and CALL_MODEL not in scheduled, scheduled
    for marker in markers:
        assert not marker.exists(), marker
    return cause


@pytest.fixture
def unsigned(temporal_env: WorkflowEnvironment) -> Client:
    """A client anyone who reaches the frontend has: it signs nothing."""
    return temporal_env.client


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest_asyncio.fixture
async def narrow_queue(unsigned: Client, tmp_path: Path) -> AsyncIterator[str]:
    """A worker whose workspaces root is ``tmp_path/root`` alone."""
    (tmp_path / "root").mkdir()
    queue = f"narrow-{uuid.uuid4().hex[:8]}"
    async with build_worker(
        unsigned, queue, trust=harness_trust(workspace_roots=(tmp_path / "root",))
    ):
        yield queue


@pytest_asyncio.fixture
async def strict_queue(unsigned: Client) -> AsyncIterator[str]:
    """A worker with the default allowance: no scripted models, no fixture tools."""
    queue = f"strict-{uuid.uuid4().hex[:8]}"
    async with build_worker(unsigned, queue, trust=harness_trust(allow_scripted_models=False)):
        yield queue


# --- root prompts ---------------------------------------------------------------------------


async def test_an_unsigned_root_prompt_fails_before_any_model_request(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    handle = await start_prompt(unsigned, task_queue, prompt(workspace))
    cause = await assert_refused(handle, GRANT_MISSING, markers=[workspace / MARKER])
    assert "gateway or seawall acp" in cause.message


async def test_a_signed_prompt_in_the_filesystem_root_is_refused(
    client: Client, task_queue: str
) -> None:
    marker = Path("/") / f"seawall-pwned-{uuid.uuid4().hex[:8]}"
    handle = await start_prompt(client, task_queue, prompt("/", scenario=hostile_script(marker)))
    cause = await assert_refused(handle, WORKSPACE_OUTSIDE_ROOT, markers=[marker])
    assert "workspaces" in cause.message


async def test_a_workspace_outside_the_workers_root_is_refused(
    client: Client, narrow_queue: str, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    handle = await start_prompt(client, narrow_queue, prompt(elsewhere))
    await assert_refused(handle, WORKSPACE_OUTSIDE_ROOT, markers=[elsewhere / MARKER])


async def test_a_symlink_out_of_the_workers_root_is_resolved_and_refused(
    client: Client, narrow_queue: str, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "root" / "link"
    link.symlink_to(elsewhere, target_is_directory=True)
    handle = await start_prompt(client, narrow_queue, prompt(link))
    await assert_refused(handle, WORKSPACE_OUTSIDE_ROOT, markers=[elsewhere / MARKER])


async def test_a_workspace_inside_the_workers_root_runs(
    client: Client, narrow_queue: str, tmp_path: Path
) -> None:
    inside = tmp_path / "root" / "session"
    result = await (await start_prompt(client, narrow_queue, prompt(inside))).result()
    assert result.stop_reason is StopReason.END_TURN
    assert (inside / MARKER).exists()  # the scripted model's call ran: this worker allows it


async def test_a_scripted_model_needs_the_workers_own_allowance(
    client: Client, strict_queue: str, workspace: Path
) -> None:
    # Signed, in the workspaces root: only the worker's allow_scripted_models is missing.
    handle = await start_prompt(client, strict_queue, prompt(workspace))
    cause = await assert_refused(handle, SCRIPTED_MODELS_DISABLED, markers=[workspace / MARKER])
    assert "allow_scripted_models" in cause.message


async def test_a_fixture_tool_needs_the_workers_own_allowance(
    client: Client, strict_queue: str, workspace: Path
) -> None:
    fixtures = ScenarioHooks(
        fixture_tools={"list_directory": FixtureTool.model_validate({"outcomes": [{}]})}
    )
    handle = await start_prompt(client, strict_queue, prompt(workspace, scenario=fixtures))
    await assert_refused(handle, SCRIPTED_MODELS_DISABLED, markers=[])


async def test_a_root_prompts_grant_for_another_prompt_is_refused(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    granted = TEST_SIGNER.prompt(prompt(workspace), "the-prompt-it-was-signed-for")
    handle = await start_prompt(unsigned, task_queue, granted, workflow_id="another-prompt-id")
    await assert_refused(handle, GRANT_INVALID, markers=[workspace / MARKER])


async def test_a_root_prompt_cannot_switch_the_guard_off_after_signing(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    workflow_id = f"hostile-{uuid.uuid4().hex[:8]}"
    granted = TEST_SIGNER.prompt(prompt(workspace, guard_mode=GuardMode.ENFORCE), workflow_id)
    tampered = granted.model_copy(update={"guard_mode": GuardMode.OFF})
    handle = await start_prompt(unsigned, task_queue, tampered, workflow_id=workflow_id)
    await assert_refused(handle, GRANT_INVALID, markers=[workspace / MARKER])


# --- sessions -------------------------------------------------------------------------------


async def test_a_session_claiming_another_owner_without_a_grant_fails(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    inp = session(workspace, owner_id=BOB)
    handle = await start_session(unsigned, task_queue, inp)
    await assert_refused(handle, GRANT_MISSING, markers=[workspace / MARKER])
    # Its prompt never started.
    with pytest.raises(RPCError):
        await unsigned.get_workflow_handle(f"{inp.session_id}-prompt-1").describe()


async def test_a_signed_session_in_the_filesystem_root_is_refused(
    client: Client, task_queue: str
) -> None:
    marker = Path("/") / f"seawall-pwned-{uuid.uuid4().hex[:8]}"
    inp = session("/", owner_id=BOB, scenario=hostile_script(marker))
    handle = await start_session(client, task_queue, inp)
    await assert_refused(handle, WORKSPACE_OUTSIDE_ROOT, markers=[marker])


async def test_a_session_with_its_guard_mode_set_is_checked_too(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    # No operator settings to resolve: the session still asks the worker to check its start.
    handle = await start_session(unsigned, task_queue, session(workspace, guard_mode=GuardMode.OFF))
    await assert_refused(handle, GRANT_MISSING, markers=[workspace / MARKER])


async def test_a_grant_signed_for_alice_does_not_make_bob_the_owner(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    granted = TEST_SIGNER.session(session(workspace, owner_id="owner-alice"))
    forged = granted.model_copy(update={"owner_id": BOB})
    handle = await start_session(unsigned, task_queue, forged)
    cause = await assert_refused(handle, GRANT_INVALID, markers=[workspace / MARKER])
    assert "owner" in cause.message


async def test_a_grant_signed_with_another_key_is_refused(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    forger = GrantSigner(new_signing_key())
    handle = await start_session(
        unsigned, task_queue, forger.session(session(workspace, owner_id=BOB))
    )
    await assert_refused(handle, GRANT_INVALID, markers=[workspace / MARKER])


async def test_another_sessions_grant_replayed_is_refused(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    original = TEST_SIGNER.session(session(workspace, owner_id=BOB))
    # The same grant on a new session id, and the same input under another workflow id.
    replayed = session(workspace, owner_id=BOB).model_copy(update={"grant": original.grant})
    for handle in (
        await start_session(unsigned, task_queue, replayed),
        await start_session(
            unsigned, task_queue, original, workflow_id=session_workflow_id(uuid.uuid4().hex)
        ),
    ):
        await assert_refused(handle, GRANT_INVALID, markers=[workspace / MARKER])


async def test_an_expired_grant_is_refused(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    stale = GrantSigner(TEST_SIGNING_KEY, clock=lambda: time.time() - 7200)
    handle = await start_session(unsigned, task_queue, stale.session(session(workspace)))
    await assert_refused(handle, GRANT_EXPIRED, markers=[workspace / MARKER])


async def test_a_signed_session_of_its_owner_runs_its_prompts(
    client: Client, task_queue: str, workspace: Path
) -> None:
    handle = await start_session(client, task_queue, session(workspace, owner_id=BOB))
    await handle.signal(SessionWorkflow.close)
    status = await handle.result()
    assert [f.stop_reason for f in status.finished] == [StopReason.END_TURN]
    assert (workspace / MARKER).exists()


async def test_the_previous_key_still_verifies_while_starters_rotate(
    unsigned: Client, workspace: Path
) -> None:
    old, new = new_signing_key(), new_signing_key()
    queue = f"rotating-{uuid.uuid4().hex[:8]}"
    async with build_worker(unsigned, queue, trust=harness_trust(keys=(new, old))):
        signed_old = signing_client(unsigned, GrantSigner(old))
        result = await (await start_prompt(signed_old, queue, prompt(workspace))).result()
    assert result.stop_reason is StopReason.END_TURN


# --- the gateway signs its sessions ---------------------------------------------------------


async def gateway_session(unsigned: Client, queue: str, tmp_path: Path, key: str | None) -> str:
    async def factory() -> Client:
        return unsigned  # the gateway's own signature, or none: nothing signs for it

    settings = GatewaySettings(
        task_queue=queue,
        workspaces=tmp_path / "workspaces",
        allow_scripted_models=True,
        session_signing_key=key,
    )
    transport = httpx.ASGITransport(app=create_app(settings, factory))
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
        body = {"model_script": {"turns": [{"text": "hello"}]}}
        created = await http.post("/v1/sessions", json=body)
        assert created.status_code == 201, created.text
        session_id: str = created.json()["session_id"]
        submitted = await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": "hi"})
        assert submitted.status_code in (202, 409, 503), submitted.text
        await http.post(f"/v1/sessions/{session_id}/close")
    return session_id


async def test_the_gateways_signed_session_runs(
    unsigned: Client, task_queue: str, tmp_path: Path
) -> None:
    session_id = await gateway_session(unsigned, task_queue, tmp_path, TEST_SIGNING_KEY)
    handle = unsigned.get_workflow_handle_for(SessionWorkflow.run, session_workflow_id(session_id))
    status = await handle.result()
    assert [f.stop_reason for f in status.finished] == [StopReason.END_TURN]


async def test_a_gateway_with_another_key_starts_sessions_the_worker_refuses(
    unsigned: Client, task_queue: str, tmp_path: Path
) -> None:
    session_id = await gateway_session(unsigned, task_queue, tmp_path, new_signing_key())
    handle = unsigned.get_workflow_handle(session_workflow_id(session_id))
    await assert_refused(handle, GRANT_INVALID, markers=[])


def test_a_workers_trust_never_prints_its_keys() -> None:
    trust = WorkerTrust(allow_scripted_models=False, workspace_roots=(), keys=(TEST_SIGNING_KEY,))
    assert TEST_SIGNING_KEY not in repr(trust)
    assert TEST_SIGNING_KEY not in repr(TEST_SIGNER)
