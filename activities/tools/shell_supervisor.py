"""The parent of every shell command: it dies with the worker, and takes the command with it.

``run_shell_command`` kills the command's process group whenever a call ends, but only a
live worker can do that. A worker that is SIGKILLed (or OOM-killed, or loses its machine's
power to a container restart) used to leave the command running; its retried call then ran
beside the orphan. So each command is started by this small supervisor instead of directly:

- it leads the command's process group (``start_new_session``), so killing the group kills
  everything the command started;
- it asks the kernel for SIGTERM when the process that started it dies (Linux
  ``PR_SET_PDEATHSIG``), and on SIGTERM kills its whole group — the command and anything
  it left in the background;
- otherwise it waits for ``bash -c COMMAND`` and exits the way bash did (same code, or the
  same signal), so the tool reads exactly what it read before.

Run as a script with ``python -S -I`` (no site, isolated): it imports only the standard
library and starts in milliseconds. Arguments: the expected parent pid, then the command.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1


def _kill_group(signum: int, frame: object) -> None:
    os.killpg(0, signal.SIGKILL)


def _die_with(parent_pid: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return  # not Linux: the worker's own cleanup is all there is
    if os.getppid() != parent_pid:
        # The worker died before the request took effect.
        _kill_group(signal.SIGTERM, None)


def main(argv: list[str]) -> int:
    parent_pid, command = int(argv[1]), argv[2]
    signal.signal(signal.SIGTERM, _kill_group)
    _die_with(parent_pid)
    child = subprocess.Popen(["/bin/bash", "-c", command])
    while True:
        try:
            code = child.wait()
            break
        except InterruptedError:  # pragma: no cover - PEP 475 retries for us
            continue
    if code < 0:
        # Die of the same signal, so the tool sees "killed by SIGSEGV" as before.
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
