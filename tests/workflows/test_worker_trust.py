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
import hashlib
import hmac
import time
import uuid
from collections.abc import AsyncIterator, Callable
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
from seawall.runtime.grants import (
    GrantSigner,
    awaiting_grant,
    new_signing_key,
    signing_client,
)
from seawall.worker.build import build_worker
from tests.trust_helpers import TEST_SIGNER, TEST_SIGNING_KEY, harness_trust
from workflows.contracts import start_claims
from workflows.contracts.activity import CALL_MODEL, RUN_TOOL
from workflows.contracts.grant import (
    GRANT_EXPIRED,
    GRANT_INVALID,
    GRANT_MISSING,
    GRANT_SIGNAL,
    GUARD_OFF_NOT_ALLOWED,
    SCRIPTED_MODELS_DISABLED,
    WORKSPACE_OUTSIDE_ROOT,
    SessionGrant,
    canonical_claim,
)
from workflows.contracts.prompt import PromptInput, StopReason
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.scenario import FixtureTool, ModelScript, ScenarioHooks
from workflows.contracts.session import PromptSubmission, SessionInput, SessionSettings
from workflows.contracts.start_claims import session_claim
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode
from workflows.seed.failed_call_refusal import RefusalMode
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
    fields.setdefault("approval_mode", ApprovalMode.YOLO)
    return PromptInput(prompt="go", workspace_root=str(workspace), **fields)


def session(workspace: Path | str, session_id: str | None = None, **fields: Any) -> SessionInput:
    settings = SessionSettings(
        workspace_root=str(workspace),
        scenario=fields.pop("scenario", hostile_script()),
        approval_mode=ApprovalMode.YOLO,
    )
    return SessionInput(session_id=session_id or uuid.uuid4().hex[:12], settings=settings, **fields)


# What a forger signals to the run it started: a grant made for (workflow id, run id).
Granting = Callable[[str, str], SessionGrant]


def signed_as(
    inp: SessionInput | PromptInput,
    signer: GrantSigner = TEST_SIGNER,
    *,
    workflow_id: str | None = None,
    run_id: str | None = None,
) -> Granting:
    """The grant ``signer`` makes for ``inp`` (as a trusted starter sends it), for the run it
    is signalled to unless ``workflow_id`` or ``run_id`` name another."""
    return lambda wid, rid: signer.for_run(awaiting_grant(inp), workflow_id or wid, run_id or rid)


async def start_granted(
    client: Client,
    workflow: Any,
    inp: SessionInput | PromptInput,
    workflow_id: str,
    queue: str,
    grant: Granting | None,
) -> WorkflowHandle[Any, Any]:
    """Start ``inp`` on ``client``; with ``grant``, as a starter whose grant follows: the
    input says so, and ``grant`` (for the run started) is signalled to it."""
    started = awaiting_grant(inp) if grant is not None else inp
    handle = await client.start_workflow(workflow, started, id=workflow_id, task_queue=queue)
    if grant is not None:
        run_id = handle.result_run_id or ""
        await client.get_workflow_handle(workflow_id, run_id=run_id).signal(
            GRANT_SIGNAL, grant(workflow_id, run_id)
        )
    return handle


async def start_prompt(
    client: Client,
    queue: str,
    inp: PromptInput,
    workflow_id: str | None = None,
    grant: Granting | None = None,
) -> WorkflowHandle[Any, Any]:
    workflow_id = workflow_id or f"hostile-{uuid.uuid4().hex[:10]}"
    return await start_granted(client, PromptWorkflow.run, inp, workflow_id, queue, grant)


async def start_session(
    client: Client,
    queue: str,
    inp: SessionInput,
    workflow_id: str | None = None,
    grant: Granting | None = None,
) -> WorkflowHandle[Any, Any]:
    workflow_id = workflow_id or session_workflow_id(inp.session_id)
    handle = await start_granted(client, SessionWorkflow.run, inp, workflow_id, queue, grant)
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
    granted = signed_as(prompt(workspace), workflow_id="the-prompt-it-was-signed-for")
    handle = await start_prompt(unsigned, task_queue, prompt(workspace), grant=granted)
    await assert_refused(handle, GRANT_INVALID, markers=[workspace / MARKER])


