"""Each process ``seawall up`` starts holds only the secrets it reads (seawall/runtime/
child_env.py; docs/security-codec.md, "Secrets per process"), read from its
``/proc/<pid>/environ`` and its memory (``/proc/<pid>/mem``: a model key in the config file
is read by the worker alone, docs/settings.md, "Each process reads its own settings"); and
with that, the gateway still authenticates its owners and the worker still reaches its model
with its key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from scripts.chat_server import ChatServer, completion
from seawall.runtime.child_env import DEV_SERVER_PREFIXES, DEV_SERVER_VARIABLES
from tests.e2e.test_stack import stack_process, until
from tests.process_secrets import environ_of, memory_holds

ADMIN = "admin-token-of-the-operator-0123"
ALICE = "alice-token-0123456789abcdef"
CODEC = "codec-token-of-this-stack-0123456789"
MODEL_KEY = "sk-model-key-0123456789"
# The same setting in the operator's config file, which every process reads.
CONFIG_MODEL_KEY = "sk-model-key-of-the-config-file-0123456789"
ORG = "org-of-the-model-account"
TEMPORAL_KEY = "temporal-cloud-api-key-0123456789"


def pid_of(data_dir: Path, name: str) -> int:
    return int((data_dir / "run" / f"{name}.pid").read_text())


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
            # Of the operator's shell, for Temporal Cloud: nothing of seawall up uses it.
            "TEMPORAL_API_KEY": TEMPORAL_KEY,
        }.items():
            monkeypatch.setenv(name, value)
        data_dir = tmp_path / "data"
        config = data_dir / "config" / "seawall" / "config.yaml"
        config.parent.mkdir(parents=True)
        config.write_text(f"openai_api_key: {CONFIG_MODEL_KEY}\n")
        with stack_process(data_dir) as (url, process):
            supervisor = environ_of(process.pid)
            server = environ_of(pid_of(data_dir, "temporal"))
            worker = environ_of(pid_of(data_dir, "worker"))
            gateway = environ_of(pid_of(data_dir, "gateway"))
            gateway_memory = {
                secret: memory_holds(pid_of(data_dir, "gateway"), secret)
                for secret in (ADMIN, MODEL_KEY, CONFIG_MODEL_KEY)
            }
            worker_memory = {
                secret: memory_holds(pid_of(data_dir, "worker"), secret)
                for secret in (MODEL_KEY, ADMIN, CODEC, ALICE)
            }

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

    # seawall up itself: what its worker and gateway get, not the Temporal API key.
    assert "TEMPORAL_API_KEY" not in supervisor and supervisor["OPENAI_API_KEY"] == MODEL_KEY
    # The dev server: the allowlist, and no secret at all.
    assert all(n in DEV_SERVER_VARIABLES or n.startswith(DEV_SERVER_PREFIXES) for n in server)
    for secret in (ADMIN, ALICE, CODEC, MODEL_KEY, ORG, str(tokens), TEMPORAL_KEY):
        assert not holds(server, secret)
    # The worker: its model endpoint and key, and the tokens file's path (its sandbox hides
    # the file); no gateway or codec token, and none of the owners' tokens in its memory:
    # it never opens the file.
    assert worker["OPENAI_API_KEY"] == MODEL_KEY
    assert worker["OPENAI_BASE_URL"] == model.url
    assert worker["SEAWALL_GATEWAY_TOKENS_FILE"] == str(tokens)
    for secret in (ADMIN, CODEC, TEMPORAL_KEY):
        assert not holds(worker, secret)
    assert worker_memory == {MODEL_KEY: True, ADMIN: False, CODEC: False, ALICE: False}
    # The gateway: its tokens and the codec's; nothing of the model's, in its environment
    # or its memory, though the config file has a model key too.
    assert gateway["SEAWALL_GATEWAY_TOKEN"] == ADMIN
    assert gateway["SEAWALL_GATEWAY_TOKENS_FILE"] == str(tokens)
    assert gateway["SEAWALL_CODEC_TOKEN"] == CODEC
    assert not [n for n in gateway if n.startswith("OPENAI_")]
    assert not holds(gateway, MODEL_KEY)
    assert gateway_memory == {ADMIN: True, MODEL_KEY: False, CONFIG_MODEL_KEY: False}

    # And everything still works: the gateway authenticates, the worker reaches its model.
    assert anonymous.status_code == 401
    assert as_admin.status_code == 201, as_admin.text
    assert finished["stop_reason"] == "end_turn"
    assert "hello from the model" in [m["content"] for m in finished["messages"]]
    assert model.requests[0].headers["authorization"] == f"Bearer {MODEL_KEY}"
