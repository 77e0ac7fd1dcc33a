"""The deliveries of the attack table's ``core`` rows (tests/attack/table.py): a client of the
Temporal frontend, the codec, the gateway's HTTP API and the data dir, each returning what
the attacker saw (and the facts its check needs).

Temporal rows: the dev server has no authentication (`make run` and `seawall up` listen on
loopback only), so whoever reaches its port is a client. What is checked here is that the
worker refuses hostile inputs; with an authenticated frontend (docs/security.md) such a
client is refused before it reaches the worker. Each Temporal drive takes the attacker's
``connect`` (default: a plain client of the dev server; tests/attack/secured_frontend.py has
clients of an mTLS frontend); the harness's own checks always read the dev server directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import stat
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import httpx
from temporalio.client import Client
from temporalio.service import RPCError

from tests.attack.hostile import (
    Outcome,
    Session,
    call,
    closed,
    create_session,
    decoded_json,
    gateway,
    history_text,
    prompt_result,
    substituted,
    temporal_client,
    tree_text,
    until,
)
from tests.attack.stack import TASK_QUEUE, AttackStack

if TYPE_CHECKING:
    from tests.attack.table import Attack

Connect = Callable[[AttackStack], Awaitable[Client]]

REFERENCE_TYPE = "temporal.api.sdk.v1.ExternalStorageReference"


async def terminate(client: Client, *workflow_ids: str) -> None:
    """End what an attack left running (so the owner's prompt limit frees for the next)."""
    for workflow_id in workflow_ids:
        with contextlib.suppress(Exception):
            await client.get_workflow_handle(workflow_id).terminate("attack suite cleanup")


def prompt_ids(session_id: str, n: int) -> list[str]:
    return [f"{session_id}-prompt-{i}" for i in range(1, n + 1)]


# --- Temporal ------------------------------------------------------------------------------


async def attacker_client(
    connect: Connect, stack: AttackStack, facts: dict[str, Any]
) -> Client | None:
    """The attacker's client, or None (and ``refused_at_connect`` in ``facts``) where the
    frontend refuses it."""
    try:
        return await connect(stack)
    except Exception as err:
        facts["refused_at_connect"] = type(err).__name__
        return None


async def workflow_exists(client: Client, workflow_id: str) -> bool:
    try:
        await client.get_workflow_handle(workflow_id).describe()
    except RPCError:
        return False
    return True


async def start_hostile_session(
    stack: AttackStack, attack: Attack, connect: Connect = temporal_client
) -> Outcome:
    """Start a SessionWorkflow as bob with workspace_root "/" and a scripted model, as raw
    JSON (what any client can send), then submit a prompt to it."""
    harness = await temporal_client(stack)
    session_id = f"attack-{secrets.token_hex(8)}"
    workflow_id = f"session-{session_id}"
    turns = [*substituted(attack.turns, stack.targets()), {"text": "done"}]
    hostile_input = {
        "session_id": session_id,
        "owner_id": "bob",
        "settings": {
            "workspace_root": "/",
            "model": {"provider": "operator"},
            "approval_mode": "yolo",
            "scenario": {"model_script": {"turns": turns}},
        },
    }
    facts: dict[str, Any] = {}
    attacker = await attacker_client(connect, stack, facts)
    [prompt_id] = prompt_ids(session_id, 1)
    try:
        if attacker is not None:
            await run_hostile_session(attacker, harness, workflow_id, hostile_input, facts)
            with contextlib.suppress(Exception):
                facts["result"] = await attacker.get_workflow_handle(prompt_id).result()
        facts["workflow_exists"] = await workflow_exists(harness, workflow_id)
        seen = "\n".join(
            [
                await history_text(harness, workflow_id),
                await history_text(harness, prompt_id),
                json.dumps(facts, default=str),
            ]
        )
    finally:
        await terminate(harness, workflow_id, prompt_id)
    return Outcome(seen, facts)


async def run_hostile_session(
    attacker: Client,
    harness: Client,
    workflow_id: str,
    hostile_input: dict[str, Any],
    facts: dict[str, Any],
) -> None:
    handle = await attacker.start_workflow(
        "SessionWorkflow", hostile_input, id=workflow_id, task_queue=TASK_QUEUE
    )
    facts["started"] = True
    try:
        facts["submitted"] = await handle.execute_update("submit_prompt", {"text": "go"})
    except Exception as err:  # refused: what the worker should do
        facts["submit_refused"] = type(err).__name__
    [prompt_id] = prompt_ids(hostile_input["session_id"], 1)

    async def ended() -> bool:
        # A worker that refuses the input fails the workflow, or its task (retried).
        refused = "workflowTaskFailedEventAttributes" in await history_text(harness, workflow_id)
        return refused or await closed(harness, prompt_id) or await closed(harness, workflow_id)

    with contextlib.suppress(TimeoutError):
        await until(ended)


async def bobs_waiting_prompt(stack: AttackStack, bob: httpx.AsyncClient) -> tuple[Session, str]:
    """A prompt of bob's that asks to write a file and waits for his answer."""
    session = await create_session(
        bob,
        stack,
        [{"tool_calls": [call("write_file", path="a", content="x")]}],
        approval_mode="default",
    )
    sent = await bob.post(f"/v1/sessions/{session.session_id}/prompts", json={"text": "write"})
    assert sent.status_code == 202, sent.text
    return session, sent.json()["prompt_id"]


async def pending_request(http: httpx.AsyncClient, prompt_id: str) -> str:
    async def pending() -> str | None:
        view = (await http.get(f"/v1/prompts/{prompt_id}")).json()
        requests = (view.get("status") or {}).get("pending_permissions") or []
        return requests[0]["request_id"] if requests else None

    found: str = await until(pending)
    return found


async def still_pending(http: httpx.AsyncClient, prompt_id: str, request_id: str) -> bool:
    view = (await http.get(f"/v1/prompts/{prompt_id}")).json()
    requests = (view.get("status") or {}).get("pending_permissions") or []
    return any(r.get("request_id") == request_id for r in requests)


async def answer_bobs_permission(
    stack: AttackStack, attack: Attack, connect: Connect = temporal_client
) -> Outcome:
    """Approve bob's pending write on Temporal directly; then bob rejects it himself."""
    facts: dict[str, Any] = {}
    attacker = await attacker_client(connect, stack, facts)
    async with gateway(stack, "bob") as bob:
        session, prompt_id = await bobs_waiting_prompt(stack, bob)
        request_id = await pending_request(bob, prompt_id)
        if attacker is not None:
            try:
                facts["attacker_answer"] = await attacker.get_workflow_handle(
                    prompt_id
                ).execute_update("answer_permission", {"request_id": request_id, "approve": True})
            except Exception as err:
                facts["attacker_refused"] = type(err).__name__
        facts["still_pending_after_the_attack"] = await still_pending(bob, prompt_id, request_id)
        own = await bob.post(
            f"/v1/prompts/{prompt_id}/permissions/{request_id}", json={"approve": False}
        )
        facts["bobs_answer_status"] = own.status_code
        result = await prompt_result(bob, prompt_id)
        await bob.post(f"/v1/sessions/{session.session_id}/close")
    facts["bobs_file_written"] = (session.workspace / "a").exists()
    return Outcome(json.dumps(result), facts)


async def signal_bobs_prompt(
    stack: AttackStack, attack: Attack, connect: Connect = temporal_client
) -> Outcome:
    """Inject user input into bob's running prompt (a signal) and bob's session (an update),
    on Temporal directly; bob's model must never receive it, nor his histories hold it."""
    harness = await temporal_client(stack)
    injected = f"injected-by-the-attacker-{stack.marker}"
    facts: dict[str, Any] = {"injected": injected}
    attacker = await attacker_client(connect, stack, facts)
    async with gateway(stack, "bob") as bob:
        session, prompt_id = await bobs_waiting_prompt(stack, bob)
        request_id = await pending_request(bob, prompt_id)
        session_workflow = f"session-{session.session_id}"
        if attacker is not None:
            with contextlib.suppress(Exception):
                await attacker.get_workflow_handle(prompt_id).signal(
                    "submit_input", {"text": injected}
                )
                facts["signal_sent"] = True
            with contextlib.suppress(Exception):
                facts["update"] = await attacker.get_workflow_handle(
                    session_workflow
                ).execute_update("send_input", {"text": injected})
        answered = await bob.post(
            f"/v1/prompts/{prompt_id}/permissions/{request_id}", json={"approve": False}
        )
        assert answered.status_code == 200, answered.text
        result = await prompt_result(bob, prompt_id)
        await bob.post(f"/v1/sessions/{session.session_id}/close")
        histories = [
            await history_text(harness, prompt_id),
            await history_text(harness, session_workflow),
        ]
    return Outcome("\n".join([json.dumps(result), *histories]), facts)


async def read_bobs_history(
    stack: AttackStack, attack: Attack, connect: Connect = temporal_client
) -> Outcome:
    """Fetch the histories of bob's first prompt and his session (their tool arguments
    carry his file's content)."""
    facts: dict[str, Any] = {}
    attacker = await attacker_client(connect, stack, facts)
    seen = []
    if attacker is not None:
        for workflow_id in (stack.bob["prompt_id"], f"session-{stack.bob['session_id']}"):
            try:
                seen.append(await history_text(attacker, workflow_id))
            except Exception as err:
                facts.setdefault("refused", []).append(type(err).__name__)
    return Outcome("\n".join(seen), facts)


# --- the codec ------------------------------------------------------------------------------


def stored_references(history: dict[str, Any]) -> list[dict[str, Any]]:
    """Every External Storage reference payload (proto3 JSON) in a history's JSON."""
    import base64

    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            metadata = node.get("metadata")
            if isinstance(metadata, dict) and "messageType" in metadata:
                with contextlib.suppress(ValueError):
                    if base64.b64decode(metadata["messageType"]).decode() == REFERENCE_TYPE:
                        found.append(node)
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(history)
    return found


async def alice_decodes_bobs_payload(stack: AttackStack, attack: Attack) -> Outcome:
    references = stack.bob["references"]
    assert references, "bob's prompt stored no payload"
    async with gateway(stack, "alice") as alice:
        decoded = await alice.post("/codec/decode", json={"payloads": references})
    return Outcome(decoded_json(decoded.json()), {"status": decoded.status_code})


async def alice_decodes_bobs_chunks(stack: AttackStack, attack: Attack) -> Outcome:
    """bob's stored payload is kept as chunks (seawall/runtime/storage_chunks.py): alice names
    each chunk's digest (the worst case: she learned them) in references shaped like bob's,
    once claiming her own workflow and once his, and asks the codec to decode them."""
    import base64

    chunks = sorted(p.name for p in (stack.data_dir / "payloads" / "chunks").glob("*/*"))
    assert chunks, "bob's stored payload was not kept as chunks"
    [template, *_] = stack.bob["references"]
    claim = json.loads(base64.b64decode(template["data"]))

    def naming(digest: str, workflow_id: str) -> dict[str, Any]:
        def swap(node: Any) -> Any:
            if isinstance(node, dict):
                swapped = {k: swap(v) for k, v in node.items()}
                if "digest" in swapped:
                    swapped["digest"] = digest
                if "workflow_id" in swapped:
                    swapped["workflow_id"] = workflow_id
                return swapped
            return [swap(v) for v in node] if isinstance(node, list) else node

        data = json.dumps(swap(claim)).encode()
        return {**template, "data": base64.b64encode(data).decode()}

    facts: dict[str, Any] = {"chunks": len(chunks), "statuses": []}
    seen = []
    async with gateway(stack, "alice") as alice:
        for owner_workflow in ("alice-prompt", stack.bob["prompt_id"]):
            references = [naming(digest, owner_workflow) for digest in chunks]
            decoded = await alice.post("/codec/decode", json={"payloads": references})
            facts["statuses"].append(decoded.status_code)
            seen.append(decoded_json(decoded.json()))
    return Outcome("\n".join(seen), facts)


async def anonymous_reads_the_ui_settings(stack: AttackStack, attack: Attack) -> Outcome:
    """GET the dev UI's unauthenticated settings; if they name a codec endpoint, use it
    anonymously on bob's stored payload."""
    ui = f"http://127.0.0.1:{stack.ui_port}"
    async with httpx.AsyncClient(timeout=30) as anonymous:
        settings = await anonymous.get(f"{ui}/api/v1/settings")
        facts: dict[str, Any] = {"settings_status": settings.status_code}
        seen = [settings.text]
        endpoint = ""
        with contextlib.suppress(ValueError, AttributeError):
            codec = settings.json().get("Codec") or {}
            endpoint = codec.get("Endpoint") or ""
            facts["codec"] = {k: v for k, v in codec.items() if k != "Endpoint"}
        facts["exposes_a_codec_endpoint"] = bool(endpoint)
        if endpoint:
            decoded = await anonymous.post(
                f"{endpoint.rstrip('/')}/decode",
                json={"payloads": stack.bob["references"]},
                headers={"Origin": ui},
            )
            facts["decode_status"] = decoded.status_code
            with contextlib.suppress(ValueError):
                seen.append(decoded_json(decoded.json()))
    return Outcome("\n".join(seen), facts)


# --- the gateway ----------------------------------------------------------------------------


async def create_keyed(
    http: httpx.AsyncClient, stack: AttackStack, key: str, turns: list[Any], mode: str
) -> httpx.Response:
    script = {"turns": substituted(turns, stack.targets())}
    return await http.post(
        "/v1/sessions",
        json={"model_script": script, "approval_mode": mode},
        headers={"Idempotency-Key": key},
    )


async def session_closed(client: Client, session_id: str) -> None:
    await until(lambda: closed(client, f"session-{session_id}"))


async def reuse_a_key_after_close(stack: AttackStack, attack: Attack) -> Outcome:
    """Create a keyed session, prompt it, close it; create it again with the same key and
    prompt again. Prompt 1's id and result must never change."""
    harness = await temporal_client(stack)
    key = f"reused-{secrets.token_hex(6)}"
    facts: dict[str, Any] = {}
    async with gateway(stack, "alice") as alice:
        first = await create_keyed(alice, stack, key, [{"text": "the first answer"}], "yolo")
        assert first.status_code == 201, first.text
        session_id = first.json()["session_id"]
        sent = await alice.post(f"/v1/sessions/{session_id}/prompts", json={"text": "one"})
        assert sent.status_code == 202, sent.text
        first_prompt = sent.json()["prompt_id"]
        facts["first_answer"] = (await prompt_result(alice, first_prompt))["messages"][-1]
        await alice.post(f"/v1/sessions/{session_id}/close")
        await session_closed(harness, session_id)

        again = await create_keyed(alice, stack, key, [{"text": "the second answer"}], "yolo")
        facts["recreate_status"] = again.status_code
        if again.status_code == 201:
            facts["same_session_id"] = again.json()["session_id"] == session_id
            resent = await alice.post(
                f"/v1/sessions/{again.json()['session_id']}/prompts", json={"text": "two"}
            )
            facts["second_submit_status"] = resent.status_code
            if resent.status_code == 202:
                second_prompt = resent.json()["prompt_id"]
                facts["same_prompt_id"] = second_prompt == first_prompt
                await prompt_result(alice, second_prompt)
            await alice.post(f"/v1/sessions/{again.json()['session_id']}/close")
        view = (await alice.get(f"/v1/prompts/{first_prompt}")).json()
        facts["first_answer_now"] = (view.get("result") or {}).get("messages", [None])[-1]
    return Outcome(json.dumps(facts, default=str), facts)


async def old_keys_beat_the_limit(stack: AttackStack, attack: Attack) -> Outcome:
    """Run six keyed prompts (one at a time) in a keyed session; close it, re-create it with
    the same key and re-submit the six old prompt keys at once, each prompt waiting for a
    permission answer. Never more than the limit may run or wait at once."""
    harness = await temporal_client(stack)
    key = f"limit-{secrets.token_hex(6)}"
    prompt_keys = [f"{key}-p{i}" for i in range(6)]
    facts: dict[str, Any] = {"submits": []}
    session_ids: set[str] = set()
    async with gateway(stack, "alice") as alice:
        quick = [{"text": f"quick {i}"} for i in range(6)]
        first = await create_keyed(alice, stack, key, quick, "yolo")
        assert first.status_code == 201, first.text
        session_id = first.json()["session_id"]
        session_ids.add(session_id)
        for prompt_key in prompt_keys:
            sent = await alice.post(
                f"/v1/sessions/{session_id}/prompts",
                json={"text": "quick"},
                headers={"Idempotency-Key": prompt_key},
            )
            assert sent.status_code == 202, sent.text
            await prompt_result(alice, sent.json()["prompt_id"])
        await alice.post(f"/v1/sessions/{session_id}/close")
        await session_closed(harness, session_id)

        waiting = [
            {"tool_calls": [call("write_file", path=f"w{i}", content="x")]} for i in range(6)
        ]
        again = await create_keyed(alice, stack, key, waiting, "default")
        facts["recreate_status"] = again.status_code
        if again.status_code == 201:
            session_id = again.json()["session_id"]
            session_ids.add(session_id)
            for prompt_key in prompt_keys:
                sent = await alice.post(
                    f"/v1/sessions/{session_id}/prompts",
                    json={"text": "wait"},
                    headers={"Idempotency-Key": prompt_key},
                )
                facts["submits"].append(sent.status_code)
            status = (await alice.get(f"/v1/sessions/{session_id}")).json()
            facts["running_or_queued"] = len(status.get("queued_prompt_ids") or []) + bool(
                status.get("running_prompt_id")
            )
    for made in session_ids:
        await terminate(harness, f"session-{made}", *prompt_ids(made, 12))
    return Outcome(json.dumps(facts), facts)


async def huge_metadata(stack: AttackStack, attack: Attack) -> Outcome:
    """20 sessions with 1 MB of client_metadata each."""
    statuses = []
    harness = await temporal_client(stack)
    async with gateway(stack, "alice") as alice:
        for i in range(20):
            made = await alice.post(
                "/v1/sessions", json={"client_metadata": {"blob": f"{i}" + "x" * 1_000_000}}
            )
            statuses.append(made.status_code)
            if made.status_code == 201:
                await terminate(harness, f"session-{made.json()['session_id']}")
    return Outcome("", {"statuses": statuses})


async def admin_on_ids_without_the_marker(stack: AttackStack, attack: Attack) -> Outcome:
    """The admin token on prompt routes with ids that are no prompt's: bob's session
    workflow id, a random hex id."""
    bobs = f"session-{stack.bob['session_id']}"
    random_id = secrets.token_hex(16)
    statuses = {}
    async with gateway(stack, "admin") as admin:
        for path in (
            f"/v1/prompts/{bobs}",
            f"/v1/prompts/{random_id}",
            f"/v1/prompts/{bobs}/permissions/permission-1",
        ):
            method = "POST" if "permissions" in path else "GET"
            body = {"approve": True} if method == "POST" else None
            statuses[path] = (await admin.request(method, path, json=body)).status_code
        async with admin.stream("GET", f"/v1/prompts/{random_id}/events") as response:
            statuses[f"/v1/prompts/{random_id}/events"] = response.status_code
    return Outcome("", {"statuses": statuses})


def signals_in(history: str, name: str) -> int:
    return history.count(f'"signalName": "{name}"')


async def drop_a_stream_on_bobs_session(stack: AttackStack, attack: Attack) -> Outcome:
    """The admin token opens the event stream of bob's *session* workflow id (no
    ``-prompt-``) and drops it. Then bob drops a stream of his own prompt, the control: once
    that signal is in his prompt's history, the attacker's (sent earlier, the same way)
    would be in his session's."""
    harness = await temporal_client(stack)
    async with gateway(stack, "bob") as bob, gateway(stack, "admin") as admin:
        session, prompt_id = await bobs_waiting_prompt(stack, bob)
        request_id = await pending_request(bob, prompt_id)
        session_workflow = f"session-{session.session_id}"
        async with admin.stream("GET", f"/v1/prompts/{session_workflow}/events") as hostile:
            status = hostile.status_code
        async with bob.stream("GET", f"/v1/prompts/{prompt_id}/events") as own:
            assert own.status_code == 200

        async def control_arrived() -> bool:
            history = await history_text(harness, prompt_id)
            return signals_in(history, "client_disconnected") > 0

        await until(control_arrived, timeout=60)
        history = await history_text(harness, session_workflow)
        await bob.post(f"/v1/prompts/{prompt_id}/permissions/{request_id}", json={"approve": False})
        await prompt_result(bob, prompt_id)
        await bob.post(f"/v1/sessions/{session.session_id}/close")
    foreign = signals_in(history, "client_disconnected")
    return Outcome("", {"hostile_status": status, "signals_on_bobs_session": foreign})


async def read_the_data_dir_as_another_user(stack: AttackStack, attack: Attack) -> Outcome:
    """What another local user could open: the data dir's mode, and every file under it
    (bar the workspaces, the owners' own project files) with group or other bits."""
    data = stack.data_dir
    readable = []
    for path in data.rglob("*"):
        if stack.workspaces in path.parents or path == stack.workspaces:
            continue
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            # Gone between the listing and the look (the live server's SQLite journal comes
            # and goes): nobody can open what no longer exists.
            continue
        if stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) & 0o077:
            readable.append(f"{path.relative_to(data)} {oct(stat.S_IMODE(st.st_mode))}")
    return Outcome(
        "", {"data_dir_mode": oct(stat.S_IMODE(os.stat(data).st_mode)), "readable": readable}
    )


