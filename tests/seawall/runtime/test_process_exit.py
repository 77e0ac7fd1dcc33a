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
