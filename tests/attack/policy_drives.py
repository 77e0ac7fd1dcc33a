"""The deliveries of the attack table's policy rows (tests/attack/policy_table.py): an owner
choosing more than the operator allows, and whoever reaches the Temporal frontend replaying a
closed session's start or starting an owner's admission workflow with a state of their own.

Each returns what the attacker saw and the facts its check needs. The Temporal drives take
the attacker's ``connect`` (tests/attack/drives.py); the harness reads the dev server itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType, ResetReapplyType
from temporalio.api.workflowservice.v1 import ResetWorkflowExecutionRequest
from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy

from tests.attack.drives import Connect, attacker_client, prompt_ids, terminate
from tests.attack.hostile import (
    Outcome,
    closed,
    create_session,
    gateway,
    prompt_result,
    substituted,
    temporal_client,
    tree_text,
    until,
)
from tests.attack.stack import NAMESPACE, PROMPT_LIMIT, TASK_QUEUE, AttackStack
from workflows.contracts.owner_admission import admission_workflow_id

if TYPE_CHECKING:
    from tests.attack.checks import Attack

# How long a replayed or refused workflow is given to run a prompt before it is judged.
SETTLE_SECONDS = 60.0


async def completed_children(client: Client, workflow_id: str, run_id: str | None) -> int:
    """How many child workflows (prompts) of one run of ``workflow_id`` completed."""
    history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
    completed = EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED
    return sum(1 for event in history.events if event.event_type == completed)


async def settled(client: Client, workflow_id: str, run_id: str | None) -> int:
    """The prompts the run completed, once it has closed or one completed (or the time is
    up); the run is ended after."""
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)

    async def done() -> bool:
        if await completed_children(client, workflow_id, run_id):
            return True
        described = await handle.describe()
        return described.status is not None and described.status.name != "RUNNING"

    with contextlib.suppress(TimeoutError):
        await until(done, timeout=SETTLE_SECONDS)
    count = await completed_children(client, workflow_id, run_id)
    with contextlib.suppress(Exception):
        await handle.terminate("attack suite cleanup")
    return count


# --- an owner's choices -------------------------------------------------------------------


async def alice_opens_a_channel_session(stack: AttackStack, attack: Attack) -> Outcome:
    """Alice marks her session as a channel bridge's (the guard off) though the operator
    named no channel owner; if it is created, she prompts it."""
    harness = await temporal_client(stack)
    facts: dict[str, Any] = {"channel_prompts_completed": 0}
    async with gateway(stack, "alice") as alice:
        made = await alice.post(
            "/v1/sessions",
            json={
                "model_script": {"turns": [{"text": "unguarded"}]},
                "client_metadata": {"channel": True},
            },
        )
        facts["create_status"] = made.status_code
        if made.status_code == 201:
            session_id = made.json()["session_id"]
            sent = await alice.post(f"/v1/sessions/{session_id}/prompts", json={"text": "go"})
            facts["submit_status"] = sent.status_code
            facts["channel_prompts_completed"] = await settled(
                harness, f"session-{session_id}", None
            )
    return Outcome(json.dumps(facts), facts)


# Each session option a client might try to set, with a value that loosens the operator's.
OPERATOR_OPTIONS: dict[str, Any] = {
    "guard_mode": "off",
    "route": "cron",
    "max_tool_calls_per_turn": 0,
    "max_model_requests": 1_000_000,
    "refusal_mode": "off",
    "max_repeats": 1_000_000,
    "permission_timeout_seconds": 1e9,
    "tool_timeout_seconds": 1e9,
    "loosest_approval_mode": "yolo",
    "workspace_root": "/",
    "owner_id": "bob",
    "loop_settings": {"profile": "seed"},
    "model": {"provider": "openai", "model": "the-attackers"},
    "scenario": {"model_script": {"turns": [{"text": "x"}]}},
    "grant": None,
}


async def alice_sets_the_operators_options(stack: AttackStack, attack: Attack) -> Outcome:
    """Alice creates sessions setting, one at a time, every option that is the operator's,
    and a channel marker that is not a boolean."""
    statuses: dict[str, int] = {}
    async with gateway(stack, "alice") as alice:
        bodies = {name: {name: value} for name, value in OPERATOR_OPTIONS.items()}
        bodies["client_metadata.channel=yes"] = {"client_metadata": {"channel": "yes"}}
        for name, body in bodies.items():
            statuses[name] = (await alice.post("/v1/sessions", json=body)).status_code
    return Outcome(json.dumps(statuses), {"statuses": statuses})


async def acp_switches_to_yolo(stack: AttackStack, attack: Attack) -> Outcome:
    """``seawall acp`` whose operator allows only the default approval mode: the editor
    switches its session to yolo anyway, then its model writes a file (the editor declines
    every permission request it is asked)."""
    from tests.e2e.test_acp import Recorder, new_session, say, spawn_bridge

    workspace = stack.workspaces / f"acp-{secrets.token_hex(6)}"
    workspace.mkdir(parents=True)
    env = {
        "PATH": os.environ["PATH"],
        "TEMPORAL_ADDRESS": stack.temporal_address,
        "TEMPORAL_NAMESPACE": "default",
        "SEAWALL_TASK_QUEUE": TASK_QUEUE,
        "SEAWALL_ALLOW_SCRIPTED_MODELS": "1",
        "SEAWALL_OWNER_ID": attack.owner,
        "SEAWALL_DATA_DIR": str(stack.data_dir),
        "XDG_CONFIG_HOME": str(stack.root / "acp-config"),
        "XDG_DATA_HOME": str(stack.root / "acp-data-home"),
    }
    recorder = Recorder()
    for _ in range(20):
        recorder.answers.put_nowait("cancelled")
    turns = [*substituted(attack.turns, stack.targets()), {"text": "done"}]
    facts: dict[str, Any] = {}
    async with spawn_bridge(env, stack.root / "acp.stderr", recorder=recorder) as (conn, rec, _):
        session_id = await new_session(conn, workspace, turns)
        try:
            await conn.set_session_mode(session_id=session_id, mode_id="yolo")
            facts["switched"] = True
        except Exception as err:  # refused: what the operator's bound should do
            facts["switch_refused"] = type(err).__name__
        answer = await asyncio.wait_for(say(conn, session_id, "go"), 240)
    facts["written_without_asking"] = (workspace / f"pwned-{stack.marker}").exists()
    facts["asked"] = len(rec.permissions)
    seen = "\n".join([repr(answer), tree_text(workspace)])
    return Outcome(seen, facts)


# --- whoever reaches the frontend -----------------------------------------------------------


def grant_signals(history: Any) -> list[Any]:
    """The payloads of the ``grant`` signals a history holds."""
    signalled = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
    return [
        event.workflow_execution_signaled_event_attributes.input
        for event in history.events
        if event.event_type == signalled
        and event.workflow_execution_signaled_event_attributes.signal_name == "grant"
    ]


async def bobs_closed_session(stack: AttackStack, harness: Client) -> tuple[str, Any]:
    """A session of bob's that ran one prompt and closed: its id and history."""
    async with gateway(stack, "bob") as bob:
        made = await create_session(bob, stack, [{"text": "first"}])
        sent = await bob.post(f"/v1/sessions/{made.session_id}/prompts", json={"text": "hi"})
        assert sent.status_code == 202, sent.text
        await prompt_result(bob, sent.json()["prompt_id"])
        await bob.post(f"/v1/sessions/{made.session_id}/close")
    workflow_id = f"session-{made.session_id}"
    await until(lambda: closed(harness, workflow_id))
    return made.session_id, await harness.get_workflow_handle(workflow_id).fetch_history()


