""" "Any peer": every faithful peer at once, on the same agent (the union).

Why it exists: the claim "Seawall stops more loops than its peers" must also hold against
the best of them combined. Every peer sees every reply, call and outcome; a call is refused
when any peer refuses it (the first peer's text is the one the model reads, but every peer
is asked, so each one's state advances as it would alone); the prompt halts at the first
peer that would halt; the warnings of all peers at one point go into the conversation as
one message (counted once).
"""

from __future__ import annotations

from typing import Any

from workflows.contracts import ToolCall, ToolOutcome


class AnyPeer:
    """The union of ``peers`` (fresh instances; ``bench.loop_peers.fresh_peers`` passes one of
    each of ``bench.loop_peers.PEERS``)."""

    name = "any_peer"
    title = "any faithful peer (union)"
    warning_role = "user"

    def __init__(self, peers: list[Any]) -> None:
        self.peers = peers

    def observe_model(self, text: str, calls: list[ToolCall]) -> None:
        for peer in self.peers:
            if hasattr(peer, "observe_model"):
                peer.observe_model(text, calls)

    def observe_user(self, texts: list[str]) -> None:
        for peer in self.peers:
            if hasattr(peer, "observe_user"):
                peer.observe_user(texts)

    def refuse_call(self, call: ToolCall) -> str | None:
        texts = [peer.refuse_call(call) for peer in self.peers if hasattr(peer, "refuse_call")]
        return next((text for text in texts if text is not None), None)

    def before_batch(self, calls: list[ToolCall]) -> str | None:
        stops = [peer.before_batch(calls) for peer in self.peers]
        return next((stop for stop in stops if stop is not None), None)

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        stops = [peer.after_batch(calls, outcomes) for peer in self.peers]
        return next((stop for stop in stops if stop is not None), None)

    def warning(self) -> str | None:
        texts = [peer.warning() for peer in self.peers if hasattr(peer, "warning")]
        found = [text for text in texts if text is not None]
        return "\n\n".join(found) if found else None
