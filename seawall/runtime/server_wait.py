"""Waiting for the Temporal server at start-up, instead of exiting on the first refusal.

In a fleet the server and its clients start in any order (a compose stack, a restarted
node, a server upgrade), so a worker or gateway that finds no server yet retries with
backoff and says so in its log; a supervisor then has nothing to restart and nothing is
lost. Only a wait longer than the operator's ``connect_timeout_seconds`` is an error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import structlog

from seawall.runtime.temporal_connect import TemporalAccessRefused

T = TypeVar("T")

FIRST_PAUSE_SECONDS = 0.5
MAX_PAUSE_SECONDS = 10.0


class ServerUnreachable(RuntimeError):
    """The server did not answer within the configured wait."""


async def wait_for_server(
    connect: Callable[[], Awaitable[T]],
    *,
    address: str,
    timeout_seconds: float,
    process: str,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] | None = None,
) -> T:
    """``connect()``, retried with doubling pauses while it fails to reach the server.

    ``timeout_seconds`` 0 waits for ever. The SDK reports an unreachable server as a
    ``RuntimeError`` (its core's connection error) or an ``OSError``; anything else (a bad
    namespace; TLS or credentials the frontend refused, ``TemporalAccessRefused``) is not a
    matter of waiting and propagates at once.
    """
    log = structlog.get_logger(f"seawall.{process}")
    now = clock or asyncio.get_running_loop().time
    deadline = now() + timeout_seconds if timeout_seconds > 0 else None
    pause = FIRST_PAUSE_SECONDS
    attempt = 0
    while True:
        attempt += 1
        try:
            return await connect()
        except (RuntimeError, OSError) as err:
            if not _unreachable(err):
                raise
            if deadline is not None and now() + pause > deadline:
                raise ServerUnreachable(
                    f"the Temporal server at {address} did not answer within "
                    f"{timeout_seconds:g} s (SEAWALL_CONNECT_TIMEOUT_SECONDS)"
                ) from err
            log.warning("temporal_unreachable", address=address, attempt=attempt, retry_in=pause)
        await sleep(pause)
        pause = min(pause * 2, MAX_PAUSE_SECONDS)


def _unreachable(err: BaseException) -> bool:
    if isinstance(err, TemporalAccessRefused):
        return False  # a TLS or credentials problem: it stays one however long we wait
    if isinstance(err, OSError):
        return True
    text = str(err).lower()
    return any(
        marker in text
        for marker in (
            "failed client connect",
            "connection refused",
            "transport error",
            "tcp connect error",
            "dns error",
            "unavailable",
            "timed out",
        )
    )