async def test_a_root_prompt_cannot_switch_the_guard_off_after_signing(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    granted = signed_as(prompt(workspace, guard_mode=GuardMode.ENFORCE))
    tampered = prompt(workspace, guard_mode=GuardMode.OFF)
    handle = await start_prompt(unsigned, task_queue, tampered, grant=granted)
    await assert_refused(handle, GRANT_INVALID, markers=[workspace / MARKER])


@pytest.mark.parametrize(
    "tampered",
    [
        {"max_tool_calls_per_turn": 0},  # the cap off
        {"refusal_mode": RefusalMode.OFF},
        {"client_metadata": {"channel": True}},  # the guard off
        {"approval_mode": ApprovalMode.YOLO, "loosest_approval_mode": ApprovalMode.YOLO},
        {"prompt": "another prompt"},
    ],
)
async def test_no_field_of_a_signed_start_can_be_changed(
    unsigned: Client, task_queue: str, workspace: Path, tampered: dict[str, Any]
) -> None:
    """The grant signs the whole start input: whatever field is changed, it fails."""
    signed = prompt(workspace, approval_mode=ApprovalMode.DEFAULT)
    changed = signed.model_copy(update=tampered)
    handle = await start_prompt(unsigned, task_queue, changed, grant=signed_as(signed))
    await assert_refused(handle, GRANT_INVALID, markers=[workspace / MARKER])


async def test_a_root_prompt_whose_grant_never_arrives_fails(
    unsigned: Client, task_queue: str, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Waits GRANT_WAIT_SECONDS (60) for the starter's signal; a shorter wait here.
    monkeypatch.setattr(start_claims, "GRANT_WAIT_SECONDS", 1)
    started = awaiting_grant(prompt(workspace))
    handle = await start_prompt(unsigned, task_queue, started)
    cause = await assert_refused(handle, GRANT_MISSING, markers=[workspace / MARKER])
    assert "did not arrive within 1 s" in cause.message


# --- the guard forced off -------------------------------------------------------------------


@pytest.mark.parametrize(
    "routing", [{"client_metadata": {"channel": True}}, {"route": "cron"}, {"route": "background"}]
)
async def test_the_guard_off_needs_the_workers_channel_owners(
    client: Client, unsigned: Client, workspace: Path, routing: dict[str, Any]
) -> None:
    queue = f"no-channels-{uuid.uuid4().hex[:8]}"
    async with build_worker(unsigned, queue, trust=harness_trust(channel_owners=("owner-alice",))):
        bobs = prompt(workspace, owner_id=BOB, **routing)
        cause = await assert_refused(
            await start_prompt(client, queue, bobs),
            GUARD_OFF_NOT_ALLOWED,
            markers=[workspace / MARKER],
        )
        assert "channel_owners" in cause.message
        # A session marked as a channel, signed and all: refused the same way.
        if "client_metadata" in routing:
            channel = session(workspace, owner_id=BOB)
            settings = channel.settings.model_copy(update=routing)
            handle = await start_session(
                client, queue, channel.model_copy(update={"settings": settings})
            )
            await assert_refused(handle, GUARD_OFF_NOT_ALLOWED, markers=[workspace / MARKER])
        # The owner the operator named runs unguarded.
        alices = prompt(workspace, owner_id="owner-alice", guard_mode=GuardMode.ENFORCE, **routing)
        result = await (await start_prompt(client, queue, alices)).result()
    assert result.stop_reason is StopReason.END_TURN
    assert result.guard_mode == "off"


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
    alices = session(workspace, owner_id="owner-alice")
    forged = alices.model_copy(update={"owner_id": BOB})
    handle = await start_session(unsigned, task_queue, forged, grant=signed_as(alices))
    cause = await assert_refused(handle, GRANT_INVALID, markers=[workspace / MARKER])
    assert "owner" in cause.message


async def test_a_grant_signed_with_another_key_is_refused(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    inp = session(workspace, owner_id=BOB)
    forger = GrantSigner(new_signing_key())
    handle = await start_session(unsigned, task_queue, inp, grant=signed_as(inp, forger))
    await assert_refused(handle, GRANT_INVALID, markers=[workspace / MARKER])


async def test_another_sessions_grant_replayed_is_refused(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    original = session(workspace, owner_id=BOB)
    other_id = session_workflow_id(original.session_id)
    # The same grant on a new session id, and the same input under another workflow id.
    replayed = session(workspace, owner_id=BOB)
    for handle in (
        await start_session(
            unsigned, task_queue, replayed, grant=signed_as(original, workflow_id=other_id)
        ),
        await start_session(
            unsigned,
            task_queue,
            original,
            workflow_id=session_workflow_id(uuid.uuid4().hex),
            grant=signed_as(original, workflow_id=other_id),
        ),
    ):
        await assert_refused(handle, GRANT_INVALID, markers=[workspace / MARKER])


async def test_a_grant_replayed_under_the_same_id_after_its_session_closed_is_refused(
    client: Client, unsigned: Client, task_queue: str, workspace: Path
) -> None:
    """The replay the grant's run closes: bob's session ran and closed; its start input and
    grant, both in its history, are sent again under the same workflow id."""
    inp = session(workspace, owner_id=BOB, scenario=hostile_script(Path("first.txt")))
    first = await start_session(client, task_queue, inp)
    await first.signal(SessionWorkflow.close)
    await first.result()
    history = await first.fetch_history()
    [granted] = [
        e.workflow_execution_signaled_event_attributes
        for e in history.events
        if e.HasField("workflow_execution_signaled_event_attributes")
        and e.workflow_execution_signaled_event_attributes.signal_name == GRANT_SIGNAL
    ]
    [copied] = await unsigned.data_converter.decode(granted.input.payloads, [SessionGrant])
    again = await start_session(
        unsigned,
        task_queue,
        inp.model_copy(
            update={"settings": inp.settings.model_copy(update={"scenario": hostile_script()})}
        ),
        grant=lambda _wid, _rid: copied,
    )
    await assert_refused(again, GRANT_INVALID, markers=[workspace / MARKER])
    # And the very same input with its copied grant: the grant names the first run only.
    same = await start_session(unsigned, task_queue, inp, grant=lambda _wid, _rid: copied)
    await assert_refused(same, GRANT_INVALID, markers=[])


async def test_a_grant_in_the_start_input_names_no_run_and_is_refused(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    """An older starter's grant, in the input and valid for the workflow id alone, is what a
    replay would copy: it no longer verifies."""
    inp = session(workspace, owner_id=BOB)
    workflow_id = session_workflow_id(inp.session_id)
    claim = session_claim(inp, run_id=None, grant=None)
    expires_at = int(time.time()) + 3600
    signature = hmac.new(
        TEST_SIGNING_KEY.encode(),
        canonical_claim(claim, workflow_id=workflow_id, expires_at=expires_at),
        hashlib.sha256,
    ).hexdigest()
    in_input = inp.model_copy(
        update={"grant": SessionGrant(expires_at=expires_at, signature=signature)}
    )
    handle = await start_session(unsigned, task_queue, in_input)
    cause = await assert_refused(handle, GRANT_INVALID, markers=[workspace / MARKER])
    assert "run" in cause.message


async def test_an_expired_grant_is_refused(
    unsigned: Client, task_queue: str, workspace: Path
) -> None:
    stale = GrantSigner(TEST_SIGNING_KEY, clock=lambda: time.time() - 7200)
    inp = session(workspace)
    handle = await start_session(unsigned, task_queue, inp, grant=signed_as(inp, stale))
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
