"""Prompts that end before their loop starts, through the gateway (docs/architecture.md,
"Cancellation"), on a real dev server and worker whose MCP server waits for a gate file in
the session's workspace before it answers, so that a prompt's tool listing waits until the
test opens the gate.

- ``POST /cancel`` while the running prompt lists its tools: the prompt's result says
  ``cancelled``, the session records it as finished and runs its next queued prompt.
- A prompt whose workflow closed without a result (here terminated by an operator; before
  CANCEL_BEFORE_LOOP_PATCH a cancelled listing ended so too) is answered as finished, so a
  client polling ``GET /v1/prompts/{id}`` for the result stops.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client, WorkflowExecutionStatus

from gateway.closed_prompts import closed_without_result, finished_view
from tests.activities.mcp_helpers import gated_server, servers_env, wait_for_scheduled
from tests.gateway.owner_helpers import Gateway, auth, view_until
from workflows.contracts.activity import LIST_TOOLS
from workflows.contracts.prompt import PromptStatus, StopReason, ToolCallCounts


@pytest.fixture
def gated_mcp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The worker's MCP server waits for ``gate`` in the session's workspace (the worker
    reads its settings when a prompt lists its tools)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "operator-config"))
    monkeypatch.setenv("SEAWALL_MCP_SERVERS", servers_env({"gated": gated_server()}))
    monkeypatch.setenv("SEAWALL_MCP_CONNECT_TIMEOUT_SECONDS", "3600")


async def start_listing(
    http: httpx.AsyncClient, client: Client, text: str = "hello"
) -> tuple[str, str]:
    """A new session of alice's whose first prompt waits in its tool listing: the session
    and prompt ids."""
    created = await http.post("/v1/sessions", json={}, headers=auth("alice"))
    assert created.status_code == 201, created.text
    session_id: str = created.json()["session_id"]
    submitted = await http.post(
        f"/v1/sessions/{session_id}/prompts", json={"text": text}, headers=auth("alice")
    )
    assert submitted.status_code == 202, submitted.text
    prompt_id: str = submitted.json()["prompt_id"]
    await view_until(http, "alice", prompt_id, lambda v: v["status"] is not None)
    await wait_for_scheduled(client.get_workflow_handle(prompt_id), LIST_TOOLS)
    return session_id, prompt_id


async def finished_in_session(
    http: httpx.AsyncClient, session_id: str, count: int
) -> list[dict[str, Any]]:
    """The session's finished prompts, once ``count`` have finished."""
    while True:
        response = await http.get(f"/v1/sessions/{session_id}", headers=auth("alice"))
        assert response.status_code == 200, response.text
        finished: list[dict[str, Any]] = response.json()["finished"]
        if len(finished) >= count:
            return finished
        await asyncio.sleep(0.05)


async def test_cancel_while_the_tools_list_finishes_the_prompt_and_the_queue_runs(
    gateway: Gateway, client: Client, gated_mcp: None, tmp_path: Path
) -> None:
    http = await gateway()
    session_id, first = await start_listing(http, client)
    queued = await http.post(
        f"/v1/sessions/{session_id}/prompts", json={"text": "hello"}, headers=auth("alice")
    )
    assert queued.status_code == 202, queued.text
    second = queued.json()["prompt_id"]

    cancelled = await http.post(f"/v1/sessions/{session_id}/cancel", headers=auth("alice"))
    assert cancelled.status_code == 202, cancelled.text
    assert cancelled.json() == {"prompt_id": first}

    view = await view_until(http, "alice", first, lambda v: v["result"] is not None)
    assert view["result"]["stop_reason"] == "cancelled"
    assert view["result"]["error"] is None
    assert view["status"]["running"] is False

    # The next prompt lists its tools once the gate opens, and runs to its end.
    (tmp_path / "workspaces" / session_id / "gate").touch()
    done = await view_until(http, "alice", second, lambda v: v["result"] is not None)
    assert done["result"]["stop_reason"] == "end_turn"
    finished = await finished_in_session(http, session_id, 2)
    assert [(f["prompt_id"], f["stop_reason"]) for f in finished] == [
        (first, "cancelled"),
        (second, "end_turn"),
    ]


async def test_a_prompt_closed_without_a_result_is_answered_as_finished(
    gateway: Gateway, client: Client, gated_mcp: None, tmp_path: Path
) -> None:
    http = await gateway()
    session_id, prompt_id = await start_listing(http, client)
    await client.get_workflow_handle(prompt_id).terminate(reason="operator")

    view = await view_until(http, "alice", prompt_id, lambda v: v["result"] is not None)
    assert view["status"]["running"] is False
    assert view["status"]["stop_reason"] == "error"
    result = view["result"]
    assert result["stop_reason"] == "error"
    assert "terminated before it recorded a result" in result["error"]
    assert result["refusal_mode"] == "enforce"
    assert result["messages"] == []
    # The session records it and stays usable.
    finished = await finished_in_session(http, session_id, 1)
    assert [(f["prompt_id"], f["stop_reason"]) for f in finished] == [(prompt_id, "error")]
    (tmp_path / "workspaces" / session_id / "gate").touch()


STATUS = PromptStatus(
    running=True,
    batch=0,
    model_requests=2,
    guard_mode="enforce",
    loop_profile="recommended",
    guard_phase="tracking",
    paused_batch=None,
    pending_permissions=[],
    tool_calls=ToolCallCounts(executed=3),
)


@pytest.mark.parametrize(
    ("execution", "stop_reason", "said"),
    [
        (WorkflowExecutionStatus.CANCELED, StopReason.CANCELLED, "cancelled"),
        (WorkflowExecutionStatus.TERMINATED, StopReason.ERROR, "terminated"),
        (WorkflowExecutionStatus.FAILED, StopReason.ERROR, "failed"),
        (WorkflowExecutionStatus.TIMED_OUT, StopReason.ERROR, "timed out"),
    ],
)
def test_a_closed_prompt_reads_as_finished_with_what_its_status_says(
    execution: WorkflowExecutionStatus, stop_reason: StopReason, said: str
) -> None:
    assert closed_without_result(execution)
    status, result = finished_view("p-1", execution, STATUS, "shadow")

    assert status.running is False
    assert status.stop_reason is stop_reason
    assert result.stop_reason is stop_reason
    assert result.error is not None and f"was {said} before" in result.error
    assert (result.workflow_id, result.model_requests, result.tool_calls.executed) == ("p-1", 2, 3)
    assert (result.guard_mode, result.refusal_mode, result.loop_profile) == (
        "enforce",
        "shadow",
        "recommended",
    )


@pytest.mark.parametrize(
    "execution",
    [
        WorkflowExecutionStatus.RUNNING,
        WorkflowExecutionStatus.COMPLETED,
        WorkflowExecutionStatus.CONTINUED_AS_NEW,
        None,
    ],
)
def test_running_and_completed_prompts_are_read_as_they_are(
    execution: WorkflowExecutionStatus | None,
) -> None:
    assert not closed_without_result(execution)
