"""The codec endpoint the Temporal UI calls (gateway/codec.py): stored payloads resolved
through the gateway's own storage, behind the gateway's token or, for the UI's browser, the
codec token in the endpoint's URL, with the preflight answered for the UI's origin only."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload
from temporalio.api.sdk.v1.external_storage_pb2 import ExternalStorageReference
from temporalio.client import Client
from temporalio.converter import JSONProtoPayloadConverter

from gateway.app import create_app
from gateway.codec import UNKNOWN_REFERENCE_DETAIL, HideCodecCredential
from gateway.settings import GatewaySettings
from seawall.runtime.storage import FilesystemStorageDriver
from tests.long_prompt_helpers import filesystem_storage, with_storage

TOKEN = "gateway-t0ken"
CODEC_TOKEN = "codec-cr3dential"
UI = "http://localhost:8233"


def gateway(client: Client, tmp_path: Path, **settings: Any) -> httpx.AsyncClient:
    async def factory() -> Client:
        return client

    app = create_app(GatewaySettings(workspaces=tmp_path / "ws", **settings), factory)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")


def body(*payloads: Payload) -> dict[str, Any]:
    return {"payloads": [json_format.MessageToDict(p) for p in payloads]}


def payloads_of(response: httpx.Response) -> list[Payload]:
    return [json_format.ParseDict(p, Payload()) for p in response.json()["payloads"]]


async def test_decode_resolves_stored_payloads_and_passes_the_rest(
    client: Client, tmp_path: Path
) -> None:
    stored = with_storage(client, filesystem_storage(tmp_path / "payloads"))
    [reference, small] = await stored.data_converter.encode(["x" * 100_000, "small"])
    [original, _] = await client.data_converter.encode(["x" * 100_000, "small"])
    assert reference.ByteSize() < 1000  # what history holds

    async with gateway(stored, tmp_path, token=TOKEN) as http:
        refused = await http.post("/codec/decode", json=body(reference))
        done = await http.post(
            "/codec/decode",
            json=body(reference, small),
            headers={"Authorization": f"Bearer {TOKEN}", "X-Namespace": "default"},
        )

    assert refused.status_code == 401
    assert done.status_code == 200, done.text
    assert payloads_of(done) == [original, small]


async def test_a_vanished_payload_is_a_clear_error_not_a_hang(
    client: Client, tmp_path: Path
) -> None:
    stored = with_storage(client, filesystem_storage(tmp_path / "payloads"))
    [reference] = await stored.data_converter.encode(["y" * 100_000])
    for blob in FilesystemStorageDriver(tmp_path / "payloads").blobs():
        blob.unlink()

    async with gateway(stored, tmp_path) as http:
        done = await http.post("/codec/decode", json=body(reference))

    # The answer every unknown reference gets (gateway/codec_scope.py): 404, not a 502.
    assert done.status_code == 404
    assert done.json()["detail"] == UNKNOWN_REFERENCE_DETAIL


async def test_encode_returns_what_it_was_given_and_bad_bodies_are_refused(
    client: Client, tmp_path: Path
) -> None:
    [small] = await client.data_converter.encode(["small"])
    async with gateway(client, tmp_path) as http:
        done = await http.post("/codec/encode", json=body(small))
        bad = await http.post("/codec/decode", content=json.dumps({"payloads": "no"}))

    assert payloads_of(done) == [small]
    assert bad.status_code == 400


async def test_the_browsers_preflight_is_answered_for_loopback_origins_only(
    client: Client, tmp_path: Path
) -> None:
    preflight = {"Access-Control-Request-Method": "POST"}
    async with gateway(client, tmp_path, token=TOKEN) as http:
        ui = await http.options("/codec/decode", headers={"Origin": UI, **preflight})
        other = await http.options(
            "/codec/decode", headers={"Origin": "https://elsewhere.example", **preflight}
        )
        answer = await http.post(
            "/codec/encode",
            json={"payloads": []},
            headers={"Origin": UI, "Authorization": f"Bearer {TOKEN}"},
        )

    assert ui.status_code == 204
    assert ui.headers["access-control-allow-origin"] == UI
    assert "authorization" in ui.headers["access-control-allow-headers"]
    assert other.status_code == 403
    assert "access-control-allow-origin" not in other.headers
    assert answer.headers["access-control-allow-origin"] == UI


async def test_the_uis_endpoint_needs_the_codec_token_in_its_url_and_nothing_else(
    client: Client, tmp_path: Path
) -> None:
    stored = with_storage(client, filesystem_storage(tmp_path / "payloads"))
    [reference] = await stored.data_converter.encode(["z" * 100_000])
    [original] = await client.data_converter.encode(["z" * 100_000])

    async with gateway(stored, tmp_path, token=TOKEN, codec_token=CODEC_TOKEN) as http:
        done = await http.post(
            f"/codec/ui/{CODEC_TOKEN}/decode", json=body(reference), headers={"Origin": UI}
        )
        wrong = await http.post("/codec/ui/not-it/decode", json=body(reference))
        # The gateway's token is not the codec's, and the codec's opens nothing else.
        gateway_token = await http.post(f"/codec/ui/{TOKEN}/decode", json=body(reference))
        elsewhere = await http.get(f"/codec/ui/{CODEC_TOKEN}/../../v1/sessions")
        api = await http.get("/v1/sessions", headers={"Authorization": f"Bearer {CODEC_TOKEN}"})
    async with gateway(stored, tmp_path, token=TOKEN) as http:
        unset = await http.post("/codec/ui//decode", json=body(reference))

    assert done.status_code == 200, done.text
    assert payloads_of(done) == [original]
    assert done.headers["access-control-allow-origin"] == UI
    assert wrong.status_code == gateway_token.status_code == unset.status_code == 401
    assert elsewhere.status_code in {401, 404}
    assert api.status_code == 401


async def test_the_preflight_is_answered_for_the_configured_ui_origin_only(
    client: Client, tmp_path: Path
) -> None:
    preflight = {"Access-Control-Request-Method": "POST"}
    compose_ui = "http://localhost:8080"
    async with gateway(client, tmp_path, codec_ui_origins=(compose_ui,)) as http:
        configured = await http.options(
            f"/codec/ui/{CODEC_TOKEN}/decode", headers={"Origin": compose_ui, **preflight}
        )
        dev_ui = await http.options("/codec/decode", headers={"Origin": UI, **preflight})

    assert configured.status_code == 204
    assert configured.headers["access-control-allow-origin"] == compose_ui
    assert dev_ui.status_code == 403  # another loopback port is another origin


async def test_a_made_up_reference_reads_no_file_outside_the_store(
    client: Client, tmp_path: Path
) -> None:
    stored = with_storage(client, filesystem_storage(tmp_path / "payloads"))
    secret = tmp_path / "secret"
    secret.write_text("not yours")
    made_up = JSONProtoPayloadConverter().to_payload(
        ExternalStorageReference(driver_name="seawall.fs", claim_data={"digest": str(secret)})
    )
    assert made_up is not None

    async with gateway(stored, tmp_path) as http:
        done = await http.post("/codec/decode", json=body(made_up))

    assert done.status_code == 502
    assert "malformed" in done.json()["detail"]
    assert "not yours" not in done.text


def test_the_access_log_never_shows_the_codec_token() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "POST", f"/codec/ui/{CODEC_TOKEN}/decode", "1.1", 200),
        None,
    )

    HideCodecCredential().filter(record)

    assert CODEC_TOKEN not in record.getMessage()
    assert "/codec/ui/***/decode" in record.getMessage()
