"""`seawall rollout report`: the seed's rollout evidence, computed from Temporal's own records
(docs/architecture.md, "The rollout report").

``records`` reads prompts from visibility and their histories; ``analysis`` computes the
Phase 1 invariants, decision volumes and the Phase 2/3 gates with owner-level bootstrap
intervals; ``render`` writes the terminal summary, JSON and the HTML page; ``cli`` is the
subcommand.
"""
