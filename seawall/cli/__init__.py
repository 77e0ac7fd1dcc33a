"""The ``seawall`` command's apps: ``run`` (scenarios), ``prompt``, ``config`` and ``up``.

These are clients: they reach workflows through the Temporal client and the gateway, and
import only contracts (``workflows``' message models) and the shared runtime
(:mod:`seawall.runtime`), never an activity module or ``worker.py``'s internals.
"""
