"""A program that used Temporal and printed its results exits with its own code.

Each test runs a small program in a subprocess: what it printed must reach the pipe (a
pipe is block-buffered, and ``os._exit`` drops unflushed buffers) and its exit code must be
the one it chose, never the SIGABRT of a finalization race with Temporal's threads.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def run_program(source: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_output_is_flushed_and_the_code_kept() -> None:
    done = run_program(
        """
        import logging, sys
        from seawall.runtime.process_exit import exit_without_finalizing
        logging.basicConfig(stream=sys.stderr)
        print("results")
        logging.getLogger("bench").error("logged")
        sys.stderr.write("diagnostics")
        exit_without_finalizing(3)
        """
    )
    assert done.returncode == 3
    assert done.stdout == "results\n"
    assert "logged" in done.stderr and "diagnostics" in done.stderr


def test_none_means_success() -> None:
    done = run_program(
        """
        from seawall.runtime.process_exit import exit_without_finalizing
        exit_without_finalizing(None)
        """
    )
    assert done.returncode == 0


def test_a_program_that_shut_down_a_dev_server_exits_zero() -> None:
    done = run_program(
        """
        import asyncio
        from seawall.runtime.devserver import start_dev_server
        from seawall.runtime.process_exit import exit_without_finalizing

        async def main() -> None:
            env = await start_dev_server()
            await env.client.count_workflows()
            await env.shutdown()
            print("results")

        asyncio.run(main())
        exit_without_finalizing(0)
        """
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "results\n"


# --- run_then_exit: a program's failures leave the same clean way ---------------------------

FAILING_AFTER_A_SERVER = """
    import asyncio, sys
    from seawall.runtime.devserver import start_dev_server
    from seawall.runtime.process_exit import run_then_exit

    async def work() -> None:
        env = await start_dev_server()
        await env.client.count_workflows()
        await env.shutdown()
        print("results")
        {ending}

    run_then_exit(lambda: asyncio.run(work()))
"""


def test_an_exception_after_using_temporal_exits_one_with_its_traceback() -> None:
    done = run_program(FAILING_AFTER_A_SERVER.format(ending="raise ValueError('broken')"))
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stdout == "results\n"
    assert "Traceback" in done.stderr and "ValueError: broken" in done.stderr
    assert "Fatal Python error" not in done.stderr


def test_a_system_exit_keeps_its_code_or_prints_its_message() -> None:
    coded = run_program(FAILING_AFTER_A_SERVER.format(ending="sys.exit(4)"))
    assert (coded.returncode, coded.stdout) == (4, "results\n"), coded.stderr[-2000:]
    worded = run_program(FAILING_AFTER_A_SERVER.format(ending="raise SystemExit('no scenario')"))
    assert worded.returncode == 1
    assert worded.stderr.strip().splitlines()[-1] == "no scenario"


def test_ctrl_c_exits_130() -> None:
    done = run_program(FAILING_AFTER_A_SERVER.format(ending="raise KeyboardInterrupt"))
    assert done.returncode == 130, done.stderr[-2000:]
    assert "Traceback" not in done.stderr


def test_an_ad_hoc_sdk_script_runs_to_the_end_and_exits_zero() -> None:
    # scripts/simulate_rollout.py: a dev server, workers, sessions and a report, smallest.
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "simulate_rollout.py"),
            "--owners",
            "2",
            "--prompts",
            "2",
            "--resamples",
            "10",
            "--only",
            "legit-explore-files",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "VERDICT:" in done.stdout
    for trouble in ("Traceback", "Fatal Python error", "was never awaited", "Unclosed"):
        assert trouble not in done.stderr, trouble
    # And its refusal after the server started is one line and exit code 1, not a crash.
    refused = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "simulate_rollout.py"), "--only", "no-such"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert refused.returncode == 1, refused.stderr[-2000:]
    assert (
        refused.stderr.strip().splitlines()[-1] == "no runnable corpus scenario among ['no-such']"
    )
