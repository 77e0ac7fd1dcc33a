"""The codec endpoint the Temporal UI calls (gateway/codec.py): stored payloads resolved
through the gateway's own storage, behind its token, with the browser's preflight answered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload
from temporalio.client import Client

from gateway.app import create_app
from gateway.settings import GatewaySettings
from seawall.runtime.storage import FilesystemStorageDriver
from tests.long_prompt_helpers import filesystem_storage, with_storage

TOKEN = "codec-t0ken"
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

    assert done.status_code == 502
    assert "is missing from the payload store" in done.json()["detail"]


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
