"""Heartbeating while an activity waits on something slow: one helper, one interval.

Temporal delivers a cancellation to a running activity only on a heartbeat response, so a
model request, a tool call or a hanging scenario fixture heartbeats in the background for as
long as it runs; that is what lets a cancelled prompt stop its work promptly. The worker
sends heartbeats at least every second (``max_heartbeat_throttle_interval`` in
``seawall/worker/build.py``), and the prompt workflow's tool and model heartbeat timeouts
are ten seconds, so a lost worker's call is retried after seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

from temporalio import activity

HEARTBEAT_INTERVAL_SECONDS = 1.0

Heartbeat = Callable[[], None]


def no_heartbeat() -> None:
    """The heartbeat of code that runs outside an activity."""
    return None


def activity_heartbeat() -> Heartbeat | None:
    """The running activity's heartbeat; ``None`` outside an activity (tests, simulations)."""
    return activity.heartbeat if activity.in_activity() else None


@contextlib.asynccontextmanager
async def heartbeating(heartbeat: Heartbeat | None) -> AsyncIterator[None]:
    """Call ``heartbeat`` every :data:`HEARTBEAT_INTERVAL_SECONDS` while the body runs,
    the first time one interval in (``None``: the body runs without heartbeats).

    Not at once: the worker sends an activity's first heartbeat to the server immediately
    (only later ones are throttled), so a beat at the start cost every call one more
    request to the server, most calls being done long before a second. A cancel is still
    heard within about a second (the first beat's response), as before; the heartbeat
    timeout (ten seconds) is far off."""
    if heartbeat is None:
        yield
        return

    async def beat() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_INTERVAL_SECONDS)
            heartbeat()

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
