"""How every process reaches Temporal (seawall/runtime/temporal_connect.py): the settings
over the Temporal profile file over the defaults, every TLS file checked at startup with one
error naming the setting and its source, and no secret in ``seawall config`` or a log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from temporalio.service import TLSConfig

from seawall.cli.main import main as seawall_main
from seawall.cli.stack import StackConfig, StackError, banner, check_loopback, child_environment
from seawall.cli.stack import server_command as stack_server_command
from seawall.runtime.settings import SETTINGS, SettingsError, load_settings
from seawall.runtime.temporal_connect import (
    TemporalClientConfig,
    access_refusal,
    auth_summary,
    default_config_file,
    temporal_client_config,
)
from tests.tls_helpers import Pki, make_pki

ROOT = Path(__file__).resolve().parents[3]
API_KEY = "tmprl-api-key-do-not-print-0123456789"


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """A private, empty config home and no setting's variable."""
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def resolve(env: dict[str, str]) -> TemporalClientConfig:
    return temporal_client_config(load_settings(env), env)


def problem(env: dict[str, str]) -> str:
    with pytest.raises(SettingsError) as raised:
        resolve(env)
    return str(raised.value)


def write_profiles(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def seawall_yaml(home: dict[str, str], text: str) -> Path:
    return write_profiles(Path(home["XDG_CONFIG_HOME"]) / "seawall" / "config.yaml", text)


# --- precedence ------------------------------------------------------------------------------


def test_nothing_configured_is_the_local_server_without_auth(home: dict[str, str]) -> None:
    config = resolve(home)
    assert (config.target_host, config.namespace, config.auth) == (
        "localhost:7233",
        "default",
        "none",
    )
    assert config.tls is False and config.api_key is None
    assert config.address_configured is False and config.profile is None


def test_the_settings_win_over_the_profile_which_wins_over_the_defaults(
    home: dict[str, str], pki: Pki
) -> None:
    default_file = default_config_file(home)
    assert default_file == Path(home["XDG_CONFIG_HOME"]) / "temporalio" / "temporal.toml"
    write_profiles(
        default_file,
        f"""
[profile.default]
address = "profile-host:7233"
namespace = "profile-ns"

[profile.default.tls]
server_ca_cert_path = "{pki.ca}"
client_cert_path = "{pki.client_cert}"
client_key_path = "{pki.client_key}"
""",
    )
    from_profile = resolve(home)
    assert (from_profile.target_host, from_profile.namespace) == ("profile-host:7233", "profile-ns")
    assert from_profile.auth == "mtls" and from_profile.address_configured
    assert isinstance(from_profile.tls, TLSConfig)
    assert from_profile.tls.client_cert == pki.client_cert.read_bytes()
    assert from_profile.profile == "default" and from_profile.profile_file == default_file

    # Seawall's config.yaml and the environment both override the profile, key by key.
    seawall_yaml(home, "temporal_namespace: yaml-ns\n")
    over = resolve({**home, "TEMPORAL_ADDRESS": "env-host:7233", "TEMPORAL_TLS_SERVER_NAME": "sni"})
    assert (over.target_host, over.namespace) == ("env-host:7233", "yaml-ns")
    assert isinstance(over.tls, TLSConfig) and over.tls.domain == "sni"
    assert over.auth == "mtls"
    # TEMPORAL_TLS=false turns the profile's TLS off.
    assert resolve({**home, "TEMPORAL_TLS": "false"}).tls is False


def test_a_named_profile_of_a_named_file_with_an_api_key(
    home: dict[str, str], tmp_path: Path
) -> None:
    profiles = write_profiles(
        tmp_path / "cloud.toml",
        f"""
[profile.default]
address = "wrong:1"

[profile.cloud]
address = "acct.tmprl.cloud:7233"
namespace = "ns.acct"
api_key = "{API_KEY}"
""",
    )
    config = resolve({**home, "TEMPORAL_CONFIG_FILE": str(profiles), "TEMPORAL_PROFILE": "cloud"})
    assert (config.target_host, config.namespace, config.auth) == (
        "acct.tmprl.cloud:7233",
        "ns.acct",
        "api key",
    )
    # The key reaches Client.connect, with TLS on (as the SDK does for an API key).
    kwargs = config.connect_kwargs()
    assert kwargs["api_key"] == API_KEY and kwargs["tls"] is True
    # ... and never a log line or a repr.
    assert API_KEY not in repr(config) and API_KEY not in json.dumps(config.describe())


def test_an_api_key_in_the_environment_turns_tls_on_unless_tls_is_off(home: dict[str, str]) -> None:
    config = resolve({**home, "TEMPORAL_API_KEY": API_KEY, "TEMPORAL_ADDRESS": "h:7233"})
    assert config.auth == "api key" and config.connect_kwargs()["tls"] is True
    assert config.connect_kwargs()["api_key"] == API_KEY
    plain = resolve({**home, "TEMPORAL_API_KEY": API_KEY, "TEMPORAL_TLS": "false"})
    assert plain.connect_kwargs()["tls"] is False


def test_pem_text_in_the_environment_works_like_a_file(home: dict[str, str], pki: Pki) -> None:
    config = resolve(
        {
            **home,
            "TEMPORAL_TLS_CLIENT_CERT_DATA": pki.client_cert.read_text(),
            "TEMPORAL_TLS_CLIENT_KEY_DATA": pki.client_key.read_text(),
        }
    )
    assert config.auth == "mtls"
    assert isinstance(config.tls, TLSConfig)
    assert config.tls.client_private_key == pki.client_key.read_bytes().strip()


def test_a_flag_replaces_the_address_and_namespace_only(home: dict[str, str], pki: Pki) -> None:
    env = {**home, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(pki.ca)}
    flagged = resolve(env).with_target("flag:1", None)
    assert (flagged.target_host, flagged.namespace, flagged.auth) == ("flag:1", "default", "tls")
    assert flagged.address_configured


# --- one startup error naming the setting and its source -------------------------------------


def test_a_missing_config_file_is_an_error_not_silently_no_profile(
    home: dict[str, str], tmp_path: Path
) -> None:
    missing = tmp_path / "nope.toml"
    assert problem({**home, "TEMPORAL_CONFIG_FILE": str(missing)}) == (
        f"TEMPORAL_CONFIG_FILE={missing} (environment): cannot read it (No such file or directory)"
    )


def test_an_unknown_profile_names_the_setting_and_the_profiles_there_are(
    home: dict[str, str], tmp_path: Path
) -> None:
    profiles = write_profiles(tmp_path / "t.toml", '[profile.a]\naddress = "a:1"\n[profile.b]\n')
    message = problem({**home, "TEMPORAL_CONFIG_FILE": str(profiles), "TEMPORAL_PROFILE": "prod"})
    assert message == (
        f"TEMPORAL_PROFILE=prod (environment): no such profile in {profiles} (its profiles: a, b)"
    )
    # Asked for by name without any file: an error too, not the defaults.
    assert problem({**home, "TEMPORAL_PROFILE": "prod"}).startswith(
        "TEMPORAL_PROFILE=prod (environment): there is no Temporal config file"
    )


def test_a_broken_profile_file_is_an_error_naming_it(home: dict[str, str]) -> None:
    broken = write_profiles(default_config_file(home), "[profile.default\naddress = 1\n")
    message = problem(home)
    assert message.startswith(
        f"Temporal config file {broken} (default location): not a Temporal config file ("
    )


@pytest.mark.parametrize(
    "variable",
    [
        "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
        "TEMPORAL_TLS_CLIENT_CERT_PATH",
        "TEMPORAL_TLS_CLIENT_KEY_PATH",
    ],
)
def test_a_bad_tls_file_names_its_variable(
    home: dict[str, str], tmp_path: Path, variable: str
) -> None:
    missing = tmp_path / "missing.pem"
    assert problem({**home, variable: str(missing)}) == (
        f"{variable}={missing} (environment): cannot read it (No such file or directory)"
    )
    not_pem = write_profiles(tmp_path / "garbage.pem", "this is not a certificate\n")
    assert problem({**home, variable: str(not_pem)}) == (
        f"{variable}={not_pem} (environment): not PEM (no '-----BEGIN' line)"
    )


def test_a_bad_file_in_the_config_yaml_names_the_key_and_the_file(
    home: dict[str, str], tmp_path: Path
) -> None:
    missing = tmp_path / "ca.pem"
    yaml_file = seawall_yaml(home, f"temporal_tls_server_ca_cert_path: {missing}\n")
    assert problem(home) == (
        f"temporal_tls_server_ca_cert_path={missing} (user config {yaml_file}): cannot read it "
        "(No such file or directory)"
    )


def test_a_bad_file_of_a_profile_names_the_profile_and_its_key(
    home: dict[str, str], tmp_path: Path
) -> None:
    missing = tmp_path / "client.pem"
    profiles = write_profiles(
        default_config_file(home), f'[profile.default.tls]\nclient_cert_path = "{missing}"\n'
    )
    assert problem(home) == (
        f"profile 'default' of {profiles} key tls.client_cert_path={missing}: cannot read it "
        "(No such file or directory)"
    )


def test_a_client_certificate_without_its_key_is_refused(home: dict[str, str], pki: Pki) -> None:
    assert problem({**home, "TEMPORAL_TLS_CLIENT_CERT_PATH": str(pki.client_cert)}).startswith(
        "TEMPORAL_TLS_CLIENT_KEY_PATH (unset): mTLS needs both"
    )


def test_bad_key_data_is_named_but_never_echoed(home: dict[str, str], pki: Pki) -> None:
    secret = "PRIVATE-MATERIAL-never-shown"
    message = problem(
        {
            **home,
            "TEMPORAL_TLS_CLIENT_CERT_PATH": str(pki.client_cert),
            "TEMPORAL_TLS_CLIENT_KEY_DATA": secret,
        }
    )
    assert message == "TEMPORAL_TLS_CLIENT_KEY_DATA (environment): not PEM (no '-----BEGIN' line)"
    assert secret not in message


def clean_environ() -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SEAWALL_", "OPENAI_"))}
    for setting in SETTINGS:
        for name in setting.env:
            base.pop(name, None)
    return base


SEAWALL = str(Path(sys.executable).parent / "seawall")


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ([sys.executable, str(ROOT / "worker.py")], "worker"),
        ([sys.executable, "-m", "gateway"], "gateway"),
        ([SEAWALL, "run", str(ROOT / "scenarios" / "queued-prompt.yaml")], "seawall"),
        ([SEAWALL, "acp"], "seawall"),
        ([SEAWALL, "storage", "gc"], "seawall"),
        ([SEAWALL, "rollout", "report", "--environment", "e"], "seawall"),
    ],
    ids=["worker", "gateway", "seawall run", "seawall acp", "seawall storage", "seawall rollout"],
)
def test_every_client_stops_with_one_line_on_a_bad_tls_file(
    home: dict[str, str], tmp_path: Path, command: list[str], program: str
) -> None:
    missing = tmp_path / "ca.pem"
    done = subprocess.run(
        command,
        cwd=ROOT,
        env={**clean_environ(), **home, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(missing)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == (
        f"{program}: error: TEMPORAL_TLS_SERVER_CA_CERT_PATH={missing} (environment): cannot "
        "read it (No such file or directory)\n"
    )


# --- seawall config: the auth in use, never a secret ----------------------------------------


def test_seawall_config_shows_the_auth_in_use_and_hides_the_secrets(
    home: dict[str, str],
    pki: Pki,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for key in clean_environ().keys() ^ os.environ.keys():
        monkeypatch.delenv(key, raising=False)
    key_text = pki.client_key.read_text()
    env = {
        **home,
        "TEMPORAL_ADDRESS": "secure.example:7233",
        "TEMPORAL_API_KEY": API_KEY,
        "TEMPORAL_TLS_CLIENT_CERT_PATH": str(pki.client_cert),
        "TEMPORAL_TLS_CLIENT_KEY_DATA": key_text,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    assert seawall_main(["config"]) == 0
    text = capsys.readouterr().out
    assert seawall_main(["config", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)

    for output in (text, json.dumps(shown)):
        assert API_KEY not in output
        assert "PRIVATE KEY" not in output and key_text.splitlines()[1] not in output
    assert "temporal access: secure.example:7233 namespace default, auth api key + mtls" in text
    assert shown["temporal_access"]["auth"] == "api key + mtls"
    assert shown["settings"]["temporal_api_key"]["value"] == "set"
    assert shown["settings"]["temporal_tls_client_key_data"]["value"] == "set"
    assert shown["settings"]["temporal_tls_client_cert_path"]["value"] == str(pki.client_cert)


def test_seawall_config_reports_what_a_client_would_refuse(
    home: dict[str, str], tmp_path: Path
) -> None:
    env = {**home, "TEMPORAL_PROFILE": "prod"}
    assert auth_summary(load_settings(env), env).startswith(
        "temporal access: error: TEMPORAL_PROFILE=prod (environment): there is no Temporal"
    )


# --- the SDK's refusals, said plainly -------------------------------------------------------


@pytest.mark.parametrize(
    ("core_error", "hint"),
    [
        (
            "Failed client connect: Server connection error: tonic::transport::Error(Transport, "
            "ConnectError(Custom { kind: InvalidData, error: InvalidCertificate(UnknownIssuer) }))",
            "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
        ),
        (
            "Failed client connect: `get_system_info` call error after connection: Status { code: "
            'Unknown, message: "transport error", source: Some(tonic::transport::Error(Transport, '
            'hyper::Error(Io, Custom { kind: UnexpectedEof, error: "peer closed connection '
            'without sending TLS close_notify" }))) }',
            "TEMPORAL_TLS_CLIENT_CERT_PATH",
        ),
        ("Failed client connect: Status { code: Unauthenticated }", "TEMPORAL_API_KEY"),
    ],
    ids=["wrong CA", "no client certificate", "bad API key"],
)
def test_a_tls_or_credentials_refusal_names_the_setting_to_check(
    core_error: str, hint: str
) -> None:
    config = TemporalClientConfig(target_host="h:7233", namespace="n", tls=True)
    refused = access_refusal(RuntimeError(core_error), config)
    assert refused is not None and hint in str(refused)
    assert str(refused).startswith("the Temporal frontend at h:7233 refused this client")
    unreachable = "Failed client connect: tcp connect error: Connection refused (os error 111)"
    assert access_refusal(RuntimeError(unreachable), config) is None


# --- seawall up: loopback only, no auth, no inherited credentials --------------------------


def test_the_stack_binds_loopback_only_and_says_there_is_no_authentication(tmp_path: Path) -> None:
    config = StackConfig(data_dir=tmp_path)
    command = stack_server_command(config)
    assert command[command.index("--ip") + 1] == "127.0.0.1"
    assert command[command.index("--ui-ip") + 1] == "127.0.0.1"
    environment = child_environment(config, {})
    assert environment["SEAWALL_GATEWAY_HOST"] == environment["SEAWALL_METRICS_HOST"] == "127.0.0.1"
    assert "NO authentication" in banner(config, load_settings({"HOME": str(tmp_path)}))
    for host in ("0.0.0.0", "::", "192.168.1.5", "example.com"):
        with pytest.raises(StackError, match="loopback address only"):
            check_loopback(host)
    for host in ("127.0.0.1", "::1", "localhost", "[::1]"):
        check_loopback(host)


def test_the_stacks_worker_and_gateway_never_inherit_temporal_credentials(
    home: dict[str, str], tmp_path: Path, pki: Pki
) -> None:
    # The operator's shell is set up for Temporal Cloud, environment and default profile.
    write_profiles(
        default_config_file(home), f'[profile.default]\napi_key = "{API_KEY}"\naddress = "c:1"\n'
    )
    operator = {
        **home,
        "TEMPORAL_API_KEY": API_KEY,
        "TEMPORAL_PROFILE": "default",
        "TEMPORAL_TLS_CLIENT_CERT_PATH": str(pki.client_cert),
        "TEMPORAL_TLS_CLIENT_KEY_PATH": str(pki.client_key),
    }
    assert resolve(operator).auth == "api key + mtls"
    child = child_environment(StackConfig(data_dir=tmp_path), operator)
    assert API_KEY not in json.dumps(child)
    config = resolve(child)
    assert (config.target_host, config.auth, config.api_key) == ("127.0.0.1:7233", "none", None)
