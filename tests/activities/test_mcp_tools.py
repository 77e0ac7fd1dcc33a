"""MCP tools against a real MCP server subprocess (the SDK's MCPServer), no mocks."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

import activities.heartbeat as heartbeat
from activities.mcp import current_settings, load_mcp_settings, qualified_name, server_of
from activities.mcp.pool import McpPool
from activities.sandbox import UNCONFINED
from activities.tool_runner import ToolActivities
from activities.tools import BUILTIN_TOOLS
from bench.server_metrics import free_port
from tests.trust_helpers import harness_trust
from workflows.contracts import ToolCall, ToolOutcome
from workflows.contracts.activity import (
    CheckToolCallInput,
    ListToolsInput,
    RunToolInput,
    ToolSpec,
)
from workflows.contracts.grant import WORKSPACE_OUTSIDE_ROOT

from .mcp_helpers import (
    FIXTURE_SERVER,
    SERVER,
    captured_logs,
    qualified,
    servers_env,
    stdio_server,
)


@pytest.fixture
def mcp_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[pytest.MonkeyPatch]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("SEAWALL_MCP_TOOL_TIMEOUT_SECONDS", "SEAWALL_MCP_CONNECT_TIMEOUT_SECONDS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SEAWALL_MCP_SERVERS", servers_env({SERVER: stdio_server()}))
    yield monkeypatch


@pytest.fixture
def pool() -> McpPool:
    return McpPool()


@pytest_asyncio.fixture
async def tools(pool: McpPool) -> AsyncIterator[ToolActivities]:
    """The tool activities with their own MCP pool: each test starts and stops its own
    servers, as a worker does. Bare (``sandbox: none``), so the tests can signal a server
    by the pid it reports; test_mcp_sandbox.py runs servers in the sandbox."""
    activities = ToolActivities(BUILTIN_TOOLS, pool, sandbox=UNCONFINED, trust=harness_trust())
    yield activities
    await activities.close()


def call(tool: str, arguments: dict[str, Any] | None = None) -> ToolCall:
    return ToolCall(
        call_id=f"c-{tool}-{time.monotonic_ns()}", name=qualified(tool), arguments=arguments or {}
    )


async def run(
    tools: ToolActivities,
    tool_call: ToolCall,
    tmp_path: Path,
    env: ActivityEnvironment | None = None,
    **extra: Any,
) -> ToolOutcome:
    inp = RunToolInput(call=tool_call, workspace_root=str(tmp_path / "ws"), **extra)
    return await (env or ActivityEnvironment()).run(tools.run_tool, inp)


async def server_pid(tools: ToolActivities, tmp_path: Path) -> int:
    outcome = await run(tools, call("pid"), tmp_path)
    assert outcome.status == "success", outcome
    return int(outcome.content)


async def listed(
    tools: ToolActivities, fixture_tools: dict[str, Any] | None = None
) -> dict[str, ToolSpec]:
    out = await ActivityEnvironment().run(
        tools.list_tools, ListToolsInput(scenario_tools=fixture_tools)
    )
    return {spec.name: spec for spec in out.tools}


# --- listing --------------------------------------------------------------------------------


async def test_with_mcp_servers_the_local_listing_leaves_it_to_the_activity(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch
) -> None:
    """A configured MCP server must be asked, which may take seconds: the prompt's local
    activity answers ``None`` so the heartbeating ``seawall.list_tools`` activity lists."""
    local = await ActivityEnvironment().run(tools.list_tools_without_mcp, ListToolsInput())
    assert local is None
    assert any(name.startswith("mcp__") for name in await listed(tools))


async def test_tools_are_listed_with_qualified_names(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch
) -> None:
    specs = await listed(tools)
    mcp_specs = {name: spec for name, spec in specs.items() if name.startswith("mcp__")}
    assert set(mcp_specs) == {
        qualified(tool) for tool in ("echo", "pid", "always_fails", "slow", "add", "lookup")
    }
    assert "read_file" in specs  # the built-ins are still there
    echo = mcp_specs[qualified("echo")]
    assert echo.tool_type == "mcp"
    assert echo.description == "Return the text unchanged."
    assert echo.parameters["type"] == "object"
    assert echo.parameters["properties"]["text"]["type"] == "string"
    assert echo.parameters["required"] == ["text"]
    # An untrusted server's tools ask for permission unless marked read-only.
    assert echo.mutating
    assert not mcp_specs[qualified("lookup")].mutating


async def test_trusted_server_tools_do_not_ask(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch
) -> None:
    mcp_env.setenv("SEAWALL_MCP_SERVERS", servers_env({SERVER: stdio_server(trust=True)}))
    specs = await listed(tools)
    assert not specs[qualified("echo")].mutating


async def test_no_servers_lists_builtins_only(
    tools: ToolActivities, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("SEAWALL_MCP_SERVERS", raising=False)
    specs = await listed(tools)
    assert not any(name.startswith("mcp__") for name in specs)


async def test_servers_from_the_user_config_file(
    tools: ToolActivities, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("SEAWALL_MCP_SERVERS", raising=False)
    path = tmp_path / "seawall" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(servers_env({"mcpServers": {"files": stdio_server()}}))
    specs = await listed(tools)
    assert "mcp__files__echo" in specs


async def test_unstartable_server_is_skipped(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mcp_env.setenv(
        "SEAWALL_MCP_SERVERS",
        servers_env(
            {
                SERVER: stdio_server(),
                "broken": {"command": str(tmp_path / "no-such-binary")},
            }
        ),
    )
    with captured_logs() as logs:
        specs = await listed(tools)
        outcome = await run(
            tools,
            ToolCall(call_id="b1", name="mcp__broken__echo", arguments={"text": "x"}),
            tmp_path,
        )
    assert qualified("echo") in specs
    assert not any(name.startswith("mcp__broken__") for name in specs)
    assert outcome.status == "error"
    assert outcome.execution_status == "error"
    assert outcome.execution_error_type == "execution_failed"
    assert "could not be started" in outcome.content
    assert any("mcp_server_unavailable" in text for text in logs)
    assert not any("broken" in text or SERVER in text for text in logs)


# --- calls ----------------------------------------------------------------------------------


async def test_call_succeeds(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    outcome = await run(tools, call("echo", {"text": "hello MCP"}), tmp_path)
    assert outcome.status == "success"
    assert outcome.execution_status == "success"
    assert outcome.content == "hello MCP"
    assert outcome.policy_tool_name == qualified("echo")
    assert outcome.tool_type == "mcp"
    assert outcome.error_type is None


async def test_connection_is_reused_across_calls(
    tools: ToolActivities, pool: McpPool, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    await listed(tools)
    first = await server_pid(tools, tmp_path)
    results = await asyncio.gather(
        *(run(tools, call("echo", {"text": str(i)}), tmp_path) for i in range(5))
    )
    assert [r.content for r in results] == [str(i) for i in range(5)]
    await listed(tools)
    assert await server_pid(tools, tmp_path) == first
    assert first != os.getpid()
    assert len(pool.connections()) == 1


async def test_error_result_is_mcp_tool_error(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    outcome = await run(tools, call("always_fails", {"n": 1}), tmp_path)
    assert outcome.status == "error"
    assert outcome.execution_status == "error"
    assert outcome.error_type == "mcp_tool_error"
    assert outcome.execution_error_type == "mcp_tool_error"
    assert "backend unavailable" in outcome.content
    assert outcome.error_message == outcome.content
    assert outcome.policy_tool_name == qualified("always_fails")
    assert outcome.tool_type == "mcp"


async def test_timeout_is_execution_timeout(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    before = await server_pid(tools, tmp_path)
    started = time.monotonic()
    outcome = await run(tools, call("slow", {"seconds": 30}), tmp_path, shell_timeout_seconds=0.5)
    assert time.monotonic() - started < 5
    assert outcome.status == "error"
    assert outcome.execution_status == "error"
    assert outcome.execution_error_type == "execution_timeout"
    assert outcome.error_type == "execution_timeout"
    # The session survived the abandoned request.
    assert await server_pid(tools, tmp_path) == before


async def test_operator_timeout_setting(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mcp_env.setenv("SEAWALL_MCP_TOOL_TIMEOUT_SECONDS", "0.3")
    outcome = await run(tools, call("slow", {"seconds": 30}), tmp_path)
    assert outcome.execution_error_type == "execution_timeout"


async def test_dead_server_is_an_error_then_restarted(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with captured_logs() as logs:
        first = await server_pid(tools, tmp_path)
        os.kill(first, signal.SIGKILL)
        await asyncio.sleep(0.5)
        dead = await run(tools, call("echo", {"text": "anyone?"}), tmp_path)
        assert dead.status == "error"
        assert dead.execution_status == "error"
        assert dead.execution_error_type == "execution_failed"
        assert "restarted" in dead.content
        assert dead.tool_type == "mcp"
        # The following call starts a new server process.
        second = await server_pid(tools, tmp_path)
        assert second != first
        again = await run(tools, call("echo", {"text": "back"}), tmp_path)
        assert again.content == "back"
    assert any("mcp_connection_lost" in text for text in logs)
    assert not any(SERVER in text for text in logs)


async def test_unknown_tool_and_server_are_not_registered(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    unknown_tool = await run(tools, call("no_such_tool"), tmp_path)
    unknown_server = await run(
        tools,
        ToolCall(call_id="u2", name="mcp__elsewhere__echo", arguments={"text": "x"}),
        tmp_path,
    )
    malformed = await run(tools, ToolCall(call_id="u3", name="mcp__", arguments={}), tmp_path)
    for outcome in (unknown_tool, unknown_server, malformed):
        assert outcome.status == "error"
        assert outcome.execution_status == "not_started"
        assert outcome.error_type == "tool_not_registered"
        assert outcome.policy_tool_name is None
    assert qualified("echo") in unknown_tool.content  # the server's real tools are named


async def test_invalid_arguments_never_reach_the_server(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    broken = ToolCall(call_id="i1", name=qualified("add"), arguments=None, raw_arguments='{"a": 1,')
    wrong_type = call("add", {"a": "one", "b": 2})
    missing = call("add", {"a": 1})
    for tool_call in (broken, wrong_type, missing):
        outcome = await run(tools, tool_call, tmp_path)
        assert outcome.status == "error"
        assert outcome.execution_status == "not_started"
        assert outcome.error_type == "invalid_tool_params"
        assert outcome.policy_tool_name == qualified("add")
        assert outcome.tool_type == "mcp"
    assert "'one' is not of type 'integer'" in (await run(tools, wrong_type, tmp_path)).content
    ok = await run(tools, call("add", {"a": 2, "b": 3}), tmp_path)
    assert ok.content == "5"


async def test_check_tool_call_validates_mcp_calls(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    env = ActivityEnvironment()
    valid = await env.run(
        tools.check_tool_call, CheckToolCallInput(call=call("echo", {"text": "x"}))
    )
    assert valid is None
    invalid = await env.run(
        tools.check_tool_call, CheckToolCallInput(call=call("echo", {"text": 3}))
    )
    assert invalid is not None and invalid.error_type == "invalid_tool_params"
    unknown = await env.run(tools.check_tool_call, CheckToolCallInput(call=call("nope")))
    assert unknown is not None and unknown.error_type == "tool_not_registered"


async def test_a_session_workspace_outside_the_workers_starts_no_server(
    pool: McpPool, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The workspace a listing or a check names is workflow input: outside the worker's
    workspaces (docs/security-trust.md) no MCP server is started there, nor the directory
    made; inside them the same server lists and checks."""
    tools = ToolActivities(
        BUILTIN_TOOLS,
        pool,
        sandbox=UNCONFINED,
        trust=harness_trust(workspace_roots=(tmp_path / "workspaces",)),
    )
    outside = tmp_path / "elsewhere"
    echo = call("echo", {"text": "x"})
    env = ActivityEnvironment()
    try:
        with pytest.raises(ApplicationError) as refused:
            await env.run(tools.list_tools, ListToolsInput(workspace_root=str(outside)))
        checked = await env.run(
            tools.check_tool_call, CheckToolCallInput(call=echo, workspace_root=str(outside))
        )
        assert refused.value.type == WORKSPACE_OUTSIDE_ROOT and refused.value.non_retryable
        assert checked is not None and checked.error_type == "path_not_in_workspace"
        assert list(pool.connections()) == [] and not outside.exists()

        inside = str(tmp_path / "workspaces" / "s1")
        listed = await env.run(tools.list_tools, ListToolsInput(workspace_root=inside))
        assert qualified("echo") in {spec.name for spec in listed.tools}
        assert (
            await env.run(
                tools.check_tool_call, CheckToolCallInput(call=echo, workspace_root=inside)
            )
            is None
        )
    finally:
        await tools.close()


