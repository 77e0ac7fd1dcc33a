"""stdio MCP servers in the sandbox (docs/security-sandbox.md, "MCP servers"): one server
process per (server, workspace), confined to that workspace, with the real
``mcp-server-git`` (a dev dependency) and the SDK fixture server. HTTP servers are not
processes of the worker and are not affected.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pydantic import ValidationError
from temporalio.testing import ActivityEnvironment

from activities.mcp.config import ServerSandbox, StdioServer, parse_servers
from activities.mcp.pool import McpPool
from activities.sandbox import NetworkPolicy, Sandbox, load_policy, probe
from activities.sandbox.owners import owner_group
from activities.tool_runner import ToolActivities
from activities.tools import BUILTIN_TOOLS
from tests.activities.mcp_helpers import FIXTURE_SERVER, servers_env, stdio_server
from tests.activities.sandbox_helpers import descendants_running, real_sandbox, scripts_running
from tests.trust_helpers import TEST_SIGNING_KEY, harness_trust
from workflows.contracts import ToolCall, ToolOutcome
from workflows.contracts.activity import CheckToolCallInput, ListToolsInput, RunToolInput

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap")

GIT_SERVER = shutil.which("mcp-server-git", path=str(Path(sys.executable).parent))


def git_server() -> dict[str, Any]:
    """``mcp-server-git`` as an operator would configure it for the sandbox: its install
    prefix and interpreter read-only, no ``--repository`` (the sandbox is the boundary)."""
    assert GIT_SERVER is not None, "mcp-server-git is a dev dependency (pyproject.toml)"
    paths = sorted({sys.prefix, sys.base_prefix})
    return {"command": GIT_SERVER, "sandbox": {"read_only_paths": paths}}


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv(
        "SEAWALL_MCP_SERVERS", servers_env({"git": git_server(), "fx": stdio_server()})
    )
    return monkeypatch


@pytest.fixture
def pool() -> McpPool:
    return McpPool()


@pytest_asyncio.fixture
async def tools(pool: McpPool) -> AsyncIterator[ToolActivities]:
    activities = ToolActivities(BUILTIN_TOOLS, pool, sandbox=real_sandbox(), trust=harness_trust())
    yield activities
    await activities.close()


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "tracked.txt").write_text("x\n")
    return path.resolve()


def committed(repo: Path) -> Path:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), *identity, "commit", "-qm", "one"], check=True)
    return repo


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(call_id=f"c-{time.monotonic_ns()}", name=name, arguments=arguments)


async def run(tools: ToolActivities, tool_call: ToolCall, workspace: Path) -> ToolOutcome:
    inp = RunToolInput(call=tool_call, workspace_root=str(workspace))
    return await ActivityEnvironment().run(tools.run_tool, inp)


async def test_a_git_tool_reaches_only_its_own_sessions_repository(
    tools: ToolActivities, servers: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    alice = git_repo(tmp_path / "workspaces" / "alice")
    bob = git_repo(tmp_path / "workspaces" / "bob")
    own = await run(tools, call("mcp__git__git_status", repo_path=str(alice)), alice)
    assert own.status == "success", own
    assert "tracked.txt" in own.content
    other = await run(tools, call("mcp__git__git_status", repo_path=str(bob)), alice)
    assert other.status == "error"
    assert "tracked.txt" not in other.content
    # The same call from bob's session runs in bob's own sandboxed server.
    theirs = await run(tools, call("mcp__git__git_status", repo_path=str(bob)), bob)
    assert theirs.status == "success" and "tracked.txt" in theirs.content


async def test_each_workspace_gets_its_own_server_process(
    tools: ToolActivities, pool: McpPool, servers: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    first, second = (tmp_path / "a").resolve(), (tmp_path / "b").resolve()
    for workspace in (first, second, first):
        outcome = await run(tools, call("mcp__fx__echo", text="hi"), workspace)
        assert outcome.status == "success" and outcome.content == "hi"
    assert set(pool.connections()) == {("fx", str(first)), ("fx", str(second))}
    assert len(scripts_running(str(FIXTURE_SERVER))) == 2


async def test_a_server_cannot_write_outside_its_workspace(
    tools: ToolActivities, servers: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``git_create_branch`` is a real write: in the session's repository it works; in
    another workspace's it cannot, and that repository is unchanged."""
    alice = committed(git_repo(tmp_path / "workspaces" / "alice"))
    bob = committed(git_repo(tmp_path / "workspaces" / "bob"))
    own = await run(
        tools, call("mcp__git__git_create_branch", repo_path=str(alice), branch_name="x"), alice
    )
    assert own.status == "success", own
    assert (alice / ".git" / "refs" / "heads" / "x").is_file()
    other = await run(
        tools, call("mcp__git__git_create_branch", repo_path=str(bob), branch_name="x"), alice
    )
    assert other.status == "error"
    assert not (bob / ".git" / "refs" / "heads" / "x").exists()


