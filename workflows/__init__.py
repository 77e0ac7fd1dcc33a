"""Deterministic code only: workflow definitions, the guard, and the contracts they share.

Workflows: ``prompt`` (``PromptWorkflow``, the agent loop) with its mixins ``permissions``
and ``scenario_hooks``; ``session`` (``SessionWorkflow``). Pure state they keep:
``protections`` (a batch's screening and settlement in ``BatchProtections``, with dedup,
invalid parameters and the cap) and ``batch`` (``after_batch``, the step after a batch), both
shared with the benchmark simulator; ``guard`` (the repeated-failure reducer), ``repeats``
(the failed-call refusal), ``events`` (the event log), ``conversation``,
``synthetic_outcomes``; the package ``rules`` (the loop profiles, the recommended profile's
layer and its rules, one table of them). Contracts: ``outcome``, ``activity_io``,
``prompt_io``, ``prompt_options``, ``scenario_io`` (the scenario channel), ``session_io``;
telemetry from workflow code: ``telemetry``, ``search_attributes``.
"""
