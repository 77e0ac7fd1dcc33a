"""What the rollout report reads of a real prompt's history (seawall/rollout/records.py):
its owner, the time of a dropped event stream (the gateway's ``client_disconnected``
signal), and the rules its cohort's mode governs — through a real gateway, dev server and
worker, for the ten-minute bound of disconnect-or-retry (docs/rollout.md)."""

from __future__ import annotations

from temporalio.client import Client

from gateway.disconnects import report_disconnect
from seawall.rollout.cohorts import disconnected, prompt_metrics
from seawall.rollout.records import read_execution
from tests.gateway.owner_helpers import (
    Gateway,
    accepted,
    finish,
    permission_request,
    waiting_session,
)


async def test_a_dropped_stream_is_read_with_its_time_from_history(
    gateway: Gateway, client: Client
) -> None:
    http = await gateway()
    session_id = await waiting_session(http, "alice")
    prompt_id = await accepted(http, "alice", session_id)
    await permission_request(http, "alice", prompt_id)  # it runs, waiting for the answer
    await report_disconnect(client, prompt_id)
    result = await finish(http, "alice", prompt_id)
    assert result["client_disconnects"] == 1

    execution = await client.get_workflow_handle(prompt_id).describe()
    record = await read_execution(client, execution)
    assert record.owned and record.status == "completed" and record.close is not None
    (moment,) = record.disconnects
    assert record.start <= moment <= record.close
    assert disconnected(record)
    metrics = prompt_metrics(record, set())
    assert metrics is not None and metrics.disconnect_or_retry and metrics.completed
    # The recommended profile (the default): every rule runs in the guard's mode.
    assert record.governed_rules is not None and "repeated_failure_cycle" in record.governed_rules
