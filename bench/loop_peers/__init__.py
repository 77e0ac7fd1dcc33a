"""Faithful peer loop detectors for the loop benchmark (docs/benchmarks.md, "Peers").

Why it exists: the claim "Seawall stops more loops than its peers" must hold against the
peers' real detectors, not stand-ins (``bench/baselines.py`` keeps those). Each module
re-implements one peer from its published source (cited in the module's docstring) to the
protocol in :mod:`bench.loop_peers.base`. ``PEERS`` lists them in report order; add a peer with
one line. :class:`~bench.loop_peers.any_peer.AnyPeer` is their union.
"""

from __future__ import annotations

from typing import Any

from bench.loop_peers.any_peer import AnyPeer
from bench.loop_peers.base import PeerRule
from bench.loop_peers.cline import ClineLoopLimits
from bench.loop_peers.gemini_cli import GeminiLoopDetection
from bench.loop_peers.goose import GooseRepetitionInspector
from bench.loop_peers.hermes import HermesGuardrails
from bench.loop_peers.openhands import OpenHandsStuckDetector
from bench.loop_peers.pydantic_ai_harness import PydanticAiLoopDetection
from bench.loop_peers.roo_code import RooToolRepetition

# Report order. Each entry is a class whose no-argument constructor makes a fresh peer, in
# the configuration the peer runs in unattended (no user to answer its questions).
PEERS: tuple[type, ...] = (
    OpenHandsStuckDetector,
    GeminiLoopDetection,
    GooseRepetitionInspector,
    HermesGuardrails,
    ClineLoopLimits,
    RooToolRepetition,
    PydanticAiLoopDetection,
)


def fresh_peers() -> list[Any]:
    """One new instance of every peer, then the union of them all, in report order."""
    return [peer() for peer in PEERS] + [AnyPeer([peer() for peer in PEERS])]


__all__ = ["PEERS", "AnyPeer", "PeerRule", "fresh_peers"]
