"""`seawall rollout report`: the seed's rollout evidence, computed from Temporal's own records
(docs/rollout.md, "The rollout report").

``records`` reads prompts from visibility and their histories; ``invariants`` checks the
Phase 1 invariants; ``decisions`` counts the decision volumes and samples the manual review;
``cohorts`` measures each prompt and cohort and picks the concurrent arms; ``gates`` holds the
Phase 2/3 gates with owner-level bootstrap intervals and explains each; ``verdict`` decides,
says why and what to do next; ``report`` assembles them; ``wording`` says numbers the same
way everywhere; ``render`` writes the terminal summary, JSON and the HTML page; ``cli`` is
the subcommand.
"""
