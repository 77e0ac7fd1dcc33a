"""Each process reads, checks and keeps only the settings whose ``read_by`` names it
(docs/settings.md, "Each process reads its own settings"): a secret it does not read is in
none of its settings' objects, its config file is read without it, and asking for it is an
error naming the setting, never a silent default."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from enum import Enum
from pathlib import Path, PurePath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, SecretStr

from bench.server_metrics import free_port
from seawall.runtime.settings import (
    ACP,
    GATEWAY,
    PROMPT,
    ROLLOUT,
    RUN,
    SETTINGS,
    STORAGE,
    TEMPORAL_CLIENTS,
    UP,
    WORKER,
    SettingsError,
    UserConfig,
    load_settings,
)
from seawall.runtime.settings.sources import withheld_text
from tests.process_secrets import memory_holds

ROOT = Path(__file__).resolve().parents[3]
PROCESSES = [WORKER, GATEWAY, RUN, UP, PROMPT, ACP, ROLLOUT, STORAGE]
ALICE_TOKEN = "alice-token-0123456789abcdef"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def planted(tmp_path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """An operator's environment and config files holding a distinct value for every
    sensitive setting (in the config file where it may be set there, else in the
    environment), and what each value is: setting name -> the value a reader holds."""
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    config = tmp_path / "xdg" / "seawall" / "config.yaml"
    values: dict[str, str] = {}
    lines = []
    for setting in SETTINGS:
        if not setting.sensitive:
            continue
        if setting.name == "mcp_servers":
            value = f"mcp-env-secret-{setting.name}"
            server = {"db": {"command": "db-mcp", "env": {"PASSWORD": value}}}
            write(config.with_name("mcp.json"), json.dumps(server))
        elif setting.name == "gateway_tokens_file":
            value = str(write(tmp_path / "etc" / "tokens.yaml", f"alice: {ALICE_TOKEN}\n"))
            lines.append(f"{setting.name}: {value}\n")
            values["the owners' tokens"] = ALICE_TOKEN
        else:
            value = f"{setting.name}-secret-{'x' * 32}"
            if setting.config_file is None:
                env[setting.env[0]] = value
            else:
                lines.append(f"{setting.name}: {value}\n")
        values[setting.name] = value
    write(config, "task_queue: q\n" + "".join(lines))
    return env, values


def held(effective: object, value: str) -> bool:
    """Whether ``value`` is in any string reachable from what a load returned: its settings
    (a secret's value included), the files' values, origins and diagnostics."""
    return any(value in text for text in strings_in(effective))


def strings_in(node: object) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, SecretStr):
        yield node.get_secret_value()
    elif isinstance(node, PurePath | Enum):
        yield str(node)
    elif isinstance(node, Mapping):
        for key, child in node.items():
            yield from strings_in(key)
            yield from strings_in(child)
    elif isinstance(node, list | tuple | set | frozenset):
        for child in node:
            yield from strings_in(child)
    elif isinstance(node, BaseModel):
        yield from strings_in(node.__dict__)
    elif dataclasses.is_dataclass(node):
        for item in dataclasses.fields(node):
            yield from strings_in(getattr(node, item.name))


@pytest.mark.parametrize(
    "reader",
    [*PROCESSES, (ACP, WORKER), (RUN, WORKER)],
    ids=lambda r: r if isinstance(r, str) else "+".join(r),
)
def test_a_process_holds_no_secret_it_does_not_read(
    tmp_path: Path, reader: str | tuple[str, ...]
) -> None:
    env, values = planted(tmp_path)
    roles = {reader} if isinstance(reader, str) else set(reader)
    effective = load_settings(env, reader=reader)
    readers = {s.name: set(s.read_by) for s in SETTINGS}
    # The file's content: only the gateway opens it (the next tests), and keeps it in its own
    # view of the settings (gateway/settings.py), not in what a load returns.
    readers["the owners' tokens"] = set()
    for name, value in values.items():
        assert held(effective, value) == bool(roles & readers[name]), name


def test_every_setting_is_read_when_no_process_is_named(tmp_path: Path) -> None:
    # seawall config reports them all.
    env, values = planted(tmp_path)
    effective = load_settings(env)
    assert set(effective.origins) == {s.name for s in SETTINGS}
    assert all(
        held(effective, value) for name, value in values.items() if name in effective.origins
    )


def test_asking_for_a_setting_the_process_does_not_read_is_an_error(tmp_path: Path) -> None:
    env, _ = planted(tmp_path)
    gateway = load_settings(env, reader=GATEWAY)
    with pytest.raises(AttributeError, match="'openai_api_key' is not read by gateway"):
        _ = gateway.settings.openai_api_key
    with pytest.raises(AttributeError, match="read by: worker"):
        gateway.is_set("openai_api_key")
    assert not hasattr(gateway.settings, "mcp_servers")
    assert gateway.settings.task_queue == "q"


def test_files_of_settings_a_process_does_not_read_are_not_opened(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    mcp_json = write(tmp_path / "xdg" / "seawall" / "mcp.json", "{not json")
    with pytest.raises(SettingsError, match=r"mcp\.json: is not valid JSON"):
        load_settings(env, reader=WORKER)
    assert load_settings(env, reader=GATEWAY).mcp.found is False
    mcp_json.unlink()
    # The tokens file: the worker knows its path (its sandbox hides the file), only the
    # gateway opens it.
    missing = {**env, "SEAWALL_GATEWAY_TOKENS_FILE": str(tmp_path / "absent.yaml")}
    assert load_settings(missing, reader=WORKER).settings.gateway_tokens_file is not None
    with pytest.raises(SettingsError, match=r"SEAWALL_GATEWAY_TOKENS_FILE=.*no such file"):
        load_settings(missing, reader=GATEWAY)


def test_a_bad_value_stops_only_its_readers_and_seawall_up(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "SEAWALL_SANDBOX_CPU_SECONDS": "abc",
    }
    load_settings(env, reader=GATEWAY)
    with pytest.raises(SettingsError, match="SEAWALL_SANDBOX_CPU_SECONDS=abc"):
        load_settings(env, reader=WORKER)
    # seawall up reads what its worker and gateway read (its banner says what they run)...
    with pytest.raises(SettingsError, match="SEAWALL_SANDBOX_CPU_SECONDS=abc"):
        load_settings(env, reader=UP, also=(WORKER, GATEWAY))
    fine = {**env, "SEAWALL_SANDBOX_CPU_SECONDS": "5", "OPENAI_API_KEY": "sk-key-0123456789"}
    up = load_settings(fine, reader=UP, also=(WORKER, GATEWAY))
    assert up.settings.sandbox_cpu_seconds == 5
    # ... but never their secrets: those they check themselves.
    assert not hasattr(up.settings, "openai_api_key")
    bad_tokens = {**fine, "SEAWALL_GATEWAY_TOKENS_FILE": str(tmp_path / "absent.yaml")}
    assert not hasattr(
        load_settings(bad_tokens, reader=UP, also=(WORKER,)).settings, "gateway_tokens_file"
    )


def test_the_docs_name_each_settings_readers() -> None:
    """docs/settings.md's "read by" column is each setting's ``read_by``: it decides which
    processes hold the setting, so the page must say it exactly."""
    docs = (ROOT / "docs" / "settings.md").read_text()
    cells = dict(re.findall(r"^\| `(\w+)`[^|]*\|.*\| ([^|]+) \|$", docs, re.MULTILINE))
    for setting in SETTINGS:
        cell = re.sub(r"\s*\([^)]*\)", "", cells[setting.name]).strip()
        named = (
            set(TEMPORAL_CLIENTS)
            if cell == "every client"
            else {part.strip() for part in cell.split(",")}
        )
        assert named == set(setting.read_by), setting.name


def test_every_load_in_the_code_names_its_reader() -> None:
    """A load without ``reader`` reads every setting (``seawall config``'s): the code's other
    loads say whose settings they read."""
    unnamed = []
    for tree in ("activities", "gateway", "seawall", "workflows"):
        for path in (ROOT / tree).rglob("*.py"):
            unnamed += calls_without_reader(path)
    unnamed += calls_without_reader(ROOT / "worker.py")
    assert unnamed == []


def calls_without_reader(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            keywords = {k.arg for k in node.keywords}
            if name in ("load_settings", "settings_or_exit") and "reader" not in keywords:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


# --- config.yaml is read without the values a process does not read -------------------------

KEEP = "task_queue"
# One-line values in the forms an operator writes a key or token.
ONE_LINE = [
    "sk-SECRET-1",
    '"sk-SECRET-2"',
    "'sk-SECRET-3 it''s'",
    "sk-SECRET-4  # the model key",
    '"sk-SECRET-5 \\"quoted\\""',
]
# Other forms, read whole (and dropped after).
OTHER = ["[sk-SECRET-6, b]", ">-\n  sk-SECRET-7\n  folded", "{a: sk-SECRET-8}", "\n- sk-SECRET-9"]
# Mistakes the file must still be refused for.
BROKEN = ["[unclosed", "a: b: c", '"bad \\q escape"', "sk-x\n- item", "'open"]


def yaml_line(key: str, value: str) -> str:
    return f"{key}: {value}\n" if not value.startswith("\n") else f"{key}:{value}\n"


@settings(max_examples=300, deadline=None)
@given(
    entries=st.lists(
        st.tuples(
            st.sampled_from([KEEP, "openai_api_key", "gateway_token", "no_such_key"]),
            st.sampled_from([*ONE_LINE, *OTHER, *BROKEN, "q", ""]),
        ),
        max_size=5,
        unique_by=(lambda entry: entry[0], lambda entry: entry[1]),
    ),
    comments=st.booleans(),
    blank_lines=st.booleans(),
)
def test_the_config_file_reads_the_same_without_what_is_not_kept(
    tmp_path_factory: pytest.TempPathFactory,
    entries: list[tuple[str, str]],
    comments: bool,
    blank_lines: bool,
) -> None:
    """Reading ``config.yaml`` for a process that keeps only ``task_queue`` gives exactly
    the file's ``task_queue`` (or refuses the same broken file), and no one-line value of
    another key reaches the text the parser sees."""
    separator = ("# a comment\n" if comments else "") + ("\n" if blank_lines else "")
    text = separator.join(yaml_line(key, value) for key, value in entries)
    path = write(tmp_path_factory.mktemp("cfg") / "config.yaml", text)

    whole = UserConfig.read(path)
    kept = UserConfig.read(path, KEEP.__eq__)

    assert (kept.problem is None) == (whole.problem is None), text
    if whole.problem is None:
        assert dict(kept.values) == {k: v for k, v in whole.values.items() if k == KEEP}
        assert kept.keys == whole.keys
        seen = withheld_text(KEEP.__eq__)(path)
        for key, value in entries:
            if key != KEEP and value in ONE_LINE:
                secret = re.search(r"sk-SECRET-\d", value)
                assert secret is not None and secret.group() not in seen, text


# --- the gateway, started for real, holds no model key a config file gives the worker ------


def test_a_started_gateway_holds_no_model_key_of_the_config_file(tmp_path: Path) -> None:
    """Its whole readable memory is searched once it serves (a core dump's, a debugger's
    view); its own admin token, read from its environment, is found there, so the search
    can fail."""
    model_key = "sk-config-file-model-key-0123456789"
    admin = "admin-token-of-the-gateway-0123456789"
    port = free_port()
    write(
        tmp_path / "xdg" / "seawall" / "config.yaml",
        f"openai_api_key: {model_key}\ngateway_port: {port}\n",
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "SEAWALL_DATA_DIR": str(tmp_path / "data"),
        "SEAWALL_GATEWAY_TOKEN": admin,
        "PYTHONPATH": str(ROOT),
    }
    gateway = subprocess.Popen(
        [sys.executable, "-m", "gateway"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert gateway.stderr is not None
        for line in gateway.stderr:  # its log, until it listens
            if "Uvicorn running" in line:
                break
        else:
            pytest.fail(f"the gateway exited with {gateway.wait()}")
        assert memory_holds(gateway.pid, admin)
        assert not memory_holds(gateway.pid, model_key)
    finally:
        gateway.terminate()
        gateway.wait(timeout=30)
