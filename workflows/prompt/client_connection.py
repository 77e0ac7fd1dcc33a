"""What a prompt's clients did while it ran: how often one lost its event stream.

Seed 000, "Rollout", Phase 2/3 gate: "disconnect-or-retry-within-ten-minutes is not worse
by more than 0.5 percentage points". A resubmission is visible in history (the same owner
submits the same text again); a client that drops its stream is not, so the gateway tells
the prompt through the ``client_disconnected`` signal and the prompt reports the count in
its result, where `seawall rollout report` reads it. This mixin of ``PromptWorkflow`` only
counts: a signal handler adds no command, so recorded histories replay unchanged.
"""

from __future__ import annotations

from temporalio import workflow

from workflows.contracts.prompt import ClientDisconnect


class ClientConnection:
    """The ``client_disconnected`` signal and the count it keeps."""

    def __init__(self) -> None:
        super().__init__()
        self._client_disconnects = 0

    @workflow.signal
    def client_disconnected(self, report: ClientDisconnect) -> None:
        self._client_disconnects += 1
