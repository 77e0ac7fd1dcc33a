"""Faithful peer loop detectors for the loop benchmark (docs/benchmarks.md, "Peers").

Why it exists: the claim "Seawall stops more loops than its peers" must hold against the
peers' real detectors, not stand-ins. Each module re-implements one peer from its published
source (cited in the module's docstring) to the protocol in :mod:`bench.peers.base`.
``PEERS`` lists them in report order; add a peer with one line. ``AnyPeer`` is their union.
"""

from __future__ import annotations

from bench.peers.base import PeerRule, RefusesCalls

# Report order. Each entry is a class whose no-argument constructor makes a fresh peer.
PEERS: tuple[type, ...] = ()

__all__ = ["PEERS", "PeerRule", "RefusesCalls"]
