"""Deterministic code only: workflow definitions, the guard, and the contracts they share.

Workflows: ``prompt`` (``PromptWorkflow``, the agent loop) with its mixins ``permissions``
and ``scenario_hooks``; ``session`` (``SessionWorkflow``). Pure state they keep: ``batch``
(admission and settlement, shared with the benchmark simulator), ``guard`` (the
repeated-failure reducer), ``repeats`` (the failed-call refusal), ``protections`` (dedup,
invalid parameters, the cap), ``events`` (the event log), ``conversation``,
``synthetic_outcomes``; the recommended loop profile's layer ``progress_rules`` over
``evidence``, ``failure_cycles``, ``identical_results``, ``denied_calls`` and ``rule_ladder``,
with the profiles in ``loop_profile``. Contracts: ``outcome``, ``activity_io``, ``prompt_io``,
``prompt_options``, ``scenario_io`` (the scenario channel), ``session_io``; telemetry from
workflow code: ``telemetry``, ``search_attributes``.
"""
