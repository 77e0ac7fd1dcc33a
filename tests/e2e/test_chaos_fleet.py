"""A small fleet chaos run in ``make test`` (``make chaos-fleet`` runs the full one,
scripts/chaos_fleet.py): heavy shell calls on four workers at the shipped
``eager_calls_per_workflow_task``, the worker running a call SIGKILLed mid-batch; nothing may
be lost and no call may run twice after finishing. A shell call whose run was lost with its
worker must not run again either (at most once, activities/lost_calls.py): it settles as
"may have run", and the run counts it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts import chaos_fleet_tool
from scripts.chaos_fleet import (
    FleetFigures,
    FleetLoad,
    FleetPrompt,
    PhaseFigures,
    batch_of,
    check_phase,
    combined,
    failed,
    fleet,
    fleet_script,
    main,
    read_ledger,
    report,
    token_of,
)
from scripts.chaos_mcp import Ledger
from scripts.chaos_prompts import lost_with_worker
from scripts.chaos_stack import WORKER_ID_VARIABLE
from seawall.runtime.settings import default_of
from workflows.contracts.synthetic_outcomes import LOST_CALL_CONTENT

LOAD = FleetLoad(prompts=2, batches=2, calls=4, cpu_seconds=1.0, concurrent=2)


# The run's own deadlines (a prompt's 200 s, the stack's start's 120 s) end a stuck run with
# its diagnosis and kept logs; the fixture's time-out, the last resort, comes later.
@pytest.fixture(scope="module")
async def fire(tmp_path_factory: pytest.TempPathFactory) -> PhaseFigures:
    figures = await fleet(
        load=LOAD,
        eager=[default_of("eager_calls_per_workflow_task")],
        seed=3,
        data=tmp_path_factory.mktemp("fleet"),
        phases=["fire"],
        prompt_deadline=200,
        keep_logs_in=tmp_path_factory.mktemp("kept"),
    )
    print(report(figures))
    assert not figures.stuck, report(figures)
    (phase,) = figures.phases
    return phase


@pytest.mark.timeout(900)
def test_a_fleet_under_fire_loses_nothing_and_runs_nothing_twice_after_it_finished(
    fire: PhaseFigures,
) -> None:
    # The kill hit a worker while it ran calls.
    assert fire.worker_kills == 1
    assert fire.calls_cut_off >= 1
    # Every prompt finished, every call settled, none that had finished ran again.
    assert fire.finished == fire.prompts == LOAD.prompts
    assert fire.lost == []
    assert fire.double_executions == []
    assert fire.reruns_without_a_kill == []
    assert fire.errors_without_a_kill == []
    # Every call ran once, but those the kill took before their command started.
    assert fire.calls + fire.lost_before_their_command == LOAD.total_calls
    assert sum(fire.calls_per_worker) == fire.calls
    assert len(fire.latencies) == LOAD.prompts


@pytest.mark.timeout(900)
def test_a_shell_call_lost_with_its_worker_is_not_run_again(fire: PhaseFigures) -> None:
    assert fire.calls_cut_off >= 1
    assert fire.unsafe_reruns == []
    # Each call the kill cut off settled as "may have run" (and so did any the kill took
    # before its command started, or after it ended but before its worker reported it).
    assert fire.calls_lost_with_worker >= fire.calls_cut_off
    assert fire.settled_as_errors == fire.calls_lost_with_worker


# --- the checks, without a stack -------------------------------------------------------------


def test_each_call_is_a_shell_command_of_its_own_token(tmp_path: Path) -> None:
    script = fleet_script("fire", 1, LOAD, tmp_path / "ledger.jsonl")
    batches = [turn.tool_calls for turn in script.turns if turn.tool_calls]
    assert len(batches) == LOAD.batches and script.turns[-1].text
    ids = [call.id for batch in batches for call in batch]
    assert ids == [
        token_of("fire", 1, b, c) for b in range(LOAD.batches) for c in range(LOAD.calls)
    ]
    for call in batches[0]:
        assert call.name == "run_shell_command"
        assert isinstance(call.arguments, dict) and str(call.id) in call.arguments["command"]
    assert batch_of(token_of("fire", 1, 0, 3)) == "fire-p1-b0"


def test_the_tool_names_its_worker_by_the_variable_the_stack_sets() -> None:
    # The tool imports nothing of Seawall's (it starts bare), so it spells the name itself.
    assert chaos_fleet_tool.WORKER_ID_VARIABLE == WORKER_ID_VARIABLE


def _ledger(path: Path, *entries: tuple[str, str, int, str, float]) -> Ledger:
    """A ledger of ``(event, token, pid, worker id, at)`` entries, read as the run reads it
    (worker ids 0.0, 1.1 and 2.2 are the processes 100, 200 and 300)."""
    path.write_text(
        "".join(
            json.dumps({"event": e, "token": t, "pid": p, "worker": w, "at": at}) + "\n"
            for e, t, p, w, at in entries
        )
    )
    return read_ledger(path, {"0.0": 100, "1.1": 200, "2.2": 300})


def test_the_ledger_tells_an_unsafe_rerun_from_a_second_run_after_finishing(
    tmp_path: Path,
) -> None:
    load = FleetLoad(prompts=1, batches=1, calls=5, cpu_seconds=1, concurrent=1)
    a, b, c, d, e = (token_of("fire", 0, 0, n) for n in range(5))
    slots, kills = {100: 0, 200: 1, 300: 2}, {100}
    ledger = _ledger(
        tmp_path / "ledger.jsonl",
        # a: cut off when worker 100 was killed, then run again on 200 (unsafe re-run)
        ("start", a, 11, "0.0", 1.0),
        ("start", a, 21, "1.1", 5.0),
        ("end", a, 21, "1.1", 6.0),
        # b: finished on 200, then ran again on 300 (a double execution)
        ("start", b, 22, "1.1", 1.0),
        ("end", b, 22, "1.1", 1.5),
        ("start", b, 31, "2.2", 7.0),
        ("end", b, 31, "2.2", 8.0),
        # c: once, on 100, before it was killed
        ("start", c, 12, "0.0", 0.5),
        ("end", c, 12, "0.0", 1.0),
        # e: started by 100 before its death, its line written a moment after; run again
        ("start", e, 13, "0.0", 2.1),
        ("start", e, 23, "1.1", 9.0),
        ("end", e, 23, "1.1", 10.0),
        # d: cut short on 300, which was never killed, and run again there
        ("start", d, 32, "2.2", 2.0),
        ("start", d, 33, "2.2", 3.0),
        ("end", d, 33, "2.2", 4.0),
    )
    settled = dict.fromkeys([a, b, c, d, e], "success")
    phase = PhaseFigures(eager=16, phase="fire")
    check_phase(phase, load, [FleetPrompt("end_turn", settled, 9.0)], ledger, slots, kills)

    assert phase.unsafe_reruns == [
        f"{a} ran again after its worker was SIGKILLed",
        f"{e} ran again after its worker was SIGKILLed",
    ]
    assert phase.double_executions == [f"{b} ran again after it had finished"]
    assert phase.reruns_without_a_kill == [
        f"{d} ran again after a run that did not finish, on a worker not killed"
    ]
    assert (phase.calls_cut_off, phase.prompts_hit_by_the_kill) == (2, 1)
    assert phase.calls_per_worker == [3, 1, 1, 0]
    assert phase.busiest_worker_share == 2.4
    assert (phase.batches, phase.batches_spread, phase.mean_workers_per_batch) == (1, 1, 3)
    assert phase.lost == [] and phase.finished == 1
    figures = FleetFigures(load=load, eager=[16], worker_cpus=[], seed=1, phases=[phase])
    assert failed(figures)
    text = report(figures)
    assert "| unsafe re-runs (target 0) | 2 |" in text
    assert f"UNSAFE eager 16, fire: {a} ran again after its worker was SIGKILLed" in text


def test_a_call_lost_with_its_killed_worker_settles_as_may_have_run(tmp_path: Path) -> None:
    load = FleetLoad(prompts=1, batches=1, calls=5, cpu_seconds=1, concurrent=1)
    cut, early, ok, unkilled, failing = (token_of("fire", 0, 0, n) for n in range(5))
    slots, kills = {100: 0, 200: 1}, {100}
    ledger = _ledger(
        tmp_path / "ledger.jsonl",
        # cut: its command ran on 100 when it was killed, and was not run again
        ("start", cut, 11, "0.0", 1.0),
        # early: the kill took it before its command started (no line at all)
        ("start", ok, 21, "1.1", 1.0),
        ("end", ok, 21, "1.1", 2.0),
        # unkilled: settled as "may have run", but its worker 200 was never killed
        ("start", unkilled, 22, "1.1", 1.0),
        # failing: an error of its own, on a worker that was never killed
        ("start", failing, 23, "1.1", 1.0),
        ("end", failing, 23, "1.1", 2.0),
    )
    settled = {cut: "error", early: "error", ok: "success", unkilled: "error", failing: "error"}
    prompt = FleetPrompt("end_turn", settled, 5.0, frozenset({cut, early, unkilled}))
    phase = PhaseFigures(eager=16, phase="fire")
    check_phase(phase, load, [prompt], ledger, slots, kills)

    assert (phase.calls_lost_with_worker, phase.lost_before_their_command) == (2, 1)
    assert (phase.settled_as_errors, phase.calls_cut_off) == (4, 1)
    assert phase.unsafe_reruns == [] and phase.lost == []
    assert phase.errors_without_a_kill == [
        f"call {unkilled} settled as lost with its worker, but no kill cut it off",
        f"call {failing} settled as an error that is not a call lost with its worker",
    ]
    figures = FleetFigures(load=load, eager=[16], worker_cpus=[], seed=1, phases=[phase])
    assert failed(figures)
    text = report(figures)
    assert "| of them lost with their worker ('may have run', not run again) | 2 |" in text
    assert "| errors a kill does not explain (target 0) | 2 |" in text
    # Had no worker been killed, no call settled as lost would be a kill's doing.
    unkilled_fleet = PhaseFigures(eager=16, phase="fire")
    check_phase(unkilled_fleet, load, [prompt], ledger, slots, set())
    assert len(unkilled_fleet.errors_without_a_kill) == 4
    assert unkilled_fleet.calls_lost_with_worker == 0


def test_a_lost_call_is_known_by_the_outcome_it_settles_with() -> None:
    messages = [
        {"role": "assistant", "tool_calls": [{"call_id": "a"}, {"call_id": "b"}]},
        {"role": "tool", "tool_call_id": "a", "content": LOST_CALL_CONTENT.format(tool="x")},
        {"role": "tool", "tool_call_id": "b", "content": "exit 1: worker lost"},
    ]
    assert lost_with_worker(messages) == ["a"]


def test_a_call_that_never_settled_or_never_finished_is_lost(tmp_path: Path) -> None:
    load = FleetLoad(prompts=1, batches=1, calls=2, cpu_seconds=1, concurrent=1)
    a, b = (token_of("quiet", 0, 0, n) for n in range(2))
    ledger = _ledger(tmp_path / "ledger.jsonl", ("start", a, 11, "0.0", 1.0))
    phase = PhaseFigures(eager=0, phase="quiet")
    check_phase(phase, load, [FleetPrompt("end_turn", {a: "success"}, 3.0)], ledger, {100: 0}, {})

    assert phase.lost == [
        f"call {a} settled as a success the ledger never saw",
        f"call {b} never settled",
    ]


def test_latency_quantiles_are_nearest_rank() -> None:
    phase = PhaseFigures(eager=0, phase="quiet", latencies=[float(n) for n in range(1, 21)])
    assert (phase.latency(0.5), phase.latency(0.95), phase.latency(1)) == (10.0, 19.0, 20.0)
    assert PhaseFigures(eager=0, phase="quiet").latency(0.95) == 0.0


def test_rounds_of_one_setting_are_reported_as_one() -> None:
    one = PhaseFigures(eager=2, phase="fire", prompts=2, finished=2, batches=2, seconds=10)
    one.calls_per_worker, one.mean_workers_per_batch, one.latencies = [1, 2, 3, 0], 1.0, [5.0]
    two = PhaseFigures(eager=2, phase="fire", prompts=2, finished=1, batches=6, seconds=30)
    two.calls_per_worker, two.mean_workers_per_batch, two.latencies = [0, 0, 1, 4], 3.0, [7.0]
    two.unsafe_reruns, two.lost = ["x ran again"], ["prompt 1 ended 'error'"]

    total = combined([one, two])

    assert (total.rounds, total.prompts, total.finished, total.batches) == (2, 4, 3, 8)
    assert total.calls_per_worker == [1, 2, 4, 4]
    assert total.mean_workers_per_batch == 2.5
    assert total.latencies == [5.0, 7.0] and total.seconds == 40
    assert total.unsafe_reruns == ["x ran again"] and total.lost == ["prompt 1 ended 'error'"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--calls", "0"], "--calls must be at least 1"),
        (["--cpu-seconds", "0"], "--cpu-seconds must be more than 0"),
        (["--eager", "16,x"], "'16,x' is not a comma-separated list of integers"),
        (["--eager", "1001"], "each eager setting is 0 to 1000"),
    ],
)
def test_bad_input_gets_one_clear_error(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(argv)
    assert message in capsys.readouterr().err
