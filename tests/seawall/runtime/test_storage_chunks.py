"""Stored payloads as content-defined chunks (seawall/runtime/storage_chunks.py): a message that
travels in several payloads is stored once, every payload reads back byte for byte, and a lost
or altered chunk is the payload's own clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
)
from temporalio.exceptions import ApplicationError

from seawall.runtime import storage_chunks
from seawall.runtime.storage import (
    STORED_PAYLOAD_CORRUPT,
    STORED_PAYLOAD_MISSING,
    FilesystemStorageDriver,
)
from tests.long_prompt_helpers import page

WORKFLOW = StorageDriverStoreContext(
    target=StorageDriverWorkflowInfo(namespace="default", id="prompt-1", type="PromptWorkflow")
)


def payload(value: object) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(value).encode())


def tool_result(n: int, content: str) -> object:
    return {"call_id": f"call_{n}", "status": "success", "content": content}


def conversation(pages: list[str]) -> object:
    messages: list[dict[str, object]] = [{"role": "user", "content": "read the pages"}]
    for n, text in enumerate(pages):
        messages.append({"role": "assistant", "tool_calls": [{"call_id": f"call_{n}"}]})
        messages.append({"role": "tool", "content": text, "tool_call_id": f"call_{n}"})
    return {"workflow_id": "prompt-1", "stop_reason": "end_turn", "messages": messages}


@given(st.binary(max_size=20_000) | st.text(max_size=20_000).map(lambda t: json.dumps(t).encode()))
def test_chunks_join_back_to_the_bytes_they_were_cut_from(data: bytes) -> None:
    pieces = storage_chunks.chunks_of(data)

    assert b"".join(pieces) == data
    assert all(pieces)


json_values = st.recursive(
    st.text(alphabet=st.sampled_from('ab"\\\n\u00e9/')) | st.integers() | st.none(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)


@given(json_values, st.booleans())
def test_the_units_are_exactly_the_json_string_literals(value: object, ascii_only: bool) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only).encode()
    spans = list(storage_chunks.strings(data))

    # Each span is one string literal, escaped quotes and backslashes inside it ...
    assert all(isinstance(json.loads(data[a:b]), str) for a, b in spans)
    # ... and no quote is left outside them.
    edges = [0, *(edge for span in spans for edge in span), len(data)]
    gaps = [data[edges[i] : edges[i + 1]] for i in range(0, len(edges), 2)]
    assert not any(b'"' in gap for gap in gaps)


def test_the_same_message_in_two_payloads_is_cut_into_the_same_chunk() -> None:
    pages = [page(n, 30_000) for n in range(3)]
    alone = json.dumps(tool_result(1, pages[1])).encode()
    inside = json.dumps(conversation(pages)).encode()

    shared = set(storage_chunks.chunks_of(alone)) & set(storage_chunks.chunks_of(inside))

    # The page is one string of each payload's JSON, whatever surrounds it.
    assert json.dumps(pages[1]).encode() in shared


async def test_a_page_in_a_result_and_in_a_conversation_is_stored_once(tmp_path: Path) -> None:
    driver = FilesystemStorageDriver(tmp_path)
    pages = [page(n, 100_000) for n in range(4)]
    payloads = [payload(tool_result(n, text)) for n, text in enumerate(pages)]
    payloads.append(payload(conversation(pages)))

    claims = await driver.store(WORKFLOW, payloads)

    assert await driver.retrieve(StorageDriverRetrieveContext(), claims) == payloads
    digests = {c.claim_data["digest"] for c in claims}
    written = sum(len(p.SerializeToString()) for p in payloads)
    stored = driver.stored_size(digests)
    # Each page once, not twice (its result's payload and the conversation's).
    assert stored < sum(len(t) for t in pages) * 1.05 < written * 0.55
    # A manifest per payload; the pages in the chunks, each once.
    assert all(storage_chunks.is_manifest(b.read_bytes()) for b in driver.blobs())
    chunk_bytes = [c.read_bytes() for c in driver.chunks()]
    assert sorted(b for b in chunk_bytes if len(b) > 50_000) == sorted(
        json.dumps(t).encode() for t in pages
    )
    # As private as the rest of the data dir.
    assert {c.stat().st_mode & 0o777 for c in driver.chunks()} == {0o600}


async def test_a_payload_stored_whole_before_chunks_still_reads(tmp_path: Path) -> None:
    driver = FilesystemStorageDriver(tmp_path)
    whole = payload(conversation([page(n, 10_000) for n in range(3)]))
    [claim] = await driver.store(WORKFLOW, [whole])
    # What a store of an earlier version left: the serialized payload itself.
    driver.blob_path(claim.claim_data["digest"]).write_bytes(whole.SerializeToString())

    assert await driver.retrieve(StorageDriverRetrieveContext(), [claim]) == [whole]


@pytest.mark.parametrize(
    ("harm", "kind", "says"),
    [
        ("lose", STORED_PAYLOAD_MISSING, "is missing"),
        ("alter", STORED_PAYLOAD_CORRUPT, "is corrupt"),
        ("truncate the manifest", STORED_PAYLOAD_CORRUPT, "is corrupt"),
    ],
)
async def test_a_lost_or_altered_chunk_is_an_error_naming_its_payload(
    tmp_path: Path, harm: str, kind: str, says: str
) -> None:
    driver = FilesystemStorageDriver(tmp_path)
    [claim] = await driver.store(WORKFLOW, [payload(conversation([page(1, 50_000)]))])
    digest = claim.claim_data["digest"]
    chunk = max(driver.chunks(), key=lambda c: c.stat().st_size)
    if harm == "lose":
        chunk.unlink()
    elif harm == "alter":
        chunk.write_bytes(chunk.read_bytes().replace(b"lorem", b"LOREM", 1))
    else:
        manifest = driver.blob_path(digest)
        manifest.write_bytes(manifest.read_bytes()[:-5])

    with pytest.raises(ApplicationError) as caught:
        await driver.retrieve(StorageDriverRetrieveContext(), [claim])

    assert caught.value.type == kind
    assert says in caught.value.message
    # The payload and the prompt that lost it.
    assert f"stored payload {digest} of prompt-1 " in caught.value.message
