"""``PromptWorkflow``, one prompt's agent loop, and the parts it keeps as state.

Why a package: the loop is one workflow whose concepts each live in their own module, pure
where they can be so that the benchmark simulator shares them (docs/architecture.md, "The
prompt loop").

- ``workflow``: ``PromptWorkflow`` itself, its activity timeouts, retries and patch ids;
- ``batch``: batch screening and settlement, and the post-batch step, pure (shared with
``bench/simulate.py``);
- ``events``: the event log clients stream (the ``events`` query);
- ``permissions``, ``scenario_hooks``, ``client_connection``: mixins of ``PromptWorkflow``
  (permission requests, the scenario driver's hooks, the ``client_disconnected`` count);
- ``telemetry``: replay-safe guard counters and diagnostic logs.

Exported here: nothing. Import ``PromptWorkflow`` from ``workflows.prompt.workflow``: an
``__init__`` that imported it would load Temporal with every module of the package, and
``batch`` must load without it (the benchmark simulator runs it outside any worker).
"""

__all__: list[str] = []
