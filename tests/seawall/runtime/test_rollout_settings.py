"""The rollout and owner settings: one startup error naming the setting, and the
per-session resolution that never fails (docs/settings.md, "Owners and the guard's rollout")."""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.runtime.owners import local_owner_id, read_owner_tokens
from seawall.runtime.settings import SettingsError, load_settings, resolve_rollout_settings

TOKEN_A = "alice-token-0123456789"
TOKEN_B = "bob-token-0123456789ab"


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def rollout_env(home: dict[str, str], **extra: str) -> dict[str, str]:
    return {
        **home,
        "SEAWALL_GUARD_ROLLOUT": "enforce:5%,warn:rest",
        "SEAWALL_GUARD_ROLLOUT_SALT": "pepper",
        "SEAWALL_DEPLOYMENT_ENVIRONMENT": "internal",
        **extra,
    }


def test_a_valid_policy_loads_and_resolves(home: dict[str, str]) -> None:
    env = rollout_env(home, SEAWALL_SERVICE_VERSION="1.4.0", SEAWALL_GUARD_ROLLOUT_VERSION="1.4.0")
    assert load_settings(env).settings.guard_rollout == "enforce:5%,warn:rest"
    resolved = resolve_rollout_settings(env)
    assert resolved.diagnostic is None and resolved.policies is not None
    assert (resolved.environment, resolved.service_version) == ("internal", "1.4.0")
    assert resolved.pinned_version == "1.4.0" and resolved.salt == "pepper"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"SEAWALL_GUARD_ROLLOUT": "enforce:5%,warn:90%"}, "invalid rollout policy"),
        ({"SEAWALL_GUARD_ROLLOUT_SALT": ""}, "needs SEAWALL_GUARD_ROLLOUT_SALT"),
        ({"SEAWALL_DEPLOYMENT_ENVIRONMENT": ""}, "needs a deployment environment"),
        ({"SEAWALL_GUARD_ROLLOUT": "enforce:6%,warn:rest"}, "ALLOW_WIDE_ENFORCE=true"),
    ],
)
def test_an_invalid_policy_is_one_startup_error_naming_the_setting(
    home: dict[str, str], overrides: dict[str, str], message: str
) -> None:
    env = rollout_env(home, **overrides)
    with pytest.raises(SettingsError) as raised:
        load_settings(env)
    text = str(raised.value)
    assert text.startswith("SEAWALL_GUARD_ROLLOUT=") and "(environment)" in text
    assert message in text
    # The worker's per-session resolution never raises: no policy plus a diagnostic.
    resolved = resolve_rollout_settings(env)
    assert resolved.policies is None
    assert resolved.diagnostic is not None and message in resolved.diagnostic.message


def test_wide_enforcement_needs_the_override(home: dict[str, str]) -> None:
    env = rollout_env(
        home,
        SEAWALL_GUARD_ROLLOUT="enforce:50%,warn:rest",
        SEAWALL_GUARD_ROLLOUT_ALLOW_WIDE_ENFORCE="true",
    )
    assert load_settings(env).settings.guard_rollout_allow_wide_enforce is True
    resolved = resolve_rollout_settings(env)
    assert resolved.policies is not None and resolved.policies.max_enforce_percent() == 50


def test_the_environment_may_come_from_the_otel_resource_attributes(home: dict[str, str]) -> None:
    env = rollout_env(
        home,
        SEAWALL_DEPLOYMENT_ENVIRONMENT="",
        OTEL_RESOURCE_ATTRIBUTES="deployment.environment=public,service.version=2",
    )
    load_settings(env)
    resolved = resolve_rollout_settings(env)
    assert (resolved.environment, resolved.service_version) == ("public", "2")


def test_the_tokens_file(tmp_path: Path, home: dict[str, str]) -> None:
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(f"alice: {TOKEN_A}\nbob: [{TOKEN_B}]\n")
    env = {**home, "SEAWALL_GATEWAY_TOKENS_FILE": str(tokens)}
    assert load_settings(env).settings.gateway_tokens_file == tokens
    assert read_owner_tokens(tokens) == {TOKEN_A: "alice", TOKEN_B: "bob"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("- a list\n", "must be a non-empty mapping"),
        ("alice: short\n", "shorter than 16 characters"),
        (f"alice: {TOKEN_A}\nbob: {TOKEN_A}\n", "also another owner's"),
        (f"'al ice': {TOKEN_A}\n", "is not 1-128"),
        ("alice: [unclosed\n", "not valid YAML"),
    ],
)
def test_a_bad_tokens_file_is_a_startup_error_that_never_shows_a_token(
    tmp_path: Path, home: dict[str, str], content: str | None, message: str
) -> None:
    tokens = tmp_path / "tokens.yaml"
    if content is not None:
        tokens.write_text(content)
    with pytest.raises(SettingsError) as raised:
        load_settings({**home, "SEAWALL_GATEWAY_TOKENS_FILE": str(tokens)})
    text = str(raised.value)
    assert text.startswith("SEAWALL_GATEWAY_TOKENS_FILE=") and message in text
    assert TOKEN_A not in text


def test_the_local_owner_id(home: dict[str, str]) -> None:
    settings = load_settings(home).settings
    assert local_owner_id(settings.owner_id, {"USER": "ada lovelace"}) == "local:ada_lovelace"
    given = load_settings({**home, "SEAWALL_OWNER_ID": "team-7"}).settings
    assert local_owner_id(given.owner_id, {"USER": "ada"}) == "team-7"
    with pytest.raises(SettingsError, match="SEAWALL_OWNER_ID"):
        load_settings({**home, "SEAWALL_OWNER_ID": "has space"})


def test_no_policy_means_every_session_runs_the_guard_mode(home: dict[str, str]) -> None:
    resolved = resolve_rollout_settings({**home, "SEAWALL_DEPLOYMENT_ENVIRONMENT": "internal"})
    assert resolved.policies is None and resolved.diagnostic is None
    assert resolved.environment == "internal"


def test_the_worker_refuses_to_start_with_an_invalid_policy(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SEAWALL_", "OTEL_"))}
    done = subprocess.run(
        [sys.executable, str(root / "worker.py")],
        env={
            **base,
            "XDG_CONFIG_HOME": str(tmp_path),
            "SEAWALL_GUARD_ROLLOUT": "enforce:5%,warn:rest,shadow:rest",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "worker: error: SEAWALL_GUARD_ROLLOUT=enforce:5%,warn:rest,shadow:rest (environment): "
        "invalid rollout policy: only one arm may be rest"
    )
