"""Evidence of progress beyond the call itself, in ``PromptWorkflow`` on a real Temporal dev
server (docs/protections.md, "Loop profiles", R3, R4, R11 and R12): the scroll whose snapshot
moves on ends its turn, the runner's ignored refusals are stopped, the denial rule reminds at
its fourth round, a search reworded for the same answer and a wait with looks elsewhere in
between are stopped (since NOTHING_NEW_PATCH), and a listing whose answers differ only in a
count that grows (since MOVED_COUNTS_PATCH), a curl poll through a tool named `Bash`
(since SHELL_READS_PATCH), and heartbeats whose waits look at nothing and PowerShell
re-reads whose answers differ in a labelled chunk id (since LOOKS_AND_IDS_PATCH); mutations
on eight issues one query listed, answered alike, end their turn, and the heartbeats' echoes
are never news (since WORLD_IDS_PATCH); each as the simulator says, and each history replays
to the same decisions. The rules' own cases are in ``tests/workflows/rules/``.
"""

from __future__ import annotations

import pytest
from temporalio.client import Client

from bench.simulate import result_verdict, simulate_seawall, verdict_differences
from seawall.runtime.plugin import WORKFLOWS
from tests.replay.test_replay import replayer
from tests.scenario_helpers import run, scenario_file
from tests.workflows.prompt.test_durable_steps import patch_ids
from workflows.contracts.prompt import LoopType, StopReason
from workflows.prompt.patches import NEWEST_START_PATCH
from workflows.rules.denied_calls import DENIED_CALL_THRESHOLD
from workflows.rules.stagnation import STAGNATION_THRESHOLD
from workflows.seed.guard import GuardMode

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize(
    ("name", "stop", "loop_type", "rules"),
    [
        ("scroll-feed", StopReason.END_TURN, None, []),
        (
            "reworded-log-search",
            StopReason.LOOP_DETECTED,
            LoopType.REPEATED_STAGNATION,
            [
                (STAGNATION_THRESHOLD + 1, "repeated_stagnation", "warn"),
                (STAGNATION_THRESHOLD + 2, "repeated_stagnation", "stop"),
            ],
        ),
        (
            "context-footer-listing",
            StopReason.LOOP_DETECTED,
            LoopType.REPEATED_STAGNATION,
            [
                (STAGNATION_THRESHOLD + 1, "repeated_stagnation", "warn"),
                (STAGNATION_THRESHOLD + 2, "repeated_stagnation", "stop"),
            ],
        ),
        (
            "bash-curl-poll-finished-run",
            StopReason.LOOP_DETECTED,
            LoopType.REPEATED_IDENTICAL_RESULT,
            [(8, "repeated_identical_result", "warn"), (9, "repeated_identical_result", "stop")],
        ),
        (
            "heartbeat-waits-on-nothing",
            StopReason.LOOP_DETECTED,
            LoopType.REPEATED_STAGNATION,
            [
                (STAGNATION_THRESHOLD + 3, "repeated_stagnation", "warn"),
                (STAGNATION_THRESHOLD + 4, "repeated_stagnation", "stop"),
            ],
        ),
        (
            "powershell-chunk-rereads",
            StopReason.LOOP_DETECTED,
            LoopType.REPEATED_NEAR_RESULT,
            [(6, "repeated_near_result", "warn"), (7, "repeated_near_result", "stop")],
        ),
        ("listed-issues-linked", StopReason.END_TURN, None, []),
        (
            "wait-with-look-elsewhere",
            StopReason.LOOP_DETECTED,
            LoopType.REPEATED_STALE_WAIT,
            [(9, "repeated_stale_wait", "warn"), (17, "repeated_stale_wait", "stop")],
        ),
        (
            "tool-call-limit-ignored",
            StopReason.LOOP_DETECTED,
            LoopType.REPEATED_STAGNATION,
            # Since REFUSALS_PATCH the same refusal again is nothing new to R11 too, which
            # stops it before R3's seventh repeat of one search (batch 19).
            [
                (15, "repeated_stagnation", "warn"),
                (16, "repeated_stagnation", "stop"),
            ],
        ),
        (
            "denied-call-repeat",
            StopReason.LOOP_DETECTED,
            LoopType.REPEATED_DENIED_CALL,
            [(n, "repeated_denied_call", "answered") for n in range(2, DENIED_CALL_THRESHOLD)]
            + [
                (DENIED_CALL_THRESHOLD, "repeated_denied_call", "answered"),
                (DENIED_CALL_THRESHOLD, "repeated_denied_call", "warn"),
                (DENIED_CALL_THRESHOLD + 1, "repeated_denied_call", "answered"),
                (DENIED_CALL_THRESHOLD + 1, "repeated_denied_call", "stop"),
            ],
        ),
    ],
)
async def test_the_workflow_decides_as_the_simulator_and_replays(
    client: Client,
    task_queue: str,
    name: str,
    stop: StopReason,
    loop_type: LoopType | None,
    rules: list[tuple[int, str, str]],
) -> None:
    spec = scenario_file(name)
    result = await run(client, task_queue, spec)

    assert (result.stop_reason, result.loop_type) == (stop, loop_type)
    assert [(e.batch, e.rule, e.decision) for e in result.rules] == rules
    simulated = simulate_seawall(spec, GuardMode.ENFORCE).verdict()
    assert verdict_differences(simulated, result_verdict(result)) == []

    history = await client.get_workflow_handle(result.workflow_id).fetch_history()
    # The newest start patch brings ONE_MARKER_PATCH, and with it PROGRESS_RULES_PATCH,
    # without their own markers.
    assert patch_ids(history) == [NEWEST_START_PATCH]
    assert (await replayer(*WORKFLOWS).replay_workflow(history)).replay_failure is None
