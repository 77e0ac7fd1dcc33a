"""Waiting for the Temporal server at start-up (``seawall/runtime/server_wait.py``).

The pure part drives the wait with a fake clock and sleep; the real part starts
``python worker.py`` before its server exists and then brings the server up on that port.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from seawall.runtime.devserver import start_dev_server
from seawall.runtime.server_wait import (
    FIRST_PAUSE_SECONDS,
    MAX_PAUSE_SECONDS,
    ServerUnreachable,
    wait_for_server,
)
from tests.telemetry_helpers import free_port

ROOT = Path(__file__).resolve().parents[3]
REFUSED = RuntimeError("Failed client connect: Server connection error: tcp connect error")


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


def failing(times: int, error: Exception = REFUSED):  # type: ignore[no-untyped-def]
    calls = {"n": 0}

    async def connect() -> str:
        calls["n"] += 1
        if calls["n"] <= times:
            raise error
        return "client"

    return connect, calls


async def test_the_wait_retries_with_doubling_pauses_until_the_server_answers() -> None:
    time = FakeTime()
    connect, calls = failing(7)
    client = await wait_for_server(
        connect,
        address="temporal:7233",
        timeout_seconds=0,
        process="worker",
        sleep=time.sleep,
        clock=lambda: time.now,
    )
    assert client == "client" and calls["n"] == 8
    assert time.pauses[:2] == [FIRST_PAUSE_SECONDS, FIRST_PAUSE_SECONDS * 2]
    assert max(time.pauses) == MAX_PAUSE_SECONDS


async def test_the_wait_ends_with_a_clear_error_after_the_timeout() -> None:
    time = FakeTime()
    connect, _ = failing(1000)
    with pytest.raises(ServerUnreachable, match=r"temporal:7233 did not answer within 30 s"):
        await wait_for_server(
            connect,
            address="temporal:7233",
            timeout_seconds=30,
            process="worker",
            sleep=time.sleep,
            clock=lambda: time.now,
        )
    assert time.now <= 30


async def test_an_error_that_is_not_about_reaching_the_server_is_not_waited_out() -> None:
    time = FakeTime()
    connect, calls = failing(1, RuntimeError("Namespace nope is not found"))
    with pytest.raises(RuntimeError, match="Namespace"):
        await wait_for_server(
            connect, address="a", timeout_seconds=0, process="worker", sleep=time.sleep
        )
    assert calls["n"] == 1 and time.pauses == []


def next_line_with(stream: object, marker: str) -> str:
    return next(line for line in stream if marker in line)  # type: ignore[attr-defined]


async def test_a_worker_started_before_its_server_waits_and_then_serves() -> None:
    port = free_port()
    address = f"127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "worker.py"), "--address", address, "--task-queue", "late"],
        cwd=ROOT,
        env={**os.environ, "SEAWALL_LOG_FORMAT": "json", "SEAWALL_CONNECT_TIMEOUT_SECONDS": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        waiting = await asyncio.wait_for(
            asyncio.to_thread(next_line_with, process.stderr, "temporal_unreachable"), 60
        )
        assert address in waiting and process.poll() is None
        async with await start_dev_server(port=port):
            started = await asyncio.wait_for(
                asyncio.to_thread(next_line_with, process.stderr, "worker_started"), 120
            )
            assert '"task_queue": "late"' in started
    finally:
        process.terminate()
        await asyncio.to_thread(process.communicate, timeout=60)
