"""The fleet chaos variant's heavy tool: seconds of CPU, with a side-effect marker per call.

``scripts/chaos_fleet.py`` has the model call ``run_shell_command`` with a command line that
runs this script: ``chaos_fleet_tool.py LEDGER TOKEN CPU_SECONDS``. It appends a ``start``
line to the ledger (the call's token, its own pid and the id of the worker that started
it), spins until it has used ``CPU_SECONDS`` of processor time (CPU time, not wall time, so
a call costs the same work however crowded its CPU is), appends an ``end`` line and prints
one line. A call that runs twice shows as two ``start`` lines of its token; one whose worker
was SIGKILLed under it has a ``start`` and no ``end`` (the shell tool's supervisor dies with
the worker and takes the command along). The ledger has the MCP server's shape
(``scripts/chaos_mcp.py``, ``Ledger``), so it is read the same way.

It imports nothing of Seawall's and runs with ``python -I -S``: a call starts in
milliseconds.
"""

from __future__ import annotations

import json
import os
import sys
import time

# The worker's id, which the suite's stack starts each worker with and the shell tool passes
# on (scripts/chaos_stack.py, WORKER_ID_VARIABLE): the process tree cannot say, since a
# command that starts as its worker dies finds itself an orphan already.
WORKER_ID_VARIABLE = "CHAOS_WORKER_ID"
SPIN_BETWEEN_READS = 20_000


def record(ledger: str, event: str, token: str, worker: str) -> None:
    line = {"event": event, "token": token, "pid": os.getpid(), "worker": worker}
    line["at"] = time.time()
    with open(ledger, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def main(argv: list[str]) -> int:
    ledger, token, cpu_seconds = argv[0], argv[1], float(argv[2])
    worker = os.environ.get(WORKER_ID_VARIABLE, "")
    record(ledger, "start", token, worker)
    while time.process_time() < cpu_seconds:
        # Reading the process's CPU clock is a system call: spin between reads, so the
        # call's time is spent computing, as a build's or a test run's is.
        for _ in range(SPIN_BETWEEN_READS):
            pass
    record(ledger, "end", token, worker)
    print(f"{token}: {cpu_seconds:g} s of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
