"""A small chaos run in ``make test`` (``make chaos`` runs the full one, scripts/chaos.py):
prompts through the gateway on two workers while workers are SIGKILLed, the server is
restarted, an MCP server is SIGKILLed mid-call and the model endpoint answers 429, 500,
hangs, sends a malformed chunk and cuts a stream, each prompt checked against its
undisturbed run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from activities.model import scripted_turn
from scripts.chaos import chaos, report
from scripts.chaos_checks import Figures, check_ledger, compare, delta_problem, failed
from scripts.chaos_mcp import Ledger, check_mcp_ledger, cut_off_by_a_kill
from scripts.chaos_model import FAULT_KINDS, ChaosModel, marked, turn_for
from scripts.chaos_prompts import PromptRun, run_of
from scripts.chaos_watch import PromptStuck, keep_logs, log_tails, run_all, waiting_for
from scripts.chat_server import Received
from workflows.contracts import Message, Role
from workflows.contracts.activity import CallModelInput, ModelSpec
from workflows.contracts.scenario import ModelScript, ScriptedCall, ScriptedTurn
from workflows.contracts.synthetic_outcomes import LOST_CALL_CONTENT
from workflows.seed.guard import REPEATED_TOOL_FAILURE_REMINDER


# The suite's own deadlines (a prompt's 200 s, the stack's start's 120 s) end a stuck run with
# its diagnosis and kept logs; pytest's time-out, the last resort, must come later than they.
@pytest.mark.timeout(900)
async def test_prompts_survive_killed_workers_servers_and_a_faulty_model(tmp_path: Path) -> None:
    figures = await chaos(
        prompts=8,
        interactive=2,
        kills=3,
        restarts=1,
        seed=3,
        data=tmp_path,
        mcp_prompts=2,
        mcp_kills=1,
        model_faults=1,
        # Well inside the test's time-out, so a stuck prompt fails with a diagnosis (which
        # prompt, what it waited for, the stack's logs) rather than the time-out's traceback.
        prompt_deadline=200,
    )
    print(report(figures))
    assert (figures.worker_kills, figures.server_restarts) == (3, 1)
    assert figures.mcp_kills == 1
    # Each kind of endpoint fault was served (and recovered from: no mismatch below).
    assert figures.model_faults == {kind: 1 for kind in FAULT_KINDS}
    assert figures.prompts == 8 and figures.mcp_prompts == 2
    assert figures.interactive_sessions == 2
    assert figures.recovered == 8 + 2 + 2 * 2
    # The kill cut a call off, which settled as a classified error, not a hang.
    assert figures.mcp_calls_cut_off >= 1
    assert figures.events_checked > 0
    assert not failed(figures), report(figures)


async def test_a_prompt_that_cannot_finish_fails_the_run_naming_it_and_keeps_the_logs(
    tmp_path: Path,
) -> None:
    # No worker: no prompt can ever finish, so the first one must hit its deadline.
    kept = tmp_path / "kept"
    figures = await chaos(
        prompts=2,
        interactive=0,
        kills=0,
        restarts=0,
        seed=3,
        data=tmp_path / "run",
        prompt_deadline=5,
        keep_logs_in=kept,
        workers=0,
    )

    assert failed(figures)
    (stuck,) = figures.stuck
    assert stuck.startswith("undisturbed run prompt ")
    assert " did not finish within 5 s; it was waiting for " in stuck
    # The stack's logs were copied out of the run's directory, and the report says where.
    assert figures.logs_kept is not None and Path(figures.logs_kept).parent == kept
    logs = {p.name for p in Path(figures.logs_kept).iterdir()}
    assert {"temporal.log", "gateway.log"} <= logs
    text = report(figures)
    assert f"STUCK {stuck}" in text and figures.logs_kept in text
    assert "--- gateway.log" in text


async def test_the_first_stuck_run_stops_the_others_and_says_what_it_waited_for() -> None:
    never = asyncio.Event()
    cancelled: list[str] = []

    async def hangs(name: str) -> None:
        waiting_for(f"the answer to {name}")
        try:
            await never.wait()
        finally:
            cancelled.append(name)

    async def quick() -> str:
        return "done"

    with pytest.raises(PromptStuck) as raised:
        await run_all(
            [("quick one", quick()), ("stuck one", hangs("q1")), ("queued", hangs("q2"))],
            limit=1,
            deadline=0.01,
        )

    assert str(raised.value) == (
        "stuck one did not finish within 0.01 s; it was waiting for the answer to q1"
    )
    # The queued run never started, the stuck one was stopped: nothing is left running.
    assert cancelled == ["q1"]
    assert await run_all([("a", quick()), ("b", quick())], limit=1, deadline=5) == [
        "done",
        "done",
    ]


def test_kept_logs_are_copied_and_their_tails_shown(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "worker-0.log").write_text("".join(f"line {n}\n" for n in range(50)))
    (logs / "gateway.log").write_text("started\n")

    first = keep_logs(logs, tmp_path / "kept", "seed1")
    second = keep_logs(logs, tmp_path / "kept", "seed1")

    assert first != second
    assert (first / "worker-0.log").read_text() == (logs / "worker-0.log").read_text()
    tails = log_tails(logs, lines=3)
    assert tails.splitlines() == [
        "--- gateway.log (last 1 of 1 lines)",
        "started",
        "--- worker-0.log (last 3 of 50 lines)",
        "line 47",
        "line 48",
        "line 49",
    ]


def test_the_ledger_tells_a_retry_from_a_second_execution(tmp_path: Path) -> None:
    ledger = tmp_path / "s1" / ".seawall" / "fixture-ledger.jsonl"
    ledger.parent.mkdir(parents=True)
    entries = [
        # call a: its activity retried after a crash (allowed, counted)
        {"workflow_id": "p1", "activity_id": "7", "attempt": 1, "call_id": "a"},
        {"workflow_id": "p1", "activity_id": "7", "attempt": 2, "call_id": "a"},
        # call b: run by two activities — the workflow ran a call it had a result for
        {"workflow_id": "p1", "activity_id": "8", "attempt": 1, "call_id": "b"},
        {"workflow_id": "p1", "activity_id": "12", "attempt": 1, "call_id": "b"},
    ]
    ledger.write_text("".join(json.dumps(e) + "\n" for e in entries))
    figures = Figures()
    check_ledger(tmp_path, figures)
    assert figures.reexecutions == 2
    assert figures.double_executions == ["p1 b"]
    assert failed(figures)


# --- the suite's parts, without a stack ------------------------------------------------------


def _conversation(*roles: str, reminder_after: int | None = None) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": marked("go", "k")}]
    for index, role in enumerate(roles):
        messages.append({"role": role, "content": f"m{index}"})
        if reminder_after == index:
            messages.append({"role": "system", "content": REPEATED_TOOL_FAILURE_REMINDER})
    return messages


SCRIPT = ModelScript(
    turns=[
        ScriptedTurn(tool_calls=[ScriptedCall(name="probe", arguments={"n": 1})]),
        ScriptedTurn(tool_calls=[ScriptedCall(name="probe", arguments="{broken")]),
        ScriptedTurn(text="done"),
    ],
    after_reminder=[ScriptedTurn(text="giving up")],
)


@pytest.mark.parametrize(
    "messages",
    [
        _conversation(),
        _conversation("assistant", "tool"),
        _conversation("assistant", "tool", "assistant", "tool"),
        _conversation("assistant", "tool", "assistant", "tool", reminder_after=3),
        _conversation(*["assistant", "tool"] * 4),
    ],
)
def test_the_endpoint_answers_as_the_scripted_provider_would(
    messages: list[dict[str, Any]],
) -> None:
    # The same turn the in-process scripted provider picks for the same conversation.
    conversation = [
        Message(
            role=Role(m["role"]), content=m["content"], tool_call_id="c" * (m["role"] == "tool")
        )
        for m in messages
    ]
    expected = scripted_turn(
        CallModelInput(
            model=ModelSpec(provider="operator"),
            messages=conversation,
            request_number=1,
            scenario_script=SCRIPT,
        )
    )
    assert turn_for(SCRIPT, messages) == expected


def _request(messages: list[dict[str, Any]]) -> Received:
    body = {"model": "m", "messages": messages, "stream": True}
    return Received(method="POST", path="/v1/chat/completions", headers={}, body=body)


def test_a_model_fault_never_fails_the_same_request_twice() -> None:
    model = ChaosModel()
    model.add("k", SCRIPT)
    model.plan({0: "server_error", 1: "rate_limit"})
    first, second = _conversation(), _conversation("assistant", "tool")
    statuses = [
        model.answer(_request(first)).status,  # the planned 500
        model.answer(_request(first)).status,  # its retry: the 429 waits for the next request
        model.answer(_request(second)).status,  # the next request: the 429
        model.answer(_request(second)).status,  # its retry
    ]
    assert statuses == [500, 200, 429, 200]
    assert model.faults == {"server_error": 1, "rate_limit": 1}
    assert model.pending == 0


def test_a_request_without_a_script_is_counted() -> None:
    model = ChaosModel()
    model.answer(_request([{"role": "user", "content": "no marker"}]))
    assert model.unknown == 1


def _mcp_ledger(path: Path, *entries: tuple[str, str, int, int, float]) -> Ledger:
    path.write_text(
        "".join(
            json.dumps({"event": e, "token": t, "pid": p, "worker_pid": w, "at": at}) + "\n"
            for e, t, p, w, at in entries
        )
        + '{"event": "sta'  # a line still being written
    )
    return Ledger.read(path)


def test_an_mcp_call_may_run_again_only_after_its_worker_was_killed(tmp_path: Path) -> None:
    ledger = _mcp_ledger(
        tmp_path / "ledger.jsonl",
        # a: started on worker 100, which was killed; run again on worker 200 (allowed)
        ("start", "a", 11, 100, 1.0),
        ("start", "a", 21, 200, 5.0),
        ("end", "a", 21, 200, 6.0),
        # b: completed on worker 200, which was never killed, then run again (twice)
        ("start", "b", 21, 200, 2.0),
        ("end", "b", 21, 200, 3.0),
        ("start", "b", 21, 200, 4.0),
    )
    check = check_mcp_ledger(ledger, worker_kills={100: 2.5})
    assert check.reexecutions == 2
    assert check.double_executions == ["MCP call b"]


def test_only_a_call_a_kill_cut_off_may_settle_as_server_stopped(tmp_path: Path) -> None:
    ledger = _mcp_ledger(
        tmp_path / "ledger.jsonl",
        ("start", "cut", 31, 100, 1.0),
        ("start", "ended", 31, 100, 1.0),
        ("end", "ended", 31, 100, 2.0),
        ("start", "unkilled", 32, 100, 1.0),
    )
    assert cut_off_by_a_kill(ledger, "cut", killed_pids={31})
    assert not cut_off_by_a_kill(ledger, "ended", killed_pids={31})
    assert not cut_off_by_a_kill(ledger, "unkilled", killed_pids={31})
    # Never sent: the server was found dead before the call reached it.
    assert cut_off_by_a_kill(ledger, "never-started", killed_pids={31})


def test_a_call_lost_with_its_worker_may_settle_as_may_have_run_and_reset_the_guard() -> None:
    """At most once (activities/lost_calls.py): a call a kill cut off, whose tool may change
    things, settles as "may have run" instead of running again; its batch's guard decision
    may then be "reset" (an incomplete batch) where the undisturbed run said "none". Any
    other difference is still a mismatch."""
    lost = LOST_CALL_CONTENT.format(tool="write_file")

    def run(content: str, guard: list[str]) -> PromptRun:
        result = {
            "stop_reason": "end_turn",
            "guard": [{"decision": d, "batch": b} for b, d in enumerate(guard, start=1)],
            "messages": [
                {"role": "assistant", "tool_calls": [{"call_id": "c1", "name": "write_file"}]},
                {"role": "tool", "tool_call_id": "c1", "content": content},
            ],
        }
        settled = (1, 1, "tool_call_settled", "c1", "error" if content == lost else "success", None)
        return run_of(result, [settled], reconnects=0)

    ref = run("wrote 5 bytes", ["none", "none"])
    figures = Figures()
    assert compare(run(lost, ["reset", "none"]), ref, Ledger(), set(), figures) is None
    assert figures.calls_lost_with_worker == 1
    assert "calls lost with their worker (settled as 'may have run', allowed): 1" in report(figures)
    # A "tracked" (a failure counted) is not what a lost call explains, nor is a reset two
    # batches later.
    assert compare(run(lost, ["tracked", "none"]), ref, Ledger(), set(), Figures())
    assert compare(
        run(lost, ["none", "none", "reset"]), run("ok", ["none"] * 3), Ledger(), set(), Figures()
    )
    # A call that failed otherwise is no lost call.
    assert compare(run("boom", ["reset", "none"]), ref, Ledger(), set(), Figures())


def test_streamed_text_must_begin_its_reply() -> None:
    def event(seq: int, kind: str, text: str, status: str | None = None) -> tuple[Any, ...]:
        return (seq, 1, kind, None, status, text)

    good = [
        event(1, "message_delta", "Hel"),
        event(2, "message_delta", "lo"),
        event(3, "agent_message", "Hello there"),
    ]
    restarted = [
        event(1, "message_delta", "Hex"),
        event(2, "message_delta", "Hel", "retry"),
        event(3, "agent_message", "Hello"),
    ]
    shown_twice = [
        event(1, "message_delta", "Hel"),
        event(2, "message_delta", "Hel"),
        event(3, "agent_message", "Hello"),
    ]
    assert delta_problem(good) is None
    assert delta_problem(restarted) is None
    assert delta_problem(shown_twice) is not None
