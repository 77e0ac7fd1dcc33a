"""The rollout policy and owner assignment (workflows/seed/rollout.py): pure and deterministic."""

from __future__ import annotations

from collections import Counter

import pytest

from workflows.seed import GuardMode
from workflows.seed.rollout import (
    BUCKETS,
    Cohort,
    RolloutPolicyError,
    assign,
    owner_bucket,
    parse_rollout_policy,
)


def test_a_policy_parses_into_arms_that_cover_every_bucket() -> None:
    policies = parse_rollout_policy("enforce:5%, warn:rest")
    policy = policies.for_environment("anything")
    assert policy is not None
    assert [(a.mode, a.buckets) for a in policy.arms] == [
        (GuardMode.ENFORCE, 500),
        (GuardMode.WARN, BUCKETS - 500),
    ]
    assert policies.max_enforce_percent() == 5


def test_per_environment_policies_fall_back_to_the_unnamed_one() -> None:
    policies = parse_rollout_policy("internal=enforce:2.5%,warn:rest; shadow:100%")
    internal = policies.for_environment("internal")
    public = policies.for_environment("public")
    assert internal is not None and internal.share(GuardMode.ENFORCE) == 2.5
    assert public is not None and public.share(GuardMode.SHADOW) == 100
    only_internal = parse_rollout_policy("internal=warn:rest")
    assert only_internal.for_environment("public") is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("enforce", "is not <mode>:<percent>%"),
        ("enforced:5%,warn:rest", "unknown mode 'enforced'"),
        ("warn:5%,warn:rest", "appears twice"),
        ("enforce:5,warn:rest", "must end with %"),
        ("enforce:x%,warn:rest", "is not a number"),
        ("enforce:101%", "not within 0-100%"),
        ("enforce:0.001%,warn:rest", "more than two decimals"),
        ("enforce:rest,warn:rest", "only one arm may be rest"),
        ("enforce:60%,warn:60%", "more than 100%"),
        ("enforce:5%,warn:90%", "less than 100%"),
        ("in ternal=warn:rest", "not a short name"),
        ("a=warn:rest;a=shadow:rest", "two policies"),
    ],
)
def test_an_invalid_policy_says_why(text: str, why: str) -> None:
    with pytest.raises(RolloutPolicyError, match=why):
        parse_rollout_policy(text)


def test_the_bucket_is_a_stable_hash_of_salt_and_owner() -> None:
    assert owner_bucket("alice", "s1") == owner_bucket("alice", "s1")
    buckets = {owner_bucket(f"owner-{n}", "s1") for n in range(200)}
    assert len(buckets) > 150  # spread out
    assert all(0 <= b < BUCKETS for b in buckets)
    # A new salt reshuffles the owners.
    assert [owner_bucket(f"owner-{n}", "s1") for n in range(20)] != [
        owner_bucket(f"owner-{n}", "s2") for n in range(20)
    ]


def assign_all(policy: str, owners: list[str], salt: str = "salt") -> dict[str, GuardMode | None]:
    policies = parse_rollout_policy(policy)
    return {
        owner: assign(
            policies,
            owner_id=owner,
            salt=salt,
            environment="internal",
            service_version="1.0",
            pinned_version="1.0",
            base_mode=GuardMode.SHADOW,
        ).mode
        for owner in owners
    }


def test_about_five_percent_of_many_owners_are_enforced_and_the_rest_warned() -> None:
    owners = [f"owner-{n}" for n in range(4000)]
    counts = Counter(assign_all("enforce:5%,warn:rest", owners).values())
    assert set(counts) == {GuardMode.ENFORCE, GuardMode.WARN}
    assert 140 <= counts[GuardMode.ENFORCE] <= 260  # 5 % of 4000 is 200


def test_widening_the_first_arm_keeps_every_owner_already_in_it() -> None:
    owners = [f"owner-{n}" for n in range(2000)]
    narrow = assign_all("enforce:5%,warn:rest", owners)
    wide = assign_all("enforce:10%,warn:rest", owners)
    enforced = {o for o, mode in narrow.items() if mode is GuardMode.ENFORCE}
    assert enforced <= {o for o, mode in wide.items() if mode is GuardMode.ENFORCE}


def test_unowned_unpinned_and_unassigned_sessions() -> None:
    policies = parse_rollout_policy("enforce:100%")
    common = {"salt": "s", "environment": "internal", "service_version": "2.0"}
    unowned = assign(
        policies, owner_id=None, pinned_version=None, base_mode=GuardMode.ENFORCE, **common
    )
    assert (unowned.cohort, unowned.mode) == (Cohort.UNOWNED, GuardMode.WARN)
    unpinned = assign(
        policies, owner_id="alice", pinned_version="1.0", base_mode=GuardMode.SHADOW, **common
    )
    assert (unpinned.cohort, unpinned.mode) == (Cohort.UNPINNED, None)
    unassigned = assign(
        None, owner_id="alice", pinned_version=None, base_mode=GuardMode.SHADOW, **common
    )
    assert (unassigned.cohort, unassigned.mode) == (Cohort.UNASSIGNED, None)
    assert unassigned.environment == "internal" and unassigned.service_version == "2.0"
    owned = assign(
        policies, owner_id="alice", pinned_version="2.0", base_mode=GuardMode.SHADOW, **common
    )
    assert (owned.cohort, owned.mode) == (Cohort.ENFORCE, GuardMode.ENFORCE)
    # The assignment carries no owner.
    assert "alice" not in owned.model_dump_json()
