"""``seawall acp --embedded`` holds only the secrets it reads (seawall/runtime/child_env.py):
the bridge with its in-process worker keeps the model key but not the operator's gateway or
codec token, the dev server it starts gets none; its prompts still reach the model."""

from __future__ import annotations

from pathlib import Path

from acp.schema import AgentMessageChunk

from scripts.chat_server import ChatServer, completion
from tests.e2e.test_acp import new_session, say, spawn_bridge
from tests.process_secrets import children_of, environ_of, memory_holds

ADMIN = "admin-token-of-the-operator-0123"
ALICE = "alice-token-0123456789abcdef"
CODEC = "codec-token-of-this-stack-0123456789"
MODEL_KEY = "sk-model-key-0123456789"


async def test_the_embedded_bridge_and_its_dev_server_hold_only_their_secrets(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(f"alice: {ALICE}\n")
    async with ChatServer([completion(text="hello from the model")]) as model:
        env = {
            "SEAWALL_DATA_DIR": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "SEAWALL_TASK_QUEUE": "acp-secrets-test",
            "SEAWALL_GATEWAY_TOKEN": ADMIN,
            "SEAWALL_GATEWAY_TOKENS_FILE": str(tokens),
            "SEAWALL_CODEC_TOKEN": CODEC,
            "OPENAI_API_KEY": MODEL_KEY,
            "OPENAI_BASE_URL": model.url,
            # The editor folders the embedded worker accepts (docs/security-trust.md).
            "SEAWALL_EDITOR_WORKSPACES": str(tmp_path),
        }
        log = tmp_path / "acp.stderr"
        async with spawn_bridge(env, log, "--embedded") as (conn, recorder, process):
            session_id = await new_session(conn, workspace)
            answer = await say(conn, session_id, "hi")
            bridge = environ_of(process.pid)
            servers = [environ_of(child) for child in children_of(process.pid)]
            memory = {s: memory_holds(process.pid, s) for s in (MODEL_KEY, ADMIN, CODEC, ALICE)}

    assert answer.stop_reason == "end_turn"
    assert "hello from the model" in "".join(recorder.texts(AgentMessageChunk))
    assert model.requests[0].headers["authorization"] == f"Bearer {MODEL_KEY}"
    # The bridge (the same process, started again): its worker's key, no gateway or codec
    # credential.
    assert bridge["OPENAI_API_KEY"] == MODEL_KEY
    for name in ("SEAWALL_GATEWAY_TOKEN", "SEAWALL_CODEC_TOKEN"):
        assert name not in bridge
    # The tokens file's path, which its worker's sandbox hides, but no token in its memory:
    # the first image's environment went with it, and nothing it runs opens that file.
    assert bridge["SEAWALL_GATEWAY_TOKENS_FILE"] == str(tokens)
    assert memory == {MODEL_KEY: True, ADMIN: False, CODEC: False, ALICE: False}
    # Its dev server: nothing of ours at all.
    assert servers, "the embedded dev server is a child of the bridge"
    for server in servers:
        assert not [n for n in server if n.startswith(("SEAWALL_", "OPENAI_", "TEMPORAL_"))]
        assert not any(MODEL_KEY in v or ADMIN in v or CODEC in v for v in server.values())
