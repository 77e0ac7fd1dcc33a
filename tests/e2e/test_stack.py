"""The whole stack started the way the README says (`seawall up`, what `make run` runs):
real processes, real ports, driven over HTTP like a client would."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from bench.server_metrics import free_port
from workflows.seed.guard import REPEATED_TOOL_FAILURE_STOP_MESSAGE

SEAWALL = str(Path(sys.executable).parent / "seawall")
JSON = {"content-type": "application/json"}


@contextmanager
def stack(data_dir: Path) -> Iterator[str]:
    with stack_process(data_dir) as (url, _process):
        yield url


@contextmanager
def stack_process(data_dir: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    with stack_and_banner(data_dir) as (url, process, banner):
        assert "  guard: enforce (environment) · profile: recommended · sandbox: bwrap\n" in banner
        yield url, process


@contextmanager
def stack_and_banner(
    data_dir: Path, settings: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[str], list[str]]]:
    """``seawall up`` with ``settings`` over the tests' own; its URL, process and banner."""
    gateway_port = free_port()
    env = {
        **os.environ,
        "SEAWALL_DATA_DIR": str(data_dir),
        "SEAWALL_TEMPORAL_PORT": str(free_port()),
        "SEAWALL_UI_PORT": str(free_port()),
        "SEAWALL_GATEWAY_PORT": str(gateway_port),
        "SEAWALL_ALLOW_SCRIPTED_MODELS": "1",
        "SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "enforce",
        "XDG_CONFIG_HOME": str(data_dir / "config"),
        **(settings or {}),
    }
    env.pop("TEMPORAL_ADDRESS", None)
    process = subprocess.Popen(
        [SEAWALL, "up"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        banner = lines_until(process, "Press Ctrl-C to stop.")
        assert banner[0].startswith("Seawall is up."), "".join(banner)
        assert f"http://127.0.0.1:{gateway_port}" in banner[1]
        yield f"http://127.0.0.1:{gateway_port}", process, banner
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=60)
        assert "Seawall stopped." in out
        assert process.returncode == 0


async def until(check: Callable[[], Awaitable[Any]], timeout: float = 60) -> Any:
    """Poll another process's progress until ``check`` returns something truthy."""

    async def poll() -> Any:
        while not (found := await check()):
            await asyncio.sleep(0.1)
        return found

    return await asyncio.wait_for(poll(), timeout)


def shell(command: str) -> dict[str, Any]:
    return {"name": "run_shell_command", "arguments": {"command": command}}


def missing(prefix: str, n: int) -> list[dict[str, Any]]:
    return [{"name": "read_file", "arguments": {"path": f"{prefix}-{i}.txt"}} for i in range(n)]


def wait_for_file(name: str) -> str:
    return f"touch started-{name}; while [ ! -f go-{name} ]; do sleep 0.05; done; echo {name}"


SCRIPT = {
    "turns": [
        # prompt 1
        {"tool_calls": missing("a", 4)},
        {"tool_calls": [*missing("b", 3), shell(wait_for_file("2"))]},
        {"tool_calls": missing("c", 4)},
        {"tool_calls": [*missing("d", 3), shell(wait_for_file("3"))]},
        {"tool_calls": [shell("touch started-4; exec sleep 300")]},
        # prompt 2, once prompt 1 was cancelled
        {"tool_calls": missing("e", 4)},
        {"tool_calls": missing("f", 4)},
        {"tool_calls": missing("g", 1)},
        {"text": "never reached"},
    ]
}


async def sse(http: httpx.AsyncClient, prompt_id: str, after: int = 0) -> list[dict[str, Any]]:
    events = []
    async with http.stream("GET", f"/v1/prompts/{prompt_id}/events", params={"after": after}) as r:
        assert r.status_code == 200
        async for line in r.aiter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[len("data: ") :]))
    return events


@pytest.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Path]]:
    with stack(tmp_path / "data") as url:
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            yield http, tmp_path / "data" / "workspaces"


