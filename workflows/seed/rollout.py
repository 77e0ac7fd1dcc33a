"""The guard's rollout policy and each owner's deterministic cohort (docs/rollout.md, "Rollout
cohorts").

Seed 000, "Rollout", Phase 3: enforcement for at most 5 % of stable, version-pinned owners,
assigned deterministically by owner so one prompt can never switch treatment mid-run, the
rest in ``warn`` as the control. The operator writes the policy as one setting,
``SEAWALL_GUARD_ROLLOUT``, for example::

    enforce:5%,warn:rest                            # every environment
    internal=enforce:5%,warn:rest;public=shadow:rest   # per deployment environment

Each arm is ``<mode>:<percent>%`` or ``<mode>:rest``; arms fill the owner buckets in the order
written, so raising the first arm from 5 % to 10 % keeps every owner already in it. An owner's
bucket is a stable hash of the rollout salt and the owner id (:func:`owner_bucket`): the same
owner gets the same cohort in every session, on every worker, until the salt changes.

Everything here is pure (no I/O, no clock, no randomness), so the operator-settings activity
and the tests compute the same assignment; the activity's result is what history records.

Besides the arms' modes (``enforce``, ``warn``, ``shadow``, ``off``) a session's cohort is
``unassigned`` (no policy for its environment: the guard-mode setting applies), ``unowned``
(no owner: the guard mode, capped at ``warn``, since the seed must not assign enforce to
unknown ownership) or ``unpinned`` (the worker's ``service_version`` is not the policy's
``guard_rollout_version``: the guard mode). A policy that does not parse, lacks a salt or an
environment, or enforces above 5 % without ``guard_rollout_allow_wide_enforce`` stops every
process at startup (``seawall.runtime.rollout_policy``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from workflows.seed.guard import GuardMode, parse_guard_mode

# Owners are hashed into this many buckets: percentages have two decimals of resolution.
BUCKETS = 10_000
# Enforcement above this share of owners needs the explicit override setting (seed 000,
# "Rollout": "Do not ramp beyond 5% until treatment saturation has been checked").
MAX_ENFORCE_PERCENT = Decimal(5)
# Environment and version values become search attributes and metric labels: short tokens.
LABEL_VALUE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,39}$")


def label_value(value: str | None) -> str | None:
    """``value`` when it is a short token fit for a search attribute or a label, else None."""
    return value if value is not None and LABEL_VALUE.match(value) else None


class Cohort(StrEnum):
    """Why a session runs in the mode it runs in. The arms of a policy are named by their
    mode (``enforce``, ``warn``, ``shadow``, ``off``); the rest say why no arm applied."""

    ENFORCE = "enforce"
    WARN = "warn"
    SHADOW = "shadow"
    OFF = "off"
    # No rollout policy for this environment: the guard-mode setting applies.
    UNASSIGNED = "unassigned"
    # A policy exists but the session has no owner: never enforced (seed: "must not assign
    # enforce to unknown ownership").
    UNOWNED = "unowned"
    # A policy exists but this worker's service version is not the pinned one.
    UNPINNED = "unpinned"


class RolloutPolicyError(ValueError):
    """The policy text is not a valid rollout policy; the message says why."""


@dataclass(frozen=True)
class Arm:
    mode: GuardMode
    # Hundredths of a percent: how many of the BUCKETS owner buckets the arm covers.
    buckets: int


@dataclass(frozen=True)
class RolloutPolicy:
    """The arms of one environment's policy, in order; their buckets sum to BUCKETS."""

    arms: tuple[Arm, ...]

    def share(self, mode: GuardMode) -> Decimal:
        """The percentage of owners assigned ``mode``."""
        return sum(
            (Decimal(arm.buckets) / 100 for arm in self.arms if arm.mode is mode), Decimal(0)
        )

    def mode_of(self, bucket: int) -> GuardMode:
        start = 0
        for arm in self.arms:
            if bucket < start + arm.buckets:
                return arm.mode
            start += arm.buckets
        return self.arms[-1].mode  # unreachable: the arms cover every bucket

    def describe(self) -> str:
        return ",".join(f"{arm.mode.value}:{Decimal(arm.buckets) / 100}%" for arm in self.arms)


@dataclass(frozen=True)
class RolloutPolicies:
    """The whole setting: a policy for every environment (key ``None``) and/or per
    environment."""

    by_environment: dict[str | None, RolloutPolicy]

    def for_environment(self, environment: str | None) -> RolloutPolicy | None:
        if environment is not None and environment in self.by_environment:
            return self.by_environment[environment]
        return self.by_environment.get(None)

    def max_enforce_percent(self) -> Decimal:
        return max(
            (p.share(GuardMode.ENFORCE) for p in self.by_environment.values()), default=Decimal(0)
        )


