"""The worker's composition root: the only package that knows every concrete part.

:mod:`seawall.worker.build` builds the activities with their dependencies and the Temporal
worker that serves them (``build_worker``, also for ``seawall run``, the benchmarks, the
scripts and the tests); :mod:`seawall.worker.main` is the ``python worker.py`` program
(its flags, connection, telemetry and shutdown). ``worker.py`` at the repository root only
runs that program. docs/architecture.md, "Layers".
"""