async def test_the_stack_over_http(gateway: tuple[httpx.AsyncClient, Path]) -> None:
    http, workspaces = gateway
    created = await http.post("/v1/sessions", json={"model_script": SCRIPT})
    assert created.status_code == 201, created.text
    session_id = created.json()["session_id"]
    workspace = workspaces / session_id

    async def pending_permission(prompt_id: str) -> str | None:
        view = (await http.get(f"/v1/prompts/{prompt_id}")).json()
        pending = (view.get("status") or {}).get("pending_permissions") or []
        return pending[0]["request_id"] if pending else None

    async def approve(prompt_id: str) -> None:
        request_id = await until(lambda: pending_permission(prompt_id))
        answered = await http.post(
            f"/v1/prompts/{prompt_id}/permissions/{request_id}", json={"approve": True}
        )
        assert answered.status_code == 200, answered.text

    async def started(name: str) -> bool:
        return (workspace / f"started-{name}").exists()

    first = (await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": "one"})).json()
    assert first["position"] == 0

    # Batch 2: the second prompt arrives while the first runs.
    await approve(first["prompt_id"])
    await until(lambda: started("2"))
    second = (await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": "two"})).json()
    assert second["position"] == 0
    (workspace / "go-2").touch()

    # Batch 3: mid-turn input reaches the running prompt.
    await approve(first["prompt_id"])
    await until(lambda: started("3"))
    sent = await http.post(f"/v1/sessions/{session_id}/input", json={"text": "use the b files"})
    assert sent.status_code == 202 and sent.json()["prompt_id"] == first["prompt_id"]
    (workspace / "go-3").touch()

    # Batch 4: cancel ends the running prompt; the queued one then runs.
    await approve(first["prompt_id"])
    await until(lambda: started("4"))
    cancelled = await http.post(f"/v1/sessions/{session_id}/cancel")
    assert cancelled.status_code == 202 and cancelled.json()["prompt_id"] == first["prompt_id"]

    async def result(prompt_id: str) -> dict[str, Any] | None:
        view = (await http.get(f"/v1/prompts/{prompt_id}")).json()
        return view.get("result")

    first_result = await until(lambda: result(first["prompt_id"]))
    second_result = await until(lambda: result(second["prompt_id"]))

    assert first_result["stop_reason"] == "cancelled"
    guard = [(g["decision"], g["reason"]) for g in first_result["guard"]]
    assert guard == [
        ("tracked", None),
        ("reset", "queued_prompt"),
        ("tracked", None),
        ("reset", "external_input"),
    ]
    contents = [m["content"] for m in first_result["messages"]]
    assert "[User message received during tool execution]: use the b files" in contents

    assert second_result["stop_reason"] == "loop_detected"
    assert second_result["loop_type"] == "repeated_tool_execution_failure"
    assert [g["decision"] for g in second_result["guard"]] == ["tracked", "warn", "stop"]

    events = await sse(http, second["prompt_id"])
    texts = [e.get("text") for e in events]
    assert texts.count(REPEATED_TOOL_FAILURE_STOP_MESSAGE) == 1
    assert [e["kind"] for e in events].count("stop") == 1
    assert [e["seq"] for e in events] == sorted({e["seq"] for e in events})
    middle = events[len(events) // 2]["seq"]
    resumed = await sse(http, second["prompt_id"], after=middle)
    assert resumed == [e for e in events if e["seq"] > middle]

    session = (await http.get(f"/v1/sessions/{session_id}")).json()
    assert [f["prompt_id"] for f in session["finished"]] == [
        first["prompt_id"],
        second["prompt_id"],
    ]


async def test_bad_input_gets_its_4xx_and_loses_no_queued_prompt(
    gateway: tuple[httpx.AsyncClient, Path],
) -> None:
    http, workspaces = gateway
    script = {
        "turns": [
            {"tool_calls": [shell(wait_for_file("1"))]},
            {"text": "first done"},
            {"text": "second done"},
        ]
    }
    session_id = (await http.post("/v1/sessions", json={"model_script": script})).json()[
        "session_id"
    ]
    first = (await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": "a"})).json()
    second = (await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": "b"})).json()

    async def pending() -> str | None:
        view = (await http.get(f"/v1/prompts/{first['prompt_id']}")).json()
        requests = (view.get("status") or {}).get("pending_permissions") or []
        return requests[0]["request_id"] if requests else None

    request_id = await until(pending)
    s, p = f"/v1/sessions/{session_id}", f"/v1/prompts/{first['prompt_id']}"
    table: list[tuple[str, str, dict[str, Any], int]] = [
        ("POST", "/v1/sessions", {"content": b"{not json", "headers": JSON}, 400),
        ("POST", "/v1/sessions", {"json": {"approval_mode": "sometimes"}}, 422),
        ("POST", "/v1/sessions", {"json": {"surprise": 1}}, 422),
        ("POST", f"{s}/prompts", {"json": {"text": ""}}, 422),
        ("POST", f"{s}/prompts", {"json": {"text": "x" * 100_001}}, 413),
        ("POST", f"{s}/prompts", {"json": []}, 422),
        (
            "POST",
            f"{s}/prompts",
            {"content": b"\xff\xfe", "headers": JSON},
            400,
        ),
        ("POST", "/v1/sessions/nope/prompts", {"json": {"text": "hi"}}, 404),
        ("POST", f"{s}/input", {"json": {}}, 422),
        ("POST", "/v1/sessions/nope/input", {"json": {"text": "x"}}, 404),
        ("POST", "/v1/sessions/nope/cancel", {}, 404),
        ("GET", "/v1/sessions/nope", {}, 404),
        ("GET", "/v1/prompts/nope", {}, 404),
        ("POST", "/v1/prompts/nope/permissions/p-1", {"json": {"approve": True}}, 404),
        ("POST", f"{p}/permissions/permission-99", {"json": {"approve": True}}, 404),
        ("POST", f"{p}/permissions/{request_id}", {"json": {"approve": "maybe"}}, 422),
        ("GET", f"{p}/events", {"headers": {"Last-Event-ID": "abc"}}, 400),
    ]
    for method, path, options, expected in table:
        response = await http.request(method, path, **options)
        assert response.status_code == expected, (method, path, response.text)
        detail = response.json()["detail"]
        assert isinstance(detail, str) and detail, (method, path)

    assert (await http.get("/healthz")).status_code == 200
    session = (await http.get(s)).json()
    assert session["running_prompt_id"] == first["prompt_id"]
    assert session["queued_prompt_ids"] == [second["prompt_id"]]

    answered = await http.post(f"{p}/permissions/{request_id}", json={"approve": True})
    assert answered.status_code == 200
    workspace = workspaces / session_id

    async def started() -> bool:
        # The workspace exists once the approved call runs (the worker creates it).
        return (workspace / "started-1").exists()

    await until(started)
    (workspace / "go-1").touch()

    async def result(prompt_id: str) -> dict[str, Any] | None:
        return (await http.get(f"/v1/prompts/{prompt_id}")).json().get("result")

    assert (await until(lambda: result(first["prompt_id"])))["messages"][-1]["content"] == (
        "first done"
    )
    assert (await until(lambda: result(second["prompt_id"])))["messages"][-1]["content"] == (
        "second done"
    )


def lines_until(process: subprocess.Popen[str], marker: str) -> list[str]:
    """The stack's output lines up to and including the first containing ``marker``."""
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line)
        if marker in line:
            return lines
    raise AssertionError(f"the stack ended before {marker!r}: {lines}")


async def test_a_killed_worker_is_restarted_and_the_stack_keeps_serving(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with stack_process(data) as (url, process):
        killed = int((data / "run" / "worker.pid").read_text())
        os.kill(killed, signal.SIGKILL)
        said = await asyncio.wait_for(
            asyncio.to_thread(lines_until, process, "the worker restarted"), 120
        )
        assert "the worker exited with code -9; restarting it in 1 s" in "".join(said)
        restarted = int((data / "run" / "worker.pid").read_text())
        assert restarted != killed and process.poll() is None

        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            created = await http.post("/v1/sessions", json={})
            session_id = created.json()["session_id"]
            sent = await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": "hello"})
            prompt_id = sent.json()["prompt_id"]

            async def result() -> dict[str, Any] | None:
                view = (await http.get(f"/v1/prompts/{prompt_id}")).json()
                return view.get("result")

            finished = await until(result, timeout=120)
        assert finished["stop_reason"] == "end_turn"


async def test_the_seed_profile_runs_an_invalid_guard_mode_as_shadow_and_says_so(
    tmp_path: Path,
) -> None:
    """docs/settings.md, "Bad values": under the seed profile ``seawall up`` starts, and its
    banner and the worker's start-up line say the invalid value runs as shadow."""
    data = tmp_path / "data"
    settings = {"SEAWALL_LOOP_PROFILE": "seed", "SEAWALL_REPEATED_TOOL_FAILURE_GUARD": "banana"}
    notice = (
        'repeated_tool_failure_guard: "banana" is not a mode (off, shadow, warn, enforce); '
        "running shadow as the seed design requires"
    )
    with stack_and_banner(data, settings) as (_url, _process, banner):
        guard = banner.index(
            "  guard: shadow (seed profile: invalid value) · profile: seed · sandbox: bwrap\n"
        )
        assert banner[guard + 1] == f"  warning: {notice}\n"
        log = data / "logs" / "worker.log"

        async def worker_started() -> dict[str, Any] | None:
            lines = log.read_text().splitlines() if log.exists() else []
            return next((json.loads(x) for x in lines if '"worker_started"' in x), None)

        line = await until(worker_started, timeout=120)
    assert line["level"] == "warning"
    assert (line["guard_mode"], line["guard_mode_source"]) == ("shadow", "environment")
    assert (line["loop_profile"], line["guard_mode_problem"]) == ("seed", notice)


async def test_the_temporal_ui_of_the_stack_says_what_each_row_and_step_is(
    tmp_path: Path,
) -> None:
    """docs/observability.md, "The Temporal UI", on `seawall up`: a prompt's row is its first
    line, a session's says what it is, and with ``SEAWALL_ACTIVITY_SUMMARIES=true`` each model
    and tool activity is named. Read through Temporal's API, which is what the UI shows."""
    temporal_port = free_port()
    settings = {"SEAWALL_TEMPORAL_PORT": str(temporal_port), "SEAWALL_ACTIVITY_SUMMARIES": "true"}
    with stack_and_banner(tmp_path / "data", settings) as (url, _process, _banner):
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            session_id = (await http.post("/v1/sessions", json={})).json()["session_id"]
            text = "hello\nand tell me what is there"
            prompt_id = (
                await http.post(f"/v1/sessions/{session_id}/prompts", json={"text": text})
            ).json()["prompt_id"]

            async def result() -> dict[str, Any] | None:
                view = (await http.get(f"/v1/prompts/{prompt_id}")).json()
                return view.get("result")

            assert (await until(result, timeout=120))["stop_reason"] == "end_turn"
        client = await Client.connect(f"127.0.0.1:{temporal_port}")
        prompt = client.get_workflow_handle(prompt_id)
        assert await (await prompt.describe()).static_summary() == "hello"
        session = await client.get_workflow_handle(f"session-{session_id}").describe()
        assert await session.static_summary() == "Seawall session (HTTP API)"
        history = await prompt.fetch_history()
        scheduled = [
            (
                e.activity_task_scheduled_event_attributes.activity_type.name,
                json.loads(e.user_metadata.summary.data),
            )
            for e in history.events
            if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        ]
    assert ("seawall.call_model", "model request 1") in scheduled
    (tool,) = [summary for name, summary in scheduled if name == "seawall.run_tool"]
    assert tool.startswith("list_directory") and tool.endswith("(batch 1)"), tool
