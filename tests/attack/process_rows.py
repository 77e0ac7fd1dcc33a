"""The attack table's ``process`` rows (tests/attack/table.py): one per kind of process, each
proving that the operator's secrets it does not read are not in it (docs/security.md,
"Secrets: where each one is").

The attacker is whoever can read that process's environment and memory: a local user of the
operator's account, a debugger, a core dump or a crash report, an exploit of the process.
Each row finds the live process, reads its ``/proc/<pid>/environ`` and every writable
mapping of its memory (tests/process_secrets.py), and checks that none of the secrets it
must not hold is there. Each also looks for a value the process does hold (a control: its
own token, its command's marker), so a read that sees nothing fails the row instead of
passing it. The secrets are planted as an operator would: in the environment ``seawall up``
starts with, and a model key in the operator's config file (tests/attack/stack.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import signal
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from tests.attack.hostile import Outcome, call, create_session, gateway, shell, substituted, until
from tests.attack.stack import MCP_SERVER_GIT, SEAWALL, TASK_QUEUE, AttackStack
from tests.process_secrets import cmdline_of, descendants_of, environ_of, held_in_memory

if TYPE_CHECKING:
    from tests.attack.table import Attack

OPERATOR_TOKENS = ("alice's gateway token", "bob's gateway token", "the admin gateway token")
GATEWAY_CREDENTIALS = (*OPERATOR_TOKENS, "the codec token")
MODEL_SECRETS = ("the model API key", "the config file's model API key", "the MCP server's secret")
# A process that runs a model's command holds none of them.
EVERY_SECRET = (*GATEWAY_CREDENTIALS, *MODEL_SECRETS, "MY_DB_PASSWD")


def inspect(
    stack: AttackStack, pids: list[int], forbidden: tuple[str, ...], control: str
) -> Outcome:
    """What a reader of processes ``pids`` finds: which of the ``forbidden`` secrets (by
    name) each holds in its environment or memory, and whether the ``control`` value, which
    they do hold, was found (so the read saw something)."""
    values = stack.secrets.named()
    watched = {name: values[name] for name in forbidden} | {"control": control}
    held: dict[str, list[str]] = {}
    found_control = False
    for pid in pids:
        environ = "\n".join(f"{k}={v}" for k, v in environ_of(pid).items())
        where = {name for name, value in watched.items() if value in environ}
        where |= held_in_memory(pid, watched)
        found_control |= "control" in where
        for name in sorted(where - {"control"}):
            held.setdefault(name, []).append(f"{masked(cmdline_of(pid), values)[:80]} (pid {pid})")
    return Outcome("", {"held": held, "control_found": found_control, "read": pids})


def masked(text: str, values: dict[str, str]) -> str:
    """``text`` with every secret replaced, for a failure's message."""
    for value in values.values():
        text = text.replace(value, "<secret>")
    return text


def holds_none(stack: AttackStack, outcome: Outcome) -> None:
    """The row's goal, a forbidden secret in the process, was not reached; and the read
    found the control value, so it could have found the secret."""
    facts = outcome.facts
    assert facts["read"], "no process of the kind was found to read"
    assert facts["control_found"], "the read found not even the control value: it proves nothing"
    assert not facts["held"], f"secrets the process must not hold: {facts['held']}"


def pid_file(stack: AttackStack, name: str) -> list[int]:
    return [stack.pid(name)]


# --- the stack's own processes ------------------------------------------------------------


async def the_gateway(stack: AttackStack, attack: Attack) -> Outcome:
    """The gateway: its own admin token is the control."""
    forbidden = MODEL_SECRETS
    return inspect(stack, pid_file(stack, "gateway"), forbidden, stack.secrets.admin_token)


async def the_worker(stack: AttackStack, attack: Attack) -> Outcome:
    """The worker: its model key is the control."""
    return inspect(stack, pid_file(stack, "worker"), GATEWAY_CREDENTIALS, stack.secrets.model_key)


