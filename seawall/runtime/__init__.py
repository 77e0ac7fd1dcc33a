"""The runtime every Seawall process shares: settings, logging, metrics, tracing, Temporal.

Low-level and side-effect free at import: the worker, the gateway, the CLI apps and the
activities all import from here, and this package imports nothing of theirs.
"""
