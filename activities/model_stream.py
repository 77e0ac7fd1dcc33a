"""Publishing a model reply's text to its prompt workflow while the reply streams.

A provider hands each text piece to a :data:`TextSink` as it arrives; the model activity's
:class:`DeltaPublisher` gathers the pieces and sends them to the prompt workflow as
``publish_model_delta`` signals (:class:`~workflows.contracts.prompt.ModelDelta`), which the
workflow shows to clients as ``message_delta`` events (``workflows.prompt.events``).

Every signal is a workflow history event (plus the workflow task that handles it), so the
pieces are batched and the batches are bounded: the first piece goes at once (the time to
the first visible word matters most), later batches at least :data:`FIRST_INTERVAL_SECONDS`
apart, that spacing doubling after every :data:`SIGNALS_PER_STEP` signals, and at most
:data:`MAX_SIGNALS` signals per attempt, the last of which carries whatever remains when the
reply is complete. A reply that streams for minutes therefore costs tens of history
events, not thousands, and whatever the model says the complete reply is still the activity's
result.

Publishing never fails the model request: a signal that cannot be delivered leaves its text
for the next batch, and text that never arrives is still in the reply's ``agent_message``.
Nothing here logs text: deltas are conversation content.

Every provider takes the optional sink: the OpenAI-compatible provider requests
``stream=True`` (with ``stream_options.include_usage``, so token usage still comes, in the last
chunk) and puts tool calls together from their pieces by index; the demo model streams word by
word; a scenario's scripted replies are not streamed (a scenario's history stays its
protections' decisions). With the bounds above a model request adds at most 128 history
events whatever its length, and a prompt at the default 50 model requests at most 6,400. A
malformed stream (a chunk that is not JSON, an error event mid-stream, no choices, or a stream
that ends before its ``finish_reason`` — a connection cut mid-reply, which the SDK cannot tell
from a normal end) is a retryable model error. The model activity heartbeats every second and
on every piece, with a 10 s heartbeat timeout, so a worker lost mid-request is noticed and the
request retried after seconds, not after the five-minute start-to-close timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from types import TracebackType

import structlog
from temporalio import activity
from temporalio.client import RPCTimeoutOrCancelledError
from temporalio.service import RPCError

from workflows.contracts.prompt import PUBLISH_MODEL_DELTA, ModelDelta

# A provider calls this with each piece of reply text, in order, as it arrives.
TextSink = Callable[[str], None]
# Sends one delta to the workflow (a signal in the worker; a list in tests).
DeltaSender = Callable[[ModelDelta], Awaitable[None]]

FIRST_INTERVAL_SECONDS = 0.1
SIGNALS_PER_STEP = 8
MAX_SIGNALS = 32

_log = structlog.get_logger(__name__)


def signal_interval(sent: int) -> float:
    """The least time between signal ``sent`` and the next one."""
    return FIRST_INTERVAL_SECONDS * float(2 ** (sent // SIGNALS_PER_STEP))


class DeltaPublisher:
    """Batches one attempt's reply text into bounded delta signals (an async context: the
    batches are sent in the background while the reply streams, the rest on exit)."""

    def __init__(
        self,
        send: DeltaSender,
        *,
        request_number: int,
        attempt: int = 1,
        heartbeat: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send = send
        self._request_number = request_number
        self._attempt = attempt
        self._heartbeat = heartbeat
        self._clock = clock
        self._buffer: list[str] = []
        self._offset = 0  # characters of this attempt's text delivered so far
        self._sent = 0
        self._next_at = 0.0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def signals_sent(self) -> int:
        return self._sent

    def __call__(self, text: str) -> None:
        """The :data:`TextSink`: keep ``text`` for the next batch."""
        if self._heartbeat is not None:
            self._heartbeat()
        if text:
            self._buffer.append(text)
            self._wake.set()

    async def __aenter__(self) -> DeltaPublisher:
        self._task = asyncio.create_task(self._run())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if exc is None or isinstance(exc, Exception):
            # The reply is complete, or broke off (the request will be retried): the last
            # signal carries whatever is left, so a client sees all that was said. Not after
            # a cancellation: nobody waits for the text of a cancelled request.
            await self._flush(final=True)

    async def _run(self) -> None:
        while self._sent < MAX_SIGNALS - 1:
            await self._wake.wait()
            delay = self._next_at - self._clock()
            if delay > 0:
                await asyncio.sleep(delay)
            self._wake.clear()
            await self._flush(final=False)

    async def _flush(self, *, final: bool) -> None:
        if not self._buffer or (not final and self._sent >= MAX_SIGNALS - 1):
            return
        pieces = len(self._buffer)  # more may arrive while the signal is on its way
        text = "".join(self._buffer[:pieces])
        delta = ModelDelta(
            request_number=self._request_number,
            attempt=self._attempt,
            offset=self._offset,
            text=text,
        )
        try:
            await self._send(delta)
        except (RPCError, RPCTimeoutOrCancelledError) as err:
            # Left in the buffer for the next batch, no sooner than a batch would have gone;
            # the reply's agent_message has the text anyway.
            _log.warning("model_delta_not_delivered", error_type=type(err).__name__)
            self._next_at = self._clock() + signal_interval(self._sent)
            return
        del self._buffer[:pieces]
        self._offset += len(text)
        self._sent += 1
        self._next_at = self._clock() + signal_interval(self._sent)


def workflow_delta_sender() -> DeltaSender | None:
    """A sender that signals the running activity's prompt workflow; ``None`` outside an
    activity scheduled by a workflow on a worker (unit tests, simulations)."""
    if not activity.in_activity():
        return None
    info = activity.info()
    if not info.workflow_id:
        return None
    try:
        client = activity.client()
    except RuntimeError:
        return None  # an activity environment without a client
    handle = client.get_workflow_handle(info.workflow_id, run_id=info.workflow_run_id)

    async def send(delta: ModelDelta) -> None:
        await handle.signal(PUBLISH_MODEL_DELTA, delta)

    return send