async def a_tool_process(stack: AttackStack, attack: Attack) -> Outcome:
    """alice's model runs a command that waits; the command's process (its shell, in the
    sandbox) is read while it runs, then the prompt is cancelled. Its marker is the
    control."""
    marker = f"{stack.marker}-tool"
    async with gateway(stack, "alice") as http:
        turns = [{"tool_calls": [shell(f"sleep 300; echo {marker}")]}]
        made = await create_session(http, stack, turns)
        sent = await http.post(f"/v1/sessions/{made.session_id}/prompts", json={"text": "go"})
        assert sent.status_code == 202, sent.text
        try:
            worker = stack.pid("worker")
            shells = await until(lambda: processes_with(worker, f"echo {marker}"), timeout=120)
            outcome = inspect(stack, shells, EVERY_SECRET, marker)
        finally:
            await http.post(f"/v1/sessions/{made.session_id}/cancel")
            await http.post(f"/v1/sessions/{made.session_id}/close")
    return outcome


async def an_mcp_server(stack: AttackStack, attack: Attack) -> Outcome:
    """alice's model calls the operator's stdio git MCP server, which then stays pooled; its
    processes (the sandbox's supervisor and the server) are read. The server's own secret,
    its ``env``, is the control."""
    async with gateway(stack, "alice") as http:
        turns = [{"tool_calls": [call("mcp__git__git_status", repo_path=".")]}]
        made = await create_session(http, stack, turns)
        sent = await http.post(f"/v1/sessions/{made.session_id}/prompts", json={"text": "go"})
        assert sent.status_code == 202, sent.text
        await until(lambda: finished(http, sent.json()["prompt_id"]))
        servers = await processes_with(stack.pid("worker"), MCP_SERVER_GIT)
        await http.post(f"/v1/sessions/{made.session_id}/close")
    forbidden = (*GATEWAY_CREDENTIALS, "the model API key", "the config file's model API key")
    return inspect(stack, servers, (*forbidden, "MY_DB_PASSWD"), stack.secrets.mcp_secret)


async def finished(http: Any, prompt_id: str) -> bool:
    response = await http.get(f"/v1/prompts/{prompt_id}")
    return response.status_code == 200 and response.json().get("result") is not None


async def processes_with(parent: int, text: str) -> list[int]:
    """The live descendants of ``parent`` whose command line has ``text``."""
    return [pid for pid in descendants_of(parent) if text in cmdline_of(pid)]


# --- processes the operator starts beside the stack -----------------------------------------


