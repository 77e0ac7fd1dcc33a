"""The ACP clients from the npm registry the end-to-end tests drive ``seawall acp`` with:
``acpx`` and the TypeScript SDK ``@agentclientprotocol/sdk``, at pinned versions.

They are installed once, by a test setup step (:func:`installed_npm_clients`), with
``npm install --prefix`` into a cache outside the repository (``~/.cache/seawall/npm``, or
``$SEAWALL_NPM_CACHE``); nothing is downloaded while a test runs. A test skips, saying so,
only when the registry cannot be reached; any other install failure fails it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ACPX_VERSION = "0.19.1"
SDK_VERSION = "2.4.0"
PACKAGES = {"acpx": ACPX_VERSION, "@agentclientprotocol/sdk": SDK_VERSION}
INSTALL_TIMEOUT_SECONDS = 600
# What npm says when it cannot reach the registry (its error codes for network failures).
UNREACHABLE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "ENETUNREACH")


@dataclass(frozen=True)
class NpmClients:
    prefix: Path

    @property
    def acpx(self) -> list[str]:
        return ["node", str(self.prefix / "node_modules" / "acpx" / "dist" / "cli.js")]

    @property
    def sdk(self) -> Path:
        return self.prefix / "node_modules" / "@agentclientprotocol" / "sdk"

    @property
    def schema(self) -> Path:
        """The SDK's JSON schema of ACP v1 (the protocol `seawall acp` speaks)."""
        return self.sdk / "schema" / "v1" / "schema.json"


def cache_dir() -> Path:
    configured = os.environ.get("SEAWALL_NPM_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "seawall" / "npm"


def _installed_version(prefix: Path, name: str) -> str | None:
    manifest = prefix / "node_modules" / name / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def installed_npm_clients() -> NpmClients:
    """The pinned clients, installing them into the cache first if they are not there."""
    prefix = cache_dir()
    if all(_installed_version(prefix, n) == v for n, v in PACKAGES.items()):
        return NpmClients(prefix)
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.fail("node and npm are needed for the npm ACP clients (Node 20 or later)")
    prefix.mkdir(parents=True, exist_ok=True)
    specs = [f"{name}@{version}" for name, version in PACKAGES.items()]
    done = subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", *specs],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_SECONDS,
        check=False,
    )
    if done.returncode != 0:
        if any(code in done.stderr for code in UNREACHABLE):
            pytest.skip(f"the npm registry is unreachable, so {' and '.join(specs)} are not")
        pytest.fail(f"npm install {' '.join(specs)} failed:\n{done.stderr[-2000:]}")
    return NpmClients(prefix)