async def replay_a_closed_session_of_bobs(
    stack: AttackStack, attack: Attack, connect: Connect = temporal_client
) -> Outcome:
    """Bob's session ran a prompt and closed. Its start input and grant (both in its history)
    are sent again under the same workflow id: as they were, and with the session marked as
    a channel's and its prompts numbered past the ones that ran (so a new prompt id is free);
    each time the attacker then submits a prompt. No replayed run may complete a prompt."""
    harness = await temporal_client(stack)
    session_id, history = await bobs_closed_session(stack, harness)
    workflow_id = f"session-{session_id}"
    started = history.events[0].workflow_execution_started_event_attributes
    [original] = await harness.data_converter.decode(started.input.payloads, [dict])
    grants = [
        (await harness.data_converter.decode(payload.payloads, [dict]))[0]
        for payload in grant_signals(history)
    ]
    settings = {**original["settings"], "client_metadata": {"channel": True}}
    attempts = {
        "as_it_was": original,
        "as_a_channel_with_free_prompt_ids": {
            **original,
            "settings": settings,
            "prompts_submitted": 50,
        },
    }
    facts: dict[str, Any] = {"runs_that_completed_a_prompt": [], "grants_copied": len(grants)}
    attacker = await attacker_client(connect, stack, facts)
    if attacker is not None:
        for name, hostile_input in attempts.items():
            try:
                handle = await attacker.start_workflow(
                    "SessionWorkflow",
                    hostile_input,
                    id=workflow_id,
                    task_queue=TASK_QUEUE,
                    id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                )
            except Exception as err:
                facts[f"{name}_refused_at_start"] = type(err).__name__
                continue
            run = attacker.get_workflow_handle(workflow_id, run_id=handle.result_run_id)
            for grant in grants:
                with contextlib.suppress(Exception):
                    await run.signal("grant", grant)
            with contextlib.suppress(Exception):
                await run.execute_update("submit_prompt", {"text": "replayed"})
            if await settled(harness, workflow_id, handle.result_run_id):
                facts["runs_that_completed_a_prompt"].append(name)
    await terminate(harness, *prompt_ids(session_id, 1), f"{session_id}-prompt-51")
    return Outcome(json.dumps(facts, default=str), facts)


