"""How an attack is delivered: a hostile scripted model in an owner's session through the
real gateway, or a client of the stack's Temporal frontend; and what the attacker then saw.

"What the attacker saw" is everything the attacking owner can read back: the prompt's
result and its event stream over the gateway, and every file in the owner's own workspace
(where a command could have copied what it found). The checks look for secrets there.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError

from seawall.runtime.plugin import SeawallPlugin
from tests.attack.stack import NAMESPACE, AttackStack
from tests.long_prompt_helpers import filesystem_storage

Turn = dict[str, Any]
# Long enough for a prompt on a loaded machine; a prompt that never ends fails its test.
PROMPT_TIMEOUT = 240.0


def shell(command: str) -> dict[str, Any]:
    return {"name": "run_shell_command", "arguments": {"command": command}}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


_PLACEHOLDER = re.compile(r"@\{(\w+)\}")


def substituted(value: Any, targets: dict[str, str]) -> Any:
    """``value`` (JSON) with every ``@{name}`` replaced by the stack's ``targets[name]``."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: targets[m.group(1)], value)
    if isinstance(value, list):
        return [substituted(v, targets) for v in value]
    if isinstance(value, dict):
        return {k: substituted(v, targets) for k, v in value.items()}
    return value


def token_of(stack: AttackStack, owner: str) -> str:
    return {
        "alice": stack.secrets.alice_token,
        "bob": stack.secrets.bob_token,
        "admin": stack.secrets.admin_token,
    }[owner]


def gateway(stack: AttackStack, owner: str) -> httpx.AsyncClient:
    """An HTTP client of the stack's gateway with ``owner``'s token ("anonymous": none)."""
    headers = {} if owner == "anonymous" else {"Authorization": f"Bearer {token_of(stack, owner)}"}
    return httpx.AsyncClient(base_url=stack.url, headers=headers, timeout=60)


async def temporal_client(stack: AttackStack) -> Client:
    """A client of the stack's frontend as any process that reaches its port has one (the
    dev server asks for no credential), with the project's public data converter and the
    stack's payload store, so results can be read."""
    storage = filesystem_storage(stack.data_dir / "payloads")
    return await Client.connect(
        stack.temporal_address,
        namespace=NAMESPACE,
        plugins=[SeawallPlugin(storage=storage)],
    )


async def until(check: Callable[[], Awaitable[Any]], timeout: float = PROMPT_TIMEOUT) -> Any:
    """Poll another process's progress until ``check`` returns something truthy."""

    async def poll() -> Any:
        while not (found := await check()):
            await asyncio.sleep(0.1)
        return found

    return await asyncio.wait_for(poll(), timeout)


def tree_text(root: Path) -> str:
    """Every file under ``root`` as text (what a command could have copied there). Links
    are left out: their content is another file's, which a row about links judges by what
    the tools returned."""
    if not root.is_dir():
        return ""
    parts = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.stat().st_nlink == 1:
            try:
                parts.append(path.read_bytes().decode("utf-8", errors="replace"))
            except OSError:
                continue
    return "\n".join(parts)


@dataclass
class Outcome:
    """What the attacker saw, and anything else the attack's check needs."""

    seen: str = ""
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class Session:
    session_id: str
    workspace: Path


async def create_session(
    http: httpx.AsyncClient,
    stack: AttackStack,
    turns: list[Turn],
    approval_mode: str = "yolo",
    **extra: Any,
) -> Session:
    script = {"turns": [*substituted(turns, stack.targets()), {"text": "done"}]}
    created = await http.post(
        "/v1/sessions",
        json={"model_script": script, "approval_mode": approval_mode, **extra},
    )
    assert created.status_code == 201, created.text
    session_id = created.json()["session_id"]
    return Session(session_id, stack.workspaces / session_id)


async def prompt_result(http: httpx.AsyncClient, prompt_id: str) -> dict[str, Any]:
    """The prompt's result once it has one; a prompt that fails or never ends fails here."""

    async def done() -> dict[str, Any] | None:
        response = await http.get(f"/v1/prompts/{prompt_id}")
        assert response.status_code == 200, response.text
        result: dict[str, Any] | None = response.json().get("result")
        return result

    try:
        found: dict[str, Any] = await until(done)
    except TimeoutError:
        raise AssertionError(f"prompt {prompt_id} did not finish") from None
    return found


async def events_text(http: httpx.AsyncClient, prompt_id: str) -> str:
    """The prompt's whole event stream (it ends after ``prompt_finished``)."""
    lines = []
    async with http.stream("GET", f"/v1/prompts/{prompt_id}/events") as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            lines.append(line)
    return "\n".join(lines)


async def hostile_prompt(
    stack: AttackStack, owner: str, turns: list[Turn], close: bool = True, **session: Any
) -> Outcome:
    """One prompt of a new ``owner`` session whose model answers with ``turns`` (then ends
    its turn); returns all the owner can read back of it. The session is closed after."""
    async with gateway(stack, owner) as http:
        made = await create_session(http, stack, turns, **session)
        sent = await http.post(f"/v1/sessions/{made.session_id}/prompts", json={"text": "go"})
        assert sent.status_code == 202, sent.text
        prompt_id = sent.json()["prompt_id"]
        result = await prompt_result(http, prompt_id)
        events = await events_text(http, prompt_id)
        if close:
            done = await http.post(f"/v1/sessions/{made.session_id}/close")
            assert done.status_code == 202, done.text
    seen = "\n".join([json.dumps(result), events, tree_text(made.workspace)])
    return Outcome(seen, {"result": result, "session": made, "prompt_id": prompt_id})


async def history_text(client: Client, workflow_id: str) -> str:
    """A workflow's whole history as JSON text ("" when there is no such workflow)."""
    try:
        history = await client.get_workflow_handle(workflow_id).fetch_history()
    except RPCError:
        return ""
    return decoded_json(history.to_json_dict())


def decoded_json(value: Any) -> str:
    """JSON text of ``value`` with every base64 payload ``data`` also shown decoded, so a
    secret in a payload is found as the text it is."""
    decoded: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, child in node.items():
                if key == "data" and isinstance(child, str):
                    with contextlib.suppress(ValueError):
                        decoded.append(base64.b64decode(child).decode("utf-8", "replace"))
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(value)
    return "\n".join([json.dumps(value), *decoded])


async def closed(client: Client, workflow_id: str) -> bool:
    try:
        described = await client.get_workflow_handle(workflow_id).describe()
    except RPCError:
        return False
    return described.status not in (None, WorkflowExecutionStatus.RUNNING)
