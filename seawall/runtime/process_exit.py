"""End a program that used Temporal without finalizing the interpreter, so it exits cleanly.

Temporal's Python SDK runs its Rust core on Tokio threads that live for the whole process
and are never joined (the runtime is a process-wide default). When a short-lived program
returns from ``main`` after talking to a server (above all after shutting down the embedded
dev server its client was connected to), those threads can still be finishing work that
touches Python objects while CPython finalizes; CPython then aborts with ``Fatal Python
error: PyGILState_Release: thread state ... must be current when releasing`` (SIGABRT, exit
code 134), after the program already printed its results. The SDK tracks this as
temporalio/sdk-python#300; there is no call that stops those threads.

:func:`exit_without_finalizing` flushes what the program wrote and leaves with
``os._exit``, so finalization, and the race, never happen. Use it only at the very end of
``__main__``, once every file is written and every ``with`` block has closed: ``atexit``
handlers do not run (logging's is run here by hand). :func:`run_then_exit` wraps a whole
program so its failures (an exception, ``SystemExit``, Ctrl-C) leave the same way.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import traceback
from collections.abc import Callable
from typing import NoReturn


def exit_without_finalizing(code: int | None = 0) -> NoReturn:
    """Flush stdout, stderr and the log handlers, then end the process with ``code``
    (``None`` means 0, as for :func:`sys.exit`) without finalizing the interpreter."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        # A closed or broken stream: nothing more can be written to it anyway.
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(0 if code is None else code)


def run_then_exit(main: Callable[[], int | None]) -> NoReturn:
    """Run ``main`` (a program's whole body) and leave through :func:`exit_without_finalizing`
    however it ends, so a failure after talking to Temporal cannot crash at exit either:
    with its return code; a ``SystemExit``'s code (a message one is printed, then 1); 130 on
    Ctrl-C; 1, with the traceback on stderr, for any other exception."""
    code: int | None
    try:
        code = main()
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    exit_without_finalizing(code)
