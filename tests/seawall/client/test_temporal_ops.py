"""Reads retried briefly on transient failures (``seawall/client/temporal_ops.py``)."""

from __future__ import annotations

import pytest
from temporalio.client import RPCTimeoutOrCancelledError
from temporalio.service import RPCError, RPCStatusCode

from seawall.client import temporal_ops
from seawall.client.temporal_ops import READ_ATTEMPTS, read


class Flaky:
    """Fails with ``errors`` in turn, then answers ``"ok"``; counts its calls."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(temporal_ops, "READ_FIRST_PAUSE_SECONDS", 0.0)


async def test_a_read_rides_out_transient_failures() -> None:
    flaky = Flaky(
        RPCError("restarting", RPCStatusCode.UNAVAILABLE, b""),
        RPCTimeoutOrCancelledError("dropped"),
    )
    assert await read(flaky) == "ok"
    assert flaky.calls == 3


async def test_a_read_gives_up_after_its_attempts_with_the_last_error() -> None:
    errors = [RPCError(f"try {n}", RPCStatusCode.CANCELLED, b"") for n in range(READ_ATTEMPTS)]
    flaky = Flaky(*errors)
    with pytest.raises(RPCError, match=f"try {READ_ATTEMPTS - 1}"):
        await read(flaky)
    assert flaky.calls == READ_ATTEMPTS


async def test_a_read_that_is_wrong_is_not_retried() -> None:
    flaky = Flaky(RPCError("no such workflow", RPCStatusCode.NOT_FOUND, b""))
    with pytest.raises(RPCError):
        await read(flaky)
    assert flaky.calls == 1