async def test_cancelled_call_is_cancelled(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    before = await server_pid(tools, tmp_path)
    env = ActivityEnvironment()
    task = asyncio.create_task(run(tools, call("slow", {"seconds": 30}), tmp_path, env))
    await asyncio.sleep(0.5)
    env.cancel()
    outcome = await asyncio.wait_for(task, 10)
    assert outcome.status == "cancelled"
    assert outcome.execution_status == "cancelled"
    assert await server_pid(tools, tmp_path) == before


async def test_long_output_is_truncated(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    outcome = await run(tools, call("echo", {"text": "x" * 500}), tmp_path, max_output_chars=100)
    assert outcome.status == "success"
    assert outcome.content.startswith("x" * 100)
    assert "truncated" in outcome.content
    assert len(list((tmp_path / "ws" / ".seawall" / "tool-output").iterdir())) == 1


async def test_heartbeats_while_waiting(
    tools: ToolActivities, mcp_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mcp_env.setattr(heartbeat, "HEARTBEAT_INTERVAL_SECONDS", 0.1)
    beats: list[float] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(time.monotonic())
    outcome = await run(tools, call("slow", {"seconds": 1}), tmp_path, env)
    assert outcome.status == "success"
    assert len(beats) >= 5


# --- streamable HTTP ------------------------------------------------------------------------


@pytest_asyncio.fixture
async def http_server() -> AsyncIterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(FIXTURE_SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the HTTP MCP fixture server did not start") from None
                await asyncio.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


async def test_streamable_http_server(
    mcp_env: pytest.MonkeyPatch, http_server: str, tmp_path: Path, tools: ToolActivities
) -> None:
    mcp_env.setenv("SEAWALL_MCP_SERVERS", servers_env({"web": {"url": http_server}}))
    specs = await listed(tools)
    assert specs["mcp__web__echo"].tool_type == "mcp"
    outcome = await run(
        tools,
        ToolCall(call_id="h1", name="mcp__web__echo", arguments={"text": "over http"}),
        tmp_path,
    )
    assert outcome.status == "success"
    assert outcome.content == "over http"


# --- configuration and names ----------------------------------------------------------------


def test_configuration_problems_never_name_servers(tmp_path: Path) -> None:
    environ = {
        "XDG_CONFIG_HOME": str(tmp_path),
        "SEAWALL_MCP_SERVERS": servers_env(
            {
                "good": {"command": "x"},
                "bad__name": {"command": "x"},
                "secretName": {"args": ["no command"]},
                "alsoSecret": {"url": "ftp://nope"},
                "remote": {"type": "streamable-http", "url": "https://mcp.example/mcp"},
            }
        ),
    }
    settings = load_mcp_settings(environ)
    assert set(settings.servers) == {"good", "remote"}
    assert settings.servers["remote"].type == "http"
    assert len(settings.problems) == 3
    for problem in settings.problems:
        for name in ("bad__name", "secretName", "alsoSecret"):
            assert name not in problem
    assert settings.tool_timeout_seconds is None

    # A bad MCP setting stops the worker at startup; should one appear later (an edited
    # config file), the running worker uses no servers and says why, naming no server.
    broken = load_mcp_settings({**environ, "SEAWALL_MCP_TOOL_TIMEOUT_SECONDS": "soon"})
    assert broken.servers == {}
    (problem,) = broken.problems
    assert "SEAWALL_MCP_TOOL_TIMEOUT_SECONDS=soon (environment)" in problem
    assert "good" not in problem and "remote" not in problem


def test_broken_json_configuration(tmp_path: Path) -> None:
    settings = load_mcp_settings(
        {"XDG_CONFIG_HOME": str(tmp_path), "SEAWALL_MCP_SERVERS": "{not json"}
    )
    assert settings.servers == {}
    assert settings.problems


def test_qualified_names() -> None:
    assert qualified_name("files", "read") == "mcp__files__read"
    assert qualified_name("files", "read.file v2") == "mcp__files__read_file_v2"
    long = qualified_name("server", "t" * 100)
    assert len(long) == 64 and long.startswith("mcp__server__t")
    assert long != qualified_name("server", "t" * 99)
    assert server_of("mcp__files__read__deep") == "files"
    assert server_of("mcp__files") is None
    assert server_of("read_file") is None


def test_the_settings_are_read_again_only_when_what_they_come_from_changed(
    tmp_path: Path,
) -> None:
    # Each prompt asks at its start; reading every setting takes milliseconds, so the last
    # read is kept while the environment and both files are as they were.
    environ = {"XDG_CONFIG_HOME": str(tmp_path)}
    first = current_settings(environ)
    assert current_settings(dict(environ)) is first
    assert first.servers == {}

    # mcp.json appears: read again.
    path = tmp_path / "seawall" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(servers_env({"mcpServers": {"files": stdio_server()}}))
    with_file = current_settings(environ)
    assert set(with_file.servers) == {"files"}
    assert current_settings(environ) is with_file

    # The file is replaced by one of the same size (another name): read again.
    path.write_text(servers_env({"mcpServers": {"other": stdio_server()}}))
    assert set(current_settings(environ).servers) == {"other"}

    # config.yaml beside it, and the environment, count too.
    (tmp_path / "seawall" / "config.yaml").write_text("mcp_tool_timeout_seconds: 7\n")
    assert current_settings(environ).tool_timeout_seconds == 7
    changed = {**environ, "SEAWALL_MCP_TOOL_TIMEOUT_SECONDS": "9"}
    assert current_settings(changed).tool_timeout_seconds == 9
