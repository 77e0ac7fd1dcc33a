"""The simulated rollout (scripts/simulate_rollout.py) at a small size, then
``seawall rollout report`` as a real process against the same dev server: real sessions and
prompts in two environments through shadow, warn and the cohort split, read back from
Temporal's visibility and histories."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from scripts.simulate_rollout import build_parser, parse_args, simulate
from tests.seawall.rollout.test_analysis import Page

ROOT = Path(__file__).resolve().parents[3]
# A loop (tracked, warned, stopped in enforce) and a model that heeds the reminder.
SCENARIOS = "loop-read-missing-file-thrash,legit-heeds-reminder"


def seawall(address: str, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("SEAWALL_", "OTEL_"))}
    return subprocess.run(
        [sys.executable, "-m", "seawall.cli.main", *args],
        cwd=ROOT,
        env={**environment, "TEMPORAL_ADDRESS": address},
        capture_output=True,
        text=True,
        timeout=300,
    )


async def test_a_small_simulated_rollout_is_reported_end_to_end(
    temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    since = datetime.now(UTC) - timedelta(seconds=1)
    args = parse_args(
        [
            "--owners",
            "8",
            "--prompts",
            "6",
            "--only",
            SCENARIOS,
            # Both cohorts at this size: half the owners enforced (needs the override).
            "--enforce-percent",
            "50",
            "--resamples",
            "100",
            "--retry",
            "1",
        ]
    )
    reports = await simulate(args, temporal_env.client)
    assert [(phase, env) for phase, env, _ in reports] == [
        (phase, env)
        for phase in ("shadow", "warn", "cohort split")
        for env in ("internal", "public")
    ]
    for phase, env, report in reports:
        assert all(i.violations == 0 for i in report.invariants), (phase, env)
        assert report.prompts >= 1
    by_key = {(phase, env): report for phase, env, report in reports}
    assert set(by_key["shadow", "internal"].modes) == {"shadow"}
    # Phase 2: the warn cohort against the concurrent shadow cohort of the same phase.
    warn = by_key["warn", "internal"]
    assert warn.comparison is not None and warn.comparison.phase == 2
    assert set(warn.cohorts) <= {"warn", "shadow"}
    assert (warn.comparison.treatment, warn.comparison.control) == ("warn cohort", "shadow cohort")
    split = by_key["cohort split", "internal"]
    assert set(split.cohorts) <= {"enforce", "warn"}
    assert set(by_key["cohort split", "public"].modes) == {"shadow"}

    address = temporal_env.client.service_client.config.target_host
    until = datetime.now(UTC) + timedelta(seconds=1)
    page = tmp_path / "report.html"
    done = seawall(
        address,
        "rollout",
        "report",
        "--environment",
        "internal",
        "--since",
        since.isoformat(),
        "--until",
        until.isoformat(),
        "--json",
        "--html",
        str(page),
        "--resamples",
        "100",
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["prompts"] == sum(r.prompts for p, e, r in reports if e == "internal")
    # Minutes of data: never promoted, and the report says why.
    assert report["verdict"] == "hold"
    assert any("the data spans" in reason for reason in report["reasons"])
    assert {i["key"]: i["violations"] for i in report["invariants"]} == {
        i.key: 0 for i in split.invariants
    }
    assert report["modes"].keys() >= {"shadow", "warn"}
    assert sum(report["cohort_owners"].values()) >= 1 and report["enforced"]["owners"] >= 0
    parsed = Page()
    parsed.feed(page.read_text())
    assert {"verdict", "volumes", "invariants"} <= parsed.ids and parsed.external == []

    text = seawall(
        address, "rollout", "report", "--environment", "internal", "--since", since.isoformat()
    )
    assert text.returncode == 0, text.stderr
    assert "Phase 1 invariants" in text.stdout and "VERDICT:" in text.stdout

    empty = seawall(address, "rollout", "report", "--environment", "nowhere", "--since=-1h")
    assert empty.returncode == 0, empty.stderr
    assert "No prompts in environment 'nowhere'" in empty.stdout

    backwards = seawall(
        address, "rollout", "report", "--environment", "x", "--since", "now", "--until=-1h"
    )
    assert backwards.returncode == 2 and "--since must be before --until" in backwards.stderr


def test_the_simulation_keeps_its_data_and_prints_a_runnable_command_per_phase(
    tmp_path: Path,
) -> None:
    data = tmp_path / "sim"
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SEAWALL_", "OTEL_"))},
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scripts.simulate_rollout",
            "--owners",
            "4",
            "--prompts",
            "2",
            "--only",
            SCENARIOS.split(",")[0],
            "--enforce-percent",
            "50",
            "--resamples",
            "20",
            "--data-dir",
            str(data),
        ],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (data / "temporal.db").is_file()  # kept after the server stopped
    _, _, tail = done.stdout.partition("Report a phase again (its own window) with:\n")
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    labels = [line for line in lines if line.startswith("# ")]
    assert labels == [
        f"# phase {phase}, environment {env}"
        for phase in ("shadow", "warn", "cohort split")
        for env in ("internal", "public")
    ], done.stdout[-2000:]
    commands = [shlex.split(line) for line in lines if not line.startswith("#")]
    assert len(commands) == 6
    windows = []
    for command in commands:
        # The executable runs from where the simulation ran: this Python's seawall script.
        executable = Path(command[0])
        assert executable.is_file() and os.access(executable, os.X_OK), command[0]
        assert executable.name == "seawall" and executable.parent == Path(sys.executable).parent
        assert command[1:3] == ["rollout", "report"] and "--db" in command
        option = dict(zip(command[3::2], command[4::2], strict=True))
        windows.append((option["--since"], option["--until"]))
        assert option["--seed"] == "7" and option["--resamples"] == "20"
    # Each phase its own window, the phases one after another.
    internal = windows[0::2]
    assert windows[1::2] == internal
    assert all(since < until for since, until in internal)
    assert internal[0][1] <= internal[1][0] and internal[1][1] <= internal[2][0]

    # The cohort split's internal command, run as printed, reports what the simulation did.
    split = commands[4]
    report = subprocess.run(
        [*split, "--json"], cwd=tmp_path, env=environment, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr[-3000:]
    parsed = json.loads(report.stdout)
    printed = done.stdout.split("===== phase: cohort split / environment: internal =====")[1]
    printed = printed.split("=====")[0]
    # The same window, records and bootstrap: the same report as the simulation printed.
    if parsed["prompts"]:
        assert f"prompts {parsed['prompts']}," in printed
        assert set(parsed["modes"]) <= {"enforce", "warn"}
    else:
        assert "No prompts in environment 'internal'" in printed
    assert f"VERDICT: {parsed['verdict']}" in printed
    flat = " ".join(printed.split())
    assert parsed["next_steps"] and all(" ".join(s.split()) in flat for s in parsed["next_steps"])
    assert (tmp_path / "internal-cohort-split.html").is_file()


def test_every_option_of_the_simulation_says_what_it_does() -> None:
    parser = build_parser()
    text = " ".join(parser.format_help().split())
    options = [a for a in parser._actions if a.option_strings and a.dest != "help"]
    assert len(options) == 13
    for action in options:
        assert action.help and len(action.help.split()) >= 5, action.dest
        said = " ".join((action.help % {"default": action.default}).split())
        assert said in text, action.dest
