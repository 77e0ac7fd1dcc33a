"""The ``seawall`` command's apps: ``run`` (scenarios), ``prompt``, ``config`` and ``up``.

These are clients: they reach workflows through the Temporal client and the gateway, and
import only contracts (``workflows``' message models) and the shared runtime
(:mod:`seawall.runtime`), never an activity module; the composition root
(:mod:`seawall.worker`) only inside the functions that start an in-process worker.
"""
