"""The gateway's settings are the one settings model's: same sources, same defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.settings import GatewaySettings
from seawall.runtime.settings import load_settings
from workflows.contracts.prompt_options import ApprovalMode


def gateway_settings(environ: dict[str, str]) -> GatewaySettings:
    return GatewaySettings.from_settings(load_settings(environ).settings)


def test_defaults_and_values_from_the_environment_and_the_user_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    home = {"HOME": str(tmp_path / "home")}
    defaults = gateway_settings(home)
    # The view's own defaults are the settings model's.
    assert defaults == GatewaySettings()
    assert defaults.temporal_address == "localhost:7233"
    assert defaults.temporal_namespace == "default"
    assert defaults.task_queue == "seawall"
    assert (defaults.host, defaults.port, defaults.token) == ("127.0.0.1", 8000, None)
    assert defaults.workspaces == tmp_path / ".data" / "workspaces"
    assert defaults.max_prompt_chars == 100_000
    assert defaults.approval_mode is ApprovalMode.DEFAULT
    assert defaults.permission_timeout_seconds == 300
    assert defaults.allow_scripted_models is False

    config = tmp_path / "home" / ".config" / "seawall" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(
        "temporal_address: from-file:7233\ntemporal_namespace: ns\ntask_queue: q\n"
        "gateway_port: 9001\nallow_scripted_models: true\n"
    )
    custom = gateway_settings(
        {
            **home,
            "TEMPORAL_ADDRESS": "temporal:7233",
            "SEAWALL_GATEWAY_PORT": "9000",
            "SEAWALL_GATEWAY_TOKEN": "t",
            "SEAWALL_WORKSPACES": "ws",
            "SEAWALL_APPROVAL_MODE": "yolo",
            "SEAWALL_MAX_PROMPT_CHARS": "10",
            "SEAWALL_GATEWAY_HOST": "",
        }
    )
    assert (custom.temporal_address, custom.port, custom.token) == ("temporal:7233", 9000, "t")
    assert (custom.temporal_namespace, custom.task_queue) == ("ns", "q")
    assert custom.workspaces == tmp_path / "ws"
    assert custom.approval_mode is ApprovalMode.YOLO
    assert custom.max_prompt_chars == 10
    assert custom.host == "127.0.0.1"
    assert custom.allow_scripted_models is True
