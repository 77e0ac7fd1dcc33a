"""Where ``seawall up`` puts the codec token (docs/security-codec.md): not in the dev
server's argv, which every local user can read, nor in the worker's environment; and not in
its UI, whose unauthenticated settings endpoint would serve it to whoever can open the UI,
unless the operator turns the UI's codec on (``SEAWALL_UI_CODEC``), which is then the
documented exposure."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.e2e.test_stack import stack_process, until

TOKEN = "codec-token-of-this-stack-0123456789"


def process_file(data_dir: Path, name: str, what: str) -> bytes:
    pid = int((data_dir / "run" / f"{name}.pid").read_text())
    return Path(f"/proc/{pid}/{what}").read_bytes()


@pytest.mark.parametrize("ui_codec", [False, True], ids=["ui-codec-off", "ui-codec-on"])
async def test_the_codec_token_is_in_no_argv_no_workers_environment_and_by_default_no_ui(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ui_codec: bool
) -> None:
    monkeypatch.setenv("SEAWALL_CODEC_TOKEN", TOKEN)
    if ui_codec:
        monkeypatch.setenv("SEAWALL_UI_CODEC", "1")
    else:
        monkeypatch.delenv("SEAWALL_UI_CODEC", raising=False)
    data_dir = tmp_path / "data"
    with stack_process(data_dir) as (url, _process):
        argv = process_file(data_dir, "temporal", "cmdline").split(b"\0")
        worker = process_file(data_dir, "worker", "environ")
        gateway = process_file(data_dir, "gateway", "environ")
        leftovers = sorted(p.name for p in (data_dir / "run").iterdir())
        ui_port = argv[argv.index(b"--ui-port") + 1].decode()

        async def ui_settings() -> dict[str, object] | None:
            async with httpx.AsyncClient() as http:
                try:
                    answer = await http.get(f"http://127.0.0.1:{ui_port}/api/v1/settings")
                except httpx.TransportError:
                    return None
            found: dict[str, object] = answer.json()
            return found if answer.status_code == 200 else None

        settings = await until(ui_settings)
        settings_text = json.dumps(settings)
        async with httpx.AsyncClient(base_url=url) as http:
            from_ui = await http.post(
                f"/codec/ui/{TOKEN}/encode",
                json={"payloads": []},
                headers={"Origin": f"http://127.0.0.1:{ui_port}"},
            )

    assert not any(TOKEN.encode() in arg for arg in argv)
    assert TOKEN.encode() not in worker
    assert f"SEAWALL_CODEC_TOKEN={TOKEN}".encode() in gateway.split(b"\0")
    # The file that handed the endpoint to the dev server is gone once it started.
    assert leftovers == ["gateway.pid", "temporal.pid", "worker.pid"]
    codec = settings.get("Codec") or {}
    assert isinstance(codec, dict)
    if not ui_codec:
        # The default: the unauthenticated UI has no codec endpoint, and so no token, to
        # hand out; the gateway's endpoint still answers the operator's own token.
        assert not codec.get("Endpoint"), codec
        assert TOKEN not in settings_text
    else:
        # Turned on: the UI serves its codec endpoint, credential and all (the exposure the
        # operator chose, docs/security-codec.md).
        assert codec["Endpoint"] == f"{url}/codec/ui/{TOKEN}"
    assert from_ui.status_code == 200, from_ui.text