async def seawall_run(stack: AttackStack, attack: Attack) -> Outcome:
    """``seawall run`` started in the operator's environment (the stack's: the admin and
    codec tokens, the tokens file, the model key) with a scenario whose command waits; the
    run's process is read while its in-process worker runs that command, then stopped with
    Ctrl-C. The scenario's marker, which it read, is the control."""
    marker = f"{stack.marker}-run"
    scenario = stack.root / f"{marker}.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {
                "name": marker,
                "approval_mode": "yolo",
                "model": {
                    "turns": [
                        {"tool_calls": [shell(f"sleep 300; echo {marker}")]},
                        {"text": "done"},
                    ]
                },
            }
        )
    )
    env = {**stack.environment, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("SEAWALL_TASK_QUEUE")  # its own queue, for its in-process worker
    run = subprocess.Popen(
        [SEAWALL, "run", str(scenario)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(stack.root / f"{marker}.stderr").open("ab"),
    )
    try:
        await until(lambda: processes_with(run.pid, f"echo {marker}"), timeout=180)
        # Its in-process worker's model key and MCP servers it may hold; no gateway's.
        return inspect(stack, [run.pid], GATEWAY_CREDENTIALS, marker)
    finally:
        await stopped(run)


async def seawall_acp(stack: AttackStack, attack: Attack) -> Outcome:
    """``seawall acp`` (an editor's bridge, not embedded: it reads no model setting) started
    in the operator's environment on the stack's worker, after a prompt; the bridge is read
    while its editor is still connected. The prompt's marker, which it sent, is the
    control."""
    from tests.e2e.test_acp import Recorder, new_session, say, spawn_bridge

    marker = f"{stack.marker}-acp"
    workspace = stack.workspaces / f"acp-{secrets.token_hex(6)}"
    workspace.mkdir(parents=True)
    env = {
        **stack.environment,
        "TEMPORAL_ADDRESS": stack.temporal_address,
        "SEAWALL_TASK_QUEUE": TASK_QUEUE,
        "SEAWALL_APPROVAL_MODE": "yolo",
        "SEAWALL_OWNER_ID": "alice",
        "XDG_DATA_HOME": str(stack.root / "acp-data-home"),
    }
    turns = [*substituted([{"tool_calls": [shell(f"echo {marker}")]}], stack.targets())]
    recorder = Recorder()
    async with spawn_bridge(env, stack.root / "acp.stderr", recorder=recorder) as (conn, _, bridge):
        session_id = await new_session(conn, workspace, [*turns, {"text": "done"}])
        await asyncio.wait_for(say(conn, session_id, "go"), 240)
        forbidden = (*GATEWAY_CREDENTIALS, *MODEL_SECRETS)
        return inspect(stack, [bridge.pid], forbidden, marker)


async def every_command_line(stack: AttackStack, attack: Attack) -> Outcome:
    """Every process's command line on the host, as any local user reads them (no
    ``hidepid``), while the stack runs and alice's stdio MCP server is up (its token, in
    ``mcp.json``'s ``env``, once travelled in its sandbox's command lines). That a line of
    the MCP server's was read is the control."""
    async with gateway(stack, "alice") as http:
        turns = [{"tool_calls": [call("mcp__git__git_status", repo_path=".")]}]
        made = await create_session(http, stack, turns)
        sent = await http.post(f"/v1/sessions/{made.session_id}/prompts", json={"text": "go"})
        assert sent.status_code == 202, sent.text
        await until(lambda: finished(http, sent.json()["prompt_id"]))
        lines = [cmdline_of(int(p.name)) for p in Path("/proc").iterdir() if p.name.isdigit()]
        await http.post(f"/v1/sessions/{made.session_id}/close")
    values = stack.secrets.named()
    held = {
        name: [masked(line, values)[:80] for line in lines if value in line]
        for name, value in values.items()
    }
    found_control = any(MCP_SERVER_GIT in line for line in lines)
    facts = {"held": {k: v for k, v in held.items() if v}, "control_found": found_control}
    return Outcome("", {**facts, "read": [line for line in lines if line]})


async def stopped(process: subprocess.Popen[bytes]) -> None:
    """Stop a process this row started as its user would (Ctrl-C), so it stops what it
    started (an embedded dev server); killed if it does not."""
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGINT)
    try:
        await asyncio.to_thread(process.wait, 60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


Drive = Callable[[AttackStack, "Attack"], Awaitable[Outcome]]

# The rows, as the table's fields (tests/attack/table.py makes them Attacks).
ROWS: list[dict[str, Any]] = [
    {
        "id": "process-gateway-holds-no-model-secret",
        "tries": "read the gateway's environ and memory for the model key (the environment's "
        "and the config file's) and the MCP server's secret",
        "drive": the_gateway,
    },
    {
        "id": "process-worker-holds-no-gateway-credential",
        "tries": "read the worker's environ and memory for the admin and codec tokens and "
        "every owner's token (the tokens file it knows the path of)",
        "drive": the_worker,
    },
    {
        "id": "process-tool-holds-no-secret",
        "tries": "read the environ and memory of a model's running command for every secret",
        "drive": a_tool_process,
    },
    {
        "id": "process-stdio-mcp-server-holds-no-secret",
        "tries": "read the environ and memory of the operator's stdio MCP server (and its "
        "sandbox's supervisor) for the operator's tokens and the model key",
        "drive": an_mcp_server,
    },
    {
        "id": "process-seawall-run-holds-no-gateway-credential",
        "tries": "read the environ and memory of `seawall run`, started with the operator's "
        "gateway, codec and owner tokens, for them and the config file's model key",
        "drive": seawall_run,
    },
    {
        "id": "process-argv-holds-no-secret",
        "tries": "read every process's command line on the host (the stack, its sandboxes, "
        "the stdio MCP server's) for every secret",
        "drive": every_command_line,
    },
    {
        "id": "process-seawall-acp-holds-no-secret",
        "tries": "read the environ and memory of `seawall acp`, started with every secret "
        "of the operator's, for the tokens, the model keys and the MCP server's secret",
        "drive": seawall_acp,
    },
]
PROCESS_ROWS = [
    {**row, "owner": "local user", "via": "process", "turns": [], "goal_not_reached": holds_none}
    for row in ROWS
]
