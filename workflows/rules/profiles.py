"""Loop profiles: the seeds' protections verbatim, or the recommended progress-aware ones.

docs/protections.md, "Loop profiles". The ``seed`` profile runs exactly the rules of the
design seeds: the repeated-failure guard's reducer (``workflows.seed.guard``) with no progress
evidence and the failed-call refusal (``workflows.seed.failed_call_refusal``) as they are. The
``recommended`` profile keeps both and adds what real sessions showed they miss: progress
evidence for the guard, relaxations of the refusal (time passed, a refresh, a transient
failure, shell commands), and rules of its own — failure cycles, identical results, denied
calls, call cycles and repeated verifications.

Which profile runs is an operator policy, resolved like the guard mode: once per session
(or per prompt started outside one) through the operator-settings activity, recorded in
history, handed to every prompt. Each of these rules runs in the guard's mode
(``off``/``shadow``/``warn``/``enforce``) unless the operator overrides it per rule, so the
rules roll out shadow-first exactly like the guard.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from workflows.rules.registry import LoopRule, rule_spec
from workflows.seed.guard import GuardMode


class LoopProfile(StrEnum):
    SEED = "seed"
    RECOMMENDED = "recommended"


DEFAULT_LOOP_PROFILE = LoopProfile.RECOMMENDED


class LoopSettings(BaseModel):
    """The profile and, per rule, a mode that overrides the guard's (``None``: the rule
    runs in the guard's mode)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # A payload (``PromptInput.loop_settings``), so the per-rule fields are spelled out
    # rather than made from the rule table: one ``<name>_mode`` per row of
    # ``workflows.rules.registry``, checked field for field by
    # ``tests/workflows/rules/test_registry.py``. (A comment, not the docstring: the
    # docstring is the payload schema's description.)
    profile: LoopProfile = DEFAULT_LOOP_PROFILE
    failure_cycle_mode: GuardMode | None = None
    identical_result_mode: GuardMode | None = None
    denied_call_mode: GuardMode | None = None
    call_cycle_mode: GuardMode | None = None
    verification_mode: GuardMode | None = None
    workspace_revisit_mode: GuardMode | None = None
    reformulation_mode: GuardMode | None = None
    near_repeat_mode: GuardMode | None = None
    rewrite_mode: GuardMode | None = None
    stagnation_mode: GuardMode | None = None
    stale_wait_mode: GuardMode | None = None
    # The progress judge's mode (docs/protections.md, "The progress judge"): not a row of
    # the rule table, and unlike the rules it never follows the guard: ``None`` is off.
    progress_judge_mode: GuardMode | None = None
    # Minutes of unchanged waiting before the stale-wait rule (R12) reminds; ``None``: its
    # default (``workflows.rules.stale_waits.STALE_WAIT_MINUTES``).
    stale_wait_minutes: int | None = Field(default=None, ge=1)
    # Whether an unchanged repeat of a failed shell command is admitted (the failure-cycle
    # rule governs shell repeats instead). Only the benchmark turns it off, to measure it.
    shell_repeats_admitted: bool = True

    def override(self, rule: LoopRule) -> GuardMode | None:
        """The operator's mode for ``rule``, read from the field its table row names."""
        mode: GuardMode | None = getattr(self, rule_spec(rule).mode_field)
        return mode


SEED_SETTINGS = LoopSettings(profile=LoopProfile.SEED)


def rule_mode(
    settings: LoopSettings, rule: LoopRule, guard_mode: GuardMode, *, route_forced_off: bool
) -> GuardMode:
    """The mode ``rule`` runs in: ``off`` in the seed profile, and wherever the prompt's
    route forces the guard off; else the operator's override, else the guard's mode."""
    if settings.profile is LoopProfile.SEED or route_forced_off:
        return GuardMode.OFF
    override = settings.override(rule)
    return override if override is not None else guard_mode
