"""Deterministic code only: the workflows, the pure state they keep, and the contracts.

Nothing here does I/O, reads a clock or imports anything of ours outside ``workflows``
(docs/architecture.md, "Layers"). The packages, from the bottom up:

- ``contracts``: everything that crosses a boundary (activities, clients, starters, the
  Temporal UI) — the outcome contract, the conversation, the prompt's, session's,
  scenario's and owner admission's messages, grants and start claims, search attributes;
- ``seed``: the design seeds' protections — the repeated-failure guard, the failed-call
  refusal, call-id dedup, invalid parameters, the tool-call cap — and the guard's rollout;
- ``rules``: the recommended loop profile's rules over the seed's protections;
- ``prompt``: ``PromptWorkflow`` (the agent loop) with batch screening and settlement, the
  event log, its mixins and its telemetry;
- ``session``: ``SessionWorkflow`` and the per-owner ``OwnerAdmissionWorkflow``.

Each package's ``__init__`` says what each of its modules holds and exports its few
public names.
"""
