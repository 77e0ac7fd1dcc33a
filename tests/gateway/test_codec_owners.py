"""The codec serves an owner only its own sessions' stored payloads (gateway/codec_scope.py):
two owners' long prompts stored by a real worker through each payload store (the filesystem
driver, and the SDK's S3 driver on a real S3-compatible server), their references taken from
Temporal's history, decoded through the real gateway app."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from google.protobuf import json_format
from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.api.sdk.v1.external_storage_pb2 import ExternalStorageReference
from temporalio.client import Client
from temporalio.converter import ExternalStorage, JSONProtoPayloadConverter

from gateway.app import create_app
from gateway.codec import UNKNOWN_REFERENCE_DETAIL, stored_reference
from gateway.codec_scope import stored_for
from gateway.settings import GatewaySettings
from seawall.runtime.storage import DEFAULT_THRESHOLD_BYTES, FILESYSTEM_DRIVER, WORKFLOW_CLAIM
from seawall.runtime.storage_s3 import s3_client, s3_driver
from seawall.worker.build import build_worker
from tests.gateway.owner_helpers import OPERATOR_TOKEN, TOKENS, auth, view_until
from tests.long_prompt_helpers import filesystem_storage, with_storage
from tests.s3_helpers import REGION, new_bucket_name, use_s3
from tests.trust_helpers import harness_trust

CODEC_TOKEN = "codec-cr3dential-0123456789"
UI = "http://localhost:8233"
# Past the store's 64 KB threshold: the prompt's text is stored, its history holds a reference.
LONG = 80_000


@dataclass
class Owned:
    """One owner's finished prompt: its workflow id, its text and the stored references
    its history holds."""

    prompt_id: str
    text: str
    references: list[Payload]


def payloads_in(message: Message) -> Iterator[Payload]:
    """Every Payload anywhere inside ``message`` (a history event)."""
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            holds_messages = field.message_type.fields_by_name["value"].message_type
            items = list(value.values()) if holds_messages else []
        elif field.is_repeated:
            items = list(value)
        else:
            items = [value]
        for item in items:
            if isinstance(item, Payload):
                yield item
            else:
                yield from payloads_in(item)


def body(*payloads: Payload) -> dict[str, Any]:
    return {"payloads": [json_format.MessageToDict(p) for p in payloads]}


def reference_with(claim: dict[str, str], driver: str = FILESYSTEM_DRIVER) -> Payload:
    made = JSONProtoPayloadConverter().to_payload(
        ExternalStorageReference(driver_name=driver, claim_data=claim)
    )
    assert made is not None
    return made


def under_workflow_of(own: Payload, digest: str) -> Payload:
    """A reference to ``digest`` claiming the workflow ``own`` was stored for, in the shape
    of ``own``'s driver (the filesystem's claim names the workflow; the s3 key carries it)."""
    mine = stored_reference(own)
    assert mine is not None
    claim = dict(mine.claim_data)
    if mine.driver_name == FILESYSTEM_DRIVER:
        claim["digest"] = digest
    else:
        claim["key"] = f"{claim['key'].rpartition('/')[0]}/{digest}"
        claim["hash_value"] = digest
    return reference_with(claim, mine.driver_name)


def digest_of(reference: Payload) -> str:
    claim = claim_of(reference)
    return claim.get("digest") or claim["hash_value"]


@pytest_asyncio.fixture(params=["filesystem", "s3"])
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> ExternalStorage:
    if request.param == "filesystem":
        return filesystem_storage(tmp_path / "payloads")
    endpoint: str = request.getfixturevalue("s3_endpoint")
    use_s3(request.getfixturevalue("monkeypatch"))
    bucket = new_bucket_name()
    async with s3_client(endpoint, REGION) as s3:
        await s3.create_bucket(Bucket=bucket)
    return ExternalStorage(
        drivers=[s3_driver(bucket, endpoint, REGION)],
        payload_size_threshold=DEFAULT_THRESHOLD_BYTES,
    )


@pytest_asyncio.fixture
async def codec(
    client: Client, storage: ExternalStorage, tmp_path: Path, owners: dict[str, str]
) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, Owned]]]:
    """A gateway with the owners' tokens, the operator's and a codec token over a worker
    storing payloads in ``storage``; alice and bob each ran one long prompt."""
    stored = with_storage(client, storage)
    queue = f"codec-{uuid.uuid4().hex[:10]}"

    async def factory() -> Client:
        return stored

    settings = GatewaySettings(
        task_queue=queue,
        workspaces=tmp_path / "workspaces",
        token=OPERATOR_TOKEN,
        owner_tokens={TOKENS[name]: owner for name, owner in owners.items()},
        allow_scripted_models=True,
        codec_token=CODEC_TOKEN,
    )
    async with build_worker(stored, queue, trust=harness_trust()):
        transport = httpx.ASGITransport(app=create_app(settings, factory))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://gateway", timeout=60
        ) as http:
            ran = {name: await long_prompt(http, stored, name) for name in ("alice", "bob")}
            yield http, ran


async def long_prompt(http: httpx.AsyncClient, client: Client, name: str) -> Owned:
    created = await http.post(
        "/v1/sessions",
        json={"model_script": {"turns": [{"text": "done"}]}},
        headers=auth(name),
    )
    assert created.status_code == 201, created.text
    text = (f"{name}'s private notes " * LONG)[:LONG]
    submitted = await http.post(
        f"/v1/sessions/{created.json()['session_id']}/prompts",
        json={"text": text},
        headers=auth(name),
    )
    assert submitted.status_code == 202, submitted.text
    prompt_id: str = submitted.json()["prompt_id"]
    await view_until(http, name, prompt_id, lambda v: v["result"] is not None)
    history = await client.get_workflow_handle(prompt_id).fetch_history()
    references = [p for event in history.events for p in payloads_in(event) if stored_reference(p)]
    assert references, "the long prompt's history holds stored references"
    return Owned(prompt_id, text, references)


def reference_of(payload: Payload) -> ExternalStorageReference:
    found = stored_reference(payload)
    assert found is not None
    return found


def claim_of(payload: Payload) -> dict[str, str]:
    return dict(reference_of(payload).claim_data)


async def decode(http: httpx.AsyncClient, who: str, *references: Payload) -> httpx.Response:
    if who == "ui":
        return await http.post(
            f"/codec/ui/{CODEC_TOKEN}/decode", json=body(*references), headers={"Origin": UI}
        )
    return await http.post("/codec/decode", json=body(*references), headers=auth(who))


def decoded_text(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return "".join(
        json_format.ParseDict(p, Payload()).data.decode() for p in response.json()["payloads"]
    )


def is_unknown(response: httpx.Response) -> bool:
    return response.status_code == 404 and response.json()["detail"] == UNKNOWN_REFERENCE_DETAIL


async def test_an_owner_decodes_its_own_payloads_and_only_those(
    codec: tuple[httpx.AsyncClient, dict[str, Owned]],
) -> None:
    http, ran = codec
    alice, bob = ran["alice"], ran["bob"]
    # Each reference names the workflow it was stored for (a claim's field, an s3 key's).
    namespace = "default"
    assert all(stored_for(reference_of(r), namespace) for r in alice.references + bob.references)

    own = await decode(http, "alice", *alice.references)
    foreign = await decode(http, "alice", bob.references[0])
    made_up = await decode(http, "alice", under_workflow_of(alice.references[0], "0" * 64))

    assert alice.text[:1000] in decoded_text(own)
    # Bob's reference gets exactly what a reference to nothing gets, and none of his text.
    assert is_unknown(foreign) and is_unknown(made_up)
    assert foreign.text == made_up.text
    assert "bob's private notes" not in foreign.text


async def test_a_reference_pairing_an_owners_workflow_with_anothers_digest_is_refused(
    codec: tuple[httpx.AsyncClient, dict[str, Owned]],
) -> None:
    http, ran = codec
    alice, bob = ran["alice"], ran["bob"]
    disguised = under_workflow_of(alice.references[0], digest_of(bob.references[0]))

    answers = {who: await decode(http, who, disguised) for who in ("alice", "operator", "ui")}

    # The store never recorded that digest for alice's workflow: nobody reads it that way.
    assert all(is_unknown(a) for a in answers.values()), {w: a.text for w, a in answers.items()}
    assert not any("bob's private notes" in a.text for a in answers.values())


# The s3 driver's key always carries its workflow (or is the short form, never attributed).
@pytest.mark.parametrize("storage", ["filesystem"], indirect=True)
async def test_a_claim_naming_no_workflow_is_the_operators_only(
    codec: tuple[httpx.AsyncClient, dict[str, Owned]],
) -> None:
    http, ran = codec
    bobs = claim_of(ran["bob"].references[0])
    # As claims were written before they named their workflow.
    old_claim = reference_with({k: v for k, v in bobs.items() if k != WORKFLOW_CLAIM})

    refused = await decode(http, "bob", old_claim)

    assert is_unknown(refused)
    assert "bob's private notes" in decoded_text(await decode(http, "operator", old_claim))
    assert "bob's private notes" in decoded_text(await decode(http, "ui", old_claim))


async def test_the_operator_and_the_ui_decode_every_owners_payloads(
    codec: tuple[httpx.AsyncClient, dict[str, Owned]],
) -> None:
    http, ran = codec
    both = [ran["alice"].references[0], ran["bob"].references[0]]

    for who in ("operator", "ui"):
        text = decoded_text(await decode(http, who, *both))
        assert "alice's private notes" in text and "bob's private notes" in text, who


async def test_the_uis_endpoint_answers_the_uis_origin_only(
    codec: tuple[httpx.AsyncClient, dict[str, Owned]],
) -> None:
    http, ran = codec
    reference = ran["bob"].references[0]

    scripted = await http.post(f"/codec/ui/{CODEC_TOKEN}/decode", json=body(reference))
    elsewhere = await http.post(
        f"/codec/ui/{CODEC_TOKEN}/decode",
        json=body(reference),
        headers={"Origin": "https://elsewhere.example"},
    )

    assert scripted.status_code == elsewhere.status_code == 403
    assert "bob's private notes" not in scripted.text + elsewhere.text
