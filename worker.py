"""``python worker.py``: a Seawall worker for prompt workflows and their activities.

The entry point the docs and the image name; the program is :mod:`seawall.worker.main` and
what it builds :mod:`seawall.worker.build` (docs/architecture.md, "Layers"). Nothing imports
this file: code that builds a worker imports ``seawall.worker.build``.
"""

from seawall.runtime.process_exit import run_then_exit
from seawall.worker.main import main

if __name__ == "__main__":
    # The SDK's core threads outlive the event loop (seawall/runtime/process_exit.py): every
    # way out, a refused connection's exit 1 included, skips the interpreter's finalization.
    run_then_exit(main)
