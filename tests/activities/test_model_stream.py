"""The model activity's text publisher (``activities/model_stream.py``): every piece reaches
the workflow once, in order, with contiguous offsets, in a bounded number of signals."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from temporalio.service import RPCError, RPCStatusCode

from activities.model_stream import (
    FIRST_INTERVAL_SECONDS,
    MAX_SIGNALS,
    SIGNALS_PER_STEP,
    DeltaPublisher,
    signal_interval,
)
from workflows.contracts.prompt import ModelDelta


class Recorder:
    """The workflow end of the signals: what arrived, optionally failing the first sends."""

    def __init__(self, failures: int = 0) -> None:
        self.deltas: list[ModelDelta] = []
        self.failures = failures

    async def __call__(self, delta: ModelDelta) -> None:
        if self.failures:
            self.failures -= 1
            raise RPCError("unavailable", RPCStatusCode.UNAVAILABLE, b"")
        self.deltas.append(delta)

    def text(self) -> str:
        return "".join(d.text for d in self.deltas)


def jumping_clock() -> float:
    """A clock that is always past the next allowed signal, so no batch waits."""
    return float(next(_ticks) * 3600)


_ticks = itertools.count()


async def let_the_publisher_run() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_the_signal_spacing_doubles_every_few_signals() -> None:
    assert signal_interval(0) == FIRST_INTERVAL_SECONDS
    assert signal_interval(SIGNALS_PER_STEP - 1) == FIRST_INTERVAL_SECONDS
    assert signal_interval(SIGNALS_PER_STEP) == 2 * FIRST_INTERVAL_SECONDS
    assert signal_interval(2 * SIGNALS_PER_STEP) == 4 * FIRST_INTERVAL_SECONDS


async def test_every_piece_arrives_once_in_order_with_contiguous_offsets() -> None:
    sent = Recorder()
    pieces = [f"word{i} " for i in range(20)]
    async with DeltaPublisher(sent, request_number=3, attempt=2, clock=jumping_clock) as publish:
        for piece in pieces:
            publish(piece)
            await let_the_publisher_run()
    assert sent.text() == "".join(pieces)
    assert len(sent.deltas) > 1
    offsets = list(itertools.accumulate((len(d.text) for d in sent.deltas), initial=0))
    assert [d.offset for d in sent.deltas] == offsets[:-1]
    assert {(d.request_number, d.attempt) for d in sent.deltas} == {(3, 2)}


async def test_a_long_reply_costs_a_bounded_number_of_signals() -> None:
    sent = Recorder()
    pieces = [f"{i} " for i in range(5 * MAX_SIGNALS)]
    async with DeltaPublisher(sent, request_number=1, clock=jumping_clock) as publish:
        for piece in pieces:
            publish(piece)
            await let_the_publisher_run()
    assert len(sent.deltas) <= MAX_SIGNALS
    # The last signal carries everything said after the budget ran out.
    assert sent.text() == "".join(pieces)


async def test_an_undelivered_batch_goes_with_the_next() -> None:
    sent = Recorder(failures=1)
    async with DeltaPublisher(sent, request_number=1, clock=jumping_clock) as publish:
        publish("Hello ")
        await let_the_publisher_run()
        publish("world")
    assert sent.text() == "Hello world"
    assert sent.deltas[0].offset == 0


async def test_text_of_a_request_that_broke_off_is_still_sent() -> None:
    sent = Recorder()
    with pytest.raises(ConnectionError):
        async with DeltaPublisher(sent, request_number=1) as publish:
            publish("Hello wor")
            raise ConnectionError("the stream broke off")
    assert sent.text() == "Hello wor"


async def test_pieces_heartbeat() -> None:
    beats: list[None] = []
    async with DeltaPublisher(
        Recorder(), request_number=1, heartbeat=lambda: beats.append(None)
    ) as publish:
        publish("a")
        publish("b")
    assert len(beats) == 2