def _parse_arms(text: str) -> RolloutPolicy:
    arms: list[tuple[GuardMode, int | None]] = []
    seen: set[GuardMode] = set()
    for raw in text.split(","):
        part = raw.strip()
        mode_text, colon, share = part.partition(":")
        if not colon:
            raise RolloutPolicyError(f"arm {part!r} is not <mode>:<percent>% or <mode>:rest")
        mode = parse_guard_mode(mode_text)
        if mode is None:
            allowed = ", ".join(m.value for m in GuardMode)
            raise RolloutPolicyError(f"unknown mode {mode_text.strip()!r} (one of: {allowed})")
        if mode in seen:
            raise RolloutPolicyError(f"mode {mode.value!r} appears twice")
        seen.add(mode)
        share = share.strip().lower()
        if share == "rest":
            arms.append((mode, None))
            continue
        if not share.endswith("%"):
            raise RolloutPolicyError(f"share {share!r} of {mode.value} must end with % or be rest")
        try:
            percent = Decimal(share[:-1].strip())
        except InvalidOperation:
            raise RolloutPolicyError(f"share {share!r} of {mode.value} is not a number") from None
        if not percent.is_finite() or percent < 0 or percent > 100:
            raise RolloutPolicyError(f"share {share!r} of {mode.value} is not within 0-100%")
        buckets = percent * 100
        if buckets != buckets.to_integral_value():
            raise RolloutPolicyError(f"share {share!r} has more than two decimals")
        arms.append((mode, int(buckets)))
    rests = [mode for mode, buckets in arms if buckets is None]
    given = sum(buckets for _, buckets in arms if buckets is not None)
    if len(rests) > 1:
        raise RolloutPolicyError("only one arm may be rest")
    if given > BUCKETS:
        raise RolloutPolicyError("the shares add up to more than 100%")
    if not rests and given != BUCKETS:
        raise RolloutPolicyError("the shares add up to less than 100% and no arm is rest")
    return RolloutPolicy(
        tuple(Arm(mode, BUCKETS - given if buckets is None else buckets) for mode, buckets in arms)
    )


def parse_rollout_policy(text: str) -> RolloutPolicies:
    """Parse the ``guard_rollout`` setting; raises :class:`RolloutPolicyError`."""
    policies: dict[str | None, RolloutPolicy] = {}
    sections = [s.strip() for s in text.split(";") if s.strip()]
    if not sections:
        raise RolloutPolicyError("the policy is empty")
    for section in sections:
        environment: str | None = None
        head, eq, arms = section.partition("=")
        if eq:
            environment = head.strip()
            if not LABEL_VALUE.match(environment):
                raise RolloutPolicyError(f"environment {environment!r} is not a short name")
        else:
            arms = section
        if environment in policies:
            raise RolloutPolicyError(
                f"environment {environment or '(every)'} has two policies"
                if environment
                else "two policies without an environment"
            )
        try:
            policies[environment] = _parse_arms(arms)
        except RolloutPolicyError as err:
            where = f" (environment {environment})" if environment else ""
            raise RolloutPolicyError(f"{err}{where}") from None
    return RolloutPolicies(policies)


def owner_bucket(owner_id: str, salt: str) -> int:
    """The owner's stable bucket in ``[0, BUCKETS)``: SHA-256 of the salt and the owner id."""
    digest = hashlib.sha256(f"{salt}\x00{owner_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % BUCKETS


class RolloutAssignment(BaseModel):
    """What a session runs with, resolved once when it starts and recorded in history: the
    cohort, the guard mode it implies (``None``: the guard-mode setting applies), and the
    deployment environment and service version of the worker that resolved it. Every value
    is low-cardinality operator data; the owner id is not here."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cohort: Cohort
    mode: GuardMode | None = None
    environment: str | None = None
    service_version: str | None = None


def assign(
    policies: RolloutPolicies | None,
    *,
    owner_id: str | None,
    salt: str,
    environment: str | None,
    service_version: str | None,
    pinned_version: str | None,
    base_mode: GuardMode,
) -> RolloutAssignment:
    """The session's cohort and mode under the operator's policy.

    No policy for the environment: ``unassigned`` (the guard-mode setting). A pinned version
    that is not this worker's: ``unpinned`` (the guard-mode setting). No owner: ``unowned``,
    the guard-mode setting but never ``enforce``. Otherwise the owner's bucket picks the arm.
    """

    def result(cohort: Cohort, mode: GuardMode | None) -> RolloutAssignment:
        return RolloutAssignment(
            cohort=cohort, mode=mode, environment=environment, service_version=service_version
        )

    policy = policies.for_environment(environment) if policies is not None else None
    if policy is None:
        return result(Cohort.UNASSIGNED, None)
    if pinned_version is not None and pinned_version != service_version:
        return result(Cohort.UNPINNED, None)
    if not owner_id:
        capped = GuardMode.WARN if base_mode is GuardMode.ENFORCE else base_mode
        return result(Cohort.UNOWNED, capped)
    mode = policy.mode_of(owner_bucket(owner_id, salt))
    return result(Cohort(mode.value), mode)
