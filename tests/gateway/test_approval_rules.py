"""Approval rules end to end (docs/protections.md, "Approval rules"): the operator's file
read by a real worker, a session's own rules, and "allow always for this session" across
the session's prompts, through the real gateway."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from temporalio.client import Client

from gateway.app import create_app
from gateway.settings import GatewaySettings
from tests.gateway.test_app import read_stream, submit, wait_for

OPERATOR_RULES = """
rules:
  - {name: tests run, decision: allow, tool: run_shell_command, command: "npm run test*"}
  - {name: no force push, decision: deny, tool: run_shell_command, command: "git push*--force*"}
"""
SHELL = {"mutating": True, "outcomes": [{"content": "ran"}]}


def shell(command: str) -> dict[str, Any]:
    return {"name": "run_shell_command", "arguments": {"command": command}}


@pytest_asyncio.fixture
async def http(
    client: Client, task_queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[httpx.AsyncClient]:
    rules = tmp_path / "approval-rules.yaml"
    rules.write_text(OPERATOR_RULES)
    # The worker reads the operator's settings when each session starts.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("SEAWALL_APPROVAL_RULES", str(rules))

    async def factory() -> Client:
        return client

    settings = GatewaySettings(
        task_queue=task_queue, workspaces=tmp_path / "workspaces", allow_scripted_models=True
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(settings, factory)),
        base_url="http://gateway",
        timeout=60,
    ) as http:
        yield http


async def session(http: httpx.AsyncClient, turns: list[dict[str, Any]], **body: Any) -> str:
    created = await http.post(
        "/v1/sessions",
        json={
            "model_script": {"turns": turns},
            "fixture_tools": {"run_shell_command": SHELL},
            **body,
        },
    )
    assert created.status_code == 201, created.text
    session_id: str = created.json()["session_id"]
    return session_id


async def answer_when_asked(http: httpx.AsyncClient, prompt_id: str, **answer: Any) -> str:
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        status = (await wait_for(http, prompt_id, "status"))["status"]
        if status["pending_permissions"]:
            request = status["pending_permissions"][0]
            response = await http.post(
                f"/v1/prompts/{prompt_id}/permissions/{request['request_id']}", json=answer
            )
            assert response.status_code == 200, response.text
            outcome: str = response.json()["outcome"]
            assert request["rule"] == "default mode: changes ask"
            return outcome
        assert asyncio.get_running_loop().time() < deadline, "never asked"
        await asyncio.sleep(0.05)


def started(events: list[dict[str, Any]]) -> dict[str, str]:
    return {
        e["data"]["call_id"]: e["data"]["rule"] for e in events if e["event"] == "tool_call_started"
    }


async def test_operator_rules_decide_and_a_remembered_call_runs_again_unasked(
    http: httpx.AsyncClient,
) -> None:
    turns = [
        {"tool_calls": [shell("git push --force origin main"), shell("npm run test -- -k x")]},
        {"tool_calls": [shell("make build")]},
        {"text": "first done"},
        {"tool_calls": [shell("make  build")]},
        {"text": "second done"},
    ]
    session_id = await session(http, turns)
    first = (await submit(http, session_id, "ship it"))["prompt_id"]
    assert await answer_when_asked(http, first, approve=True, remember=True) == (
        "approved for this session"
    )
    result = (await wait_for(http, first, "result"))["result"]
    events = await read_stream(http, first)
    rules = started(events)
    assert sorted(rules.values()) == ["default mode: changes ask", "no force push", "tests run"]
    settled = {e["data"]["call_id"]: e["data"] for e in events if e["event"] == "tool_call_settled"}
    denied = [s for s in settled.values() if s["status"] == "cancelled"]
    assert [d["reason"] for d in denied] == ["denied by an approval rule"]
    tool_texts = [m["content"] for m in result["messages"] if m["role"] == "tool"]
    assert any("'no force push'" in text for text in tool_texts)
    assert tool_texts.count("ran") == 2  # the tests and the build ran
    assert len(result["remembered_approvals"]) == 1

    # The next prompt of the session runs the same build without asking.
    second = (await submit(http, session_id, "again"))["prompt_id"]
    result = (await wait_for(http, second, "result"))["result"]
    assert result["stop_reason"] == "end_turn"
    events = await read_stream(http, second)
    assert not [e for e in events if e["event"] == "permission_request"]
    (rule,) = started(events).values()
    assert rule.startswith("allowed for this session: run_shell_command command=")


async def test_a_session_rule_only_tightens(http: httpx.AsyncClient) -> None:
    turns = [{"tool_calls": [shell("npm run test")]}, {"text": "done"}]
    own_rules = [
        {"name": "session: no npm", "decision": "deny", "command": "npm *"},
        {"name": "session: run it all", "decision": "allow", "priority": 1000},
    ]
    session_id = await session(http, turns, approval_rules=own_rules)
    prompt_id = (await submit(http, session_id, "test"))["prompt_id"]
    result = (await wait_for(http, prompt_id, "result"))["result"]
    events = await read_stream(http, prompt_id)
    assert list(started(events).values()) == ["session: no npm"]
    assert "ran" not in [m["content"] for m in result["messages"] if m["role"] == "tool"]


async def test_a_bad_rule_is_refused_with_what_is_wrong(http: httpx.AsyncClient) -> None:
    bad = [{"name": "typo", "decision": "permit", "commnd": "x"}]
    response = await http.post("/v1/sessions", json={"approval_rules": bad})
    assert response.status_code == 422
    detail = str(response.json()["detail"])
    assert "decision" in detail and "commnd" in detail
