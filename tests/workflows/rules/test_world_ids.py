"""What a call acts on (workflows/rules/world_ids.py): which ids the world listed side by
side, read from digests only, and the ids the normalizer reads from a text."""

from __future__ import annotations

from collections.abc import Sequence

from workflows.rules.evidence import CallEvidence, ResultKind
from workflows.rules.normalize import IDS_PER_TEXT, id_digests, read_whole_exchange
from workflows.rules.world_ids import REMEMBERED_ANSWERS, WorldIds, _holds


def evidence(tool: str, asked: Sequence[str] = (), answer: Sequence[str] = ()) -> CallEvidence:
    return CallEvidence(
        tool=tool,
        digest="d",
        kind=ResultKind.SUCCESS,
        fingerprint="f",
        waits=False,
        paths=frozenset(),
        asked_ids="".join(id_digests(asked)),
        answer_ids="".join(id_digests(answer)),
    )


LISTED = ["I_kwDOA1b2c3d4", "I_kwDOe5f6a7b8", "I_kwDOc9d0e1f2"]


def test_the_second_item_of_a_listing_a_tool_acts_on_is_an_item_of_its_own() -> None:
    world = WorldIds()
    world.read([evidence("gh", answer=LISTED)])
    first, second, third = (world.acts_on(evidence("gh", asked=[item])) for item in LISTED)
    # The first item cannot be told from the call before it; every one after it can.
    assert first == "" and second and third and second != third
    # The same item again is the same work; another tool's acts are its own.
    assert world.acts_on(evidence("gh", asked=[LISTED[0]])) == ""
    assert world.acts_on(evidence("gh", asked=[LISTED[1]])) == second
    assert world.acts_on(evidence("other", asked=[LISTED[1]])) == ""


def test_ids_no_answer_listed_or_never_listed_together_name_nothing() -> None:
    world = WorldIds()
    world.read([evidence("browser", answer=["a0019f2c7e", "b0014d1e8a"])])
    world.read([evidence("browser", answer=["a0029f2c7e", "b0024d1e8a"])])
    # The model's own fresh ids were never listed.
    assert world.acts_on(evidence("click", asked=["req_8fA2xQ91bZ77"])) == ""
    # The button renamed by each snapshot: its old and new ids were never listed together.
    assert world.acts_on(evidence("click", asked=["a0019f2c7e"])) == ""
    assert world.acts_on(evidence("click", asked=["a0029f2c7e"])) == ""


def test_a_batch_is_read_after_it_ran_and_memory_is_bounded() -> None:
    world = WorldIds()
    # Siblings ran side by side: one's answer is no listing for another of the same batch.
    assert world.acts_on(evidence("gh", asked=[LISTED[1]], answer=LISTED)) == ""
    for n in range(REMEMBERED_ANSWERS + 10):
        world.read([evidence("gh", answer=[f"I_kwDO{n:08x}", f"I_kwDO{n:08x}ff"])])
    assert len(world.listings) == REMEMBERED_ANSWERS
    # A digest is found at a digest's start only, never across two.
    first, second = id_digests(["I_kwDO00000000"]), id_digests(["I_kwDO00000001"])
    straddling = (first[0] + second[0])[6:18]
    assert not _holds(first[0] + second[0], straddling) and _holds(first[0] + second[0], second[0])
    # The oldest listings are forgotten: their ids name nothing any more.
    assert world.acts_on(evidence("gh", asked=["I_kwDO00000000ff"])) == ""
    assert world.acts_on(evidence("gh", asked=[f"I_kwDO{REMEMBERED_ANSWERS + 9:08x}"])) == ""
    latest = evidence("gh", asked=[f"I_kwDO{REMEMBERED_ANSWERS + 9:08x}ff"])
    assert world.acts_on(latest)


def test_the_ids_a_text_holds_are_private_digests_at_most_a_text_s_worth() -> None:
    text = " ".join(f"node {n:06x}-c0ffee{n:04d}" for n in range(2 * IDS_PER_TEXT))
    read = read_whole_exchange(
        "gh", {"q": "issue I_kwDOLx3Tns65d30ce8"}, text, labelled_ids=True, world_ids=True
    )
    assert read.asked_ids == id_digests(["I_kwDOLx3Tns65d30ce8"])
    assert len(read.answer_ids) == IDS_PER_TEXT
    assert all(len(d) == 12 and "c0ffee" not in d for d in read.answer_ids)
    # Short tokens are too likely to be something else; each id is read once.
    assert id_digests(["e1", "abc", "abc"]) == id_digests(["abc"])
