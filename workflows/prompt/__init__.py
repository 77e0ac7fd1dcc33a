"""``PromptWorkflow``, one prompt's agent loop, and the parts it keeps as state.

Why a package: the loop is one workflow whose concepts each live in their own module, pure
where they can be so that the benchmark simulator shares them (docs/architecture.md, "The
life of a prompt").

- ``workflow``: ``PromptWorkflow`` itself, the orchestration and its durable side;
  ``patches`` and ``activity_options``: its patch ids and its activities' timeouts and retry
  policies; ``visibility``: what the Temporal UI shows; ``model_failures``: why a model
  request failed for good;
- ``batch``: the post-batch step, pure (shared with ``bench/simulate.py``);
- ``approval_policy`` and ``approvals``: which calls run, ask or never run, and what a
  permission request shows; ``judging``: the progress judge's question and telemetry;
  ``context_window``: the context policy's view kept between requests;
- ``events``: the event log clients stream (the ``events`` query);
- ``permissions``, ``scenario_hooks``, ``client_connection``: mixins of ``PromptWorkflow``
  (permission requests, the scenario driver's hooks, the ``client_disconnected`` count);
- ``telemetry``: replay-safe guard counters and diagnostic logs.

Exported here: nothing. Import ``PromptWorkflow`` from ``workflows.prompt.workflow``: an
``__init__`` that imported it would load Temporal with every module of the package, and
``batch`` must load without it (the benchmark simulator runs it outside any worker).
"""

__all__: list[str] = []