async def reset_a_closed_session_of_bobs(
    stack: AttackStack, attack: Attack, connect: Connect = temporal_client
) -> Outcome:
    """Bob's session ran a prompt and closed; it is reset to its last task before the close
    (its passed start check is in the history kept), and the attacker submits a prompt to
    the new run."""
    harness = await temporal_client(stack)
    session_id, history = await bobs_closed_session(stack, harness)
    workflow_id = f"session-{session_id}"
    signalled = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
    close_at = next(
        event.event_id
        for event in history.events
        if event.event_type == signalled
        and event.workflow_execution_signaled_event_attributes.signal_name == "close"
    )
    completed = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    reset_to = max(
        event.event_id
        for event in history.events
        if event.event_type == completed and event.event_id < close_at
    )
    facts: dict[str, Any] = {"prompts_completed_after_the_reset": 0}
    attacker = await attacker_client(connect, stack, facts)
    if attacker is not None:
        try:
            reset = await attacker.workflow_service.reset_workflow_execution(
                ResetWorkflowExecutionRequest(
                    namespace=NAMESPACE,
                    workflow_execution=WorkflowExecution(workflow_id=workflow_id),
                    reason="attack",
                    workflow_task_finish_event_id=reset_to,
                    request_id=secrets.token_hex(8),
                    reset_reapply_type=ResetReapplyType.RESET_REAPPLY_TYPE_NONE,
                )
            )
        except Exception as err:
            facts["reset_refused"] = type(err).__name__
        else:
            run = attacker.get_workflow_handle(workflow_id, run_id=reset.run_id)
            with contextlib.suppress(Exception):
                await run.execute_update("submit_prompt", {"text": "after the reset"})
            facts["prompts_completed_after_the_reset"] = await settled(
                harness, workflow_id, reset.run_id
            )
    await terminate(harness, *prompt_ids(session_id, 2))
    return Outcome(json.dumps(facts, default=str), facts)


async def start_bobs_admission_workflow_full(
    stack: AttackStack, attack: Attack, connect: Connect = temporal_client
) -> Outcome:
    """Bob's admission workflow is ended and started again on the frontend with a state of
    the attacker's: slots for prompts that never finish (as many as bob's limit) and a
    session holding more bytes than any quota; then bob creates a session and prompts it."""
    harness = await temporal_client(stack)
    workflow_id = admission_workflow_id("bob", TASK_QUEUE)
    now = datetime.now(UTC)
    never = (now + timedelta(days=36500)).isoformat()
    state = {
        "slots": [
            {
                "session_id": f"ghost-{i}",
                "update_id": f"prompt:ghost-{i}",
                "prompt_id": f"ghost-{i}-prompt-1",
                "admitted_at": now.isoformat(),
                "known_as_of": never,
            }
            for i in range(PROMPT_LIMIT)
        ],
        "sessions": [
            {"session_id": "ghost", "stored_bytes": 10**15, "admitted_at": now.isoformat()}
        ],
        "unsubmitted_grace_seconds": 1e9,
    }
    facts: dict[str, Any] = {}
    attacker = await attacker_client(connect, stack, facts)
    if attacker is not None:
        await terminate(attacker, workflow_id)
        with contextlib.suppress(Exception):
            await attacker.start_workflow(
                "OwnerAdmissionWorkflow", state, id=workflow_id, task_queue=TASK_QUEUE
            )
            facts["started"] = True
    async with gateway(stack, "bob") as bob:
        made = await bob.post(
            "/v1/sessions", json={"model_script": {"turns": [{"text": "admitted"}]}}
        )
        facts["create_status"] = made.status_code
        if made.status_code == 201:
            session_id = made.json()["session_id"]
            sent = await bob.post(f"/v1/sessions/{session_id}/prompts", json={"text": "go"})
            facts["submit_status"] = sent.status_code
            if sent.status_code == 202:
                await prompt_result(bob, sent.json()["prompt_id"])
            await bob.post(f"/v1/sessions/{session_id}/close")
    await harness.get_workflow_handle(workflow_id).describe()  # bob's own is in place
    return Outcome(json.dumps(facts), facts)
