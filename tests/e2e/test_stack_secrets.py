"""Each process ``seawall up`` starts holds only the secrets it reads (seawall/runtime/
child_env.py; docs/security-codec.md, "Secrets per process"), read from its
``/proc/<pid>/environ``; and with that, the gateway still authenticates its owners and the
worker still reaches its model with its key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from scripts.chat_server import ChatServer, completion
from seawall.runtime.child_env import DEV_SERVER_PREFIXES, DEV_SERVER_VARIABLES
from tests.e2e.test_stack import stack_process, until

ADMIN = "admin-token-of-the-operator-0123"
ALICE = "alice-token-0123456789abcdef"
CODEC = "codec-token-of-this-stack-0123456789"
MODEL_KEY = "sk-model-key-0123456789"
ORG = "org-of-the-model-account"


def environ_of(data_dir: Path, name: str) -> dict[str, str]:
    pid = int((data_dir / "run" / f"{name}.pid").read_text())
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode()
    return dict(v.split("=", 1) for v in raw.split("\0") if v)


def holds(environ: dict[str, str], secret: str) -> bool:
    return any(secret in value for value in environ.values())


async def test_each_process_holds_only_its_secrets_and_the_stack_still_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(f"alice: {ALICE}\n")
    async with ChatServer([completion(text="hello from the model")]) as model:
        for name, value in {
            "SEAWALL_GATEWAY_TOKEN": ADMIN,
            "SEAWALL_GATEWAY_TOKENS_FILE": str(tokens),
            "SEAWALL_CODEC_TOKEN": CODEC,
            "OPENAI_API_KEY": MODEL_KEY,
            "OPENAI_BASE_URL": model.url,
            "OPENAI_ORG_ID": ORG,
        }.items():
            monkeypatch.setenv(name, value)
        data_dir = tmp_path / "data"
        with stack_process(data_dir) as (url, _process):
            server = environ_of(data_dir, "temporal")
            worker = environ_of(data_dir, "worker")
            gateway = environ_of(data_dir, "gateway")

            async with httpx.AsyncClient(base_url=url, timeout=60) as http:
                anonymous = await http.post("/v1/sessions", json={})
                as_admin = await http.post(
                    "/v1/sessions", json={}, headers={"Authorization": f"Bearer {ADMIN}"}
                )
                alice = {"Authorization": f"Bearer {ALICE}"}
                created = await http.post("/v1/sessions", json={}, headers=alice)
                assert created.status_code == 201, created.text
                session_id = created.json()["session_id"]
                submitted = await http.post(
                    f"/v1/sessions/{session_id}/prompts", json={"text": "hi"}, headers=alice
                )
                assert submitted.status_code in (200, 201, 202), submitted.text
                prompt_id = submitted.json()["prompt_id"]

                async def result() -> dict[str, Any] | None:
                    view = (await http.get(f"/v1/prompts/{prompt_id}", headers=alice)).json()
                    found: dict[str, Any] | None = view.get("result")
                    return found

                finished = await until(result)

    # The dev server: the allowlist, and no secret at all.
    assert all(n in DEV_SERVER_VARIABLES or n.startswith(DEV_SERVER_PREFIXES) for n in server)
    for secret in (ADMIN, ALICE, CODEC, MODEL_KEY, ORG, str(tokens)):
        assert not holds(server, secret)
    # The worker: its model endpoint and key; no gateway token, tokens file or codec token.
    assert worker["OPENAI_API_KEY"] == MODEL_KEY
    assert worker["OPENAI_BASE_URL"] == model.url
    for secret in (ADMIN, CODEC, str(tokens)):
        assert not holds(worker, secret)
    assert "SEAWALL_GATEWAY_TOKENS_FILE" not in worker
    # The gateway: its tokens and the codec's; nothing of the model's.
    assert gateway["SEAWALL_GATEWAY_TOKEN"] == ADMIN
    assert gateway["SEAWALL_GATEWAY_TOKENS_FILE"] == str(tokens)
    assert gateway["SEAWALL_CODEC_TOKEN"] == CODEC
    assert not [n for n in gateway if n.startswith("OPENAI_")]
    assert not holds(gateway, MODEL_KEY)

    # And everything still works: the gateway authenticates, the worker reaches its model.
    assert anonymous.status_code == 401
    assert as_admin.status_code == 201, as_admin.text
    assert finished["stop_reason"] == "end_turn"
    assert "hello from the model" in [m["content"] for m in finished["messages"]]
    assert model.requests[0].headers["authorization"] == f"Bearer {MODEL_KEY}"
