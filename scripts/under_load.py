"""The flaky-proof check (``make test-under-load``): the test suite three times in a row with a
CPU hog beside it.

No test may depend on wall-clock speed (docs/development.md). This is how that is checked:
one busy-loop process per core keeps every core saturated while ``pytest`` runs the suite
``--runs`` times in a row; each run's result and duration are printed, and the exit code is
0 only if every run passed. The hog is stopped on every way out — a failed run, Ctrl-C, a
SIGTERM — and each hog process also exits by itself once this script is gone (it watches its
parent), so a SIGKILLed check leaves nothing spinning.

    python scripts/under_load.py                      # the whole suite, 3 runs, one hog per core
    python scripts/under_load.py --runs 1 -- -k test_help -q
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent

# Spins until its parent (this script) is gone: checking the parent every few million
# iterations costs nothing and means an orphaned hog never outlives the check.
HOG = (
    "import os, sys\n"
    "parent = int(sys.argv[1])\n"
    "while os.getppid() == parent:\n"
    "    for _ in range(2_000_000):\n"
    "        pass\n"
)


@contextmanager
def cpu_hog(processes: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``processes`` busy loops, stopped (by their own ids) when the block is left."""
    hogs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(processes):
            hogs.append(
                subprocess.Popen(
                    [sys.executable, "-c", HOG, str(os.getpid())],
                    stdin=subprocess.DEVNULL,
                    # Its own session: a Ctrl-C reaches this script, which stops the hog.
                    start_new_session=True,
                )
            )
        yield hogs
    finally:
        for hog in hogs:
            if hog.poll() is None:
                hog.kill()
        for hog in hogs:
            hog.wait()


@dataclass
class Run:
    number: int
    returncode: int
    seconds: float

    @property
    def passed(self) -> bool:
        return self.returncode == 0


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Arguments after -- go to pytest (default: the whole suite, -q).",
    )
    parser.add_argument("--runs", type=int, default=3, help="runs in a row (default 3)")
    parser.add_argument(
        "--hogs",
        type=int,
        default=os.cpu_count() or 1,
        help="busy-loop processes (default: one per core)",
    )
    args, pytest_args = parser.parse_known_args(argv)
    if pytest_args[:1] == ["--"]:
        pytest_args = pytest_args[1:]
    pytest_args = pytest_args or ["-q"]
    signal.signal(signal.SIGTERM, _stop_on_sigterm)

    runs: list[Run] = []
    interrupted = False
    with cpu_hog(args.hogs) as hogs:
        print(f"CPU hog: {len(hogs)} busy-loop processes beside pytest", flush=True)
        try:
            for number in range(1, args.runs + 1):
                print(f"--- run {number} of {args.runs}: pytest {' '.join(pytest_args)}")
                sys.stdout.flush()
                started = time.monotonic()
                # On Ctrl-C, subprocess.run stops pytest before the interrupt reaches us.
                done = subprocess.run([sys.executable, "-m", "pytest", *pytest_args], cwd=ROOT)
                runs.append(Run(number, done.returncode, round(time.monotonic() - started, 1)))
                verdict = "passed" if runs[-1].passed else "FAILED"
                print(f"--- run {number}: {verdict} (exit {done.returncode}, {runs[-1].seconds} s)")
                sys.stdout.flush()
        except KeyboardInterrupt:
            interrupted = True
    print(f"Under load ({args.hogs} hog processes):")
    for run in runs:
        print(f"  run {run.number}: {'passed' if run.passed else 'FAILED'}  {run.seconds} s")
    all_passed = len(runs) == args.runs and all(run.passed for run in runs)
    print(f"  {'interrupted' if interrupted else 'all passed' if all_passed else 'NOT all passed'}")
    return 130 if interrupted else 0 if all_passed else 1


if __name__ == "__main__":
    sys.exit(main())
