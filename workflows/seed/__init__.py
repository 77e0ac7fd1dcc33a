"""The design seeds' protections, as pure prompt state (the ``seed`` loop profile).

Why a package: these are the rules the seeds specify verbatim; the recommended profile's
rules (``workflows.rules``) build on them and never change them.

- ``guard``: the repeated tool execution failure guard, a pure reducer over settled
  batches, and its telemetry record (seed 000);
- ``failed_call_refusal``: never run an unchanged repeat of a call that already failed
  (seed 004), with the masked reasons and the repeat limit;
- ``protections``: provider call-id dedup, the invalid-parameter guard and the tool-call cap;
- ``rollout``: the guard's rollout policy and each owner's deterministic cohort;
- ``recency``: the bounded latest-wins memory every per-prompt memory uses.

Exported here: the guard's reducer and state, and the failed-call log.
"""

from __future__ import annotations

from workflows.seed.failed_call_refusal import FailedCallLog, RefusalMode
from workflows.seed.guard import GuardDecision, GuardMode, GuardState, reduce

__all__ = [
    "FailedCallLog",
    "GuardDecision",
    "GuardMode",
    "GuardState",
    "RefusalMode",
    "reduce",
]