# --- ACP ------------------------------------------------------------------------------------


async def through_acp(stack: AttackStack, attack: Attack, *, editor_fs: bool = False) -> Outcome:
    """``seawall acp`` (an editor's bridge, as alice's local owner) on the stack's frontend
    and task queue, so the stack's worker runs the hostile model's calls. ``editor_fs``: with
    ``acp_client_tools: fs`` and a naive editor that offers its file system and reads or
    writes whatever path it is given (tests/e2e/test_acp_editor_fs.py), so only Seawall's
    checks stand between the model and the host."""
    from tests.e2e.test_acp import Recorder, new_session, say, spawn_bridge
    from tests.e2e.test_acp_editor_fs import FS, Editor

    workspace = stack.workspaces / f"acp-{secrets.token_hex(6)}"
    workspace.mkdir(parents=True)
    env = {
        "PATH": os.environ["PATH"],
        "TEMPORAL_ADDRESS": stack.temporal_address,
        "TEMPORAL_NAMESPACE": "default",
        "SEAWALL_TASK_QUEUE": TASK_QUEUE,
        "SEAWALL_ALLOW_SCRIPTED_MODELS": "1",
        "SEAWALL_APPROVAL_MODE": "yolo",
        "SEAWALL_OWNER_ID": attack.owner,
        "SEAWALL_DATA_DIR": str(stack.data_dir),
        "XDG_CONFIG_HOME": str(stack.root / "acp-config"),
        "XDG_DATA_HOME": str(stack.root / "acp-data-home"),
    }
    if editor_fs:
        env["SEAWALL_ACP_CLIENT_TOOLS"] = "fs"
    recorder = Editor() if editor_fs else Recorder()
    for _ in range(20):  # a call that asks anyway is refused, never left waiting
        recorder.answers.put_nowait("cancelled")
    turns = [*substituted(attack.turns, stack.targets()), {"text": "done"}]
    async with spawn_bridge(
        env, stack.root / "acp.stderr", recorder=recorder, capabilities=FS if editor_fs else None
    ) as (conn, rec, _):
        session_id = await new_session(conn, workspace, turns)
        answer = await asyncio.wait_for(say(conn, session_id, "go"), 240)
    seen = "\n".join([repr(rec.updates), repr(answer), tree_text(workspace)])
    facts: dict[str, Any] = {"stop_reason": answer.stop_reason}
    if isinstance(recorder, Editor):
        # What the editor was asked for: every path must be in the workspace.
        facts["editor_paths"] = [path for _, path in recorder.fs_requests]
        facts["workspace"] = str(workspace)
    return Outcome(seen, facts)