async def test_listing_and_checking_use_the_sessions_workspace(
    tools: ToolActivities, pool: McpPool, servers: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    workspace = (tmp_path / "ws").resolve()
    env = ActivityEnvironment()
    listed = await env.run(tools.list_tools, ListToolsInput(workspace_root=str(workspace)))
    assert "mcp__git__git_status" in {spec.name for spec in listed.tools}
    refused = await env.run(
        tools.check_tool_call,
        CheckToolCallInput(call=call("mcp__fx__echo"), workspace_root=str(workspace)),
    )
    assert refused is not None and refused.error_type == "invalid_tool_params"
    assert ("fx", str(workspace)) in pool.connections()


async def test_an_owned_prompts_server_runs_in_its_owners_cgroup(
    tools: ToolActivities, servers: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A stdio server started for an owned prompt's listing sits in the owner's group like
    her shell commands (docs/security-sandbox.md, "Per owner"); one with no owner does not."""
    if not tools.sandbox.cgroups:
        pytest.skip("no cgroup for a sandbox here (docs/security-sandbox.md)")
    pseudonym = owner_group("alice@example.com", TEST_SIGNING_KEY)
    assert pseudonym is not None
    owned, ownerless = (tmp_path / "owned").resolve(), (tmp_path / "ownerless").resolve()
    env = ActivityEnvironment()
    for workspace, owner in ((owned, "alice@example.com"), (ownerless, None)):
        request = ListToolsInput(workspace_root=str(workspace), owner_id=owner)
        listed = await env.run(tools.list_tools, request)
        assert "mcp__fx__echo" in {spec.name for spec in listed.tools}
    groups = [
        Path(f"/proc/{pid}/cgroup").read_text() for pid in scripts_running(str(FIXTURE_SERVER))
    ]
    assert len(groups) == 2
    assert sorted(f"/{pseudonym}/" in group for group in groups) == [False, True], groups


async def test_an_input_without_a_workspace_lists_in_a_scratch_workspace(
    tools: ToolActivities, pool: McpPool, servers: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Prompts recorded before the inputs carried the workspace still list their tools."""
    listed = await ActivityEnvironment().run(tools.list_tools, ListToolsInput())
    assert "mcp__fx__echo" in {spec.name for spec in listed.tools}
    (workspace,) = {key[1] for key in pool.connections()}
    assert "seawall-mcp-scratch-" in workspace and str(tmp_path) not in workspace


async def test_the_least_recently_used_connection_is_stopped_beyond_the_bound(
    servers: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pool = McpPool(max_connections=1)
    tools = ToolActivities(BUILTIN_TOOLS, pool, sandbox=real_sandbox(), trust=harness_trust())
    try:
        for name in ("a", "b"):
            outcome = await run(tools, call("mcp__fx__echo", text=name), tmp_path / name)
            assert outcome.status == "success"
        assert list(pool.connections()) == [("fx", str((tmp_path / "b").resolve()))]
    finally:
        await tools.close()
    assert descendants_running(str(FIXTURE_SERVER)) == []


async def test_without_a_sandbox_stdio_servers_are_refused(
    servers: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    sandbox = probe(load_policy({"PATH": str(empty), "XDG_CONFIG_HOME": str(tmp_path)}))
    tools = ToolActivities(BUILTIN_TOOLS, McpPool(), sandbox=sandbox, trust=harness_trust())
    try:
        outcome = await run(tools, call("mcp__fx__echo", text="x"), tmp_path / "ws")
        listed = await ActivityEnvironment().run(
            tools.list_tools, ListToolsInput(workspace_root=str(tmp_path / "ws"))
        )
    finally:
        await tools.close()
    assert outcome.status == "error" and outcome.error_type == "execution_failed"
    assert "sandbox" in outcome.content and "refused" in outcome.content
    assert not any(spec.name.startswith("mcp__") for spec in listed.tools)
    assert descendants_running(str(FIXTURE_SERVER)) == []


def test_per_server_options_are_checked() -> None:
    servers, problems = parse_servers(
        {
            "ok": {"command": "x", "sandbox": {"read_only_paths": ["/opt/x"], "network": "on"}},
            "relative": {"command": "x", "sandbox": {"read_only_paths": ["opt/x"]}},
            "root": {"command": "x", "sandbox": {"read_only_paths": ["/"]}},
            "unknown": {"command": "x", "sandbox": {"writable_paths": ["/srv"]}},
        },
        "test",
    )
    assert set(servers) == {"ok"}
    ok = servers["ok"]
    assert isinstance(ok, StdioServer) and ok.sandbox.network == "on"
    assert len(problems) == 3
    with pytest.raises(ValidationError):
        ServerSandbox.model_validate({"network": "sometimes"})


def test_a_servers_network_option_overrides_the_workers(tmp_path: Path) -> None:
    sandbox: Sandbox = real_sandbox()
    launch = sandbox.launch(
        ["/bin/true"], workspace=tmp_path, cwd=tmp_path, network=NetworkPolicy.ON
    )
    assert "slirp4netns" in launch.argv[-1]
    assert (
        "slirp4netns"
        not in sandbox.launch(["/bin/true"], workspace=tmp_path, cwd=tmp_path).argv[-1]
    )
